// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package registry

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// TestCheckerCatchesUnregistered: the checks flag what is not registered,
// and skip only what they are told is engine-native.
func TestCheckerCatchesUnregistered(t *testing.T) {
	o := newOffenders()
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("made.up.resource", "x")
	rm.Resource().Attributes().PutStr(spec.AttrEngineName, spec.EngineSGLang)
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	g := ms.AppendEmpty()
	g.SetName(spec.EngineRequestsRunning)
	dp := g.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.Attributes().PutStr("made_up_label", "x")
	dp.Attributes().PutStr("tp_rank", "0") // kept SGLang label: skipped
	ms.AppendEmpty().SetName("llm.made.up")
	n := ms.AppendEmpty()
	n.SetName("sglang:num_used_tokens")
	n.SetEmptyGauge().DataPoints().AppendEmpty().Attributes().PutStr("whatever", "x")
	o.checkMetrics("t", []pmetric.Metrics{md}, map[string]bool{"sglang:num_used_tokens": true})

	td := ptrace.NewTraces()
	td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes().PutStr("llm.profile.made_up", "x")
	o.checkTraces("t", []ptrace.Traces{td}, nil)
	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Attributes().PutStr("incident.made_up", "x")
	o.checkLogs("t", []plog.Logs{ld})

	want := []string{
		"resource attribute made.up.resource",
		"data-point attribute made_up_label (on " + spec.EngineRequestsRunning + ")",
		"metric llm.made.up",
		"span attribute llm.profile.made_up",
		"log-record attribute incident.made_up",
	}
	if len(o.m) != len(want) {
		t.Errorf("offenders %v, want %v", o.m, want)
	}
	for _, w := range want {
		if o.m[w] == nil {
			t.Errorf("%q not flagged; flagged: %v", w, o.m)
		}
	}
}

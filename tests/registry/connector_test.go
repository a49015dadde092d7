// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package registry

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// checkConnectorOutputs runs the rootcause connector through its factory
// (metrics→metrics, metrics→logs, and traces→logs and logs→logs for the
// profiles' drill-down), feeds it everything the receivers and llmnormalize
// produced, waits for the incident nvml's XID event causes, and checks the
// metrics it passes on (with its derived ones) and the incident records.
func checkConnectorOutputs(t *testing.T, o *offenders, out *outputs) {
	if len(out.gpu) == 0 {
		t.Skip("no GPU metrics to diagnose")
	}
	f := rootcauseconnector.NewFactory()
	cfg := f.CreateDefaultConfig().(*rootcauseconnector.Config)
	cfg.EvaluationInterval = 50 * time.Millisecond
	set := connectortest.NewNopSettings(f.Type())
	ctx := context.Background()
	sinkM, sinkL := new(consumertest.MetricsSink), new(consumertest.LogsSink)
	mm, err := f.CreateMetricsToMetrics(ctx, set, cfg, sinkM)
	if err != nil {
		t.Fatal(err)
	}
	ml, err := f.CreateMetricsToLogs(ctx, set, cfg, sinkL)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := f.CreateTracesToLogs(ctx, set, cfg, sinkL)
	if err != nil {
		t.Fatal(err)
	}
	ll, err := f.CreateLogsToLogs(ctx, set, cfg, sinkL)
	if err != nil {
		t.Fatal(err)
	}
	startAll(t, mm, ml, tl, ll)

	feed := func(batches []pmetric.Metrics) {
		for _, md := range batches {
			// The collector's fan-out hands each pair its own copy.
			for _, c := range []interface {
				ConsumeMetrics(context.Context, pmetric.Metrics) error
			}{ml, mm} {
				cp := pmetric.NewMetrics()
				md.CopyTo(cp)
				if err := c.ConsumeMetrics(ctx, cp); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	feed(out.profM)
	for _, td := range out.profT {
		cp := ptrace.NewTraces()
		td.CopyTo(cp)
		if err := tl.ConsumeTraces(ctx, cp); err != nil {
			t.Fatal(err)
		}
	}
	for _, ld := range out.profL {
		cp := plog.NewLogs()
		ld.CopyTo(cp)
		if err := ll.ConsumeLogs(ctx, cp); err != nil {
			t.Fatal(err)
		}
	}
	feed(out.gpu)
	feed(out.engineNorm)

	waitFor(t, "an incident from the XID event", 20*time.Second, func() bool {
		for _, ld := range sinkL.AllLogs() {
			for i := 0; i < ld.ResourceLogs().Len(); i++ {
				for j := 0; j < ld.ResourceLogs().At(i).ScopeLogs().Len(); j++ {
					lrs := ld.ResourceLogs().At(i).ScopeLogs().At(j).LogRecords()
					for k := 0; k < lrs.Len(); k++ {
						if v, ok := lrs.At(k).Attributes().Get(spec.IncidentKind); ok && v.Str() == spec.IncidentKindXIDError {
							return true
						}
					}
				}
			}
		}
		return false
	})
	// The derived metrics left with the batches they were computed from
	// (metrics→metrics adds them as each batch passes), so sinkM is complete.
	passed := o.checkMetrics("rootcause", sinkM.AllMetrics(), out.native)
	t.Logf("rootcause: %d metric batches (%d engine-native metrics passed through, not checked), %d log records",
		len(sinkM.AllMetrics()), passed, sinkL.LogRecordCount())
	o.checkLogs("rootcause", sinkL.AllLogs())
}

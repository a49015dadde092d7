// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// gpuMetrics builds one GPU resource with one gauge per name, as an agent
// of the previous release sent it (no schema URL, product name in hw.name)
// or, with schema set, as this release's nvml receiver does.
func gpuMetrics(schema string, names ...string) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.SetSchemaUrl(schema)
	rm.Resource().Attributes().PutStr(spec.AttrHwID, "GPU-1")
	rm.Resource().Attributes().PutStr(spec.AttrHwName, "NVIDIA A100-SXM4-80GB")
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.SetSchemaUrl(schema)
	for _, n := range names {
		m := sm.Metrics().AppendEmpty()
		m.SetName(n)
		m.SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(0.5)
	}
	return md
}

// TestPreviousReleaseNamesAreRenamed: each alias of spec.Renames arriving
// without a schema URL leaves under this release's name, with what the
// rename sets, and the output says which conventions it follows.
func TestPreviousReleaseNamesAreRenamed(t *testing.T) {
	n := newTestNormalizer(t, nil)
	md, _ := n.processMetrics(context.Background(), gpuMetrics("",
		"hw.gpu.temperature", "hw.gpu.memory.utilization", "gen_ai.server.time_per_output_token"))
	rm := md.ResourceMetrics().At(0)
	if rm.SchemaUrl() != spec.SchemaURL || rm.ScopeMetrics().At(0).SchemaUrl() != spec.SchemaURL {
		t.Errorf("schema URLs %q / %q, want %s", rm.SchemaUrl(), rm.ScopeMetrics().At(0).SchemaUrl(), spec.SchemaURL)
	}
	res := rm.Resource().Attributes()
	if v, ok := res.Get(spec.AttrHwModel); !ok || v.Str() != "NVIDIA A100-SXM4-80GB" {
		t.Errorf("GPU product name not moved to hw.model: %v", res.AsRaw())
	}
	if _, ok := res.Get(spec.AttrHwName); ok {
		t.Errorf("hw.name left beside hw.model: %v", res.AsRaw())
	}
	ms := rm.ScopeMetrics().At(0).Metrics()
	want := []string{spec.HwGpuTemperature, spec.HwGpuMemoryControllerUtilization, spec.EngineInterTokenLatency}
	if ms.Len() != len(want) {
		t.Fatalf("%d metrics out, want %d", ms.Len(), len(want))
	}
	for i, name := range want {
		if got := ms.At(i).Name(); got != name {
			t.Errorf("metric %d is %s, want %s", i, got, name)
		}
	}
	if v, ok := ms.At(0).Gauge().DataPoints().At(0).Attributes().Get(spec.AttrHwType); !ok || v.Str() != "gpu" {
		t.Errorf("renamed temperature lacks hw.type=gpu")
	}
}

// TestCurrentNamesAreNotRenamed: data that carries this release's schema
// URL means the semconv names (hw.gpu.memory.utilization is usage/limit
// there): nothing is renamed.
func TestCurrentNamesAreNotRenamed(t *testing.T) {
	n := newTestNormalizer(t, nil)
	md, _ := n.processMetrics(context.Background(), gpuMetrics(spec.SchemaURL,
		spec.HwGpuMemoryUtilization, spec.GenAIServerTimePerOutputToken))
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	if ms.At(0).Name() != spec.HwGpuMemoryUtilization || ms.At(1).Name() != spec.GenAIServerTimePerOutputToken {
		t.Fatalf("current names renamed: %s, %s", ms.At(0).Name(), ms.At(1).Name())
	}
	if _, ok := md.ResourceMetrics().At(0).Resource().Attributes().Get(spec.AttrHwName); !ok {
		t.Fatalf("hw.name of versioned data was touched")
	}
}

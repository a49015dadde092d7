// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor

import (
	"context"
	"os"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.yaml.in/yaml/v3"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor/internal/metadatatest"
)

// countedBatch builds a batch whose unmapped and dropped content is known:
//
//   - vllm resource: two unmapped metrics (2 + 1 points), an alias
//     (vllm:gpu_cache_usage_perc, 2 points) arriving with its current name,
//     a histogram mapping fed a gauge (3 points), and metrics that are
//     mapped or already unified (not counted);
//   - a second vllm resource: one unmapped metric (1 point);
//   - tgi resource: one unmapped metric (2 points) and a histogram read as
//     a counter with one of its 3 points lacking a sum;
//   - triton resource: a label-keyed gauge with 2 of its 4 points selected
//     by no mapping;
//   - a resource without an engine and one of an engine with no table:
//     nothing of theirs is counted.
func countedBatch() pmetric.Metrics {
	md := pmetric.NewMetrics()
	resource := func(engine string) pmetric.MetricSlice {
		rm := md.ResourceMetrics().AppendEmpty()
		if engine != "" {
			rm.Resource().Attributes().PutStr(spec.AttrEngineName, engine)
		}
		return rm.ScopeMetrics().AppendEmpty().Metrics()
	}
	gauge := func(ms pmetric.MetricSlice, name string, points int) pmetric.NumberDataPointSlice {
		m := ms.AppendEmpty()
		m.SetName(name)
		dps := m.SetEmptyGauge().DataPoints()
		for i := range points {
			dps.AppendEmpty().SetDoubleValue(float64(i))
		}
		return dps
	}
	histogram := func(ms pmetric.MetricSlice, name string, points, withSum int) {
		m := ms.AppendEmpty()
		m.SetName(name)
		dps := m.SetEmptyHistogram().DataPoints()
		for i := range points {
			dp := dps.AppendEmpty()
			dp.SetCount(1)
			if i < withSum {
				dp.SetSum(float64(i + 1))
			}
		}
	}

	vllm := resource(spec.EngineVLLM)
	gauge(vllm, "vllm:num_requests_swapped", 2)
	gauge(vllm, "vllm:cpu_cache_usage_perc", 1)
	gauge(vllm, "vllm:kv_cache_usage_perc", 1)
	gauge(vllm, "vllm:gpu_cache_usage_perc", 2)
	gauge(vllm, "vllm:time_to_first_token_seconds", 3)
	gauge(vllm, "vllm:num_requests_running", 1)
	gauge(vllm, spec.EngineUp, 1)

	gauge(resource(spec.EngineVLLM), "vllm:avg_prompt_throughput_toks_per_s", 1)

	tgi := resource(spec.EngineTGI)
	histogram(tgi, "tgi_request_max_new_tokens", 2, 2)
	histogram(tgi, "tgi_request_input_length", 3, 2)

	triton := resource(spec.EngineTriton)
	dps := gauge(triton, "nv_trt_llm_request_metrics", 4)
	for i, rt := range []string{"active", "waiting", "max", "scheduled"} {
		dps.At(i).Attributes().PutStr("request_type", rt)
	}

	plain := resource("")
	gauge(plain, spec.HwGpuMemoryUsage, 1)
	gauge(plain, "app_requests", 2)
	gauge(resource("no-such-engine"), "foo", 3)
	return md
}

func reasonSet(r dropReason) attribute.Set {
	return attribute.NewSet(attribute.String(attrDropReason, dropReasonNames[r]))
}

func engineSet(e string) attribute.Set {
	return attribute.NewSet(attribute.String(spec.AttrEngineName, e))
}

// TestOwnTelemetryCounts runs countedBatch through the factory's processor
// under both unmapped_metrics policies and checks the exact counts.
func TestOwnTelemetryCounts(t *testing.T) {
	unmapped := []metricdata.DataPoint[int64]{
		{Attributes: engineSet(spec.EngineTGI), Value: 1},
		{Attributes: engineSet(spec.EngineVLLM), Value: 3},
	}
	for _, tc := range []struct {
		policy  string
		dropped []metricdata.DataPoint[int64]
	}{
		{UnmappedKeep, []metricdata.DataPoint[int64]{
			{Attributes: reasonSet(reasonAliasSuperseded), Value: 2},
			{Attributes: reasonSet(reasonTypeMismatch), Value: 3},
			{Attributes: reasonSet(reasonMissingSum), Value: 1},
		}},
		{UnmappedDrop, []metricdata.DataPoint[int64]{
			// vllm 2+1+1, tgi 2, triton's 2 unselected points.
			{Attributes: reasonSet(reasonUnmapped), Value: 8},
			{Attributes: reasonSet(reasonAliasSuperseded), Value: 2},
			{Attributes: reasonSet(reasonTypeMismatch), Value: 3},
			{Attributes: reasonSet(reasonMissingSum), Value: 1},
		}},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			tt := componenttest.NewTelemetry()
			t.Cleanup(func() { _ = tt.Shutdown(context.Background()) })
			f := NewFactory()
			cfg := f.CreateDefaultConfig().(*Config)
			cfg.UnmappedMetrics = tc.policy
			sink := new(consumertest.MetricsSink)
			p, err := f.CreateMetrics(context.Background(), metadatatest.NewSettings(tt), cfg, sink)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.ConsumeMetrics(context.Background(), countedBatch()); err != nil {
				t.Fatal(err)
			}
			opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars()}
			metadatatest.AssertEqualLlmnormalizeMetricsUnmapped(t, tt, unmapped, opts...)
			metadatatest.AssertEqualLlmnormalizeDatapointsDropped(t, tt, tc.dropped, opts...)

			// The counts add up with what left the processor: every point
			// that came in either went out (as itself or as unified points)
			// or was counted as dropped.
			if tc.policy == UnmappedDrop {
				in, out := countedBatch().DataPointCount(), sink.AllMetrics()[0].DataPointCount()
				var dropped int64
				for _, dp := range tc.dropped {
					dropped += dp.Value
				}
				// Points in: 27. Out: vllm running + kv_cache + up (3),
				// tgi input tokens (2), triton running + waiting (2),
				// the 6 of the two resources without a table.
				if in != 27 || out != 13 || int64(in-out) != dropped {
					t.Errorf("points in %d, out %d, counted dropped %d", in, out, dropped)
				}
			}
		})
	}
}

// TestOwnTelemetryAccumulatesPerBatch checks that a second batch adds to
// the first (the counters are cumulative, not overwritten per batch).
func TestOwnTelemetryAccumulatesPerBatch(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tt.Shutdown(context.Background()) })
	n := newMeteredNormalizer(t, tt.NewTelemetrySettings(), nil)
	for range 2 {
		if _, err := n.processMetrics(context.Background(), countedBatch()); err != nil {
			t.Fatal(err)
		}
	}
	metadatatest.AssertEqualLlmnormalizeMetricsUnmapped(t, tt, []metricdata.DataPoint[int64]{
		{Attributes: engineSet(spec.EngineTGI), Value: 2},
		{Attributes: engineSet(spec.EngineVLLM), Value: 6},
	}, metricdatatest.IgnoreTimestamp())
}

// TestDropReasonsMatchMetadata keeps the reason values the code emits equal
// to the enum metadata.yaml documents (documentation.md is generated from
// it).
func TestDropReasonsMatchMetadata(t *testing.T) {
	b, err := os.ReadFile("metadata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Attributes map[string]struct {
			Enum []string `yaml:"enum"`
		} `yaml:"attributes"`
	}
	if err := yaml.Unmarshal(b, &md); err != nil {
		t.Fatal(err)
	}
	a, ok := md.Attributes[attrDropReason]
	if !ok {
		t.Fatalf("metadata.yaml has no %q attribute", attrDropReason)
	}
	if !slices.Equal(a.Enum, dropReasonNames[:]) {
		t.Errorf("metadata.yaml's %s enum is %v, the code emits %v: change both together", attrDropReason, a.Enum, dropReasonNames)
	}
	if _, ok := md.Attributes[spec.AttrEngineName]; !ok {
		t.Errorf("metadata.yaml has no %q attribute", spec.AttrEngineName)
	}
}

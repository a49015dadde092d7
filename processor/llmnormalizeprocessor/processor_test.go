// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/pdatautil"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
	"github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor/internal/metadata"
	"github.com/llmops-otel/otelcol-llmops/tests/enginereplay"
)

var engines = []enginereplay.Engine{"vllm", "tgi", "sglang", "trtllm", "triton", "nim", "llamacpp"}

// TestEnginesGolden normalises one scrape of each engine's fixture and
// compares every point with a golden file.
func TestEnginesGolden(t *testing.T) {
	n := newTestNormalizer(t, func(c *Config) { c.UnmappedMetrics = UnmappedDrop })
	for _, e := range engines {
		t.Run(string(e), func(t *testing.T) {
			md, err := n.processMetrics(context.Background(), scrapeEngine(t, e))
			if err != nil {
				t.Fatal(err)
			}
			// With unmapped metrics dropped, only unified names remain.
			for name := range collect(md) {
				if _, ok := spec.LookupMetric(name); !ok {
					t.Errorf("%s: engine-native name %q left after normalisation", e, name)
				}
			}
			path := filepath.Join("testdata", "engines", string(e)+".yaml")
			if os.Getenv("UPDATE_GOLDEN") != "" {
				if err := golden.WriteMetrics(t, path, md); err != nil {
					t.Fatal(err)
				}
			}
			want, err := golden.ReadMetrics(path)
			if err != nil {
				t.Fatalf("%v (UPDATE_GOLDEN=1 creates it)", err)
			}
			if err := pmetrictest.CompareMetrics(want, md, pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
				pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestUnifiedPointsFollowTheSpec checks every produced point against the
// registry: instrument, unit, required attributes.
func TestUnifiedPointsFollowTheSpec(t *testing.T) {
	n := newTestNormalizer(t, nil)
	for _, e := range engines {
		md, _ := n.processMetrics(context.Background(), scrapeEngine(t, e))
		ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
		for i := 0; i < ms.Len(); i++ {
			m := ms.At(i)
			u, ok := spec.LookupMetric(m.Name())
			if !ok {
				continue
			}
			if m.Unit() != u.Unit {
				t.Errorf("%s %s: unit %q, spec %q", e, m.Name(), m.Unit(), u.Unit)
			}
			var inst spec.Instrument
			switch m.Type() {
			case pmetric.MetricTypeGauge:
				inst = spec.Gauge
			case pmetric.MetricTypeHistogram:
				inst = spec.Histogram
			case pmetric.MetricTypeSum:
				inst = spec.UpDownCounter
				if m.Sum().IsMonotonic() {
					inst = spec.Counter
				}
			}
			if inst != u.Instrument {
				t.Errorf("%s %s: %s, spec says %s", e, m.Name(), inst, u.Instrument)
			}
			pdatautil.EachAttributes(m, func(attrs pcommon.Map) bool {
				for _, a := range u.Attributes {
					if _, ok := attrs.Get(a.Name); a.Requirement == spec.Required && !ok {
						t.Errorf("%s %s: point without required %s (%v)", e, m.Name(), a.Name, attrs.AsRaw())
					}
				}
				for _, old := range []string{"model_name", "finished_reason"} {
					if _, ok := attrs.Get(old); ok {
						t.Errorf("%s %s: engine label %s not renamed", e, m.Name(), old)
					}
				}
				return true
			})
		}
	}
}

// TestAliasesEmittedOnce: the vLLM fixture carries both the old and the
// new name of KV-cache usage and of inter-token latency.
func TestAliasesEmittedOnce(t *testing.T) {
	n := newTestNormalizer(t, nil)
	md, _ := n.processMetrics(context.Background(), scrapeEngine(t, "vllm"))
	got := collect(md)
	for _, name := range []string{spec.EngineKvCacheUtilization, spec.GenAIServerTimePerOutputToken} {
		seen := map[string]int{}
		for _, p := range got[name] {
			seen[p.attrsKey()]++
		}
		if len(seen) == 0 {
			t.Errorf("%s missing", name)
		}
		for k, c := range seen {
			if c > 1 {
				t.Errorf("%s emitted %d times for %s", name, c, k)
			}
		}
	}
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	names := map[string]int{}
	for i := 0; i < ms.Len(); i++ {
		names[ms.At(i).Name()]++
	}
	for name, c := range names {
		if c > 1 {
			t.Errorf("metric %s appears %d times in one scope", name, c)
		}
	}
}

func (p point) attrsKey() string {
	keys := make([]string, 0, len(p.attrs))
	for k, v := range p.attrs {
		keys = append(keys, k+"="+stringify(v))
	}
	return strings.Join(sorted(keys), ",")
}

func stringify(v any) string {
	val := pcommon.NewValueEmpty()
	_ = val.FromRaw(v)
	return val.AsString()
}

func sorted(s []string) []string {
	sort.Strings(s)
	return s
}

func TestTGIHasNoTimeToFirstToken(t *testing.T) {
	n := newTestNormalizer(t, nil)
	md, _ := n.processMetrics(context.Background(), scrapeEngine(t, "tgi"))
	got := collect(md)
	if len(got[spec.GenAIServerTimeToFirstToken]) != 0 {
		t.Fatal("TGI has no time to first token: none may be invented")
	}
	// The recorded fixture predates tgi_batch_max_total_tokens: without the
	// denominator, no KV pressure may be derived.
	if kv := got[spec.EngineKvCacheUtilization]; len(kv) != 0 {
		t.Fatalf("KV pressure invented without its denominator: %v", kv)
	}
}

func TestTGIKVPressureIsDerived(t *testing.T) {
	n := newTestNormalizer(t, nil)
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(spec.AttrEngineName, spec.EngineTGI)
	rm.Resource().Attributes().PutStr(spec.AttrGenAIRequestModel, "bigscience/bloom-560m")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	for name, v := range map[string]float64{"tgi_batch_current_max_tokens": 3072, "tgi_batch_max_total_tokens": 4096} {
		m := ms.AppendEmpty()
		m.SetName(name)
		m.SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(v)
	}
	md, _ = n.processMetrics(context.Background(), md)
	kv := collect(md)[spec.EngineKvCacheUtilization]
	if len(kv) != 1 || kv[0].value != 0.75 {
		t.Fatalf("derived KV pressure: %v", kv)
	}
	if kv[0].attrs[spec.AttrEngineName] != spec.EngineTGI || kv[0].attrs[spec.AttrGenAIRequestModel] != "bigscience/bloom-560m" {
		t.Fatalf("derived point attributes: %v", kv[0].attrs)
	}
}

func TestUnitConversionOfCustomHistogram(t *testing.T) {
	n := newTestNormalizer(t, func(c *Config) {
		c.Custom = []CustomMapping{{Source: "myengine_ttft_ms", SourceType: "histogram", SourceUnit: "ms",
			Target: spec.GenAIServerTimeToFirstToken, Labels: map[string]string{"served_model": spec.AttrGenAIRequestModel}}}
	})
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(spec.AttrEngineName, spec.EngineCustom)
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("myengine_ttft_ms")
	h := m.SetEmptyHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	dp := h.DataPoints().AppendEmpty()
	dp.ExplicitBounds().FromRaw([]float64{10, 100, 1000})
	dp.BucketCounts().FromRaw([]uint64{1, 2, 3, 0})
	dp.SetSum(2500)
	dp.SetCount(6)
	dp.Attributes().PutStr("served_model", "m1")
	md, _ = n.processMetrics(context.Background(), md)
	out := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0)
	if out.Name() != spec.GenAIServerTimeToFirstToken || out.Unit() != "s" {
		t.Fatalf("got %s %s", out.Name(), out.Unit())
	}
	q := out.Histogram().DataPoints().At(0)
	if b := q.ExplicitBounds().AsRaw(); b[0] != 0.01 || b[2] != 1 || q.Sum() != 2.5 || q.Count() != 6 {
		t.Fatalf("bounds %v sum %v", b, q.Sum())
	}
	if v, _ := q.Attributes().Get(spec.AttrGenAIRequestModel); v.Str() != "m1" {
		t.Fatalf("label not renamed: %v", q.Attributes().AsRaw())
	}
	if v, _ := q.Attributes().Get(spec.AttrEngineName); v.Str() != spec.EngineCustom {
		t.Fatalf("engine not set on the point: %v", q.Attributes().AsRaw())
	}
}

// TestUnrecognisedDataPassesThrough: GPU metrics from nvml and application
// metrics are not touched, whatever the policy.
func TestUnrecognisedDataPassesThrough(t *testing.T) {
	n := newTestNormalizer(t, func(c *Config) { c.UnmappedMetrics = UnmappedDrop })
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("hw.id", "GPU-1")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	for _, name := range []string{spec.HwGpuMemoryUsage, "app_requests_total", "vllm_looking_but_not:x"} {
		m := ms.AppendEmpty()
		m.SetName(name)
		m.SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(1.5)
	}
	want := pmetric.NewMetrics()
	md.CopyTo(want)
	got, _ := n.processMetrics(context.Background(), md)
	if err := pmetrictest.CompareMetrics(want, got); err != nil {
		t.Fatal(err)
	}
}

func TestUnmappedPolicy(t *testing.T) {
	for policy, wantKept := range map[string]bool{UnmappedKeep: true, UnmappedDrop: false} {
		n := newTestNormalizer(t, func(c *Config) { c.UnmappedMetrics = policy })
		md, _ := n.processMetrics(context.Background(), scrapeEngine(t, "vllm"))
		_, kept := collect(md)["python_gc_objects_collected_total"]
		if kept != wantKept {
			t.Errorf("policy %s: unmapped engine metric kept=%v", policy, kept)
		}
	}
}

func TestConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	if err := testutil.LoadConfig(t, metadata.Type, "custom", cfg); err != nil {
		t.Fatal(err)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.UnmappedMetrics != UnmappedDrop || len(cfg.Custom) != 2 || cfg.Custom[1].Labels["served_model"] != spec.AttrGenAIRequestModel {
		t.Fatalf("config: %+v", cfg)
	}
	for name, wants := range map[string][]string{
		"bad_unit":      {"custom[0]", `"By"`},
		"bad_target":    {"unmapped_metrics", "custom[0]", "llm.engine.kv_cache.fullness", "custom[1]", "histogram cannot become"},
		"bad_kv_models": {"kv_cache_models[0].model is empty", "kv_cache_models[1] (acme/x)", `dtype "int3"`},
	} {
		cfg := createDefaultConfig().(*Config)
		if err := testutil.LoadConfig(t, metadata.Type, name, cfg); err != nil {
			t.Fatal(err)
		}
		err := confmap.Validate(cfg)
		if err == nil {
			t.Errorf("%s accepted", name)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not mention %s", name, err, w)
			}
		}
	}
}

func TestSpanAttributes(t *testing.T) {
	n := newTestNormalizer(t, nil)
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	s := spans.AppendEmpty()
	s.SetName("llm_request")
	a := s.Attributes()
	a.PutInt("gen_ai.usage.prompt_tokens", 512)
	a.PutInt("gen_ai.usage.completion_tokens", 64)
	a.PutStr("gen_ai.system", "vllm")
	a.PutStr("llm.prompt_template_id", "tmpl-7")
	a.PutBool("llm.fallback_triggered", true)
	a.PutInt("retrieval_latency_ms", 120)
	a.PutStr("trace_id", "1-5e273f9a-1b2c3d4e5f6a7b8c9d0e1f2a")
	app := spans.AppendEmpty().Attributes()
	app.PutStr("llm.model", "gpt-x")
	app.PutInt("llm.input_tokens", 10)
	app.PutInt("llm.output_tokens", 20)
	app.PutInt("gen_ai.usage.input_tokens", 11) // already current: wins
	app.PutStr("otel.trace_id", "4BF92F3577B34DA6A3CE929D0E0E4736")
	app.PutStr("fallback_triggered", "true")
	app.PutStr("retrieval.duration", "fast") // not a number: kept as it came

	if _, err := n.processTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"gen_ai.usage.input_tokens": int64(512), "gen_ai.usage.output_tokens": int64(64), "gen_ai.provider.name": "vllm",
		"gen_ai.prompt.name": "tmpl-7", "llm.app.fallback.triggered": true, "llm.app.retrieval.duration": 0.12,
		"trace_id": "1-5e273f9a-1b2c3d4e5f6a7b8c9d0e1f2a", "llm.link.trace_id": "5e273f9a1b2c3d4e5f6a7b8c9d0e1f2a",
	}
	assertAttrs(t, s.Attributes(), want)
	assertAttrs(t, spans.At(1).Attributes(), map[string]any{
		"gen_ai.request.model": "gpt-x", "gen_ai.usage.input_tokens": int64(11), "gen_ai.usage.output_tokens": int64(20),
		"otel.trace_id": "4BF92F3577B34DA6A3CE929D0E0E4736", "llm.link.trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
		"llm.app.fallback.triggered": true, "retrieval.duration": "fast",
	})
}

func assertAttrs(t *testing.T, got pcommon.Map, want map[string]any) {
	t.Helper()
	raw := got.AsRaw()
	if len(raw) != len(want) {
		t.Errorf("attributes %v, want %v", raw, want)
		return
	}
	for k, v := range want {
		if raw[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, raw[k], v, raw)
		}
	}
}

func TestNormalizeTraceID(t *testing.T) {
	for in, want := range map[string]string{
		"1-5e273f9a-1b2c3d4e5f6a7b8c9d0e1f2a":  "5e273f9a1b2c3d4e5f6a7b8c9d0e1f2a",
		"4BF92F3577B34DA6A3CE929D0E0E4736":     "4bf92f3577b34da6a3ce929d0e0e4736",
		"4bf92f35-77b3-4da6-a3ce-929d0e0e4736": "4bf92f3577b34da6a3ce929d0e0e4736",
		"0x4bf92f3577b34da6a3ce929d0e0e4736":   "4bf92f3577b34da6a3ce929d0e0e4736",
		"00000000000000000000000000000000":     "",
		"not-a-trace-id":                       "",
		"4bf92f3577b34da6a3ce929d0e0e473g":     "",
	} {
		got, ok := normalizeTraceID(in)
		if got != want || ok != (want != "") {
			t.Errorf("%q → %q %v, want %q", in, got, ok, want)
		}
	}
}

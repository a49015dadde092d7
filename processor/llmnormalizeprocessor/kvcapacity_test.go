// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor

import (
	"context"
	"math"
	"testing"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/pdatautil"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
	"github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor/internal/metadata"
)

// engineScrape builds one scrape of an engine: gauges by name, each a list
// of points given as a value and labels.
type gaugePoint struct {
	v      float64
	labels map[string]string
}

func engineScrape(engine string, gauges map[string][]gaugePoint) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(spec.AttrEngineName, engine)
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	for name, pts := range gauges {
		m := ms.AppendEmpty()
		m.SetName(name)
		g := m.SetEmptyGauge()
		for _, p := range pts {
			dp := g.DataPoints().AppendEmpty()
			dp.SetTimestamp(1_000_000_000)
			dp.SetDoubleValue(p.v)
			for k, v := range p.labels {
				dp.Attributes().PutStr(k, v)
			}
		}
	}
	return md
}

// vllmScrape is a vLLM scrape with its cache configuration, KV utilization
// and running requests.
func vllmScrape(model, dtype, blocks string, util, running float64) pmetric.Metrics {
	m := map[string]string{"model_name": model}
	return engineScrape(spec.EngineVLLM, map[string][]gaugePoint{
		"vllm:cache_config_info": {{1, map[string]string{"block_size": "16", "cache_dtype": dtype, "num_gpu_blocks": blocks,
			"num_gpu_blocks_override": "None", "swap_space_bytes": "4294967296", "enable_prefix_caching": "True"}}},
		"vllm:kv_cache_usage_perc":  {{util, m}},
		"vllm:num_requests_running": {{running, m}},
	})
}

// kvFigures returns the value of every unified KV-cache figure in md (the
// first point of each), and the fragmentation method.
func kvFigures(t *testing.T, md pmetric.Metrics) (map[string]float64, string) {
	t.Helper()
	got, method := map[string]float64{}, ""
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		dps, ok := pdatautil.NumberPoints(m)
		if !ok || dps.Len() == 0 {
			continue
		}
		got[m.Name()] = value(dps.At(0))
		if m.Name() == spec.EngineKvCacheFragmentation {
			if v, ok := dps.At(0).Attributes().Get(spec.AttrEngineKvCacheFragmentationMethod); ok {
				method = v.Str()
			}
		}
		if m.Name() == spec.EngineKvCacheBlockLimit {
			if _, ok := dps.At(0).Attributes().Get("swap_space_bytes"); ok {
				t.Error("the other settings of the info gauge are attributes of block.limit")
			}
		}
	}
	return got, method
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestKVCapacityFromVLLMCacheConfig(t *testing.T) {
	n := newTestNormalizer(t, nil)
	md, err := n.processMetrics(context.Background(), vllmScrape("meta-llama/Llama-3.1-8B-Instruct", "auto", "12672", 12288.0/12672, 256))
	if err != nil {
		t.Fatal(err)
	}
	got, method := kvFigures(t, md)
	const bpt = 2 * 32 * 8 * 128 * 2 // Llama-3.1-8B in bf16: 128 KiB per token
	want := map[string]float64{
		spec.EngineKvCacheBlockLimit:  12672,
		spec.EngineKvCacheBlockSize:   16,
		spec.EngineKvCacheBlockUsage:  12288,
		spec.EngineKvCacheTokenLimit:  12672 * 16,
		spec.EngineKvCacheMemoryLimit: 12672 * 16 * bpt,
		spec.EngineKvCacheMemoryUsage: 12288 * 16 * bpt,
		// 256 running requests leave half a block (7.5 of 16 slots) empty
		// each, in 12,288 blocks.
		spec.EngineKvCacheFragmentation: 256 * 7.5 / (12288 * 16),
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || !near(g, w) {
			t.Errorf("%s = %v (present %v), want %v", name, g, ok, w)
		}
	}
	if method != spec.KVFragmentationEstimated {
		t.Errorf("fragmentation method %q, want estimated", method)
	}
}

func TestKVCapacityBytesNeedGeometryAndDtype(t *testing.T) {
	// An fp8 cache halves the bytes of a bf16 model.
	n := newTestNormalizer(t, nil)
	md, _ := n.processMetrics(context.Background(), vllmScrape("meta-llama/Llama-3.1-8B-Instruct", "fp8", "1000", 0.5, 1))
	got, _ := kvFigures(t, md)
	if w := 1000.0 * 16 * 2 * 32 * 8 * 128; !near(got[spec.EngineKvCacheMemoryLimit], w) {
		t.Errorf("fp8 memory.limit %v, want %v", got[spec.EngineKvCacheMemoryLimit], w)
	}

	// A model the table does not know: tokens, but no bytes.
	md, _ = n.processMetrics(context.Background(), vllmScrape("acme/house-model-13b", "auto", "1000", 0.5, 1))
	got, _ = kvFigures(t, md)
	if _, ok := got[spec.EngineKvCacheMemoryLimit]; ok {
		t.Error("bytes for a model of unknown geometry")
	}
	if got[spec.EngineKvCacheTokenLimit] != 16000 {
		t.Errorf("token.limit %v, want 16000", got[spec.EngineKvCacheTokenLimit])
	}

	// Configured, it has bytes.
	cfg := createDefaultConfig().(*Config)
	if err := testutil.LoadConfig(t, metadata.Type, "kv_models", cfg); err != nil {
		t.Fatal(err)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	n = newTestNormalizer(t, func(c *Config) { c.KVCacheModels = cfg.KVCacheModels })
	md, _ = n.processMetrics(context.Background(), vllmScrape("acme/house-model-13b", "auto", "1000", 0.5, 1))
	got, _ = kvFigures(t, md)
	if w := 16000.0 * 2 * 40 * 8 * 128 * 2; !near(got[spec.EngineKvCacheMemoryLimit], w) {
		t.Errorf("configured geometry: memory.limit %v, want %v", got[spec.EngineKvCacheMemoryLimit], w)
	}

	// A dtype we cannot size gives no bytes rather than wrong ones.
	md, _ = n.processMetrics(context.Background(), vllmScrape("meta-llama/Llama-3.1-8B-Instruct", "int4_mystery", "1000", 0.5, 1))
	got, _ = kvFigures(t, md)
	if _, ok := got[spec.EngineKvCacheMemoryLimit]; ok {
		t.Error("bytes for a cache dtype of unknown size")
	}
}

func TestKVCapacityKeepsWhatTheEngineReports(t *testing.T) {
	// TensorRT-LLM under Triton reports used blocks itself; SGLang reports
	// tokens held, so its fragmentation would be measured.
	n := newTestNormalizer(t, nil)
	sel := func(typ string) map[string]string {
		return map[string]string{"kv_cache_block_type": typ, "model": "tensorrt_llm", "version": "1"}
	}
	md, _ := n.processMetrics(context.Background(), engineScrape(spec.EngineTriton, map[string][]gaugePoint{
		"nv_trt_llm_kv_cache_block_metrics": {{0.5, sel("fraction")}, {1000, sel("max")}, {400, sel("used")}, {64, sel("tokens_per")}},
	}))
	got, _ := kvFigures(t, md)
	if got[spec.EngineKvCacheBlockUsage] != 400 || got[spec.EngineKvCacheTokenLimit] != 64000 {
		t.Errorf("triton: block.usage %v (want the reported 400, not 0.5 × 1000), token.limit %v (want 64000)",
			got[spec.EngineKvCacheBlockUsage], got[spec.EngineKvCacheTokenLimit])
	}

	// A custom engine that reports blocks and tokens held: measured.
	n = newTestNormalizer(t, func(c *Config) {
		for _, m := range []struct{ src, unit, target string }{
			{"my_blocks_total", "{block}", spec.EngineKvCacheBlockLimit},
			{"my_blocks_used", "{block}", spec.EngineKvCacheBlockUsage},
			{"my_block_tokens", "{token}", spec.EngineKvCacheBlockSize},
			{"my_tokens_held", "{token}", spec.EngineKvCacheTokenUsage},
		} {
			c.Custom = append(c.Custom, CustomMapping{Source: m.src, SourceType: "gauge", SourceUnit: m.unit, Target: m.target})
		}
	})
	md, _ = n.processMetrics(context.Background(), engineScrape(spec.EngineCustom, map[string][]gaugePoint{
		"my_blocks_total": {{100, nil}}, "my_blocks_used": {{50, nil}}, "my_block_tokens": {{16, nil}}, "my_tokens_held": {{656, nil}},
	}))
	got, method := kvFigures(t, md)
	if w := 1 - 656.0/800; !near(got[spec.EngineKvCacheFragmentation], w) || method != spec.KVFragmentationMeasured {
		t.Errorf("fragmentation %v (%s), want %v measured", got[spec.EngineKvCacheFragmentation], method, w)
	}
}

func TestKVCapacityPairsRanks(t *testing.T) {
	// Two data-parallel ranks of one SGLang server, each with its own pool.
	n := newTestNormalizer(t, nil)
	r := func(rank string) map[string]string {
		return map[string]string{"dp_rank": rank, "model_name": "Qwen/Qwen2.5-7B-Instruct"}
	}
	md, _ := n.processMetrics(context.Background(), engineScrape(spec.EngineSGLang, map[string][]gaugePoint{
		"sglang:token_usage":          {{0.5, r("0")}, {0.25, r("1")}},
		"sglang:max_total_num_tokens": {{1000, r("1")}, {2000, r("0")}},
	}))
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	found := 0
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Name() != spec.EngineKvCacheMemoryUsage {
			continue
		}
		dps := ms.At(i).Gauge().DataPoints()
		for j := 0; j < dps.Len(); j++ {
			rank, _ := dps.At(j).Attributes().Get(spec.AttrEngineRank)
			want := map[string]float64{"0": 0.5 * 2000 * 57344, "1": 0.25 * 1000 * 57344}[rank.Str()]
			if !near(value(dps.At(j)), want) {
				t.Errorf("rank %s: memory.usage %v, want %v", rank.Str(), value(dps.At(j)), want)
			}
			found++
		}
	}
	if found != 2 {
		t.Errorf("%d memory.usage points, want one per rank", found)
	}
}

func TestInfoGaugeSettingNoneIsLeftOut(t *testing.T) {
	n := newTestNormalizer(t, nil)
	md, _ := n.processMetrics(context.Background(), engineScrape(spec.EngineVLLM, map[string][]gaugePoint{
		"vllm:cache_config_info": {{1, map[string]string{"block_size": "16", "num_gpu_blocks": "None"}}},
	}))
	got, _ := kvFigures(t, md)
	if _, ok := got[spec.EngineKvCacheBlockLimit]; ok {
		t.Error(`num_gpu_blocks="None" became a point`)
	}
	if got[spec.EngineKvCacheBlockSize] != 16 {
		t.Errorf("block.size %v, want 16", got[spec.EngineKvCacheBlockSize])
	}
}

// An application's quality signals under a common spelling become the
// unified names on any resource, percentages as fractions, and the
// template label semconv's gen_ai.prompt.name.
func TestApplicationQualityAliases(t *testing.T) {
	n := newTestNormalizer(t, nil)
	md := engineScrape(spec.EngineVLLM, map[string][]gaugePoint{
		"hallucination_rate_percent": {{15, map[string]string{"prompt_template_id": "support-v3"}}},
		"embedding_l2_norm":          {{0.98, nil}},
	})
	md.ResourceMetrics().At(0).Resource().Attributes().Clear() // an application, not an engine
	md.ResourceMetrics().At(0).Resource().Attributes().PutStr(spec.AttrServiceName, "support-bot")
	if _, err := n.processMetrics(context.Background(), md); err != nil {
		t.Fatal(err)
	}
	got := map[string]pmetric.NumberDataPoint{}
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		got[ms.At(i).Name()] = ms.At(i).Gauge().DataPoints().At(0)
	}
	h, ok := got[spec.AppHallucinationRate]
	if !ok || !near(value(h), 0.15) {
		t.Fatalf("hallucination rate: %v", got)
	}
	if v, _ := h.Attributes().Get(spec.AttrGenAIPromptName); v.Str() != "support-v3" {
		t.Errorf("template: %v", h.Attributes().AsRaw())
	}
	if _, ok := got[spec.AppEmbeddingNorm]; !ok {
		t.Errorf("embedding norm not mapped: %v", got)
	}
}

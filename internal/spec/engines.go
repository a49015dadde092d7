// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import "strings"

// SourceDCGM names the dcgm-exporter mapping table: not an engine (no
// llm.engine.name carries it), but a source of native names llmnormalize
// maps, recognised on any resource.
const SourceDCGM = "dcgm"

// RayPrefix is prepended to vLLM's names by Ray Serve (ray_vllm:...); it is
// stripped before a name is looked up in the mapping tables.
const RayPrefix = "ray_"

// DCGMPrefix starts every dcgm-exporter field name (DCGM_FI_DEV_GPU_UTIL).
const DCGMPrefix = "DCGM_FI_"

// EnginePrefix is a metric-name prefix that identifies the engine serving
// the metric.
type EnginePrefix struct {
	Prefix string
	Engine string
}

// enginePrefixes identify an engine by the prefix of its metric names. The
// order matters where prefixes overlap (ray_vllm: before vllm:) and breaks
// ties when a server exposes several (see the llmengine receiver).
var enginePrefixes = []EnginePrefix{
	{RayPrefix + "vllm:", EngineVLLM},
	{"vllm:", EngineVLLM},
	{"sglang:", EngineSGLang},
	{"tgi_", EngineTGI},
	{"trtllm_", EngineTRTLLM},
	{"nv_trt_llm_", EngineTriton},
	{"nv_inference_", EngineTriton},
	{"llamacpp:", EngineLlamaCpp},
}

// nimMetricNames are the vLLM-style names NIM for LLMs serves without a
// prefix at /v1/metrics.
var nimMetricNames = map[string]bool{
	"num_requests_running": true, "num_requests_waiting": true, "gpu_cache_usage_perc": true,
	"prompt_tokens_total": true, "generation_tokens_total": true, "time_to_first_token_seconds": true,
	"time_per_output_token_seconds": true, "e2e_request_latency_seconds": true, "request_success_total": true,
	"num_requests_swapped": true, "num_preemptions_total": true, "request_prompt_tokens": true,
	"request_generation_tokens": true,
}

// EnginePrefixes returns the engine-detection prefixes, in match order.
func EnginePrefixes() []EnginePrefix { return append([]EnginePrefix(nil), enginePrefixes...) }

// EngineForMetricName returns the engine whose prefix the metric name
// carries, or "" (NIM's unprefixed names included: see IsNIMMetricName).
func EngineForMetricName(name string) string {
	for _, p := range enginePrefixes {
		if strings.HasPrefix(name, p.Prefix) {
			return p.Engine
		}
	}
	return ""
}

// IsNIMMetricName reports whether name is one of the unprefixed vLLM-style
// names NIM serves.
func IsNIMMetricName(name string) bool { return nimMetricNames[name] }

// IsEngineNativeMetric reports whether name is an engine's (or
// dcgm-exporter's) own metric name rather than one of ours: the source of a
// built-in mapping (with or without Ray's prefix), a name carrying an
// engine's prefix, or one of NIM's unprefixed names. llmnormalize passes
// such names through unchanged under unmapped_metrics: keep; they are not
// part of the unified spec.
func IsEngineNativeMetric(name string) bool {
	if EngineForMetricName(name) != "" || nimMetricNames[name] || strings.HasPrefix(name, DCGMPrefix) {
		return true
	}
	name = strings.TrimPrefix(name, RayPrefix)
	for _, table := range mappingTables {
		for _, m := range table {
			if m.Source == name {
				return true
			}
		}
	}
	return false
}

// keptEngineLabels are engine labels llmnormalize leaves as they are on the
// unified metrics it maps (see the per-engine mapping files): the engine's
// own names, with no unified attribute, not part of this spec.
var keptEngineLabels = map[string][]string{
	EngineSGLang: {"tp_rank", "pp_rank", "moe_ep_rank", "engine_type"},
	EngineTRTLLM: {"engine_type"},
	EngineTriton: {"version"},
}

// KeptEngineLabels returns the labels of an engine that stay, unrenamed, on
// the unified metrics mapped from it.
func KeptEngineLabels(engine string) []string {
	return append([]string(nil), keptEngineLabels[engine]...)
}

// IsKeptEngineLabel reports whether key is one of those labels of engine.
func IsKeptEngineLabel(engine, key string) bool {
	for _, l := range keptEngineLabels[engine] {
		if l == key {
			return true
		}
	}
	return false
}

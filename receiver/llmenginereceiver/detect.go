package llmenginereceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver"

import (
	"net/url"
	"strings"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// enginePrefixes identify an engine by the prefix of its metric names. The
// order matters where prefixes overlap (ray_vllm: before vllm:).
var enginePrefixes = []struct {
	prefix string
	engine string
}{
	{"ray_vllm:", spec.EngineVLLM},
	{"vllm:", spec.EngineVLLM},
	{"sglang:", spec.EngineSGLang},
	{"tgi_", spec.EngineTGI},
	{"trtllm_", spec.EngineTRTLLM},
	{"nv_trt_llm_", spec.EngineTriton},
	{"nv_inference_", spec.EngineTriton},
	{"llamacpp:", spec.EngineLlamaCpp},
}

// nimNames are vLLM-style metric names that NIM for LLMs serves without a
// prefix at /v1/metrics.
var nimNames = map[string]bool{
	"num_requests_running": true, "num_requests_waiting": true, "gpu_cache_usage_perc": true,
	"prompt_tokens_total": true, "generation_tokens_total": true, "time_to_first_token_seconds": true,
	"time_per_output_token_seconds": true, "e2e_request_latency_seconds": true, "request_success_total": true,
	"num_requests_swapped": true, "num_preemptions_total": true, "request_prompt_tokens": true,
	"request_generation_tokens": true,
}

// detectEngine names the engine whose metrics these are, or "" when none is
// recognised. endpoint helps with NIM, whose names carry no prefix.
func detectEngine(names []string, endpoint string) string {
	votes := map[string]int{}
	nim := 0
	for _, n := range names {
		for _, p := range enginePrefixes {
			if strings.HasPrefix(n, p.prefix) {
				votes[p.engine]++
				break
			}
		}
		if nimNames[n] {
			nim++
		}
	}
	// A Triton server running the TensorRT-LLM backend exposes both
	// nv_inference_* and nv_trt_llm_*: it is Triton either way. TensorRT-LLM's
	// own server (trtllm-serve) wins over Triton's generic names when both
	// appear, because its metrics are the engine's.
	best, bestVotes := "", 0
	for _, p := range enginePrefixes {
		if v := votes[p.engine]; v > bestVotes {
			best, bestVotes = p.engine, v
		}
	}
	if best != "" {
		return best
	}
	if nim > 0 {
		if u, err := url.Parse(endpoint); err == nil && strings.HasSuffix(u.Path, "/v1/metrics") || nim >= 3 {
			return spec.EngineNIM
		}
	}
	return ""
}

// namesFingerprint summarises a scrape's family names, so that a change of
// names (an engine upgrade renaming its metrics) triggers re-detection
// without keeping the names.
func namesFingerprint(names []string) uint64 {
	var x uint64
	for _, n := range names {
		h := uint64(14695981039346656037)
		for i := 0; i < len(n); i++ {
			h ^= uint64(n[i])
			h *= 1099511628211
		}
		x ^= h
	}
	return x ^ uint64(len(names))
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// NVIDIA NIM for LLMs serves vLLM's (V0) metric names without a prefix at
// /v1/metrics. NIM releases that expose vllm:-prefixed names are detected
// as vLLM and use that table.
//
// Deliberately unmapped:
//   - request_success_total and request_failure_total: the same requests as
//     request_finish_total (success = stop or length, failure = any other
//     reason); mapping them too would count each request twice.
//   - num_request_max: a configured limit, not a unified metric.
//   - request_prompt_tokens, request_generation_tokens: per-request length
//     histograms; the token counters are mapped instead.
func init() {
	const e = EngineNIM
	mappingTables[e] = []Mapping{
		{Engine: e, Source: "num_requests_running", SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsRunning},
		{Engine: e, Source: "num_requests_waiting", SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsWaiting},
		{Engine: e, Source: "gpu_cache_usage_perc", SourceType: "gauge", SourceUnit: "1", Target: EngineKvCacheUtilization,
			Note: "a fraction 0..1 despite the name"},
		{Engine: e, Source: "prompt_tokens_total", SourceType: "counter", SourceUnit: "{token}", Target: EngineTokens,
			Set: map[string]string{AttrGenAITokenType: "input"}},
		{Engine: e, Source: "generation_tokens_total", SourceType: "counter", SourceUnit: "{token}", Target: EngineTokens,
			Set: map[string]string{AttrGenAITokenType: "output"}},
		{Engine: e, Source: "time_to_first_token_seconds", SourceType: "histogram", SourceUnit: "s", Target: GenAIServerTimeToFirstToken},
		{Engine: e, Source: "time_per_output_token_seconds", SourceType: "histogram", SourceUnit: "s", Target: EngineInterTokenLatency,
			Note: "vLLM V0 semantics despite the name: one observation per output token, so the inter-token latency"},
		{Engine: e, Source: "e2e_request_latency_seconds", SourceType: "histogram", SourceUnit: "s", Target: GenAIServerRequestDuration},
		{Engine: e, Source: "request_finish_total", SourceType: "counter", SourceUnit: "{request}", Target: EngineRequestsFinished},
		{Engine: e, Source: "num_preemptions_total", SourceType: "counter", SourceUnit: "{preemption}", Target: EnginePreemptions},
	}
}

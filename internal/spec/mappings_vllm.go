// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// vLLM (V0 and V1 engines). A leading "ray_" (ray_vllm:...) is stripped by
// the processor before lookup, so those copies are not listed.
//
// Deliberately unmapped:
//   - vllm:num_requests_swapped, vllm:cpu_cache_usage_perc: V0 CPU swap
//     space; no unified metric.
//   - vllm:request_inference_time_seconds, _prefill_time_seconds,
//     _decode_time_seconds: request phases without a unified metric.
//   - vllm:prompt_tokens_cached_total, vllm:prompt_tokens_by_source_total,
//     vllm:external_prefix_cache_*: cache accounting the prefix_cache.*
//     pair already covers for the local cache.
//   - vllm:avg_*_throughput_toks_per_s: V0 windowed averages of the token
//     counters.
func init() {
	const e = EngineVLLM
	mappingTables[e] = []Mapping{
		{Engine: e, Source: "vllm:num_requests_running", SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsRunning},
		{Engine: e, Source: "vllm:num_requests_waiting", SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsWaiting},

		{Engine: e, Source: "vllm:kv_cache_usage_perc", SourceType: "gauge", SourceUnit: "1", Target: EngineKvCacheUtilization,
			Note: "a fraction 0..1 despite the name"},
		{Engine: e, Source: "vllm:gpu_cache_usage_perc", SourceType: "gauge", SourceUnit: "1", Target: EngineKvCacheUtilization,
			Deprecated: true, Note: "older name of vllm:kv_cache_usage_perc; a fraction 0..1 despite the name"},

		{Engine: e, Source: "vllm:cache_config_info", SourceType: "gauge", SourceUnit: "{block}", Target: EngineKvCacheBlockLimit,
			ValueLabel: "num_gpu_blocks", Labels: map[string]string{"cache_dtype": AttrEngineKvCacheDtype},
			Note: "the num_gpu_blocks label of the cache configuration (an info gauge of 1)"},
		{Engine: e, Source: "vllm:cache_config_info", SourceType: "gauge", SourceUnit: "{token}", Target: EngineKvCacheBlockSize,
			ValueLabel: "block_size", Labels: map[string]string{"cache_dtype": AttrEngineKvCacheDtype},
			Note: "the block_size label of the cache configuration"},

		{Engine: e, Source: "vllm:prefix_cache_queries_total", SourceType: "counter", SourceUnit: "{token}", Target: EnginePrefixCacheQueries},
		{Engine: e, Source: "vllm:prefix_cache_hits_total", SourceType: "counter", SourceUnit: "{token}", Target: EnginePrefixCacheHits},
		{Engine: e, Source: "vllm:gpu_prefix_cache_queries_total", SourceType: "counter", SourceUnit: "{token}", Target: EnginePrefixCacheQueries,
			Deprecated: true, Note: "older name of vllm:prefix_cache_queries_total"},
		{Engine: e, Source: "vllm:gpu_prefix_cache_hits_total", SourceType: "counter", SourceUnit: "{token}", Target: EnginePrefixCacheHits,
			Deprecated: true, Note: "older name of vllm:prefix_cache_hits_total"},

		{Engine: e, Source: "vllm:prompt_tokens_total", SourceType: "counter", SourceUnit: "{token}", Target: EngineTokens,
			Set: map[string]string{AttrGenAITokenType: "input"}},
		{Engine: e, Source: "vllm:generation_tokens_total", SourceType: "counter", SourceUnit: "{token}", Target: EngineTokens,
			Set: map[string]string{AttrGenAITokenType: "output"}},

		{Engine: e, Source: "vllm:time_to_first_token_seconds", SourceType: "histogram", SourceUnit: "s", Target: GenAIServerTimeToFirstToken},
		{Engine: e, Source: "vllm:request_time_per_output_token_seconds", SourceType: "histogram", SourceUnit: "s", Target: GenAIServerTimePerOutputToken,
			Note: "one observation per finished request: its decode time / (output tokens - 1), as semconv defines it"},
		{Engine: e, Source: "vllm:inter_token_latency_seconds", SourceType: "histogram", SourceUnit: "s", Target: EngineInterTokenLatency,
			Note: "one observation per output token after the first"},
		{Engine: e, Source: "vllm:time_per_output_token_seconds", SourceType: "histogram", SourceUnit: "s", Target: EngineInterTokenLatency,
			Deprecated: true, Note: "older name of vllm:inter_token_latency_seconds (one observation per output token)"},
		{Engine: e, Source: "vllm:e2e_request_latency_seconds", SourceType: "histogram", SourceUnit: "s", Target: GenAIServerRequestDuration},
		{Engine: e, Source: "vllm:request_queue_time_seconds", SourceType: "histogram", SourceUnit: "s", Target: EngineRequestQueueDuration},

		{Engine: e, Source: "vllm:request_success_total", SourceType: "counter", SourceUnit: "{request}", Target: EngineRequestsFinished,
			Note: "counts every finished request despite the name (finished_reason stop, length, abort, error)"},
		{Engine: e, Source: "vllm:num_preemptions_total", SourceType: "counter", SourceUnit: "{preemption}", Target: EnginePreemptions},
	}
}

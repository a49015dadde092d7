// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// TensorRT-LLM's own OpenAI server (trtllm-serve). The engine_type label is
// kept as it is.
//
// Deliberately unmapped:
//   - trtllm_kv_cache_reused_blocks_total, trtllm_kv_cache_missed_blocks_total:
//     counted in KV blocks, while llm.engine.prefix_cache.* count tokens;
//     multiplying by trtllm_kv_cache_tokens_per_block would overcount
//     partly filled blocks.
//   - trtllm_kv_cache_hit_rate: a ratio gauge; the unified ratio is derived
//     from counters.
//   - trtllm_gpu_memory_usage_bytes: memory of the runtime only, without the
//     GPU UUID and process id process.gpu.memory.usage needs.
//   - trtllm_kv_cache_{max,free,used}_blocks, trtllm_kv_cache_tokens_per_block,
//     trtllm_max_num_active_requests: no unified metric
//     (trtllm_kv_cache_utilization is used / max).
func init() {
	const e = EngineTRTLLM
	mappingTables[e] = []Mapping{
		{Engine: e, Source: "trtllm_num_requests_running", SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsRunning},
		{Engine: e, Source: "trtllm_num_requests_waiting", SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsWaiting},
		{Engine: e, Source: "trtllm_kv_cache_utilization", SourceType: "gauge", SourceUnit: "1", Target: EngineKvCacheUtilization},

		{Engine: e, Source: "trtllm_prompt_tokens_total", SourceType: "counter", SourceUnit: "{token}", Target: EngineTokens,
			Set: map[string]string{AttrGenAITokenType: "input"}},
		{Engine: e, Source: "trtllm_generation_tokens_total", SourceType: "counter", SourceUnit: "{token}", Target: EngineTokens,
			Set: map[string]string{AttrGenAITokenType: "output"}},

		{Engine: e, Source: "trtllm_time_to_first_token_seconds", SourceType: "histogram", SourceUnit: "s", Target: GenAIServerTimeToFirstToken},
		{Engine: e, Source: "trtllm_time_per_output_token_seconds", SourceType: "histogram", SourceUnit: "s", Target: GenAIServerTimePerOutputToken,
			Note: "one observation per finished request (its mean time per output token after the first); TensorRT-LLM has no per-token histogram"},
		{Engine: e, Source: "trtllm_e2e_request_latency_seconds", SourceType: "histogram", SourceUnit: "s", Target: GenAIServerRequestDuration},
		{Engine: e, Source: "trtllm_request_queue_time_seconds", SourceType: "histogram", SourceUnit: "s", Target: EngineRequestQueueDuration},

		{Engine: e, Source: "trtllm_request_success_total", SourceType: "counter", SourceUnit: "{request}", Target: EngineRequestsFinished,
			Note: "finished requests by finished_reason, despite the name"},
	}
}

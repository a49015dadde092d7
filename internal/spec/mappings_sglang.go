// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// SGLang (scheduler and tokenizer collectors). Recent releases label the
// scheduler's gauges with tp_rank, pp_rank and moe_ep_rank (kept as they
// are) and, with data parallelism, dp_rank (the engine instance).
//
// Deliberately unmapped:
//   - sglang:time_per_output_token_seconds (older releases): observed on
//     every streamed chunk as the running mean since the first token, (now -
//     first token time) / (tokens - 1): neither one observation per request
//     (gen_ai.server.time_per_output_token) nor the gap between two tokens
//     (llm.engine.inter_token_latency). SGLang has no per-request series.
//   - sglang:cache_hit_rate: a ratio gauge; the unified hit ratio is derived
//     from counters. sglang:cached_tokens_total is mapped as hits; SGLang
//     exports no lookup counter (every prompt token is looked up, but
//     sglang:prompt_tokens_total is already mapped as input tokens).
//   - sglang:num_retracted_reqs: a gauge (requests retracted in the last
//     step), not the counter llm.engine.preemptions is.
//   - sglang:num_aborted_requests_total: aborted requests may also be in
//     sglang:num_requests_total; mapping both could count them twice.
//   - sglang:gen_throughput, num_grammar_queue_reqs: no unified metric.
func init() {
	const e = EngineSGLang
	rank := map[string]string{"dp_rank": AttrEngineRank}
	mappingTables[e] = []Mapping{
		{Engine: e, Source: "sglang:num_running_reqs", SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsRunning, Labels: rank},
		{Engine: e, Source: "sglang:num_queue_reqs", SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsWaiting, Labels: rank},
		{Engine: e, Source: "sglang:token_usage", SourceType: "gauge", SourceUnit: "1", Target: EngineKvCacheUtilization, Labels: rank,
			Note: "fraction of the KV token pool in use (SGLang allocates KV space per token, not per block)"},
		{Engine: e, Source: "sglang:max_total_num_tokens", SourceType: "gauge", SourceUnit: "{token}", Target: EngineKvCacheTokenLimit, Labels: rank,
			Note: "the KV token pool"},
		{Engine: e, Source: "sglang:num_used_tokens", SourceType: "gauge", SourceUnit: "{token}", Target: EngineKvCacheTokenUsage, Labels: rank,
			Note: "tokens held in the pool (token_usage is num_used_tokens / max_total_num_tokens)"},
		{Engine: e, Source: "sglang:cached_tokens_total", SourceType: "counter", SourceUnit: "{token}", Target: EnginePrefixCacheHits, Labels: rank,
			Note: "prompt tokens served from the radix cache"},

		{Engine: e, Source: "sglang:prompt_tokens_total", SourceType: "counter", SourceUnit: "{token}", Target: EngineTokens, Labels: rank,
			Set: map[string]string{AttrGenAITokenType: "input"}},
		{Engine: e, Source: "sglang:generation_tokens_total", SourceType: "counter", SourceUnit: "{token}", Target: EngineTokens, Labels: rank,
			Set: map[string]string{AttrGenAITokenType: "output"}},

		{Engine: e, Source: "sglang:time_to_first_token_seconds", SourceType: "histogram", SourceUnit: "s", Target: GenAIServerTimeToFirstToken, Labels: rank},
		{Engine: e, Source: "sglang:inter_token_latency_seconds", SourceType: "histogram", SourceUnit: "s", Target: EngineInterTokenLatency, Labels: rank,
			Note: "a chunk of n tokens counts as n observations of its interval / n"},
		{Engine: e, Source: "sglang:e2e_request_latency_seconds", SourceType: "histogram", SourceUnit: "s", Target: GenAIServerRequestDuration, Labels: rank},
		{Engine: e, Source: "sglang:queue_time_seconds", SourceType: "histogram", SourceUnit: "s", Target: EngineRequestQueueDuration, Labels: rank},

		{Engine: e, Source: "sglang:num_requests_total", SourceType: "counter", SourceUnit: "{request}", Target: EngineRequestsFinished, Labels: rank,
			Note: "finished requests; SGLang reports no finish reason"},
	}
}

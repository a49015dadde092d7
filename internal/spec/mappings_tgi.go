// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// Hugging Face Text Generation Inference (the router's /metrics).
//
// TGI has no time-to-first-token or per-token latency histogram, so
// gen_ai.server.time_to_first_token and llm.engine.inter_token_latency are
// not mapped for it.
//
// Deliberately unmapped:
//   - tgi_request_inference_duration, tgi_request_validation_duration,
//     tgi_batch_*_duration: parts of a request's or batch's time, not the
//     end-to-end duration.
//   - tgi_request_count: requests received, including those still running;
//     finished requests are success + failure.
//   - tgi_request_max_new_tokens, tgi_request_skipped_tokens (a summary),
//     tgi_batch_next_size, tgi_batch_concat, tgi_batch_inference_*: no
//     unified metric.
func init() {
	const e = EngineTGI
	mappingTables[e] = []Mapping{
		{Engine: e, Source: "tgi_batch_current_size", SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsRunning,
			Note: "requests in the batch being run"},
		{Engine: e, Source: "tgi_queue_size", SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsWaiting,
			Note: "entries in the router's queue"},

		{Engine: e, Source: "tgi_request_input_length", SourceType: "histogram_sum", SourceUnit: "{token}", Target: EngineTokens,
			Set:  map[string]string{AttrGenAITokenType: "input"},
			Note: "the _sum of the per-request input length histogram, read as a counter; counts validated requests, including any that later fail"},
		{Engine: e, Source: "tgi_request_generated_tokens", SourceType: "histogram_sum", SourceUnit: "{token}", Target: EngineTokens,
			Set:  map[string]string{AttrGenAITokenType: "output"},
			Note: "the _sum of the per-request generated length histogram, read as a counter; observed for successful requests"},

		{Engine: e, Source: "tgi_request_duration", SourceType: "histogram", SourceUnit: "s", Target: GenAIServerRequestDuration},
		{Engine: e, Source: "tgi_request_mean_time_per_token_duration", SourceType: "histogram", SourceUnit: "s", Target: GenAIServerTimePerOutputToken,
			Note: "one observation per successful request, as semconv asks, but TGI divides the whole inference time (prefill included) by all generated tokens: reads high by about prefill time / tokens"},
		{Engine: e, Source: "tgi_request_queue_duration", SourceType: "histogram", SourceUnit: "s", Target: EngineRequestQueueDuration},

		{Engine: e, Source: "tgi_request_success", SourceType: "counter", SourceUnit: "{request}", Target: EngineRequestsFinished,
			Note: "successful requests; TGI reports no finish reason"},
		{Engine: e, Source: "tgi_request_failure", SourceType: "counter", SourceUnit: "{request}", Target: EngineRequestsFinished,
			Labels: map[string]string{"err": AttrErrorType},
			Note:   "failed requests, error.type from the err label (validation, generation, overloaded, ...)"},
	}
	derivations = append(derivations, Derivation{
		Engine:      e,
		Target:      EngineKvCacheUtilization,
		Numerator:   "tgi_batch_current_max_tokens",
		Denominator: "tgi_batch_max_total_tokens",
		Note:        "token budget the current batch may grow to over the KV-cache token capacity found at warm-up: reserved KV space, an upper bound on what is filled",
	})
}

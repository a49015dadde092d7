// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// llama.cpp's llama-server with --metrics. It labels nothing; the model
// comes from /props or /v1/models.
//
// Deliberately unmapped:
//   - llamacpp:n_busy_slots_per_decode: an average typed as a counter.
//   - llamacpp:prompt_tokens_seconds, predicted_tokens_seconds: throughput
//     gauges; llamacpp:prompt_seconds_total, n_decode_total,
//     kv_cache_tokens: no unified metric.
//   - Time to first token, request duration, queue time: not exported.
func init() {
	const e = EngineLlamaCpp
	mappingTables[e] = []Mapping{
		{Engine: e, Source: "llamacpp:requests_processing", SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsRunning,
			Note: "busy slots"},
		{Engine: e, Source: "llamacpp:requests_deferred", SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsWaiting,
			Note: "requests waiting for a free slot"},
		{Engine: e, Source: "llamacpp:kv_cache_usage_ratio", SourceType: "gauge", SourceUnit: "1", Target: EngineKvCacheUtilization,
			Note: "cells in use / context size; not exported by recent builds"},
		{Engine: e, Source: "llamacpp:prompt_tokens_total", SourceType: "counter", SourceUnit: "{token}", Target: EngineTokens,
			Set: map[string]string{AttrGenAITokenType: "input"}},
		{Engine: e, Source: "llamacpp:tokens_predicted_total", SourceType: "counter", SourceUnit: "{token}", Target: EngineTokens,
			Set: map[string]string{AttrGenAITokenType: "output"}},
	}
	derivations = append(derivations, Derivation{
		Engine:      e,
		Target:      EngineTimePerOutputTokenMean,
		Numerator:   "llamacpp:tokens_predicted_seconds_total",
		Denominator: "llamacpp:tokens_predicted_total",
		Note:        "generation time summed over slots / tokens generated: the mean time a request waits per output token since the server started",
	})
}

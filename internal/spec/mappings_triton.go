// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// Triton Inference Server, generic nv_inference_* metrics plus the
// TensorRT-LLM backend's nv_trt_llm_* gauges and Triton's own GPU gauges.
// Triton labels per model (model → gen_ai.request.model) and version (kept).
// With an ensemble (ensemble → preprocessing → tensorrt_llm →
// postprocessing) one client request is counted once per model it passes
// through; select one model rather than summing over models.
//
// Deliberately unmapped:
//   - nv_inference_count, nv_inference_exec_count,
//     nv_inference_compute_{input,infer,output}_duration_us: inferences,
//     executions and parts of the request time, without a unified metric.
//   - nv_inference_*_summary_us (optional summaries): summaries cannot become
//     histograms.
//   - nv_trt_llm_request_metrics with request_type max, scheduled and context,
//     nv_trt_llm_runtime_memory_metrics, nv_trt_llm_inflight_batcher_metrics,
//     nv_trt_llm_general_metrics, the other kv_cache_block_type values: no
//     unified metric.
//   - nv_gpu_power_limit, nv_cpu_*: no unified metric.
func init() {
	const e = EngineTriton
	gpu := map[string]string{"gpu_uuid": AttrHwID}
	mappingTables[e] = []Mapping{
		{Engine: e, Source: "nv_inference_request_success", SourceType: "counter", SourceUnit: "{request}", Target: EngineRequestsFinished,
			Note: "successful requests, per model; no finish reason"},
		{Engine: e, Source: "nv_inference_request_failure", SourceType: "counter", SourceUnit: "{request}", Target: EngineRequestsFinished,
			Labels: map[string]string{"reason": AttrErrorType},
			Note:   "failed requests, per model; error.type from reason (BACKEND, CANCELED, OTHER, REJECTED; older releases have no reason)"},
		{Engine: e, Source: "nv_inference_request_duration_us", SourceType: "counter", SourceUnit: "us", Target: EngineRequestTime,
			Note: "cumulative request handling time, µs → s"},
		{Engine: e, Source: "nv_inference_queue_duration_us", SourceType: "counter", SourceUnit: "us", Target: EngineRequestQueueTime,
			Note: "cumulative time queued in Triton's scheduler, µs → s"},
		{Engine: e, Source: "nv_inference_first_response_histogram_ms", SourceType: "histogram", SourceUnit: "ms", Target: GenAIServerTimeToFirstToken,
			Note: "decoupled (streaming) models only, when histogram latencies are enabled; ms → s"},
		{Engine: e, Source: "nv_inference_pending_request_count", SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsWaiting,
			Note: "requests in Triton's scheduler queue, per model; with the TensorRT-LLM backend requests wait in the backend (request_type=waiting) instead"},

		{Engine: e, Source: "nv_trt_llm_request_metrics", Match: map[string]string{"request_type": "active"}, SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsRunning,
			Note: "requests active in the in-flight batcher"},
		{Engine: e, Source: "nv_trt_llm_request_metrics", Match: map[string]string{"request_type": "waiting"}, SourceType: "gauge", SourceUnit: "{request}", Target: EngineRequestsWaiting,
			Note: "requests queued in the TensorRT-LLM backend (newer backends)"},
		{Engine: e, Source: "nv_trt_llm_kv_cache_block_metrics", Match: map[string]string{"kv_cache_block_type": "fraction"}, SourceType: "gauge", SourceUnit: "1", Target: EngineKvCacheUtilization,
			Note: "used / max KV blocks (newer backends)"},
		{Engine: e, Source: "nv_trt_llm_kv_cache_block_metrics", Match: map[string]string{"kv_cache_block_type": "max"}, SourceType: "gauge", SourceUnit: "{block}", Target: EngineKvCacheBlockLimit},
		{Engine: e, Source: "nv_trt_llm_kv_cache_block_metrics", Match: map[string]string{"kv_cache_block_type": "used"}, SourceType: "gauge", SourceUnit: "{block}", Target: EngineKvCacheBlockUsage},
		{Engine: e, Source: "nv_trt_llm_kv_cache_block_metrics", Match: map[string]string{"kv_cache_block_type": "tokens_per"}, SourceType: "gauge", SourceUnit: "{token}", Target: EngineKvCacheBlockSize},

		{Engine: e, Source: "nv_gpu_utilization", SourceType: "gauge", SourceUnit: "1", Target: HwGpuUtilization, Labels: gpu,
			Set: map[string]string{AttrHwGpuTask: "general"}, Note: "already a fraction 0..1"},
		{Engine: e, Source: "nv_gpu_power_usage", SourceType: "gauge", SourceUnit: "W", Target: HwPower, Labels: gpu,
			Set: map[string]string{AttrHwType: "gpu"}},
		{Engine: e, Source: "nv_energy_consumption", SourceType: "counter", SourceUnit: "J", Target: HwEnergy, Labels: gpu,
			Set: map[string]string{AttrHwType: "gpu"}, Note: "since Triton started, not since the driver loaded"},
		{Engine: e, Source: "nv_gpu_memory_used_bytes", SourceType: "gauge", SourceUnit: "By", Target: HwGpuMemoryUsage, Labels: gpu},
		{Engine: e, Source: "nv_gpu_memory_total_bytes", SourceType: "gauge", SourceUnit: "By", Target: HwGpuMemoryLimit, Labels: gpu,
			Note: "total memory; may include the driver-reserved part that hw.gpu.memory.limit excludes"},
	}
	setGPUType(mappingTables[e])
}

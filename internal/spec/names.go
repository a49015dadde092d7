// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// Unified metric names. Use these constants instead of string literals.
const (
	// GPU device (semantic conventions hw.*, plus documented extensions).
	HwGpuMemoryUsage    = "hw.gpu.memory.usage"
	HwGpuMemoryLimit    = "hw.gpu.memory.limit"
	HwGpuMemoryReserved = "hw.gpu.memory.reserved"
	// HwGpuMemoryUtilization is the fraction of GPU memory in use
	// (usage / limit), as semconv defines it. Before this release the name
	// carried the memory controller's busy ratio, now
	// HwGpuMemoryControllerUtilization.
	HwGpuMemoryUtilization           = "hw.gpu.memory.utilization"
	HwGpuMemoryControllerUtilization = "hw.gpu.memory_controller.utilization"
	HwGpuUtilization                 = "hw.gpu.utilization"
	HwGpuSmUtilization               = "hw.gpu.sm.utilization"
	HwGpuTensorUtilization           = "hw.gpu.tensor.utilization"
	HwGpuDramUtilization             = "hw.gpu.dram.utilization"
	HwGpuIo                          = "hw.gpu.io"
	// HwGpuTemperature is semconv's hw.temperature, with hw.type=gpu (the
	// identifier is kept so callers compile; it was hw.gpu.temperature).
	HwGpuTemperature    = "hw.temperature"
	HwTemperature       = HwGpuTemperature
	HwGpuClockFrequency = "hw.gpu.clock.frequency"
	HwGpuThrottle       = "hw.gpu.throttle"
	HwErrors            = "hw.errors"
	HwPower             = "hw.power"
	HwEnergy            = "hw.energy"
	HwStatus            = "hw.status"

	// Per process on a GPU.
	ProcessGpuMemoryUsage = "process.gpu.memory.usage"
	ProcessGpuUtilization = "process.gpu.utilization"

	// Inference engine (semantic conventions gen_ai.server.*, plus llm.engine.*).
	GenAIServerTimeToFirstToken = "gen_ai.server.time_to_first_token"
	// GenAIServerTimePerOutputToken is semconv's per-request measure: one
	// observation per response, (duration - time to first token) / (output
	// tokens - 1). Per-token gaps are EngineInterTokenLatency.
	GenAIServerTimePerOutputToken = "gen_ai.server.time_per_output_token"
	EngineInterTokenLatency       = "llm.engine.inter_token_latency"
	GenAIServerRequestDuration    = "gen_ai.server.request.duration"
	EngineRequestQueueDuration    = "llm.engine.request.queue.duration"
	EngineRequestsRunning         = "llm.engine.requests.running"
	EngineRequestsWaiting         = "llm.engine.requests.waiting"
	EngineRequestsFinished        = "llm.engine.requests.finished"
	EngineKvCacheUtilization      = "llm.engine.kv_cache.utilization"
	// KV-cache capacity: what the engine allocated (blocks, tokens, bytes)
	// and how much of it holds tokens. Blocks and block size come from the
	// engine's cache configuration; tokens and bytes are computed from them
	// by llmnormalize (bytes need the model's KV geometry, KVGeometryFor).
	EngineKvCacheBlockLimit      = "llm.engine.kv_cache.block.limit"
	EngineKvCacheBlockUsage      = "llm.engine.kv_cache.block.usage"
	EngineKvCacheBlockSize       = "llm.engine.kv_cache.block.size"
	EngineKvCacheTokenLimit      = "llm.engine.kv_cache.token.limit"
	EngineKvCacheTokenUsage      = "llm.engine.kv_cache.token.usage"
	EngineKvCacheMemoryLimit     = "llm.engine.kv_cache.memory.limit"
	EngineKvCacheMemoryUsage     = "llm.engine.kv_cache.memory.usage"
	EngineKvCacheFragmentation   = "llm.engine.kv_cache.fragmentation"
	EnginePrefixCacheQueries     = "llm.engine.prefix_cache.queries"
	EnginePrefixCacheHits        = "llm.engine.prefix_cache.hits"
	EngineTokens                 = "llm.engine.tokens"
	EnginePreemptions            = "llm.engine.preemptions"
	EngineRequestTime            = "llm.engine.request.time"
	EngineRequestQueueTime       = "llm.engine.request.queue.time"
	EngineTimePerOutputTokenMean = "llm.engine.time_per_output_token.mean"
	EngineUp                     = "llm.engine.up"
	EngineScrapeDuration         = "llm.engine.scrape.duration"

	// Profiles (profileimport).
	ProfileMemoryAllocated           = "llm.profile.memory.allocated"
	ProfileMemoryOutstanding         = "llm.profile.memory.outstanding"
	ProfileAllocatorFragmentation    = "llm.profile.allocator.fragmentation"
	ProfileAllocatorLargestFreeBlock = "llm.profile.allocator.largest_free_block"
	ProfileMemoryTotalAllocated      = "llm.profile.memory.total_allocated"
	ProfileMemoryTotalReserved       = "llm.profile.memory.total_reserved"

	// Derived by rootcause.
	HwGpuMemoryGrowthRate       = "hw.gpu.memory.growth_rate"
	HwGpuMemoryTimeToExhaustion = "hw.gpu.memory.time_to_exhaustion"
	EnginePrefixCacheHitRatio   = "llm.engine.prefix_cache.hit_ratio"

	// Incidents as metrics, by rootcause: what a Prometheus without a log
	// backend sees of them (an ALERTS-like series and a counter).
	IncidentActive = "llm.incident.active"
	IncidentFired  = "llm.incident.fired"
)

// Attribute names.
const (
	AttrHwID              = "hw.id"
	AttrHwName            = "hw.name"
	AttrHwModel           = "hw.model"
	AttrHwVendor          = "hw.vendor"
	AttrHwType            = "hw.type"
	AttrHwState           = "hw.state"
	AttrHwDriverVersion   = "hw.driver_version"
	AttrHwGpuIndex        = "hw.gpu.index"
	AttrHwGpuPciBusID     = "hw.gpu.pci_bus_id"
	AttrHwParent          = "hw.parent"
	AttrHwGpuMigGI        = "hw.gpu.mig.gpu_instance_id"
	AttrHwGpuMigCI        = "hw.gpu.mig.compute_instance_id"
	AttrHwGpuTask         = "hw.gpu.task"
	AttrHwGpuClockType    = "hw.gpu.clock.type"
	AttrHwGpuThrottleKind = "hw.gpu.throttle.reason"
	AttrHwGpuXid          = "hw.gpu.xid"
	AttrHwGpuXidRecovery  = "hw.gpu.xid.recovery" // xid_error incident records: XIDRecovery.String()
	AttrErrorType         = "error.type"
	AttrNetworkIoDir      = "network.io.direction"

	AttrProcessPid            = "process.pid"
	AttrProcessExecutableName = "process.executable.name"
	AttrContainerID           = "container.id"
	AttrK8sPodUID             = "k8s.pod.uid"
	AttrK8sPodName            = "k8s.pod.name"
	AttrK8sNamespaceName      = "k8s.namespace.name"
	// Resource attributes of where an agent runs: the chart sets
	// k8s.node.name on everything it sends; k8s.cluster.name is the
	// operator's to add. Rules and dashboards select on both.
	AttrK8sNodeName      = "k8s.node.name"
	AttrK8sClusterName   = "k8s.cluster.name"
	AttrK8sContainerName = "k8s.container.name"

	AttrEngineName = "llm.engine.name"
	AttrEngineRank = "llm.engine.rank"
	// AttrEngineKvCacheDtype is the engine's KV-cache data type as it
	// names it (vLLM cache_dtype: auto, fp8, fp8_e4m3, ...).
	AttrEngineKvCacheDtype = "llm.engine.kv_cache.dtype"
	// AttrEngineKvCacheFragmentationMethod says how a fragmentation figure
	// was obtained: measured (the engine reports the tokens it holds) or
	// estimated (half a block per running request, see KVFragmentation*).
	AttrEngineKvCacheFragmentationMethod = "llm.engine.kv_cache.fragmentation.method"
	AttrEngineTarget                     = "llm.engine.target"
	AttrGenAIRequestModel                = "gen_ai.request.model"
	// AttrGenAIPromptName is semconv's name of the prompt template a
	// request was built from.
	AttrGenAIPromptName    = "gen_ai.prompt.name"
	AttrGenAITokenType     = "gen_ai.token.type"
	AttrGenAIOperationName = "gen_ai.operation.name"
	AttrGenAIProviderName  = "gen_ai.provider.name"
	AttrServerAddress      = "server.address"
	AttrServerPort         = "server.port"
	AttrFinishReason       = "llm.finish_reason"

	AttrProfileModulePath = "llm.profile.module_path"
	AttrProfileDevice     = "llm.profile.device"
	AttrProfileFile       = "llm.profile.file"
)

// Incident log record attribute names.
const (
	IncidentID         = "incident.id"
	IncidentKind       = "incident.kind"
	IncidentQuadrant   = "incident.quadrant"
	IncidentSeverity   = "incident.severity"
	IncidentState      = "incident.state"
	IncidentScore      = "incident.score"
	IncidentEvidence   = "incident.evidence"
	IncidentLayerStack = "incident.layer_stack"
	IncidentAction     = "incident.action"
	IncidentStartTime  = "incident.start_time"
	IncidentSubject    = "incident.subject"
	IncidentLayer      = "incident.layer"
	IncidentDrilldown  = "incident.drilldown"
	// The incident as it unfolds: how many times a firing incident was
	// re-sent because its figures changed, what changed, what was ruled
	// out, how it ended and which incident replaced it.
	IncidentUpdate    = "incident.update"
	IncidentChange    = "incident.change"
	IncidentRuledOut  = "incident.ruled_out"
	IncidentOnsetTime = "incident.onset_time"
	// IncidentHorizon: the long-horizon tier that found a slow leak (2h,
	// 24h, 72h), absent when the detector's own window did.
	IncidentHorizon      = "incident.horizon"
	IncidentResolution   = "incident.resolution"
	IncidentSupersededBy = "incident.superseded_by"
)

// What profileimport's leak-suspect records carry and the rootcause
// processor reads back: incident.kind, and the outstanding bytes.
const (
	IncidentKindLeakSuspect     = "leak_suspect"
	AttrProfileOutstandingBytes = "llm.profile.memory.outstanding_bytes"
)

// Leak patterns a CUDA memory snapshot's allocation history shows
// (llm.profile.leak.pattern); a step is one allocation of the same stack,
// i.e. one call of the module forward that makes it.
const (
	// LeakPatternKeptAcrossSteps: each step's allocation from a forward
	// frame stays alive (a tensor stored on the module, appended to a list
	// or a cache kept across steps).
	LeakPatternKeptAcrossSteps = "kept_across_steps"
	// LeakPatternGrowingReallocation: each step allocates a larger tensor
	// at the same place and frees the previous one (torch.cat onto a kept
	// history): one allocation outstanding, growing step after step.
	LeakPatternGrowingReallocation = "growing_reallocation"
)

// LeakPatterns lists the leak patterns, for the attribute's values.
func LeakPatterns() []string {
	return []string{LeakPatternKeptAcrossSteps, LeakPatternGrowingReallocation}
}

// Engine names carried in llm.engine.name.
const (
	EngineVLLM     = "vllm"
	EngineTGI      = "tgi"
	EngineSGLang   = "sglang"
	EngineTRTLLM   = "trtllm"
	EngineTriton   = "triton"
	EngineNIM      = "nim"
	EngineLlamaCpp = "llamacpp"
	EngineCustom   = "custom"
)

// SchemaURL is the OpenTelemetry semantic-conventions release whose hw.*
// names this spec follows. The nvml receiver and llmnormalize set it on the
// resource and scope metrics they write. (The GenAI conventions now live in
// their own repository, which publishes no schema file; the gen_ai.* names
// used here are those of its gen-ai-metrics.md.)
const SchemaURL = "https://opentelemetry.io/schemas/1.44.0"

// GenAIOperationEngine is the gen_ai.operation.name llmnormalize puts on
// gen_ai.server.* points: the engines' histograms mix every generation
// request, and at the engine each one is the completion of a token
// sequence (chat requests are rendered to a prompt before the engine sees
// them). See docs/semconv-alignment.md.
const GenAIOperationEngine = "text_completion"

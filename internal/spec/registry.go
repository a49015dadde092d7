// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// The tables below are the single source of truth for the unified spec.
// docs/metric-spec.md is generated from them (make generate) and a test fails
// when the two differ.

// gpuDevice is the attribute set every GPU device point carries.
// hw.type=gpu is on every GPU point, also on hw.gpu.* metrics where semconv
// does not list it, so one selector finds every GPU series; the product
// name is hw.model (semconv gpu.md), not hw.name.
var gpuDevice = []AttrRef{
	{Name: AttrHwID, Requirement: Required},
	{Name: AttrHwType, Requirement: Required, Fixed: "gpu"},
	{Name: AttrHwModel, Requirement: Recommended},
	{Name: AttrHwVendor, Requirement: Recommended},
}

// gpuProcess is the attribute set every per-process GPU point carries.
var gpuProcess = []AttrRef{
	{Name: AttrHwID, Requirement: Required},
	{Name: AttrProcessPid, Requirement: Required},
	{Name: AttrProcessExecutableName, Requirement: Recommended},
	{Name: AttrContainerID, Requirement: ConditionallyRequired},
	{Name: AttrK8sPodUID, Requirement: ConditionallyRequired},
	{Name: AttrK8sPodName, Requirement: ConditionallyRequired},
	{Name: AttrK8sNamespaceName, Requirement: ConditionallyRequired},
	{Name: AttrK8sContainerName, Requirement: ConditionallyRequired},
}

// engine is the attribute set every engine point carries.
var engine = []AttrRef{
	{Name: AttrEngineName, Requirement: Required},
	{Name: AttrGenAIRequestModel, Requirement: ConditionallyRequired},
	{Name: AttrEngineRank, Requirement: ConditionallyRequired},
}

// genAIServer is what semconv's gen-ai-metrics.md asks of gen_ai.server.*
// points, on top of the engine set; llmnormalize sets them.
var genAIServer = with(engine,
	AttrRef{Name: AttrGenAIOperationName, Requirement: Required, Fixed: GenAIOperationEngine},
	AttrRef{Name: AttrGenAIProviderName, Requirement: Required},
	AttrRef{Name: AttrServerAddress, Requirement: Recommended},
	AttrRef{Name: AttrServerPort, Requirement: ConditionallyRequired},
)

func with(base []AttrRef, extra ...AttrRef) []AttrRef {
	out := make([]AttrRef, 0, len(base)+len(extra))
	out = append(out, base...)
	return append(out, extra...)
}

var metrics = []Metric{
	// ---- GPU device ----
	{Name: HwGpuMemoryUsage, Group: GroupGPU, Instrument: UpDownCounter, Unit: "By", Origin: OriginSemconv,
		Description: "GPU memory in use (allocated by any process or the driver).",
		Attributes:  gpuDevice},
	{Name: HwGpuMemoryLimit, Group: GroupGPU, Instrument: UpDownCounter, Unit: "By", Origin: OriginSemconv,
		Description: "Total GPU memory usable by processes.",
		Attributes:  gpuDevice},
	{Name: HwGpuMemoryReserved, Group: GroupGPU, Instrument: UpDownCounter, Unit: "By", Origin: OriginLLMOps,
		Description: "GPU memory reserved by the driver and firmware, not available to processes.",
		Attributes:  gpuDevice},
	{Name: HwGpuMemoryUtilization, Group: GroupGPU, Instrument: Gauge, Unit: "1", Origin: OriginSemconv,
		Description: "Share of the GPU's memory that is in use: hw.gpu.memory.usage / hw.gpu.memory.limit (0..1).",
		Attributes:  gpuDevice},
	{Name: HwGpuMemoryControllerUtilization, Group: GroupGPU, Instrument: Gauge, Unit: "1", Origin: OriginLLMOps,
		Description: "Share of the last sample period in which the memory controller was busy reading or writing device memory (0..1); NVML's memory utilization.",
		Attributes:  gpuDevice},
	{Name: HwGpuUtilization, Group: GroupGPU, Instrument: Gauge, Unit: "1", Origin: OriginSemconv,
		Description: "Fraction of the last sample period during which the GPU (or one of its engines) was busy (0..1).",
		Attributes:  with(gpuDevice, AttrRef{Name: AttrHwGpuTask, Requirement: Required})},
	{Name: HwGpuSmUtilization, Group: GroupGPU, Instrument: Gauge, Unit: "1", Origin: OriginLLMOps,
		Description: "Fraction of streaming multiprocessors with at least one active warp, averaged over the sample period (0..1).",
		Attributes:  gpuDevice},
	{Name: HwGpuTensorUtilization, Group: GroupGPU, Instrument: Gauge, Unit: "1", Origin: OriginLLMOps,
		Description: "Fraction of cycles the tensor cores were active (0..1).",
		Attributes:  gpuDevice},
	{Name: HwGpuDramUtilization, Group: GroupGPU, Instrument: Gauge, Unit: "1", Origin: OriginLLMOps,
		Description: "Fraction of cycles the device memory interface was active (0..1).",
		Attributes:  gpuDevice},
	{Name: HwGpuIo, Group: GroupGPU, Instrument: Counter, Unit: "By", Origin: OriginSemconv,
		Description: "Bytes transferred over the GPU's host interconnect (PCIe).",
		Attributes:  with(gpuDevice, AttrRef{Name: AttrNetworkIoDir, Requirement: Required})},
	{Name: HwGpuTemperature, Group: GroupGPU, Instrument: Gauge, Unit: "Cel", Origin: OriginSemconv,
		Description: "GPU core temperature; hw.id names the GPU the sensor sits on.",
		Attributes:  gpuDevice},
	{Name: HwGpuClockFrequency, Group: GroupGPU, Instrument: Gauge, Unit: "Hz", Origin: OriginLLMOps,
		Description: "Current clock frequency of a GPU clock domain.",
		Attributes:  with(gpuDevice, AttrRef{Name: AttrHwGpuClockType, Requirement: Required})},
	{Name: HwGpuThrottle, Group: GroupGPU, Instrument: Gauge, Unit: "1", Origin: OriginLLMOps,
		Description: "1 for each reason the GPU's clocks are currently held below their maximum; no point for inactive reasons.",
		Attributes:  with(gpuDevice, AttrRef{Name: AttrHwGpuThrottleKind, Requirement: Required})},
	{Name: HwErrors, Group: GroupGPU, Instrument: Counter, Unit: "{error}", Origin: OriginSemconv,
		Description: "Errors reported by the GPU: ECC corrected and uncorrected memory errors, and XID events.",
		Attributes: with(gpuDevice,
			AttrRef{Name: AttrErrorType, Requirement: Required},
			AttrRef{Name: AttrHwGpuXid, Requirement: ConditionallyRequired})},
	{Name: HwPower, Group: GroupGPU, Instrument: Gauge, Unit: "W", Origin: OriginSemconv,
		Description: "Instantaneous power draw of the GPU.",
		Attributes:  gpuDevice},
	{Name: HwEnergy, Group: GroupGPU, Instrument: Counter, Unit: "J", Origin: OriginSemconv,
		Description: "Energy consumed by the GPU since the driver was loaded.",
		Attributes:  gpuDevice},
	{Name: HwStatus, Group: GroupGPU, Instrument: UpDownCounter, Unit: "1", Origin: OriginSemconv,
		Description: "1 for the GPU's current state (ok, degraded or failed), 0 for the others.",
		Attributes:  with(gpuDevice, AttrRef{Name: AttrHwState, Requirement: Required})},

	// ---- Per process ----
	{Name: ProcessGpuMemoryUsage, Group: GroupProcess, Instrument: UpDownCounter, Unit: "By", Origin: OriginLLMOps,
		Description: "GPU memory used by one process on one GPU.",
		Attributes:  gpuProcess},
	{Name: ProcessGpuUtilization, Group: GroupProcess, Instrument: Gauge, Unit: "1", Origin: OriginLLMOps,
		Description: "Fraction of the last sample period during which one process kept a GPU engine busy (0..1).",
		Attributes:  with(gpuProcess, AttrRef{Name: AttrHwGpuTask, Requirement: Required})},

	// ---- Inference engine ----
	{Name: GenAIServerTimeToFirstToken, Group: GroupEngine, Instrument: Histogram, Unit: "s", Origin: OriginSemconv,
		Description: "Time from a request's arrival to its first generated token.",
		Attributes:  genAIServer},
	{Name: GenAIServerTimePerOutputToken, Group: GroupEngine, Instrument: Histogram, Unit: "s", Origin: OriginSemconv,
		Description: "One observation per finished request: the time it spent after its first output token divided by the number of output tokens after the first.",
		Attributes:  genAIServer},
	{Name: EngineInterTokenLatency, Group: GroupEngine, Instrument: Histogram, Unit: "s", Origin: OriginLLMOps,
		Description: "Gap between two consecutive output tokens of a request: one observation per generated token after the first (a burst of n tokens counts as n gaps of its interval / n).",
		Attributes:  engine},
	{Name: GenAIServerRequestDuration, Group: GroupEngine, Instrument: Histogram, Unit: "s", Origin: OriginSemconv,
		Description: "End-to-end time of a request in the engine, from arrival to its last token.",
		Attributes:  genAIServer},
	{Name: EngineRequestQueueDuration, Group: GroupEngine, Instrument: Histogram, Unit: "s", Origin: OriginLLMOps,
		Description: "Time a request waited in the engine's queue before it was scheduled.",
		Attributes:  engine},
	{Name: EngineRequestsRunning, Group: GroupEngine, Instrument: UpDownCounter, Unit: "{request}", Origin: OriginLLMOps,
		Description: "Requests currently being processed (in the running batch).",
		Attributes:  engine},
	{Name: EngineRequestsWaiting, Group: GroupEngine, Instrument: UpDownCounter, Unit: "{request}", Origin: OriginLLMOps,
		Description: "Requests currently queued, waiting to be scheduled.",
		Attributes:  engine},
	{Name: EngineRequestsFinished, Group: GroupEngine, Instrument: Counter, Unit: "{request}", Origin: OriginLLMOps,
		Description: "Requests that finished, by reason (stop, length, abort, error).",
		Attributes: with(engine,
			AttrRef{Name: AttrFinishReason, Requirement: ConditionallyRequired},
			AttrRef{Name: AttrErrorType, Requirement: ConditionallyRequired})},
	{Name: EngineKvCacheUtilization, Group: GroupEngine, Instrument: Gauge, Unit: "1", Origin: OriginLLMOps,
		Description: "Fraction of the engine's KV-cache blocks in use (0..1, whatever unit the engine reports in).",
		Attributes:  engine},
	{Name: EnginePrefixCacheQueries, Group: GroupEngine, Instrument: Counter, Unit: "{token}", Origin: OriginLLMOps,
		Description: "Tokens looked up in the prefix (KV) cache.",
		Attributes:  engine},
	{Name: EnginePrefixCacheHits, Group: GroupEngine, Instrument: Counter, Unit: "{token}", Origin: OriginLLMOps,
		Description: "Tokens found in the prefix (KV) cache.",
		Attributes:  engine},
	{Name: EngineTokens, Group: GroupEngine, Instrument: Counter, Unit: "{token}", Origin: OriginLLMOps,
		Description: "Tokens processed: prompt tokens (input) and generated tokens (output).",
		Attributes:  with(engine, AttrRef{Name: AttrGenAITokenType, Requirement: Required})},
	{Name: EnginePreemptions, Group: GroupEngine, Instrument: Counter, Unit: "{preemption}", Origin: OriginLLMOps,
		Description: "Running requests preempted (evicted from the batch, usually for lack of KV-cache space).",
		Attributes:  engine},
	{Name: EngineRequestTime, Group: GroupEngine, Instrument: Counter, Unit: "s", Origin: OriginLLMOps,
		Description: "Total time spent processing requests, for engines that report cumulative time instead of a histogram (Triton).",
		Attributes:  engine},
	{Name: EngineRequestQueueTime, Group: GroupEngine, Instrument: Counter, Unit: "s", Origin: OriginLLMOps,
		Description: "Total time requests spent queued, for engines that report cumulative time instead of a histogram (Triton).",
		Attributes:  engine},
	{Name: EngineTimePerOutputTokenMean, Group: GroupEngine, Instrument: Gauge, Unit: "s", Origin: OriginLLMOps,
		Description: "Mean time per output token since the engine started, for engines without a per-token histogram (llama.cpp); derived from its token and time counters.",
		Attributes:  engine},
	{Name: EngineUp, Group: GroupEngine, Instrument: Gauge, Unit: "1", Origin: OriginLLMOps,
		Description: "1 when the last scrape of an engine target succeeded, 0 when it failed.",
		Attributes:  with(engine, AttrRef{Name: AttrEngineTarget, Requirement: Required})},
	{Name: EngineScrapeDuration, Group: GroupEngine, Instrument: Gauge, Unit: "s", Origin: OriginLLMOps,
		Description: "Time the last scrape of an engine target took.",
		Attributes:  with(engine, AttrRef{Name: AttrEngineTarget, Requirement: Required})},

	// ---- Profiles ----
	{Name: ProfileMemoryAllocated, Group: GroupProfile, Instrument: Counter, Unit: "By", Origin: OriginLLMOps,
		Description: "GPU memory allocated during a profile, attributed to the model-layer path that allocated it.",
		Attributes: []AttrRef{
			{Name: AttrProfileModulePath, Requirement: Required},
			{Name: AttrProfileDevice, Requirement: Required},
			{Name: AttrProfileFile, Requirement: Recommended},
		}},
	{Name: ProfileMemoryOutstanding, Group: GroupProfile, Instrument: UpDownCounter, Unit: "By", Origin: OriginLLMOps,
		Description: "GPU memory allocated during a profile and not freed by its end, per model-layer path.",
		Attributes: []AttrRef{
			{Name: AttrProfileModulePath, Requirement: Required},
			{Name: AttrProfileDevice, Requirement: Required},
			{Name: AttrProfileFile, Requirement: Recommended},
		}},
	{Name: ProfileAllocatorFragmentation, Group: GroupProfile, Instrument: Gauge, Unit: "1", Origin: OriginLLMOps,
		Description: "Caching-allocator fragmentation: (reserved - allocated - largest free block) / reserved.",
		Attributes: []AttrRef{
			{Name: AttrProfileDevice, Requirement: Required},
			{Name: AttrProfileFile, Requirement: Recommended},
		}},

	{Name: ProfileAllocatorLargestFreeBlock, Group: GroupProfile, Instrument: Gauge, Unit: "By", Origin: OriginLLMOps,
		Description: "Largest free block the caching allocator holds (from a CUDA memory snapshot): the biggest allocation it can serve without asking the driver.",
		Attributes: []AttrRef{
			{Name: AttrProfileDevice, Requirement: Required},
			{Name: AttrProfileFile, Requirement: Recommended},
		}},

	{Name: ProfileMemoryTotalAllocated, Group: GroupProfile, Instrument: Gauge, Unit: "By", Origin: OriginLLMOps,
		Description: "Memory the caching allocator had handed out, as a time series over the profile (Kineto's Total Allocated).",
		Attributes: []AttrRef{
			{Name: AttrProfileDevice, Requirement: Required},
			{Name: AttrProfileFile, Requirement: Recommended},
		}},
	{Name: ProfileMemoryTotalReserved, Group: GroupProfile, Instrument: Gauge, Unit: "By", Origin: OriginLLMOps,
		Description: "Memory the caching allocator had reserved from the driver, as a time series over the profile (Kineto's Total Reserved).",
		Attributes: []AttrRef{
			{Name: AttrProfileDevice, Requirement: Required},
			{Name: AttrProfileFile, Requirement: Recommended},
		}},

	// ---- Derived (rootcause) ----
	{Name: HwGpuMemoryGrowthRate, Group: GroupDerived, Instrument: Gauge, Unit: "By/s", Origin: OriginLLMOps,
		Description: "Robust slope of GPU memory usage over the leak window (per GPU, or per process when process.pid is set).",
		Attributes: []AttrRef{
			{Name: AttrHwID, Requirement: Required},
			{Name: AttrProcessPid, Requirement: ConditionallyRequired},
		}},
	{Name: HwGpuMemoryTimeToExhaustion, Group: GroupDerived, Instrument: Gauge, Unit: "s", Origin: OriginLLMOps,
		Description: "Projected time until GPU memory is full at the current growth rate; no point when memory is not growing.",
		Attributes: []AttrRef{
			{Name: AttrHwID, Requirement: Required},
			{Name: AttrProcessPid, Requirement: ConditionallyRequired},
		}},
	{Name: EnginePrefixCacheHitRatio, Group: GroupDerived, Instrument: Gauge, Unit: "1", Origin: OriginLLMOps,
		Description: "Prefix-cache hits / queries over the last evaluation window, from counter deltas.",
		Attributes:  engine},

	// ---- Incidents ----
	{Name: IncidentActive, Group: GroupIncident, Instrument: Gauge, Unit: "{incident}", Origin: OriginLLMOps,
		Description: "1 for each incident while it fires; 0 at the first evaluation after it resolved, then no point (as Prometheus' ALERTS). The subject attributes are those of the incident record.",
		Attributes:  incidentSeries},
	{Name: IncidentFired, Group: GroupIncident, Instrument: Counter, Unit: "{incident}", Origin: OriginLLMOps,
		Description: "Incidents that started firing since the agent started, by kind and severity (an escalation to critical is not a new incident).",
		Attributes: []AttrRef{
			{Name: IncidentKind, Requirement: Required},
			{Name: IncidentSeverity, Requirement: Required},
		}},
}

// incidentSeries is what an llm.incident.active point carries: the
// incident's kind and subject, so a panel or rule can join it with the
// subject's own series (by hw.id, process.pid or llm.engine.name).
var incidentSeries = []AttrRef{
	{Name: IncidentKind, Requirement: Required},
	{Name: IncidentSeverity, Requirement: Required},
	{Name: IncidentQuadrant, Requirement: Required},
	{Name: IncidentSubject, Requirement: Required},
	{Name: IncidentID, Requirement: Required},
	{Name: IncidentLayer, Requirement: ConditionallyRequired},
	{Name: AttrHwID, Requirement: ConditionallyRequired},
	{Name: AttrProcessPid, Requirement: ConditionallyRequired},
	{Name: AttrEngineName, Requirement: ConditionallyRequired},
	{Name: AttrGenAIRequestModel, Requirement: ConditionallyRequired},
	{Name: AttrK8sPodName, Requirement: ConditionallyRequired},
	{Name: AttrK8sNamespaceName, Requirement: ConditionallyRequired},
}

var attributes = []Attribute{
	{Name: AttrHwID, Type: TypeString, Origin: OriginSemconv, Description: "GPU UUID as reported by the driver (e.g. GPU-3f2c…)."},
	{Name: AttrHwName, Type: TypeString, Origin: OriginSemconv, Description: "Short human-readable name of a component; no longer set on GPUs, whose product name moved to hw.model (an hw.name from an older agent is renamed by llmnormalize)."},
	{Name: AttrHwModel, Type: TypeString, Origin: OriginSemconv, Description: "Product name of the GPU (e.g. NVIDIA H100 80GB HBM3)."},
	{Name: AttrHwVendor, Type: TypeString, Origin: OriginSemconv, Description: "GPU vendor."},
	{Name: AttrHwType, Type: TypeString, Origin: OriginSemconv, Description: "Kind of hardware component; always gpu here.", Values: []string{"gpu"}},
	{Name: AttrHwState, Type: TypeString, Origin: OriginSemconv, Description: "Health state of the component.", Values: []string{"ok", "degraded", "failed"}},
	{Name: AttrHwDriverVersion, Type: TypeString, Origin: OriginSemconv, Description: "Driver version."},
	{Name: AttrHwGpuIndex, Type: TypeInt, Origin: OriginLLMOps, Description: "Index of the GPU on its node, as the driver enumerates it."},
	{Name: AttrHwGpuPciBusID, Type: TypeString, Origin: OriginLLMOps, Description: "PCI bus id of the GPU (domain:bus:device.function)."},
	{Name: AttrHwParent, Type: TypeString, Origin: OriginSemconv, Description: "Resource attribute of a MIG device: the UUID of its physical GPU."},
	{Name: AttrHwGpuMigGI, Type: TypeInt, Origin: OriginLLMOps, Description: "Resource attribute of a MIG device: its GPU instance id."},
	{Name: AttrHwGpuMigCI, Type: TypeInt, Origin: OriginLLMOps, Description: "Resource attribute of a MIG device: its compute instance id."},
	{Name: AttrHwGpuTask, Type: TypeString, Origin: OriginSemconv, Description: "GPU engine the utilization refers to.", Values: []string{"decoder", "encoder", "general"}},
	{Name: AttrHwGpuClockType, Type: TypeString, Origin: OriginLLMOps, Description: "GPU clock domain.", Values: []string{"graphics", "memory", "sm", "video"}},
	{Name: AttrHwGpuThrottleKind, Type: TypeString, Origin: OriginLLMOps, Description: "Why the clocks are held back (a bit NVML adds later is reported as unknown_0x<bit>).",
		Values: []string{"applications_clocks_setting", "board_limit", "display_clock_setting", "gpu_idle", "hw_power_brake_slowdown", "hw_slowdown", "hw_thermal_slowdown", "reliability", "sw_power_cap", "sw_thermal_slowdown", "sync_boost"}},
	{Name: AttrHwGpuXid, Type: TypeInt, Origin: OriginLLMOps, Description: "XID error code, on error.type=xid points."},
	{Name: AttrHwGpuXidRecovery, Type: TypeString, Origin: OriginLLMOps, Description: "On xid_error incident records: what the XID needs before the GPU is trusted again (see the XID catalogue).", Values: xidRecoveries},
	{Name: AttrErrorType, Type: TypeString, Origin: OriginSemconv, Description: "Class of error: corrected / uncorrected ECC or xid on hw.errors; the error class on finished requests."},
	{Name: AttrNetworkIoDir, Type: TypeString, Origin: OriginSemconv, Description: "Direction of the transfer, from the GPU's point of view.", Values: []string{"receive", "transmit"}},

	{Name: AttrProcessPid, Type: TypeInt, Origin: OriginSemconv, Description: "Process id (in the host's pid namespace)."},
	{Name: AttrProcessExecutableName, Type: TypeString, Origin: OriginSemconv, Description: "Executable name of the process."},
	{Name: AttrContainerID, Type: TypeString, Origin: OriginSemconv, Description: "Container id from the process's cgroup."},
	{Name: AttrK8sPodUID, Type: TypeString, Origin: OriginSemconv, Description: "UID of the Kubernetes pod the process runs in."},
	{Name: AttrK8sPodName, Type: TypeString, Origin: OriginSemconv, Description: "Name of the Kubernetes pod."},
	{Name: AttrK8sNamespaceName, Type: TypeString, Origin: OriginSemconv, Description: "Namespace of the Kubernetes pod."},
	{Name: AttrK8sNodeName, Type: TypeString, Origin: OriginSemconv, Description: "Resource: the node the agent runs on (set by the chart on everything an agent sends)."},
	{Name: AttrK8sClusterName, Type: TypeString, Origin: OriginSemconv, Description: "Resource: the cluster, when the operator adds it (dashboards' cluster variable)."},
	{Name: AttrK8sContainerName, Type: TypeString, Origin: OriginSemconv, Description: "Name of the container in the pod."},

	{Name: AttrEngineName, Type: TypeString, Origin: OriginLLMOps, Description: "Inference engine that produced the point.",
		Values: []string{EngineCustom, EngineLlamaCpp, EngineNIM, EngineSGLang, EngineTGI, EngineTRTLLM, EngineTriton, EngineVLLM}},
	{Name: AttrEngineRank, Type: TypeString, Origin: OriginLLMOps, Description: "Engine instance within one server (vLLM's engine label, data-parallel rank)."},
	{Name: AttrEngineTarget, Type: TypeString, Origin: OriginLLMOps, Description: "Metrics endpoint URL of a scraped engine."},
	{Name: AttrGenAIRequestModel, Type: TypeString, Origin: OriginSemconv, Description: "Model served, as the engine names it."},
	{Name: AttrGenAITokenType, Type: TypeString, Origin: OriginSemconv, Description: "Kind of token counted.", Values: []string{"input", "output"}},
	{Name: AttrGenAIOperationName, Type: TypeString, Origin: OriginSemconv, Description: "Operation the engine performed; text_completion for every engine point (see docs/semconv-alignment.md).", Values: []string{GenAIOperationEngine}},
	{Name: AttrGenAIProviderName, Type: TypeString, Origin: OriginSemconv, Description: "Who serves the model: for a self-hosted engine, the engine itself (its llm.engine.name), as no well-known provider value fits.",
		Values: []string{EngineCustom, EngineLlamaCpp, EngineNIM, EngineSGLang, EngineTGI, EngineTRTLLM, EngineTriton, EngineVLLM}},
	{Name: AttrServerAddress, Type: TypeString, Origin: OriginSemconv, Description: "Host of the engine, from its scrape target URL (llm.engine.target)."},
	{Name: AttrServerPort, Type: TypeInt, Origin: OriginSemconv, Description: "Port of the engine, from its scrape target URL (the URL's default port when it names none)."},
	{Name: AttrFinishReason, Type: TypeString, Origin: OriginLLMOps, Description: "Why a request finished.", Values: []string{"abort", "error", "length", "stop"}},

	{Name: AttrProfileModulePath, Type: TypeString, Origin: OriginLLMOps, Description: "Model-layer path from the profiler's module hierarchy, outermost first, joined with '/'."},
	{Name: AttrProfileDevice, Type: TypeInt, Origin: OriginLLMOps, Description: "Device index within the profiled process."},
	{Name: AttrProfileFile, Type: TypeString, Origin: OriginLLMOps, Description: "Path of the imported profile file."},

	// Resources, spans and log records (where each is used: attrTables).
	{Name: AttrServiceName, Type: TypeString, Origin: OriginSemconv, Description: "Logical name of the service: `" + ProfileServiceName + "` on profileimport's resources."},
	{Name: AttrHostName, Type: TypeString, Origin: OriginSemconv, Description: "Host the profile was recorded on, when the trace says."},
	{Name: AttrThreadID, Type: TypeInt, Origin: OriginSemconv, Description: "Thread (tid) a CPU span ran on."},
	{Name: AttrProfileRank, Type: TypeInt, Origin: OriginLLMOps, Description: "Distributed rank of the profiled process (Kineto distributedInfo)."},
	{Name: AttrProfileWorldSize, Type: TypeInt, Origin: OriginLLMOps, Description: "Number of ranks of the profiled job (Kineto distributedInfo)."},
	{Name: AttrProfileGPUNames, Type: TypeSlice, Origin: OriginLLMOps, Description: "Names of the GPUs the profile saw, by device index."},
	{Name: AttrProfileCategory, Type: TypeString, Origin: OriginLLMOps, Description: "Profiler event category of a span as the profiler wrote it (cpu_op, kernel, gpu_memcpy, cuda_runtime, python_function, user_annotation, nvtx, ...); `profile` on the root span."},
	{Name: AttrProfileStream, Type: TypeInt, Origin: OriginLLMOps, Description: "CUDA stream of GPU activity (or of the allocation an out-of-memory record is about)."},
	{Name: AttrProfileExternalID, Type: TypeInt, Origin: OriginLLMOps, Description: "Kineto External id: links an operator to the runtime calls and kernels it caused."},
	{Name: AttrProfileCorrelation, Type: TypeInt, Origin: OriginLLMOps, Description: "CUPTI correlation id linking a runtime launch to its GPU activity."},
	{Name: AttrProfileInputDims, Type: TypeString, Origin: OriginLLMOps, Description: "Operator input shapes, as recorded (record_shapes=True)."},
	{Name: AttrProfileGrid, Type: TypeString, Origin: OriginLLMOps, Description: "Kernel launch grid dimensions."},
	{Name: AttrProfileBlock, Type: TypeString, Origin: OriginLLMOps, Description: "Kernel launch block dimensions."},
	{Name: AttrProfileCallStack, Type: TypeString, Origin: OriginLLMOps, Description: "Python call stack of an operator, as recorded (with_stack=True)."},
	{Name: AttrProfileOutstandingBytes, Type: TypeInt, Origin: OriginLLMOps, Description: "Leak suspect: bytes a model-layer path allocated during the profile and had not freed at its end."},
	{Name: AttrProfileOutstandingAllocations, Type: TypeInt, Origin: OriginLLMOps, Description: "Leak suspect: number of allocations still outstanding at the end of the profile."},
	{Name: AttrProfileAllocatedBytes, Type: TypeInt, Origin: OriginLLMOps, Description: "Leak suspect: bytes the path allocated during the profile, freed or not."},
	{Name: AttrProfileRequestedBytes, Type: TypeInt, Origin: OriginLLMOps, Description: "Out-of-memory record: bytes the failed allocation asked for."},
	{Name: AttrProfileDeviceFreeBytes, Type: TypeInt, Origin: OriginLLMOps, Description: "Out-of-memory record: bytes the device had free when the allocation failed."},
	{Name: AttrProfileAllocatorAllocatedBytes, Type: TypeInt, Origin: OriginLLMOps, Description: "Out-of-memory record: bytes the caching allocator had handed out on the device at the failure."},
	{Name: AttrProfileAllocatorReservedBytes, Type: TypeInt, Origin: OriginLLMOps, Description: "Out-of-memory record: bytes the caching allocator had reserved from the driver at the failure."},
	{Name: AttrProfilePythonStack, Type: TypeSlice, Origin: OriginLLMOps, Description: "Out-of-memory record: Python frames of the failed allocation, innermost first (file:line function)."},
	{Name: AttrGenAIUsageInputTokens, Type: TypeInt, Origin: OriginSemconv, Description: "Span: prompt tokens of a GenAI call (llmnormalize renames gen_ai.usage.prompt_tokens and llm.input_tokens to it)."},
	{Name: AttrGenAIUsageOutputTokens, Type: TypeInt, Origin: OriginSemconv, Description: "Span: generated tokens of a GenAI call (llmnormalize renames gen_ai.usage.completion_tokens and llm.output_tokens to it)."},
	{Name: AttrLinkTraceID, Type: TypeString, Origin: OriginLLMOps, Description: "Span: a trace id found in another attribute (trace_attributes), normalised to 32 lowercase hex digits so traces of different systems can be joined."},
	// The incident record's attributes that llm.incident.* points carry too.
	{Name: IncidentKind, Type: TypeString, Origin: OriginLLMOps, Description: "llm.incident.* points: the incident's kind.", Values: incidentKinds},
	{Name: IncidentSeverity, Type: TypeString, Origin: OriginLLMOps, Description: "llm.incident.* points: the incident's severity.", Values: []string{SeverityCritical, SeverityWarning}},
	{Name: IncidentQuadrant, Type: TypeString, Origin: OriginLLMOps, Description: "llm.incident.active points: the incident's golden-signal quadrant.", Values: []string{QuadrantErrors, QuadrantLatency, QuadrantSaturation, QuadrantThroughput}},
	{Name: IncidentSubject, Type: TypeString, Origin: OriginLLMOps, Description: "llm.incident.active points: the incident's subject in words."},
	{Name: IncidentID, Type: TypeString, Origin: OriginLLMOps, Description: "llm.incident.active points: the incident's id, to find its record (evidence, drill-down) in the log store."},
	{Name: IncidentLayer, Type: TypeString, Origin: OriginLLMOps, Description: "llm.incident.active points: the most implicated model layer, once the drill-down found one (the series is re-keyed when a later drill-down names another)."},
}

var incidentFields = []IncidentField{
	{Name: IncidentID, Type: TypeString, Required: true, Description: "Stable id of the incident: the same while it fires and when it resolves."},
	{Name: IncidentKind, Type: TypeString, Required: true, Description: "What is wrong.",
		Values: incidentKinds},
	{Name: IncidentQuadrant, Type: TypeString, Required: true, Description: "Golden-signal quadrant.", Values: []string{QuadrantErrors, QuadrantLatency, QuadrantSaturation, QuadrantThroughput}},
	{Name: IncidentSeverity, Type: TypeString, Required: true, Description: "Severity (also set as the record's severity: WARN or ERROR).", Values: []string{SeverityCritical, SeverityWarning}},
	{Name: IncidentState, Type: TypeString, Required: true, Description: "Lifecycle state.", Values: []string{StateFiring, StateResolved}},
	// (incident.state=acknowledged is input only: see StateAcknowledged.)
	{Name: IncidentScore, Type: TypeDouble, Required: true, Description: "Confidence and impact score, 0..1."},
	{Name: IncidentStartTime, Type: TypeString, Required: true, Description: "When the incident started firing (RFC 3339)."},
	{Name: IncidentEvidence, Type: TypeSlice, Required: true, Description: "Every signal consulted: maps with signal, value, baseline, threshold and unit."},
	{Name: IncidentLayerStack, Type: TypeSlice, Required: false, Description: "Model-layer path of the most implicated profiler span, outermost first, each with the bytes or time attributed to it."},
	{Name: IncidentAction, Type: TypeString, Required: false, Description: "One-line suggested action."},
	{Name: IncidentSubject, Type: TypeString, Required: false, Description: "The subject in words (GPU, process with pod, engine with model and target)."},
	{Name: IncidentLayer, Type: TypeString, Required: false, Description: "The most implicated model-layer path (the last entry of incident.layer_stack); empty when no profile was found."},
	{Name: IncidentDrilldown, Type: TypeString, Required: false, Description: "Where the drill-down came from (which profile), or how to capture a profile when there is none."},
	{Name: IncidentUpdate, Type: TypeInt, Required: false, Description: "How many times this firing incident was re-sent because its figures changed materially (0 on the first record)."},
	{Name: IncidentChange, Type: TypeString, Required: false, Description: "On an update: what changed since the last record, e.g. growth rate 1595 → 2400 MiBy/min."},
	{Name: IncidentRuledOut, Type: TypeSlice, Required: false, Description: "Causes the detector checked and excluded, one sentence each (e.g. the KV cache is flat, so this is not KV growth)."},
	{Name: IncidentOnsetTime, Type: TypeString, Required: false, Description: "When the fault began as the detector estimates it (RFC 3339): a leak's change point, before which memory was flat."},
	{Name: IncidentHorizon, Type: TypeString, Required: false, Description: "A leak too slow for `leak.window`: the span of the long-horizon tier whose memory floor showed it (2h, 24h or the longest, 72h by default); its rate is in MiBy/h in the evidence (memory.floor_growth_rate) and MiBy/day in the body."},
	{Name: IncidentResolution, Type: TypeString, Required: false, Description: "On resolved records: how the incident ended.",
		Values: []string{ResolutionAcknowledged, ResolutionCleared, ResolutionExpired, ResolutionGPUReset, ResolutionSuperseded}},
	{Name: IncidentSupersededBy, Type: TypeString, Required: false, Description: "On a record resolved as superseded: the incident.id of the incident that names its cause."},
	{Name: AttrHwID, Type: TypeString, Description: "Subject: the GPU, when the incident concerns one."},
	{Name: AttrProcessPid, Type: TypeInt, Description: "Subject: the process, when known."},
	{Name: AttrK8sPodName, Type: TypeString, Description: "Subject: the pod, when known."},
	{Name: AttrK8sNamespaceName, Type: TypeString, Description: "Subject: the pod's namespace, when known."},
	{Name: AttrGenAIRequestModel, Type: TypeString, Description: "Subject: the model, when the incident concerns an engine."},
	{Name: AttrEngineName, Type: TypeString, Description: "Subject: the engine, when the incident concerns one."},
	{Name: AttrHwGpuXidRecovery, Type: TypeString, Description: "On xid_error incident records: what the XID needs before the GPU is trusted again.", Values: xidRecoveries},
}

package spec

// The tables below are the single source of truth for the unified spec.
// docs/metric-spec.md is generated from them (make generate) and a test fails
// when the two differ.

// gpuDevice is the attribute set every GPU device point carries.
var gpuDevice = []AttrRef{
	{Name: AttrHwID, Requirement: Required},
	{Name: AttrHwName, Requirement: Recommended},
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
		Description: "Fraction of the last sample period during which device memory was read or written (0..1).",
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
	{Name: HwGpuTemperature, Group: GroupGPU, Instrument: Gauge, Unit: "Cel", Origin: OriginLLMOps,
		Description: "GPU core temperature.",
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
			AttrRef{Name: AttrHwType, Requirement: Required, Fixed: "gpu"},
			AttrRef{Name: AttrErrorType, Requirement: Required},
			AttrRef{Name: AttrHwGpuXid, Requirement: ConditionallyRequired})},
	{Name: HwPower, Group: GroupGPU, Instrument: Gauge, Unit: "W", Origin: OriginSemconv,
		Description: "Instantaneous power draw of the GPU.",
		Attributes:  with(gpuDevice, AttrRef{Name: AttrHwType, Requirement: Required, Fixed: "gpu"})},
	{Name: HwEnergy, Group: GroupGPU, Instrument: Counter, Unit: "J", Origin: OriginSemconv,
		Description: "Energy consumed by the GPU since the driver was loaded.",
		Attributes:  with(gpuDevice, AttrRef{Name: AttrHwType, Requirement: Required, Fixed: "gpu"})},
	{Name: HwStatus, Group: GroupGPU, Instrument: UpDownCounter, Unit: "1", Origin: OriginSemconv,
		Description: "1 for the GPU's current state (ok, degraded or failed), 0 for the others.",
		Attributes: with(gpuDevice,
			AttrRef{Name: AttrHwType, Requirement: Required, Fixed: "gpu"},
			AttrRef{Name: AttrHwState, Requirement: Required})},

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
		Attributes:  engine},
	{Name: GenAIServerTimePerOutputToken, Group: GroupEngine, Instrument: Histogram, Unit: "s", Origin: OriginSemconv,
		Description: "Time between consecutive output tokens of a request after the first (inter-token latency).",
		Attributes:  engine},
	{Name: GenAIServerRequestDuration, Group: GroupEngine, Instrument: Histogram, Unit: "s", Origin: OriginSemconv,
		Description: "End-to-end time of a request in the engine, from arrival to its last token.",
		Attributes:  engine},
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
}

var attributes = []Attribute{
	{Name: AttrHwID, Type: TypeString, Origin: OriginSemconv, Description: "GPU UUID as reported by the driver (e.g. GPU-3f2c…)."},
	{Name: AttrHwName, Type: TypeString, Origin: OriginSemconv, Description: "Product name of the GPU."},
	{Name: AttrHwVendor, Type: TypeString, Origin: OriginSemconv, Description: "GPU vendor."},
	{Name: AttrHwType, Type: TypeString, Origin: OriginSemconv, Description: "Type of the hardware component.", Values: []string{"gpu"}},
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
	{Name: AttrErrorType, Type: TypeString, Origin: OriginSemconv, Description: "Class of error: corrected / uncorrected ECC or xid on hw.errors; the error class on finished requests."},
	{Name: AttrNetworkIoDir, Type: TypeString, Origin: OriginSemconv, Description: "Direction of the transfer, from the GPU's point of view.", Values: []string{"receive", "transmit"}},

	{Name: AttrProcessPid, Type: TypeInt, Origin: OriginSemconv, Description: "Process id (in the host's pid namespace)."},
	{Name: AttrProcessExecutableName, Type: TypeString, Origin: OriginSemconv, Description: "Executable name of the process."},
	{Name: AttrContainerID, Type: TypeString, Origin: OriginSemconv, Description: "Container id from the process's cgroup."},
	{Name: AttrK8sPodUID, Type: TypeString, Origin: OriginSemconv, Description: "UID of the Kubernetes pod the process runs in."},
	{Name: AttrK8sPodName, Type: TypeString, Origin: OriginSemconv, Description: "Name of the Kubernetes pod."},
	{Name: AttrK8sNamespaceName, Type: TypeString, Origin: OriginSemconv, Description: "Namespace of the Kubernetes pod."},
	{Name: AttrK8sContainerName, Type: TypeString, Origin: OriginSemconv, Description: "Name of the container in the pod."},

	{Name: AttrEngineName, Type: TypeString, Origin: OriginLLMOps, Description: "Inference engine that produced the point.",
		Values: []string{EngineCustom, EngineLlamaCpp, EngineNIM, EngineSGLang, EngineTGI, EngineTRTLLM, EngineTriton, EngineVLLM}},
	{Name: AttrEngineRank, Type: TypeString, Origin: OriginLLMOps, Description: "Engine instance within one server (vLLM's engine label, data-parallel rank)."},
	{Name: AttrEngineTarget, Type: TypeString, Origin: OriginLLMOps, Description: "Metrics endpoint URL of a scraped engine."},
	{Name: AttrGenAIRequestModel, Type: TypeString, Origin: OriginSemconv, Description: "Model served, as the engine names it."},
	{Name: AttrGenAITokenType, Type: TypeString, Origin: OriginSemconv, Description: "Kind of token counted.", Values: []string{"input", "output"}},
	{Name: AttrFinishReason, Type: TypeString, Origin: OriginLLMOps, Description: "Why a request finished.", Values: []string{"abort", "error", "length", "stop"}},

	{Name: AttrProfileModulePath, Type: TypeString, Origin: OriginLLMOps, Description: "Model-layer path from the profiler's module hierarchy, outermost first, joined with '/'."},
	{Name: AttrProfileDevice, Type: TypeInt, Origin: OriginLLMOps, Description: "Device index within the profiled process."},
	{Name: AttrProfileFile, Type: TypeString, Origin: OriginLLMOps, Description: "Path of the imported profile file."},
}

var incidentFields = []IncidentField{
	{Name: IncidentID, Type: TypeString, Required: true, Description: "Stable id of the incident: the same while it fires and when it resolves."},
	{Name: IncidentKind, Type: TypeString, Required: true, Description: "What is wrong.",
		Values: []string{"cache_hit_rate_drop", "gpu_memory_leak", "kv_cache_growth", "kv_cache_saturation", "latency_spike", "leak_suspect", "queue_buildup", "thermal_throttling", "throughput_drop", "xid_error"}},
	{Name: IncidentQuadrant, Type: TypeString, Required: true, Description: "Golden-signal quadrant.", Values: []string{"errors", "latency", "saturation", "throughput"}},
	{Name: IncidentSeverity, Type: TypeString, Required: true, Description: "Severity (also set as the record's severity: WARN or ERROR).", Values: []string{"critical", "warning"}},
	{Name: IncidentState, Type: TypeString, Required: true, Description: "Lifecycle state.", Values: []string{"firing", "resolved"}},
	{Name: IncidentScore, Type: TypeDouble, Required: true, Description: "Confidence and impact score, 0..1."},
	{Name: IncidentStartTime, Type: TypeString, Required: true, Description: "When the incident started firing (RFC 3339)."},
	{Name: IncidentEvidence, Type: TypeSlice, Required: true, Description: "Every signal consulted: maps with signal, value, baseline, threshold and unit."},
	{Name: IncidentLayerStack, Type: TypeSlice, Required: false, Description: "Model-layer path of the most implicated profiler span, outermost first, each with the bytes or time attributed to it."},
	{Name: IncidentAction, Type: TypeString, Required: false, Description: "One-line suggested action."},
	{Name: AttrHwID, Type: TypeString, Description: "Subject: the GPU, when the incident concerns one."},
	{Name: AttrProcessPid, Type: TypeInt, Description: "Subject: the process, when known."},
	{Name: AttrK8sPodName, Type: TypeString, Description: "Subject: the pod, when known."},
	{Name: AttrK8sNamespaceName, Type: TypeString, Description: "Subject: the pod's namespace, when known."},
	{Name: AttrGenAIRequestModel, Type: TypeString, Description: "Subject: the model, when the incident concerns an engine."},
	{Name: AttrEngineName, Type: TypeString, Description: "Subject: the engine, when the incident concerns one."},
}

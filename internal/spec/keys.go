// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// Attribute keys set outside metric points: on resources, on the spans
// profileimport builds from a profile, on the log records it writes for
// what it finds, and on the spans llmnormalize normalises. Each is defined
// in the attributes table (registry.go) and listed where it is used in
// attrTables (registry_signals.go).
const (
	// Resources.
	AttrServiceName       = "service.name"
	AttrServiceInstanceID = "service.instance.id"
	AttrHostName          = "host.name"

	// Profile resources (one per profiled process).
	AttrProfileRank      = "llm.profile.rank"
	AttrProfileWorldSize = "llm.profile.world_size"
	AttrProfileGPUNames  = "llm.profile.gpu.names"

	// Profile spans.
	AttrProfileCategory    = "llm.profile.category"
	AttrProfileStream      = "llm.profile.stream"
	AttrProfileExternalID  = "llm.profile.external_id"
	AttrProfileCorrelation = "llm.profile.correlation"
	AttrProfileInputDims   = "llm.profile.input_dims"
	AttrProfileGrid        = "llm.profile.grid"
	AttrProfileBlock       = "llm.profile.block"
	AttrProfileCallStack   = "llm.profile.call_stack"
	AttrThreadID           = "thread.id"

	// Profile log records (leak suspects and out-of-memory events).
	AttrProfileOutstandingAllocations  = "llm.profile.memory.outstanding_allocations"
	AttrProfileAllocatedBytes          = "llm.profile.memory.allocated_bytes"
	AttrProfileRequestedBytes          = "llm.profile.memory.requested_bytes"
	AttrProfileDeviceFreeBytes         = "llm.profile.memory.device_free_bytes"
	AttrProfileAllocatorAllocatedBytes = "llm.profile.allocator.allocated_bytes"
	AttrProfileAllocatorReservedBytes  = "llm.profile.allocator.reserved_bytes"
	AttrProfilePythonStack             = "llm.profile.python_stack"
	// Leak suspects of a CUDA memory snapshot whose allocation history
	// shows a pattern (LeakPattern*): which one, the module forward frame
	// it happens in, how much each step adds and over how many steps.
	AttrProfileLeakPattern       = "llm.profile.leak.pattern"
	AttrProfileLeakForwardFrame  = "llm.profile.leak.forward_frame"
	AttrProfileLeakGrowthPerStep = "llm.profile.leak.growth_per_step_bytes"
	AttrProfileLeakSteps         = "llm.profile.leak.steps"

	// Spans normalised by llmnormalize (current GenAI semantic conventions).
	AttrGenAIUsageInputTokens  = "gen_ai.usage.input_tokens"
	AttrGenAIUsageOutputTokens = "gen_ai.usage.output_tokens"
	AttrLinkTraceID            = "llm.link.trace_id"
	// Prompt-chain spans: whether the chain fell back to another model or
	// prompt, and how long its retrieval step took (s). Semconv has
	// neither; the template id is semconv's gen_ai.prompt.name.
	AttrAppFallbackTriggered = "llm.app.fallback.triggered"
	AttrAppRetrievalDuration = "llm.app.retrieval.duration"
)

// Keys of each map in incident.evidence.
const (
	EvidenceSignal    = "signal"
	EvidenceValue     = "value"
	EvidenceBaseline  = "baseline"
	EvidenceThreshold = "threshold"
	EvidenceUnit      = "unit"
)

// ProfileServiceName is the service.name of every profileimport resource.
const ProfileServiceName = "pytorch-profiler"

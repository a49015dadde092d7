// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// Incident kinds (incident.kind). Every component that writes or reads an
// incident record names its kind with one of these.
const (
	IncidentKindGPUMemoryLeak     = "gpu_memory_leak"
	IncidentKindKVCacheGrowth     = "kv_cache_growth"
	IncidentKindKVCacheSaturation = "kv_cache_saturation"
	IncidentKindCacheHitDrop      = "cache_hit_drop"
	IncidentKindLatencySpike      = "latency_spike"
	IncidentKindThroughputDrop    = "throughput_drop"
	IncidentKindQueueBuildup      = "queue_buildup"
	IncidentKindGPUThrottling     = "gpu_throttling"
	IncidentKindXIDError          = "xid_error"
	IncidentKindECCUncorrected    = "ecc_uncorrected"
	IncidentKindJointDegradation  = "joint_degradation"
	// Written by profileimport from a profile or memory snapshot.
	IncidentKindGPUOOM = "gpu_oom"
)

// Incident severities (incident.severity).
const (
	SeverityWarning  = "warning"
	SeverityCritical = "critical"
)

// Incident lifecycle states (incident.state).
const (
	StateFiring   = "firing"
	StateResolved = "resolved"
	// StateAcknowledged is only ever sent to rootcause, never by it: a log
	// record with incident.id (or hw.id) and incident.state=acknowledged
	// ends the hardware-error incidents it names (an operator handled the
	// GPU in a way its metrics cannot show).
	StateAcknowledged = "acknowledged"
)

// How an incident ended (incident.resolution, on resolved records).
const (
	// ResolutionCleared: its condition stayed clear for resolve_after.
	ResolutionCleared = "cleared"
	// ResolutionSuperseded: the cause it was a symptom of became known; the
	// record names that incident in incident.superseded_by.
	ResolutionSuperseded = "superseded"
	// ResolutionGPUReset: the GPU was reset or its driver reloaded after the
	// error (its volatile ECC counters fell, or it came back from failed).
	ResolutionGPUReset = "gpu_reset"
	// ResolutionAcknowledged: an operator acknowledged it.
	ResolutionAcknowledged = "acknowledged"
	// ResolutionExpired: a hardware error neither handled nor acknowledged
	// within hardware_errors.resolve_after.
	ResolutionExpired = "expired"
)

// Golden-signal quadrants (incident.quadrant).
const (
	QuadrantLatency    = "latency"
	QuadrantErrors     = "errors"
	QuadrantThroughput = "throughput"
	QuadrantSaturation = "saturation"
)

// incidentKinds lists every kind, sorted, as docs/metric-spec.md shows them
// (IncidentKinds returns a copy).
var incidentKinds = []string{
	IncidentKindCacheHitDrop, IncidentKindECCUncorrected, IncidentKindEmbeddingDrift, IncidentKindGPUMemoryLeak, IncidentKindGPUOOM,
	IncidentKindGPUThrottling, IncidentKindHallucinationRate, IncidentKindJointDegradation, IncidentKindKVCacheGrowth,
	IncidentKindKVCacheSaturation, IncidentKindLatencySpike, IncidentKindLeakSuspect, IncidentKindOutputInconsistent,
	IncidentKindPromptInjection, IncidentKindQueueBuildup, IncidentKindRAGRelevanceLow, IncidentKindThroughputDrop, IncidentKindXIDError,
}

// Evidence signals that are not metrics of the registry: figures a detector
// derives and cites in incident.evidence.
const (
	EvidenceMemoryGrowthRate       = "memory.growth_rate"       // MiBy/min, Theil–Sen slope
	EvidenceMemoryGrowthSteadiness = "memory.growth_steadiness" // share of positive pairwise slopes
	EvidenceThrottleDuration       = "throttle.duration"        // s the slowdown has held
	// A slow leak found over a long horizon: the rise of the memory floor
	// (bucket minima), MiBy/h, and the share of its pairwise slopes > 0.
	EvidenceMemoryFloorGrowthRate       = "memory.floor_growth_rate"
	EvidenceMemoryFloorGrowthSteadiness = "memory.floor_growth_steadiness"
	EvidenceTokensRate                  = "llm.engine.tokens.rate" // output tokens/s over throughput.window
)

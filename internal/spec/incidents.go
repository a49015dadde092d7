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
	IncidentKindCacheHitDrop, IncidentKindECCUncorrected, IncidentKindGPUMemoryLeak, IncidentKindGPUOOM,
	IncidentKindGPUThrottling, IncidentKindJointDegradation, IncidentKindKVCacheGrowth,
	IncidentKindKVCacheSaturation, IncidentKindLatencySpike, IncidentKindLeakSuspect,
	IncidentKindQueueBuildup, IncidentKindThroughputDrop, IncidentKindXIDError,
}

// Evidence signals that are not metrics of the registry: figures a detector
// derives and cites in incident.evidence.
const (
	EvidenceMemoryGrowthRate       = "memory.growth_rate"       // MiBy/min, Theil–Sen slope
	EvidenceMemoryGrowthSteadiness = "memory.growth_steadiness" // share of positive pairwise slopes
	EvidenceThrottleDuration       = "throttle.duration"        // s the slowdown has held
	EvidenceTokensRate             = "llm.engine.tokens.rate"   // output tokens/s over throughput.window
)

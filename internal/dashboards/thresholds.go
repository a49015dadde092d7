// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

// The thresholds the dashboards draw, as lines or steps on the panels they
// concern. The alerting rules of distro/prometheus/*.rules.yml use the same
// values: a change here must be made there too (and the other way round), or
// a panel shows a line the alert does not fire at. TestThresholdsShared
// fails when the two disagree.
const (
	// KVCacheSaturation is the llm.engine.kv_cache.utilization (0..1) at and
	// above which an engine's KV cache is saturated (also the rootcause
	// connector's default kv_cache.threshold).
	KVCacheSaturation = 0.85
	// GPUMemoryUsedRatio is the share of a GPU's memory in use
	// (hw.gpu.memory.usage / hw.gpu.memory.limit) above which it is
	// nearly full.
	GPUMemoryUsedRatio = 0.9
	// TimeToExhaustionSeconds: a GPU whose memory, growing as it does, is
	// full in less than this many seconds (hw.gpu.memory.time_to_exhaustion)
	// needs attention now (also the connector's leak.critical_exhaustion).
	TimeToExhaustionSeconds = 3600
	// TTFTP99Seconds is the floor of the time-to-first-token alert: it
	// fires on a p99 above its own 30-minute baseline and above this (also
	// the connector's default latency.time_to_first_token_floor).
	TTFTP99Seconds = 1
	// TPOTP99Seconds is the same floor for the p99 time per output token
	// (the connector's default latency.time_per_output_token_floor).
	TPOTP99Seconds = 0.2
	// ThroughputDropFraction: output tokens/s below this fraction of the
	// peak over ThroughputPeakWindow is a throughput drop.
	ThroughputDropFraction = 0.5
	// ThroughputPeakWindow is the window (a PromQL duration) the peak
	// output-token rate is taken over.
	ThroughputPeakWindow = "1h"
)

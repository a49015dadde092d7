// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector // import "github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector"

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// Config is the rootcause connector's configuration. Every threshold and
// window of every detector is here; the defaults are in factory.go.
type Config struct {
	// EvaluationInterval is how often the detectors run over the state.
	EvaluationInterval time.Duration `mapstructure:"evaluation_interval"`
	// MaxSubjects bounds the GPUs, processes, engine targets and models
	// tracked; beyond it the least recently seen subject is evicted (and
	// counted in the connector's own telemetry).
	MaxSubjects int `mapstructure:"max_subjects"`
	// ResolveAfter: a firing incident resolves once its condition has been
	// clear this long.
	ResolveAfter time.Duration `mapstructure:"resolve_after"`
	// RenotifyInterval: a still-firing incident is emitted again this often
	// (0: never), so downstream alerting sees it is still there.
	RenotifyInterval time.Duration `mapstructure:"renotify_interval"`
	// Updates: when a firing incident is sent again because its figures
	// moved, not only every renotify_interval.
	Updates UpdatesConfig `mapstructure:"updates"`
	// CorrelationHold: a symptom (latency spike, cache hit drop, throughput
	// drop, queue build-up) whose cause may be about to show (its engine's
	// KV cache near the threshold, its memory growing, its GPU throttled)
	// is held back this long before it is sent, so the cause's incident can
	// replace it instead of following it. 0 sends symptoms at once.
	CorrelationHold time.Duration `mapstructure:"correlation_hold"`
	// Warmup: an engine (or GPU process) younger than this is in cold start:
	// its samples stay out of baselines and latency/throughput detectors do
	// not fire on it.
	Warmup time.Duration `mapstructure:"warmup"`
	// StaleAfter: a subject that has not reported for this long stops being
	// evaluated (its incidents resolve).
	StaleAfter time.Duration `mapstructure:"stale_after"`

	Leak       LeakConfig       `mapstructure:"leak"`
	KVCache    KVCacheConfig    `mapstructure:"kv_cache"`
	CacheHit   CacheHitConfig   `mapstructure:"cache_hit"`
	Latency    LatencyConfig    `mapstructure:"latency"`
	Throughput ThroughputConfig `mapstructure:"throughput"`
	Queue      QueueConfig      `mapstructure:"queue"`
	Throttle   ThrottleConfig   `mapstructure:"throttle"`
	// HardwareErrors: XID events and uncorrected ECC errors.
	HardwareErrors HardwareErrorsConfig `mapstructure:"hardware_errors"`
	Joint          JointConfig          `mapstructure:"joint"`
	// AppQuality: default rules on the quality signals applications send
	// (llm.app.*), graded with the response each calls for.
	AppQuality AppQualityConfig `mapstructure:"app_quality"`
	Rules      []RuleConfig     `mapstructure:"rules"`
	DrillDown  DrillDownConfig  `mapstructure:"drilldown"`
	// Derived says which derived metrics are added to the metrics passing
	// through (hw.gpu.memory.growth_rate, hw.gpu.memory.time_to_exhaustion,
	// llm.engine.prefix_cache.hit_ratio) and whether exemplars are attached.
	Derived DerivedConfig `mapstructure:"derived"`
}

// LeakConfig tunes the GPU memory leak detector.
type LeakConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// Window of hw.gpu.memory.usage / process.gpu.memory.usage over which
	// the robust (Theil–Sen) slope is taken.
	Window time.Duration `mapstructure:"window"`
	// MinSlopeMiBPerMinute: growth below this is not a leak.
	MinSlopeMiBPerMinute float64 `mapstructure:"min_slope_mib_per_minute"`
	// MinSteadiness (0..1): the share of the window's pairwise slopes that
	// are positive; a sawtooth or a single step is not a steady leak.
	MinSteadiness float64 `mapstructure:"min_steadiness"`
	// CriticalExhaustion: time to exhaustion under this makes it critical.
	CriticalExhaustion time.Duration `mapstructure:"critical_exhaustion"`
	// KVExplainedRise: a rise of llm.engine.kv_cache.utilization at least
	// this large (fraction points) over the window on the same process/GPU
	// makes the growth KV-cache growth, not a leak.
	KVExplainedRise float64 `mapstructure:"kv_explained_rise"`
	// LongHorizon finds leaks too slow for Window (a few GB a day) from
	// the floors of downsampled memory tiers over hours and days.
	LongHorizon LongHorizonConfig `mapstructure:"long_horizon"`
}

// LongHorizonConfig tunes the long-horizon leak tiers: 1-minute buckets
// over 2h, 10-minute buckets over 24h and 1-hour buckets over Span.
type LongHorizonConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// Span of the longest (1-hour) tier: a whole number of hours, at
	// least 30h (a day plus a quarter, to compare floors a day apart).
	Span time.Duration `mapstructure:"span"`
	// MinSlopeMiBPerHour: a floor rising slower than this is not a leak.
	MinSlopeMiBPerHour float64 `mapstructure:"min_slope_mib_per_hour"`
	// MinSteadiness (0..1): the share of the floor's pairwise slopes that
	// are positive.
	MinSteadiness float64 `mapstructure:"min_steadiness"`
}

// KVCacheConfig tunes KV-cache saturation.
type KVCacheConfig struct {
	Enabled   bool          `mapstructure:"enabled"`
	Threshold float64       `mapstructure:"threshold"`
	For       time.Duration `mapstructure:"for"`
}

// CacheHitConfig tunes the prefix/KV cache hit-rate drop.
type CacheHitConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// Window over which hits/queries deltas give the current ratio.
	Window time.Duration `mapstructure:"window"`
	// Baseline: how far back the recent ratios forming the baseline go.
	Baseline time.Duration `mapstructure:"baseline"`
	MinRatio float64       `mapstructure:"min_ratio"`
	Sigma    float64       `mapstructure:"sigma"`
	// MinQueries in the window before a ratio is judged.
	MinQueries float64 `mapstructure:"min_queries"`
}

// LatencyConfig tunes the latency spike detector.
type LatencyConfig struct {
	Enabled  bool    `mapstructure:"enabled"`
	Quantile float64 `mapstructure:"quantile"`
	// Window of histogram deltas the current quantile is computed over.
	Window time.Duration `mapstructure:"window"`
	// Baseline: how far back the recent quantiles forming the baseline go.
	Baseline time.Duration `mapstructure:"baseline"`
	Sigma    float64       `mapstructure:"sigma"`
	// Floors (seconds) per unified histogram: below them nothing fires
	// whatever the baseline says.
	TimeToFirstTokenFloor float64 `mapstructure:"time_to_first_token_floor"`
	// TimePerOutputTokenFloor applies to gen_ai.server.time_per_output_token,
	// one value per request (its mean gap after the first token);
	// InterTokenLatencyFloor to llm.engine.inter_token_latency, every gap.
	TimePerOutputTokenFloor float64 `mapstructure:"time_per_output_token_floor"`
	InterTokenLatencyFloor  float64 `mapstructure:"inter_token_latency_floor"`
	RequestDurationFloor    float64 `mapstructure:"request_duration_floor"`
	QueueDurationFloor      float64 `mapstructure:"queue_duration_floor"`
	// RequestDurationActionID is the response a spike of the request
	// duration calls for (incident.action.id; "" for none): by default
	// start_quantized_pipeline, with the 3σ and 2.5 s floor above.
	RequestDurationActionID string `mapstructure:"request_duration_action_id"`
}

// ThroughputConfig tunes the throughput drop detector.
type ThroughputConfig struct {
	Enabled  bool          `mapstructure:"enabled"`
	Window   time.Duration `mapstructure:"window"`
	Baseline time.Duration `mapstructure:"baseline"`
	// Drop: fires when the output-token rate is this fraction below its
	// baseline while requests are waiting.
	Drop float64 `mapstructure:"drop"`
}

// QueueConfig tunes the queue build-up detector.
type QueueConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// MinWaiting requests waiting, growing over For.
	MinWaiting float64       `mapstructure:"min_waiting"`
	For        time.Duration `mapstructure:"for"`
}

// ThrottleConfig tunes GPU throttling (thermal/power reasons held).
type ThrottleConfig struct {
	Enabled bool          `mapstructure:"enabled"`
	For     time.Duration `mapstructure:"for"`
}

// UpdatesConfig says when a firing incident is re-sent with its current
// figures (same incident.id, incident.update counting up).
type UpdatesConfig struct {
	// Change: the relative change (0.25: ±25%) of the incident's score, its
	// headline figure (growth rate, ratio, quantile, rate, queue) or its
	// time to exhaustion since the last record that makes an update. A
	// severity change always does. 0 disables updates.
	Change float64 `mapstructure:"change"`
	// MinInterval: at most one update per incident this often.
	MinInterval time.Duration `mapstructure:"min_interval"`
}

// HardwareErrorsConfig tunes the XID and uncorrected-ECC detector.
type HardwareErrorsConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// ResolveAfter bounds how long an XID that needs a GPU reset, or an
	// uncorrected ECC error, fires when nothing shows it was handled: no
	// reset or driver reload seen (the GPU's volatile ECC counters fell, or
	// it came back from failed) and no acknowledgment (a log record with
	// incident.state=acknowledged). XIDs the application recovers from
	// (faulting kernels) resolve after resolve_after like any incident.
	ResolveAfter time.Duration `mapstructure:"resolve_after"`
}

// JointConfig merges a latency spike, a cache hit-rate drop and a memory
// slope seen within Window into one critical incident.
type JointConfig struct {
	Enabled bool          `mapstructure:"enabled"`
	Window  time.Duration `mapstructure:"window"`
	Weights JointWeights  `mapstructure:"weights"`
}

// JointWeights are the score weights of the joint trigger.
type JointWeights struct {
	Latency float64 `mapstructure:"latency"`
	Cache   float64 `mapstructure:"cache"`
	Memory  float64 `mapstructure:"memory"`
}

// AppQualityConfig holds the default rules on application quality
// signals. Each becomes a rule like those of rules[] (its name is the
// incident kind); a rules[] entry of the same name replaces it.
type AppQualityConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// Hallucination: llm.app.hallucination.rate above threshold.
	Hallucination AppRuleConfig `mapstructure:"hallucination"`
	// Consistency: llm.app.output.consistency below threshold.
	Consistency AppRuleConfig `mapstructure:"consistency"`
	// RAGRelevance: llm.app.rag.relevance below threshold.
	RAGRelevance AppRuleConfig `mapstructure:"rag_relevance"`
	// EmbeddingDrift: llm.app.embedding.norm threshold σ from its own
	// baseline (either side).
	EmbeddingDrift AppRuleConfig `mapstructure:"embedding_drift"`
	// PromptInjection: llm.app.prompt_injection.score above threshold.
	PromptInjection AppRuleConfig `mapstructure:"prompt_injection"`
}

// AppRuleConfig tunes one default application-quality rule.
type AppRuleConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// Threshold: a level (above or below it, by rule) or, for
	// embedding_drift, standard deviations from the baseline.
	Threshold float64       `mapstructure:"threshold"`
	For       time.Duration `mapstructure:"for"`
	Severity  string        `mapstructure:"severity"`
	// ActionID: the response it calls for (incident.action.id), which
	// alertwebhook's action hooks can be keyed by; "" for none.
	ActionID string `mapstructure:"action_id"`
}

// RuleConfig is a user rule on any metric.
type RuleConfig struct {
	// Name becomes the incident kind.
	Name   string `mapstructure:"name"`
	Metric string `mapstructure:"metric"`
	// Attributes the point (or its resource) must carry, exactly.
	Attributes map[string]string `mapstructure:"attributes"`
	// Exactly one of Above, Below or Sigma.
	Above *float64 `mapstructure:"above"`
	Below *float64 `mapstructure:"below"`
	// Sigma: fires when the value is this many standard deviations away
	// from its own baseline (either side).
	Sigma *float64 `mapstructure:"sigma"`
	// Baseline: the period the sigma baseline spans (default
	// latency.baseline).
	Baseline time.Duration `mapstructure:"baseline"`
	For      time.Duration `mapstructure:"for"`
	Severity string        `mapstructure:"severity"`
	// Quadrant: latency, errors, throughput or saturation (default errors).
	Quadrant string `mapstructure:"quadrant"`
	Action   string `mapstructure:"action"`
	// ActionID names the automatic response for machines
	// (incident.action.id); alertwebhook's action hooks can be keyed by it.
	ActionID string `mapstructure:"action_id"`
	// Description says what the condition means, at the head of the
	// incident's body.
	Description string `mapstructure:"description"`
}

// appRule is one default application-quality rule: how its
// AppRuleConfig becomes a RuleConfig.
type appRule struct {
	field   string // its key under app_quality
	cfg     AppRuleConfig
	kind    string
	metric  string
	cond    string // "above", "below" or "sigma"
	meaning string
	action  string
}

func (c *AppQualityConfig) rules() []appRule {
	return []appRule{
		{"hallucination", c.Hallucination, spec.IncidentKindHallucinationRate, spec.AppHallucinationRate, "above",
			"the application's answers are hallucinated more often than allowed",
			"Take the instance out of rotation (circuit breaker) and check what changed: the model version, the prompt template, the retrieved context."},
		{"consistency", c.Consistency, spec.IncidentKindOutputInconsistent, spec.AppOutputConsistency, "below",
			"the model answers the same question differently from one turn to the next",
			"Check the sampling settings (temperature) and whether the model or its prompt template changed."},
		{"rag_relevance", c.RAGRelevance, spec.IncidentKindRAGRelevanceLow, spec.AppRAGRelevance, "below",
			"retrieval returns documents that do not answer the query",
			"Check the retriever: the index, the embedding model and the documents added or removed."},
		{"embedding_drift", c.EmbeddingDrift, spec.IncidentKindEmbeddingDrift, spec.AppEmbeddingNorm, "sigma",
			"the embeddings' norm moved away from its own baseline: the embedding model or the input changed",
			"Check whether the embedding model was updated without reindexing; reindex with the model in use."},
		{"prompt_injection", c.PromptInjection, spec.IncidentKindPromptInjection, spec.AppPromptInjectionScore, "above",
			"a request looks like a prompt-injection attempt",
			"Block the session that sent it and review the request; check what the model did with it."},
	}
}

// rule is the RuleConfig an enabled default rule stands for.
func (a appRule) rule() RuleConfig {
	t := a.cfg.Threshold
	r := RuleConfig{Name: a.kind, Metric: a.metric, For: a.cfg.For, Severity: a.cfg.Severity,
		Quadrant: spec.QuadrantErrors, Action: a.action, ActionID: a.cfg.ActionID, Description: a.meaning}
	switch a.cond {
	case "above":
		r.Above = &t
	case "below":
		r.Below = &t
	default:
		r.Sigma = &t
	}
	return r
}

// effectiveRules are the rules the connector runs: the user's, then the
// enabled default application-quality rules no user rule replaces.
func (cfg *Config) effectiveRules() []RuleConfig {
	out := append([]RuleConfig(nil), cfg.Rules...)
	if !cfg.AppQuality.Enabled {
		return out
	}
	named := map[string]bool{}
	for _, r := range cfg.Rules {
		named[r.Name] = true
	}
	for _, a := range cfg.AppQuality.rules() {
		if a.cfg.Enabled && !named[a.kind] {
			out = append(out, a.rule())
		}
	}
	return out
}

// DrillDownConfig bounds what is kept to link incidents to spans.
type DrillDownConfig struct {
	// MaxSpans: profiler/application spans indexed (oldest dropped first).
	MaxSpans int `mapstructure:"max_spans"`
	// MaxProfiles: per-process layer summaries (from profileimport's
	// memory metrics and leak suspects) kept.
	MaxProfiles int `mapstructure:"max_profiles"`
	// Retention: spans and profiles older than this are not used.
	Retention time.Duration `mapstructure:"retention"`
	// ProfileHint is appended to incidents with no profile of the process.
	ProfileHint string `mapstructure:"profile_hint"`
}

// DerivedConfig switches derived metrics and exemplars.
type DerivedConfig struct {
	Metrics   bool `mapstructure:"metrics"`
	Exemplars bool `mapstructure:"exemplars"`
	// IncidentMetrics adds llm.incident.active and llm.incident.fired to
	// the metrics pipeline, so a Prometheus without a log backend sees the
	// incidents. They leave at once when an incident fires or resolves,
	// and every IncidentMetricsInterval otherwise, which keeps the series
	// fresh within Prometheus' 5-minute lookback and the prometheus
	// exporter's metric_expiration.
	IncidentMetrics         bool          `mapstructure:"incident_metrics"`
	IncidentMetricsInterval time.Duration `mapstructure:"incident_metrics_interval"`
}

// ruleFieldErrors checks what every rule has, user rule or default
// application-quality one: its hold, baseline, severity and quadrant.
func ruleFieldErrors(at string, r RuleConfig) []error {
	var errs []error
	if r.Baseline < 0 {
		errs = append(errs, fmt.Errorf("%s.baseline must not be negative, got %s", at, r.Baseline))
	}
	if r.For < 0 {
		errs = append(errs, fmt.Errorf("%s.for must not be negative, got %s", at, r.For))
	}
	switch r.Severity {
	case "", spec.SeverityWarning, spec.SeverityCritical:
	default:
		errs = append(errs, fmt.Errorf("%s.severity must be %q or %q, got %q", at, spec.SeverityWarning, spec.SeverityCritical, r.Severity))
	}
	switch r.Quadrant {
	case "", spec.QuadrantLatency, spec.QuadrantErrors, spec.QuadrantThroughput, spec.QuadrantSaturation:
	default:
		errs = append(errs, fmt.Errorf("%s.quadrant must be one of latency, errors, throughput, saturation, got %q", at, r.Quadrant))
	}
	return errs
}

// Validate checks every field at start; messages name the field.
func (cfg *Config) Validate() error {
	var errs []error
	positive := func(name string, d time.Duration) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", name, d))
		}
	}
	fraction := func(name string, v float64) {
		if !(v > 0 && v <= 1) {
			errs = append(errs, fmt.Errorf("%s must be in (0, 1], got %g", name, v))
		}
	}
	nonNeg := func(name string, v float64) {
		if !(v >= 0) {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %g", name, v))
		}
	}
	positive("evaluation_interval", cfg.EvaluationInterval)
	if cfg.Derived.IncidentMetrics {
		positive("derived.incident_metrics_interval", cfg.Derived.IncidentMetricsInterval)
	}
	if cfg.MaxSubjects <= 0 {
		errs = append(errs, fmt.Errorf("max_subjects must be positive, got %d", cfg.MaxSubjects))
	}
	positive("resolve_after", cfg.ResolveAfter)
	if cfg.RenotifyInterval < 0 {
		errs = append(errs, fmt.Errorf("renotify_interval must not be negative (0 disables), got %s", cfg.RenotifyInterval))
	}
	if cfg.Warmup < 0 {
		errs = append(errs, fmt.Errorf("warmup must not be negative, got %s", cfg.Warmup))
	}
	positive("stale_after", cfg.StaleAfter)
	if !(cfg.Updates.Change >= 0) {
		errs = append(errs, fmt.Errorf("updates.change must not be negative (0 disables updates), got %g", cfg.Updates.Change))
	}
	if cfg.Updates.MinInterval < 0 {
		errs = append(errs, fmt.Errorf("updates.min_interval must not be negative, got %s", cfg.Updates.MinInterval))
	}
	if cfg.CorrelationHold < 0 {
		errs = append(errs, fmt.Errorf("correlation_hold must not be negative (0 disables it), got %s", cfg.CorrelationHold))
	}
	if cfg.HardwareErrors.Enabled {
		positive("hardware_errors.resolve_after", cfg.HardwareErrors.ResolveAfter)
	}

	positive("leak.window", cfg.Leak.Window)
	nonNeg("leak.min_slope_mib_per_minute", cfg.Leak.MinSlopeMiBPerMinute)
	fraction("leak.min_steadiness", cfg.Leak.MinSteadiness)
	positive("leak.critical_exhaustion", cfg.Leak.CriticalExhaustion)
	nonNeg("leak.kv_explained_rise", cfg.Leak.KVExplainedRise)
	if cfg.Leak.Window > 0 && cfg.EvaluationInterval > 0 && cfg.Leak.Window < 4*cfg.EvaluationInterval {
		errs = append(errs, fmt.Errorf("leak.window (%s) must cover at least 4 evaluation_interval (%s) to fit a slope", cfg.Leak.Window, cfg.EvaluationInterval))
	}
	if lh := cfg.Leak.LongHorizon; lh.Enabled {
		if lh.Span < minLongSpan || lh.Span > maxLongSpan || lh.Span%time.Hour != 0 {
			errs = append(errs, fmt.Errorf("leak.long_horizon.span must be a whole number of hours from %s (a day plus a quarter, to compare floors a day apart) to %s (%d hourly buckets), got %s",
				minLongSpan, maxLongSpan, int(maxLongSpan/time.Hour), lh.Span))
		}
		if !(lh.MinSlopeMiBPerHour > 0) {
			errs = append(errs, fmt.Errorf("leak.long_horizon.min_slope_mib_per_hour must be positive (noise has slopes near 0), got %g", lh.MinSlopeMiBPerHour))
		}
		fraction("leak.long_horizon.min_steadiness", lh.MinSteadiness)
	}

	fraction("kv_cache.threshold", cfg.KVCache.Threshold)
	if cfg.KVCache.For < 0 {
		errs = append(errs, fmt.Errorf("kv_cache.for must not be negative, got %s", cfg.KVCache.For))
	}

	positive("cache_hit.window", cfg.CacheHit.Window)
	positive("cache_hit.baseline", cfg.CacheHit.Baseline)
	if cfg.CacheHit.Baseline > 0 && cfg.CacheHit.Baseline <= cfg.CacheHit.Window {
		errs = append(errs, fmt.Errorf("cache_hit.baseline (%s) must be longer than cache_hit.window (%s)", cfg.CacheHit.Baseline, cfg.CacheHit.Window))
	}
	fraction("cache_hit.min_ratio", cfg.CacheHit.MinRatio)
	nonNeg("cache_hit.sigma", cfg.CacheHit.Sigma)
	nonNeg("cache_hit.min_queries", cfg.CacheHit.MinQueries)

	if !(cfg.Latency.Quantile > 0 && cfg.Latency.Quantile < 1) {
		errs = append(errs, fmt.Errorf("latency.quantile must be in (0, 1), got %g", cfg.Latency.Quantile))
	}
	positive("latency.window", cfg.Latency.Window)
	positive("latency.baseline", cfg.Latency.Baseline)
	if cfg.Latency.Baseline > 0 && cfg.Latency.Baseline <= cfg.Latency.Window {
		errs = append(errs, fmt.Errorf("latency.baseline (%s) must be longer than latency.window (%s)", cfg.Latency.Baseline, cfg.Latency.Window))
	}
	nonNeg("latency.sigma", cfg.Latency.Sigma)
	nonNeg("latency.time_to_first_token_floor", cfg.Latency.TimeToFirstTokenFloor)
	nonNeg("latency.time_per_output_token_floor", cfg.Latency.TimePerOutputTokenFloor)
	nonNeg("latency.inter_token_latency_floor", cfg.Latency.InterTokenLatencyFloor)
	nonNeg("latency.request_duration_floor", cfg.Latency.RequestDurationFloor)
	nonNeg("latency.queue_duration_floor", cfg.Latency.QueueDurationFloor)

	positive("throughput.window", cfg.Throughput.Window)
	positive("throughput.baseline", cfg.Throughput.Baseline)
	if cfg.Throughput.Baseline > 0 && cfg.Throughput.Baseline <= cfg.Throughput.Window {
		errs = append(errs, fmt.Errorf("throughput.baseline (%s) must be longer than throughput.window (%s)", cfg.Throughput.Baseline, cfg.Throughput.Window))
	}
	fraction("throughput.drop", cfg.Throughput.Drop)

	nonNeg("queue.min_waiting", cfg.Queue.MinWaiting)
	positive("queue.for", cfg.Queue.For)
	if cfg.Throttle.For < 0 {
		errs = append(errs, fmt.Errorf("throttle.for must not be negative, got %s", cfg.Throttle.For))
	}

	positive("joint.window", cfg.Joint.Window)
	w := cfg.Joint.Weights
	nonNeg("joint.weights.latency", w.Latency)
	nonNeg("joint.weights.cache", w.Cache)
	nonNeg("joint.weights.memory", w.Memory)
	if cfg.Joint.Enabled && w.Latency+w.Cache+w.Memory <= 0 {
		errs = append(errs, errors.New("joint.weights must not all be zero"))
	}

	for _, a := range cfg.AppQuality.rules() {
		if !cfg.AppQuality.Enabled || !a.cfg.Enabled {
			continue
		}
		at := "app_quality." + a.field
		switch {
		case a.cond == "sigma" && a.cfg.Threshold <= 0:
			errs = append(errs, fmt.Errorf("%s.threshold is in standard deviations and must be positive, got %g", at, a.cfg.Threshold))
		case a.cond != "sigma" && (a.cfg.Threshold <= 0 || a.cfg.Threshold > 1):
			errs = append(errs, fmt.Errorf("%s.threshold must be in (0, 1] (%s is a fraction), got %g", at, a.metric, a.cfg.Threshold))
		}
		// What it shares with rules[] is checked as rules[] are.
		errs = append(errs, ruleFieldErrors(at, a.rule())...)
	}

	names := map[string]bool{}
	for i, r := range cfg.Rules {
		at := fmt.Sprintf("rules[%d]", i)
		if r.Name == "" {
			errs = append(errs, fmt.Errorf("%s.name is required (it becomes the incident kind)", at))
		} else if names[r.Name] {
			errs = append(errs, fmt.Errorf("%s.name %q is used twice", at, r.Name))
		}
		names[r.Name] = true
		if r.Metric == "" {
			errs = append(errs, fmt.Errorf("%s.metric is required", at))
		}
		n := 0
		for _, p := range []*float64{r.Above, r.Below, r.Sigma} {
			if p != nil {
				n++
			}
		}
		if n != 1 {
			errs = append(errs, fmt.Errorf("%s needs exactly one of above, below or sigma, got %d", at, n))
		}
		if r.Sigma != nil && *r.Sigma <= 0 {
			errs = append(errs, fmt.Errorf("%s.sigma must be positive, got %g", at, *r.Sigma))
		}
		errs = append(errs, ruleFieldErrors(at, r)...)
		if strings.ContainsAny(r.Name, " \t\n") {
			errs = append(errs, fmt.Errorf("%s.name %q must not contain spaces (it becomes the incident kind)", at, r.Name))
		}
	}

	if cfg.DrillDown.MaxSpans <= 0 {
		errs = append(errs, fmt.Errorf("drilldown.max_spans must be positive, got %d", cfg.DrillDown.MaxSpans))
	}
	if cfg.DrillDown.MaxProfiles <= 0 {
		errs = append(errs, fmt.Errorf("drilldown.max_profiles must be positive, got %d", cfg.DrillDown.MaxProfiles))
	}
	positive("drilldown.retention", cfg.DrillDown.Retention)
	return errors.Join(errs...)
}

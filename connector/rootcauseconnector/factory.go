// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector // import "github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector/internal/metadata"
	"github.com/llmops-otel/otelcol-llmops/internal/sharedcomponent"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// NewFactory returns the factory of the rootcause connector.
func NewFactory() connector.Factory {
	return connector.NewFactory(metadata.Type, createDefaultConfig,
		connector.WithMetricsToMetrics(createMetricsToMetrics, metadata.MetricsToMetricsStability),
		connector.WithMetricsToLogs(createMetricsToLogs, metadata.MetricsToLogsStability),
		connector.WithTracesToLogs(createTracesToLogs, metadata.TracesToLogsStability),
		connector.WithLogsToLogs(createLogsToLogs, metadata.LogsToLogsStability))
}
func createDefaultConfig() component.Config {
	return &Config{
		EvaluationInterval: time.Second,
		MaxSubjects:        4096,
		ResolveAfter:       time.Minute,
		RenotifyInterval:   10 * time.Minute,
		Warmup:             5 * time.Minute,
		StaleAfter:         2 * time.Minute,
		Updates:            UpdatesConfig{Change: 0.25, MinInterval: 30 * time.Second},
		CorrelationHold:    5 * time.Second,
		Leak: LeakConfig{Enabled: true, Window: 10 * time.Minute, MinSlopeMiBPerMinute: 80, MinSteadiness: 0.8,
			CriticalExhaustion: time.Hour, KVExplainedRise: 0.05,
			LongHorizon: LongHorizonConfig{Enabled: true, Span: 72 * time.Hour, MinSlopeMiBPerHour: 40, MinSteadiness: 0.7}},
		KVCache:  KVCacheConfig{Enabled: true, Threshold: 0.85, For: time.Minute},
		CacheHit: CacheHitConfig{Enabled: true, Window: time.Minute, Baseline: 15 * time.Minute, MinRatio: 0.65, Sigma: 3, MinQueries: 100},
		Latency: LatencyConfig{Enabled: true, Quantile: 0.99, Window: time.Minute, Baseline: 30 * time.Minute, Sigma: 3,
			TimeToFirstTokenFloor: 1, TimePerOutputTokenFloor: 0.2, InterTokenLatencyFloor: 0.5, RequestDurationFloor: 2.5, QueueDurationFloor: 1,
			RequestDurationActionID: spec.ActionStartQuantizedPipeline},
		// The graded responses: a hallucination rate over 12% for 3 min is
		// critical and breaks the instance's circuit; RAG relevance under
		// 0.65 for 10 min and embedding drift over 3σ for 5 min warn; an
		// injection score over 0.92 is critical at once.
		AppQuality: AppQualityConfig{Enabled: true,
			Hallucination: AppRuleConfig{Enabled: true, Threshold: 0.12, For: 3 * time.Minute, Severity: spec.SeverityCritical, ActionID: spec.ActionCircuitBreak},
			Consistency:   AppRuleConfig{Enabled: true, Threshold: 0.8, For: 5 * time.Minute, Severity: spec.SeverityWarning},
			RAGRelevance:  AppRuleConfig{Enabled: true, Threshold: 0.65, For: 10 * time.Minute, Severity: spec.SeverityWarning},
			EmbeddingDrift: AppRuleConfig{Enabled: true, Threshold: 3, For: 5 * time.Minute, Severity: spec.SeverityWarning,
				ActionID: spec.ActionReindex},
			PromptInjection: AppRuleConfig{Enabled: true, Threshold: 0.92, Severity: spec.SeverityCritical, ActionID: spec.ActionBlockSession}},
		Throughput:     ThroughputConfig{Enabled: true, Window: time.Minute, Baseline: 15 * time.Minute, Drop: 0.3},
		Queue:          QueueConfig{Enabled: true, MinWaiting: 10, For: 30 * time.Second},
		Throttle:       ThrottleConfig{Enabled: true, For: 10 * time.Second},
		HardwareErrors: HardwareErrorsConfig{Enabled: true, ResolveAfter: 6 * time.Hour},
		Joint: JointConfig{Enabled: true, Window: 5 * time.Minute,
			Weights: JointWeights{Latency: 0.45, Cache: 0.35, Memory: 0.20}},
		DrillDown: DrillDownConfig{MaxSpans: 50_000, MaxProfiles: 256, Retention: time.Hour,
			ProfileHint: "no profile of this process yet: capture one into a directory profileimport watches (vLLM ≥ 0.13: --profiler-config '{\"profiler\": \"torch\", \"torch_profiler_dir\": \"<dir>\", \"torch_profiler_with_memory\": true}'; older vLLM: VLLM_TORCH_PROFILER_DIR=<dir>; then POST /start_profile and /stop_profile; docs/operations.md, Profiling)"},
		Derived: DerivedConfig{Metrics: true, Exemplars: true, IncidentMetrics: true, IncidentMetricsInterval: 10 * time.Second},
	}
}

// diagnosers holds one shared state per configuration: every signal pair of
// one connector ID shares it (the collector hands all of them the same
// *Config).
var diagnosers = sharedcomponent.NewMap[*Config, *diagnoser]()

func shared(cfg component.Config, set connector.Settings) (*sharedcomponent.Component[*diagnoser], error) {
	c := cfg.(*Config)
	return diagnosers.LoadOrStore(c, func() (*diagnoser, error) { return newDiagnoser(c, set) })
}

func createMetricsToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Metrics, error) {
	c, err := shared(cfg, set)
	if err != nil {
		return nil, err
	}
	d := c.Unwrap()
	d.wiring.Lock()
	d.wiring.passThrough = true
	d.wiring.metrics = next
	d.wiring.Unlock()
	return &metricsToMetrics{Component: c, d: d, next: next}, nil
}

func createMetricsToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Metrics, error) {
	c, err := shared(cfg, set)
	if err != nil {
		return nil, err
	}
	return &metricsToLogs{newLogsOut(c, next)}, nil
}

func createTracesToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Traces, error) {
	c, err := shared(cfg, set)
	if err != nil {
		return nil, err
	}
	return &tracesToLogs{newLogsOut(c, next)}, nil
}

func createLogsToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Logs, error) {
	c, err := shared(cfg, set)
	if err != nil {
		return nil, err
	}
	return &logsToLogs{newLogsOut(c, next)}, nil
}

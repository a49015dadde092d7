package rootcauseprocessor // import "github.com/llmops-otel/otelcol-llmops/processor/rootcauseprocessor"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"

	"github.com/llmops-otel/otelcol-llmops/internal/sharedcomponent"
	"github.com/llmops-otel/otelcol-llmops/processor/rootcauseprocessor/internal/metadata"
)

// NewFactory returns the factory of the rootcause processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(metadata.Type, createDefaultConfig,
		processor.WithMetrics(createMetrics, metadata.MetricsStability),
		processor.WithTraces(createTraces, metadata.TracesStability),
		processor.WithLogs(createLogs, metadata.LogsStability))
}

func createDefaultConfig() component.Config {
	return &Config{
		EvaluationInterval: time.Second,
		MaxSubjects:        4096,
		ResolveAfter:       time.Minute,
		RenotifyInterval:   10 * time.Minute,
		Warmup:             5 * time.Minute,
		StaleAfter:         2 * time.Minute,
		Leak: LeakConfig{Enabled: true, Window: 10 * time.Minute, MinSlopeMiBPerMinute: 80, MinSteadiness: 0.8,
			CriticalExhaustion: time.Hour, KVExplainedRise: 0.05},
		KVCache:  KVCacheConfig{Enabled: true, Threshold: 0.85, For: time.Minute},
		CacheHit: CacheHitConfig{Enabled: true, Window: time.Minute, Baseline: 15 * time.Minute, MinRatio: 0.65, Sigma: 3, MinQueries: 100},
		Latency: LatencyConfig{Enabled: true, Quantile: 0.99, Window: time.Minute, Baseline: 30 * time.Minute, Sigma: 3,
			TimeToFirstTokenFloor: 1, TimePerOutputTokenFloor: 0.2, RequestDurationFloor: 2.5, QueueDurationFloor: 1},
		Throughput: ThroughputConfig{Enabled: true, Window: time.Minute, Baseline: 15 * time.Minute, Drop: 0.3},
		Queue:      QueueConfig{Enabled: true, MinWaiting: 10, For: 30 * time.Second},
		Throttle:   ThrottleConfig{Enabled: true, For: 10 * time.Second},
		Joint: JointConfig{Enabled: true, Window: 5 * time.Minute,
			Weights: JointWeights{Latency: 0.45, Cache: 0.35, Memory: 0.20}},
		DrillDown: DrillDownConfig{MaxSpans: 50_000, MaxProfiles: 256, Retention: time.Hour,
			ProfileHint: "no profile of this process yet: capture one (vLLM: start with VLLM_TORCH_PROFILER_DIR set, then POST /start_profile and /stop_profile) into a directory profileimport watches"},
		Derived: DerivedConfig{Metrics: true, Exemplars: true},
	}
}

// engines holds one shared state per configuration: the metrics, traces
// and logs pipelines that name the same processor share it.
var engines = sharedcomponent.NewMap[*Config, *engine]()

func shared(cfg component.Config, set processor.Settings) (*sharedcomponent.Component[*engine], error) {
	c := cfg.(*Config)
	return engines.LoadOrStore(c, func() (*engine, error) { return newEngine(c, set) })
}

func createMetrics(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Metrics) (processor.Metrics, error) {
	e, err := shared(cfg, set)
	if err != nil {
		return nil, err
	}
	return &metricsProcessor{Component: e, eng: e.Unwrap(), next: next}, nil
}

func createTraces(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	e, err := shared(cfg, set)
	if err != nil {
		return nil, err
	}
	return &tracesProcessor{Component: e, eng: e.Unwrap(), next: next}, nil
}

func createLogs(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	e, err := shared(cfg, set)
	if err != nil {
		return nil, err
	}
	e.Unwrap().addLogs(next)
	return &logsProcessor{Component: e, eng: e.Unwrap(), next: next}, nil
}

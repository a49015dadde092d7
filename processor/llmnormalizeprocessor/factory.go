// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor // import "github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor/internal/metadata"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// NewFactory returns the factory of the llmnormalize processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(metadata.Type, createDefaultConfig,
		processor.WithMetrics(createMetrics, metadata.MetricsStability),
		processor.WithTraces(createTraces, metadata.TracesStability))
}

// defaultTraceIDAttributes are the span attributes commonly used to carry a
// trace id outside the span context.
var defaultTraceIDAttributes = []string{spec.AttrLinkTraceID, "trace_id", "otel.trace_id", "aws.xray.trace_id", "xray.trace_id"}

func createDefaultConfig() component.Config {
	return &Config{UnmappedMetrics: UnmappedKeep, TraceIDAttributes: append([]string(nil), defaultTraceIDAttributes...)}
}

var capabilities = consumer.Capabilities{MutatesData: true}

func createMetrics(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Metrics) (processor.Metrics, error) {
	n, err := newNormalizer(cfg.(*Config), set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewMetrics(ctx, set, cfg, next, n.processMetrics, processorhelper.WithCapabilities(capabilities))
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	n, err := newNormalizer(cfg.(*Config), set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, n.processTraces, processorhelper.WithCapabilities(capabilities))
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmenginereceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver/internal/metadata"
)

const (
	defaultCollectionInterval = 10 * time.Second
	defaultTimeout            = 5 * time.Second
	defaultMaxBodySize        = 16 << 20
	defaultWarningInterval    = 5 * time.Minute
	// An engine exposes a few hundred to a few thousand series; 100,000
	// leaves room for per-LoRA-adapter labels and still bounds an
	// exposition that explodes.
	defaultMaxSeriesPerTarget = 100000
)

// NewFactory returns the factory of the llmengine receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(metadata.Type, createDefaultConfig,
		receiver.WithMetrics(createMetrics, metadata.MetricsStability))
}

func createDefaultConfig() component.Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	cc.CollectionInterval = defaultCollectionInterval
	cc.Timeout = defaultTimeout
	return &Config{
		ControllerConfig:     cc,
		MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
		MaxBodySize:          defaultMaxBodySize,
		WarningInterval:      defaultWarningInterval,
		MaxSeriesPerTarget:   defaultMaxSeriesPerTarget,
	}
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	return newReceiver(cfg.(*Config), set, next)
}

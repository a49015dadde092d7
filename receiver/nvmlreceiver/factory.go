// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver/internal/metadata"
)

const (
	defaultLibraryPath       = "libnvidia-ml.so.1"
	defaultCollection        = 10 * time.Second
	defaultInitRetryInterval = time.Minute
	defaultPodResourcesEvery = 10 * time.Second
	defaultWarningInterval   = 5 * time.Minute
)

// NewFactory returns the factory of the nvml receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithMetrics(createMetrics, metadata.MetricsStability),
	)
}

func createDefaultConfig() component.Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	cc.CollectionInterval = defaultCollection
	return &Config{
		ControllerConfig:            cc,
		MetricsBuilderConfig:        metadata.NewDefaultMetricsBuilderConfig(),
		LibraryPath:                 defaultLibraryPath,
		InitRetryInterval:           defaultInitRetryInterval,
		ProcRoot:                    "/proc",
		PodResourcesRefreshInterval: defaultPodResourcesEvery,
		XIDEvents:                   true,
		WarningInterval:             defaultWarningInterval,
	}
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	rCfg := cfg.(*Config)
	s, err := newScraper(rCfg, set, nil)
	if err != nil {
		return nil, err
	}
	sc, err := scraper.NewMetrics(s.scrape, scraper.WithStart(s.start), scraper.WithShutdown(s.shutdown))
	if err != nil {
		return nil, err
	}
	return scraperhelper.NewMetricsController(&rCfg.ControllerConfig, set, next, scraperhelper.AddMetricsScraper(metadata.Type, sc))
}

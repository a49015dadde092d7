// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver"

import (
	"context"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver/internal/metadata"
)

// NewFactoryWithLibrary returns a factory whose receivers use the NVML
// implementation newLib returns (for library_path) instead of loading
// libnvidia-ml: for tests of the distribution as a whole on machines without
// a GPU, with go-nvml's mock (github.com/NVIDIA/go-nvml/pkg/nvml/mock). The
// collector itself uses NewFactory.
func NewFactoryWithLibrary(newLib func(libraryPath string) nvml.Interface) receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithMetrics(func(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
			rCfg := cfg.(*Config)
			s, err := newScraper(rCfg, set, newLib)
			if err != nil {
				return nil, err
			}
			sc, err := scraper.NewMetrics(s.scrape, scraper.WithStart(s.start), scraper.WithShutdown(s.shutdown))
			if err != nil {
				return nil, err
			}
			return scraperhelper.NewMetricsController(&rCfg.ControllerConfig, set, next, scraperhelper.AddMetricsScraper(metadata.Type, sc))
		}, metadata.MetricsStability),
	)
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package alertwebhookexporter // import "github.com/llmops-otel/otelcol-llmops/exporter/alertwebhookexporter"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/llmops-otel/otelcol-llmops/exporter/alertwebhookexporter/internal/metadata"
)

// NewFactory returns the factory of the alertwebhook exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(metadata.Type, createDefaultConfig,
		exporter.WithLogs(createLogs, metadata.LogsStability))
}

func createDefaultConfig() component.Config {
	client := confighttp.NewDefaultClientConfig()
	client.Timeout = 10 * time.Second
	return &Config{
		ClientConfig:    client,
		QueueConfig:     configoptional.Some(exporterhelper.NewDefaultQueueConfig()),
		RetryConfig:     configretry.NewDefaultBackOffConfig(),
		Format:          FormatAlertmanager,
		SignatureHeader: "X-Llmops-Signature-256",
		MinSeverity:     SeverityWarning,
		ResendInterval:  time.Minute,
		FiringTTL:       time.Hour,
		MaxFiring:       10_000,
	}
}

func createLogs(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	c := cfg.(*Config)
	e, err := newExporter(c, set)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewLogs(ctx, set, cfg, e.push,
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		// The HTTP client's own timeout bounds each request.
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: 0}),
		exporterhelper.WithRetry(c.RetryConfig),
		exporterhelper.WithQueue(c.QueueConfig),
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(e.shutdown))
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package profileimportreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles"
	"github.com/llmops-otel/otelcol-llmops/internal/sharedcomponent"
	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/metadata"
)

// NewFactory returns the factory of the profileimport receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(metadata.Type, createDefaultConfig,
		receiver.WithTraces(createTraces, metadata.TracesStability),
		receiver.WithMetrics(createMetrics, metadata.MetricsStability),
		receiver.WithLogs(createLogs, metadata.LogsStability))
}

func createDefaultConfig() component.Config {
	// The import's own defaults, which llmprof uses too.
	imp := profiles.DefaultOptions()
	return &Config{
		PollInterval:        5 * time.Second,
		SettleTime:          2 * time.Second,
		AfterImport:         AfterImportKeep,
		MaxFileSize:         8 << 30,
		MaxDecompressedSize: imp.MaxDecompressedSize,
		MaxConcurrent:       1,
		ParseWorkers:        imp.ParseWorkers,
		FoldPythonFrames:    imp.FoldPythonFrames,
		SpanBudget:          imp.SpanBudget,
		LeakSuspects:        imp.LeakSuspects,
		MinLeakBytes:        imp.MinLeakBytes,
	}
}

// importers holds one importer per configuration, shared by the traces,
// metrics and logs pipelines that name the same receiver.
var importers = sharedcomponent.NewMap[*Config, *importer]()

func shared(cfg component.Config, set receiver.Settings) (*sharedcomponent.Component[*importer], error) {
	c := cfg.(*Config)
	return importers.LoadOrStore(c, func() (*importer, error) { return newImporter(c, set) })
}

func createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	r, err := shared(cfg, set)
	if err != nil {
		return nil, err
	}
	r.Unwrap().setTraces(next)
	return r, nil
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	r, err := shared(cfg, set)
	if err != nil {
		return nil, err
	}
	r.Unwrap().setMetrics(next)
	return r, nil
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	r, err := shared(cfg, set)
	if err != nil {
		return nil, err
	}
	r.Unwrap().setLogs(next)
	return r, nil
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmenginereceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver"

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/llmops-otel/otelcol-llmops/internal/ratelimit"
	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver/internal/metadata"
)

// engineReceiver runs one scrape loop per target, so that a slow or dead
// target never delays the others.
type engineReceiver struct {
	cfg       *Config
	set       receiver.Settings
	next      consumer.Metrics
	obsrecv   *receiverhelper.ObsReport
	telemetry *metadata.TelemetryBuilder
	warn      *ratelimit.Limiter

	targets []*target
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func newReceiver(cfg *Config, set receiver.Settings, next consumer.Metrics) (*engineReceiver, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	obs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID: set.ID, Transport: "http", ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, err
	}
	return &engineReceiver{cfg: cfg, set: set, next: next, obsrecv: obs, telemetry: tb, warn: ratelimit.New(cfg.WarningInterval)}, nil
}

func (r *engineReceiver) Start(ctx context.Context, host component.Host) error {
	// The scrape loops outlive Start's context; Shutdown cancels them.
	runCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	for _, tc := range r.cfg.targets() {
		t, err := newTarget(ctx, r, tc, host)
		if err != nil {
			cancel()
			return fmt.Errorf("target %s: %w", tc.Endpoint, err)
		}
		r.targets = append(r.targets, t)
	}
	for _, t := range r.targets {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			t.run(runCtx)
		}()
	}
	return nil
}

func (r *engineReceiver) Shutdown(context.Context) error {
	if r.cancel != nil {
		r.cancel()
	}
	r.wg.Wait()
	for _, t := range r.targets {
		t.client.CloseIdleConnections()
	}
	return nil
}

// interval returns a target's collection interval.
func (r *engineReceiver) interval(tc TargetConfig) time.Duration {
	if tc.CollectionInterval > 0 {
		return tc.CollectionInterval
	}
	return r.cfg.CollectionInterval
}

// timeout returns a target's scrape timeout: the target's own, else the
// receiver's, never longer than the interval (a scrape must end before the
// next one is due).
func (r *engineReceiver) timeout(tc TargetConfig) time.Duration {
	d := r.cfg.Timeout
	if tc.Timeout > 0 {
		d = tc.Timeout
	}
	if iv := r.interval(tc); d <= 0 || d > iv {
		d = iv
	}
	return d
}

func (r *engineReceiver) logger() *zap.Logger { return r.set.Logger }

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmenginereceiver

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver/internal/metadata"
	"github.com/llmops-otel/otelcol-llmops/tests/enginereplay"
)

// BenchmarkScrapeVLLM measures one whole scrape of the vLLM fixture: HTTP
// round trip on loopback, conversion, engine/model detection and handing
// the result to the pipeline. bench/llmengine compares the same with
// contrib's prometheus receiver.
func BenchmarkScrapeVLLM(b *testing.B) {
	srv, err := enginereplay.New(enginereplay.Options{Engine: "vllm"})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	cfg := configFor(hs.URL + "/metrics")
	r, err := newReceiver(cfg, receivertest.NewNopSettings(metadata.Type), consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	t, err := newTarget(context.Background(), r, cfg.targets()[0], componenttest.NewNopHost())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	t.scrapeOnce(ctx)
	b.ReportAllocs()
	for b.Loop() {
		t.scrapeOnce(ctx)
	}
	_ = time.Second
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmenginereceiver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver/internal/metadatatest"
)

// counters renders n counters; the first has value first, the others
// 100 + scrape, so only the first can go down.
func counters(n int, first, scrape int) string {
	var b strings.Builder
	for i := range n {
		v := 100 + scrape
		if i == 0 {
			v = first
		}
		fmt.Fprintf(&b, "# TYPE custom_c%d_total counter\ncustom_c%d_total %d\n", i, i, v)
	}
	return b.String()
}

// With 8 counters and max_series_per_target 5, every scrape emits 3 series
// without state, and the one counter that goes down between the first and
// second scrape (while tracked) is one reset: the receiver's own telemetry
// must say exactly that.
func TestTelemetryCountsUntrackedSeriesAndResets(t *testing.T) {
	var served atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := int(served.Add(1))
		first := 10
		if n > 1 {
			first = 3 // reset after the first scrape, then steady
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(counters(8, first, n)))
	}))
	t.Cleanup(hs.Close)
	endpoint := hs.URL + "/metrics"

	cfg := configFor(endpoint)
	cfg.Targets[0].Engine = spec.EngineCustom
	cfg.CollectionInterval = 20 * time.Millisecond
	cfg.MaxSeriesPerTarget = 5

	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	sink := new(consumertest.MetricsSink)
	r, err := newReceiver(cfg, metadatatest.NewSettings(tel), sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	waitScrapes(t, sink, 3)
	// Stopped, so no scrape is between its counting and its hand-over.
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	scrapes := int64(len(sink.AllMetrics()))

	attrs := attribute.NewSet(attribute.String(spec.AttrEngineTarget, endpoint))
	metadatatest.AssertEqualLlmengineSeriesUntracked(t, tel,
		[]metricdata.DataPoint[int64]{{Attributes: attrs, Value: 3 * scrapes}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualLlmengineCounterResets(t, tel,
		[]metricdata.DataPoint[int64]{{Attributes: attrs, Value: 1}}, metricdatatest.IgnoreTimestamp())
}

// Under the bound nothing is untracked and no reset is invented.
func TestTelemetryQuietUnderTheBound(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(counters(4, 10, 0)))
	}))
	t.Cleanup(hs.Close)
	cfg := configFor(hs.URL + "/metrics")
	cfg.Targets[0].Engine = spec.EngineCustom
	cfg.CollectionInterval = 20 * time.Millisecond
	cfg.MaxSeriesPerTarget = 5
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	sink := new(consumertest.MetricsSink)
	r, err := newReceiver(cfg, metadatatest.NewSettings(tel), sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	waitScrapes(t, sink, 3)
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"otelcol_llmengine_series_untracked", "otelcol_llmengine_counter_resets"} {
		if _, err := tel.GetMetric(name); err == nil {
			t.Errorf("%s recorded under the bound", name)
		}
	}
}

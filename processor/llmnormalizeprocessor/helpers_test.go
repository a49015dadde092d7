// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver"
	"github.com/llmops-otel/otelcol-llmops/tests/enginereplay"
)

// scrapeEngine returns one scrape of an engine's fixture as the llmengine
// receiver emits it: the processor's real input.
func scrapeEngine(t testing.TB, engine enginereplay.Engine) pmetric.Metrics {
	t.Helper()
	srv, err := enginereplay.New(enginereplay.Options{Engine: engine})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	path := "/metrics"
	if engine == "nim" {
		path = "/v1/metrics"
	}
	f := llmenginereceiver.NewFactory()
	cfg := f.CreateDefaultConfig()
	if err := confmap.NewFromStringMap(map[string]any{
		"collection_interval": "1h", "initial_delay": "0s",
		"targets": []any{map[string]any{"endpoint": hs.URL + path}},
	}).Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	sink := new(consumertest.MetricsSink)
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Shutdown(context.Background()) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(sink.AllMetrics()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no scrape")
		}
		time.Sleep(5 * time.Millisecond)
	}
	md := sink.AllMetrics()[0]
	// The test server's random port cannot be in golden files.
	md.ResourceMetrics().At(0).Resource().Attributes().PutStr("llm.engine.target", "http://engine.test"+path)
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		if m := ms.At(i); m.Type() == pmetric.MetricTypeGauge && (m.Name() == "llm.engine.up" || m.Name() == "llm.engine.scrape.duration") {
			m.Gauge().DataPoints().At(0).Attributes().PutStr("llm.engine.target", "http://engine.test"+path)
			if m.Name() == "llm.engine.scrape.duration" {
				m.Gauge().DataPoints().At(0).SetDoubleValue(0.001)
			}
		}
	}
	return md
}

func newTestNormalizer(t testing.TB, mutate func(*Config)) *normalizer {
	t.Helper()
	return newMeteredNormalizer(t, componenttest.NewNopTelemetrySettings(), mutate)
}

// newMeteredNormalizer reports its own telemetry to set (e.g. a
// componenttest.Telemetry's SDK meter provider).
func newMeteredNormalizer(t testing.TB, set component.TelemetrySettings, mutate func(*Config)) *normalizer {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	if mutate != nil {
		mutate(cfg)
	}
	n, err := newNormalizer(cfg, set)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// unified collects, per unified metric name, the points' attribute sets
// (without the engine/model attributes) and values.
type point struct {
	attrs map[string]any
	value float64
}

func collect(md pmetric.Metrics) map[string][]point {
	out := map[string][]point{}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				add := func(attrs pcommon.Map, v float64) {
					out[m.Name()] = append(out[m.Name()], point{attrs.AsRaw(), v})
				}
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					for p := 0; p < m.Gauge().DataPoints().Len(); p++ {
						dp := m.Gauge().DataPoints().At(p)
						add(dp.Attributes(), numberValue(dp))
					}
				case pmetric.MetricTypeSum:
					for p := 0; p < m.Sum().DataPoints().Len(); p++ {
						dp := m.Sum().DataPoints().At(p)
						add(dp.Attributes(), numberValue(dp))
					}
				case pmetric.MetricTypeHistogram:
					for p := 0; p < m.Histogram().DataPoints().Len(); p++ {
						dp := m.Histogram().DataPoints().At(p)
						add(dp.Attributes(), dp.Sum())
					}
				}
			}
		}
	}
	return out
}

func numberValue(dp pmetric.NumberDataPoint) float64 {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(dp.IntValue())
	}
	return dp.DoubleValue()
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// benchNormalizer records its own telemetry into an SDK meter provider, as
// in a running collector, so the benchmarks include the counting's cost.
func benchNormalizer(b *testing.B) *normalizer {
	tt := componenttest.NewTelemetry()
	b.Cleanup(func() { _ = tt.Shutdown(context.Background()) })
	return newMeteredNormalizer(b, tt.NewTelemetrySettings(), nil)
}

// BenchmarkUnchangedPoints: metrics the processor does not map (GPU metrics
// from nvml, application metrics) must cost no allocation per point.
func BenchmarkUnchangedPoints(b *testing.B) {
	n := benchNormalizer(b)
	md := pmetric.NewMetrics()
	ms := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	for i := 0; i < 100; i++ {
		m := ms.AppendEmpty()
		m.SetName("hw.gpu.memory.usage")
		dps := m.SetEmptyGauge().DataPoints()
		for j := 0; j < 10; j++ {
			dp := dps.AppendEmpty()
			dp.SetDoubleValue(float64(j))
			dp.Attributes().PutStr("hw.id", "GPU-1")
		}
	}
	points := md.DataPointCount()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = n.processMetrics(ctx, md)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*points), "ns/point")
}

// BenchmarkVLLMFixture normalises one scrape of the vLLM fixture (a fresh
// copy each iteration, as a pipeline hands over a new batch).
//
// Its two cases tell what the KV-capacity figures cost: the same scrape
// with and without vllm:cache_config_info (without it, nothing is
// computed).
func BenchmarkVLLMFixture(b *testing.B) {
	full := scrapeEngine(b, "vllm")
	noConfig := pmetric.NewMetrics()
	full.CopyTo(noConfig)
	noConfig.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().RemoveIf(func(m pmetric.Metric) bool {
		return m.Name() == "vllm:cache_config_info"
	})
	b.Run("with_cache_config", func(b *testing.B) { benchScrape(b, full) })
	b.Run("without_cache_config", func(b *testing.B) { benchScrape(b, noConfig) })
}

func benchScrape(b *testing.B, src pmetric.Metrics) {
	n := benchNormalizer(b)
	points := src.DataPointCount()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		batch := pmetric.NewMetrics()
		src.CopyTo(batch)
		b.StartTimer()
		_, _ = n.processMetrics(ctx, batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*points), "ns/point")
}

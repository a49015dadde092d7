// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor

import (
	"context"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/pdatautil"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// TestInPlaceRenameMatchesCopy runs every engine fixture through the
// in-place rename and through the copy path (copyOnly) and requires the
// same output: same metrics in the same order, same points in the same
// order, same metadata. Variants: the scrape as the llmengine receiver
// emits it; with metadata on every source metric (which the copy path does
// not carry over); without llm.engine.name on the resource (the prometheus
// receiver's data, mapped by metric name alone).
func TestInPlaceRenameMatchesCopy(t *testing.T) {
	variants := map[string]func(pmetric.Metrics){
		"as_scraped": func(pmetric.Metrics) {},
		"with_metadata": func(md pmetric.Metrics) {
			pdatautil.EachMetric(md, func(m pmetric.Metric) { m.Metadata().PutStr("prometheus.type", "unknown") })
		},
		"no_engine_name": func(md pmetric.Metrics) {
			md.ResourceMetrics().At(0).Resource().Attributes().Remove(spec.AttrEngineName)
		},
	}
	for _, policy := range []string{UnmappedKeep, UnmappedDrop} {
		fast := newTestNormalizer(t, func(c *Config) { c.UnmappedMetrics = policy })
		slow := newTestNormalizer(t, func(c *Config) { c.UnmappedMetrics = policy })
		slow.copyOnly = true
		for _, e := range engines {
			scrape := scrapeEngine(t, e)
			for name, mutate := range variants {
				t.Run(policy+"/"+string(e)+"/"+name, func(t *testing.T) {
					in := pmetric.NewMetrics()
					scrape.CopyTo(in)
					mutate(in)
					want := pmetric.NewMetrics()
					in.CopyTo(want)
					if name == "as_scraped" && renamedInPlace(fast, in) == 0 {
						t.Fatal("no metric of the fixture takes the in-place rename: the comparison tests nothing")
					}
					got, _ := fast.processMetrics(context.Background(), in)
					want, _ = slow.processMetrics(context.Background(), want)
					assertSameOutput(t, want, got)
				})
			}
		}
	}
}

// TestScopeBeyondLookupCache: processScope keeps the first 64 metrics'
// rules from its first pass and looks the others up again; a scope of more
// gives the same output.
func TestScopeBeyondLookupCache(t *testing.T) {
	n := newTestNormalizer(t, nil)
	scrape := scrapeEngine(t, "vllm")
	padded := pmetric.NewMetrics()
	scrape.CopyTo(padded)
	ms := padded.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	rest := pmetric.NewMetricSlice()
	ms.MoveAndAppendTo(rest)
	for i := 0; i < 70; i++ {
		m := ms.AppendEmpty()
		m.SetName("acme_padding")
		m.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(int64(i))
	}
	rest.MoveAndAppendTo(ms)
	want, _ := n.processMetrics(context.Background(), scrape)
	got, _ := n.processMetrics(context.Background(), padded)
	got.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().RemoveIf(func(m pmetric.Metric) bool {
		return m.Name() == "acme_padding"
	})
	assertSameOutput(t, want, got)
}

// TestInPlaceRenameScales covers what the fixtures do not: a custom
// mapping whose unit is converted, on integer and double gauges, up-down
// counters made of gauges (scaled or not), a histogram, and a counter made
// of a sum that says neither monotonic nor cumulative.
func TestInPlaceRenameScales(t *testing.T) {
	custom := []CustomMapping{
		{Source: "acme_ttft_ms", SourceType: "histogram", SourceUnit: "ms", Target: spec.GenAIServerTimeToFirstToken},
		{Source: "acme_tpot_ms", SourceType: "gauge", SourceUnit: "ms", Target: spec.EngineTimePerOutputTokenMean},
		{Source: "acme_running", SourceType: "gauge", Target: spec.EngineRequestsRunning},
		{Source: "acme_gpu_mem_mib", SourceType: "gauge", SourceUnit: "MiB", Target: spec.HwGpuMemoryUsage},
		{Source: "acme_finished", SourceType: "counter", Target: spec.EngineRequestsFinished},
	}
	fast := newTestNormalizer(t, func(c *Config) { c.Custom = custom })
	slow := newTestNormalizer(t, func(c *Config) { c.Custom = custom })
	slow.copyOnly = true
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(spec.AttrEngineName, spec.EngineCustom)
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	other := ms.AppendEmpty()
	other.SetName("acme_unmapped")
	other.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(1)
	h := ms.AppendEmpty()
	h.SetName("acme_ttft_ms")
	h.SetEmptyHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	hp := h.Histogram().DataPoints().AppendEmpty()
	hp.ExplicitBounds().FromRaw([]float64{10, 100})
	hp.BucketCounts().FromRaw([]uint64{1, 2, 3})
	hp.SetSum(2500)
	hp.SetMin(3)
	hp.SetMax(900)
	hp.SetCount(6)
	hp.Attributes().PutStr("model_name", "m1")
	// An OTLP sender's sum may be neither monotonic nor of a temporality:
	// the counter gets both.
	fin := ms.AppendEmpty()
	fin.SetName("acme_finished")
	fin.SetEmptySum().DataPoints().AppendEmpty().SetIntValue(7)
	for _, name := range []string{"acme_tpot_ms", "acme_running", "acme_gpu_mem_mib"} {
		g := ms.AppendEmpty()
		g.SetName(name)
		dps := g.SetEmptyGauge().DataPoints()
		dps.AppendEmpty().SetIntValue(250)
		dps.AppendEmpty().SetDoubleValue(12.5)
		dps.At(1).Attributes().PutStr("model_name", "m2")
	}
	if k := renamedInPlace(fast, md); k != 5 {
		t.Fatalf("%d of 5 mapped metrics renamed in place", k)
	}
	want := pmetric.NewMetrics()
	md.CopyTo(want)
	got, _ := fast.processMetrics(context.Background(), md)
	want, _ = slow.processMetrics(context.Background(), want)
	assertSameOutput(t, want, got)
	q := collect(got)[spec.EngineTimePerOutputTokenMean]
	if len(q) != 2 || q[0].value != 0.25 || q[1].value != 0.0125 {
		t.Fatalf("time per output token not scaled: %v", q)
	}
}

// renamedInPlace counts the metrics of md (first scope) that n renames in
// place, on a copy.
func renamedInPlace(n *normalizer, md pmetric.Metrics) int {
	c := pmetric.NewMetrics()
	md.CopyTo(c)
	engine := ""
	if v, ok := c.ResourceMetrics().At(0).Resource().Attributes().Get(spec.AttrEngineName); ok {
		engine = v.Str()
	}
	pc := pointContext{engine: engine}
	k := 0
	pdatautil.EachMetric(c, func(m pmetric.Metric) {
		if rs := n.rules.lookup(m.Name(), engine); len(rs) == 1 && n.renameInPlace(rs[0], m, pmetric.NewMetricSlice(), pc.forRule(rs[0])) {
			k++
		}
	})
	return k
}

// assertSameOutput compares the copy path's output with the in-place
// rename's, order included, and the metrics' metadata (which
// CompareMetrics does not look at).
func assertSameOutput(t *testing.T, want, got pmetric.Metrics) {
	t.Helper()
	if err := pmetrictest.CompareMetrics(want, got); err != nil {
		t.Fatal(err)
	}
	var wantMeta []map[string]any
	pdatautil.EachMetric(want, func(m pmetric.Metric) { wantMeta = append(wantMeta, m.Metadata().AsRaw()) })
	i := 0
	pdatautil.EachMetric(got, func(m pmetric.Metric) {
		if g := m.Metadata().AsRaw(); len(g) != len(wantMeta[i]) {
			t.Errorf("%s: metadata %v, copy path %v", m.Name(), g, wantMeta[i])
		}
		i++
	})
}

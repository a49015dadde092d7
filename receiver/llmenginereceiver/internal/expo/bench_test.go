// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
)

// gen10kSeries generates a text exposition in the style of prometheus_client
// with 10,000 series across 50 families: 20 counters (each with its
// X_created gauge family, consumed as start times), 20 gauges and 10
// histograms with 12 buckets; each family has 200 series with 3 labels.
func gen10kSeries() []byte {
	var b strings.Builder
	labels := func(i int) string {
		return fmt.Sprintf(`model_name="org/model-%d",replica="%d",gpu="%d"`, i%10, i/10, i%8)
	}
	for f := range 20 {
		fmt.Fprintf(&b, "# HELP engine:counter_%d_total Counter number %d.\n# TYPE engine:counter_%d_total counter\n", f, f, f)
		for i := range 200 {
			fmt.Fprintf(&b, "engine:counter_%d_total{%s} %d.0\n", f, labels(i), 1000*f+i)
		}
		fmt.Fprintf(&b, "# HELP engine:counter_%d_created Counter number %d.\n# TYPE engine:counter_%d_created gauge\n", f, f, f)
		for i := range 200 {
			fmt.Fprintf(&b, "engine:counter_%d_created{%s} 1.6999e+09\n", f, labels(i))
		}
	}
	for f := range 20 {
		fmt.Fprintf(&b, "# HELP engine:gauge_%d Gauge number %d.\n# TYPE engine:gauge_%d gauge\n", f, f, f)
		for i := range 200 {
			fmt.Fprintf(&b, "engine:gauge_%d{%s} %g\n", f, labels(i), float64(i)*0.37)
		}
	}
	bounds := []string{"0.001", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1.0", "2.5", "5.0", "+Inf"}
	for f := range 10 {
		fmt.Fprintf(&b, "# HELP engine:latency_%d_seconds Histogram number %d.\n# TYPE engine:latency_%d_seconds histogram\n", f, f, f)
		for i := range 200 {
			for k, le := range bounds {
				fmt.Fprintf(&b, "engine:latency_%d_seconds_bucket{le=%q,%s} %d.0\n", f, le, labels(i), i*k)
			}
			n := i * (len(bounds) - 1)
			fmt.Fprintf(&b, "engine:latency_%d_seconds_count{%s} %d.0\n", f, labels(i), n)
			fmt.Fprintf(&b, "engine:latency_%d_seconds_sum{%s} %g\n", f, labels(i), float64(n)*0.0123)
		}
	}
	return []byte(b.String())
}

func TestGen10kSeries(t *testing.T) {
	ms, st := convert(t, NewConverter(Options{}), string(gen10kSeries()), FormatText, t0)
	if st.Families != 50 || st.Series != 10000 || ms.Len() != 50 || len(st.Problems) != 0 {
		t.Fatalf("%+v", st)
	}
}

func benchConvert(b *testing.B, body []byte, f Format) {
	c := NewConverter(Options{})
	now := t0
	if _, err := c.Convert(body, f, now, pmetric.NewMetricSlice()); err != nil { // warm the state
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		now = now.Add(15 * time.Second)
		if _, err := c.Convert(body, f, now, pmetric.NewMetricSlice()); err != nil {
			b.Fatal(err)
		}
	}
}

// parseOnly runs everything but the pdata output: what this package itself
// costs, without the allocations pdata makes for each point.
func parseOnly(c *Converter, body []byte) error {
	c.strs.begin()
	defer c.strs.sweep(uint32(c.opts.StaleAfter))
	c.resetScratch()
	c.memo.begin(false)
	if err := c.parse(body); err != nil {
		return err
	}
	c.resolveCreatedFamilies()
	c.labels = c.memo.commit(c.series, c.labels)
	return nil
}

func benchParse(b *testing.B, body []byte) {
	c := NewConverter(Options{})
	if err := parseOnly(c, body); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := parseOnly(c, body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConvertVLLMFixture(b *testing.B) {
	benchConvert(b, readFixture(b, "vllm.prom"), FormatText)
}

func BenchmarkConvert10kSeries(b *testing.B) { benchConvert(b, gen10kSeries(), FormatText) }

func BenchmarkConvertVLLMFixtureOpenMetrics(b *testing.B) {
	benchConvert(b, testutil.ToOpenMetrics(readFixture(b, "vllm.prom")), FormatOpenMetrics)
}

func BenchmarkParseOnlyVLLMFixture(b *testing.B) { benchParse(b, readFixture(b, "vllm.prom")) }

func BenchmarkParseOnly10kSeries(b *testing.B) { benchParse(b, gen10kSeries()) }

// TestSteadyStateAllocations checks the promise behind the design: once the
// names and label values of a target have been seen, parsing a scrape does
// not allocate at all, and a whole Convert allocates only what pdata needs.
func TestSteadyStateAllocations(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts are meaningless under -race and slow")
	}
	for name, body := range map[string][]byte{"vllm": readFixture(t, "vllm.prom"), "10k": gen10kSeries()} {
		c := NewConverter(Options{})
		// A few rounds let the Go maps settle: after clear() and the same
		// inserts, their tables stop splitting after a couple of scrapes.
		for range 5 {
			if err := parseOnly(c, body); err != nil {
				t.Fatal(err)
			}
		}
		if n := testing.AllocsPerRun(10, func() { _ = parseOnly(c, body) }); n != 0 {
			t.Errorf("%s: parsing allocates %v times per scrape in steady state", name, n)
		}
		now := t0
		_, st := convert(t, c, string(body), FormatText, now)
		n := testing.AllocsPerRun(3, func() {
			now = now.Add(time.Second)
			_, _ = c.Convert(body, FormatText, now, pmetric.NewMetricSlice())
		})
		// pdata allocates per point (the point, its value, its attribute
		// slice and one value per attribute, bounds and counts slices for
		// histograms) and per metric; allow 8 per point plus 4 per metric.
		if limit := float64(8*st.Series + 4*st.Families + 8); n > limit {
			t.Errorf("%s: Convert allocates %v times for %d points, limit %v", name, n, st.Series, limit)
		}
		t.Logf("%s: %v allocations per Convert for %d points in %d metrics", name, n, st.Series, st.Families)
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo

import (
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
)

// fuzzBaseline is a good scrape converted before and after each fuzz input.
const fuzzBaseline = `# TYPE c_total counter
c_total{k="a"} 5
c_total{k="b"} 7
# TYPE h histogram
h_bucket{le="1"} 1
h_bucket{le="+Inf"} 3
h_count 3
h_sum 2
# TYPE s summary
s{quantile="0.5"} 1
s_count 4
s_sum 2
# TYPE g gauge
g 1
`

// seedDir holds the fuzz seeds as files, so that the differential test
// against Prometheus's own parser (bench/textparse) reads the same corpus.
const seedDir = "../../../../internal/promtext/testdata/seeds/"

func readSeeds(tb testing.TB) map[string][]byte {
	tb.Helper()
	ents, err := os.ReadDir(seedDir)
	if err != nil || len(ents) == 0 {
		tb.Fatalf("no fuzz seeds in %s: %v", seedDir, err)
	}
	out := make(map[string][]byte, len(ents))
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(seedDir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func FuzzConvert(f *testing.F) {
	if b, ok := readSeeds(f)["baseline.txt"]; !ok || string(b) != fuzzBaseline {
		f.Fatalf("seeds/baseline.txt is not fuzzBaseline")
	}
	for _, s := range readSeeds(f) {
		f.Add(s, false)
		f.Add(s, true)
	}
	for _, name := range []string{"vllm.prom", "tgi.prom"} {
		if b, err := os.ReadFile(fixtureDir + name); err == nil {
			f.Add(b, false)
			f.Add(testutil.ToOpenMetrics(b), true)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, om bool) {
		format := FormatText
		if om {
			format = FormatOpenMetrics
		}
		opts := Options{MaxSeries: 8, StaleAfter: 2}
		c := NewConverter(opts)
		if _, err := c.Convert([]byte(fuzzBaseline), FormatText, t0, pmetric.NewMetricSlice()); err != nil {
			t.Fatal(err)
		}
		state, gen := maps.Clone(c.state), c.gen

		dst := pmetric.NewMetricSlice()
		dst.AppendEmpty().SetName("sentinel")
		st, err := c.Convert(body, format, at(time.Second), dst)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v (%T) is not a *ParseError with a line", err, err)
			}
			if dst.Len() != 1 || dst.At(0).Name() != "sentinel" {
				t.Fatalf("dst modified by a failed Convert")
			}
			if st.Points != 0 || st.Series != 0 || st.Families != 0 || len(st.Problems) != 0 {
				t.Fatalf("stats from a failed Convert: %+v", st)
			}
			if c.gen != gen || !maps.Equal(c.state, state) {
				t.Fatalf("state modified by a failed Convert")
			}
			// The next scrape must behave as if the failed one never happened.
			got, _ := convert(t, c, fuzzBaseline, FormatText, at(2*time.Second))
			ref := NewConverter(opts)
			convert(t, ref, fuzzBaseline, FormatText, t0)
			want, _ := convert(t, ref, fuzzBaseline, FormatText, at(2*time.Second))
			if a, b := dump(got), dump(want); a != b {
				t.Fatalf("after a failed Convert:\n%s\nwant\n%s", a, b)
			}
			return
		}
		checkOutput(t, dst, 1, st)
		if len(c.state) > opts.MaxSeries {
			t.Fatalf("state holds %d series, MaxSeries %d", len(c.state), opts.MaxSeries)
		}
		// Converting the same body again must work the same way.
		dst2 := pmetric.NewMetricSlice()
		st2, err := c.Convert(body, format, at(3*time.Second), dst2)
		if err != nil {
			t.Fatalf("second Convert of an accepted body failed: %v", err)
		}
		if st2.Families != st.Families || st2.Series != st.Series || st2.InvalidSeries != st.InvalidSeries || st2.DuplicateSeries != st.DuplicateSeries {
			t.Fatalf("second Convert differs: %+v vs %+v", st2, st)
		}
		checkOutput(t, dst2, 0, st2)
		_ = dump(dst2)
	})
}

// checkOutput verifies invariants of converted metrics appended after skip.
func checkOutput(t *testing.T, ms pmetric.MetricSlice, skip int, st Stats) {
	t.Helper()
	if ms.Len()-skip != st.Families {
		t.Fatalf("%d metrics appended, Stats.Families %d", ms.Len()-skip, st.Families)
	}
	if len(st.Problems) > maxProblems {
		t.Fatalf("%d problems", len(st.Problems))
	}
	points := 0
	for i := skip; i < ms.Len(); i++ {
		m := ms.At(i)
		if m.Name() == "" {
			t.Fatalf("metric without a name")
		}
		n := 0
		switch m.Type() {
		case pmetric.MetricTypeGauge:
			n = m.Gauge().DataPoints().Len()
		case pmetric.MetricTypeSum:
			dps := m.Sum().DataPoints()
			n = dps.Len()
			for j := range n {
				if dp := dps.At(j); dp.StartTimestamp() > dp.Timestamp() {
					t.Fatalf("%s: start %d after time %d", m.Name(), dp.StartTimestamp(), dp.Timestamp())
				}
			}
		case pmetric.MetricTypeHistogram:
			dps := m.Histogram().DataPoints()
			n = dps.Len()
			for j := range n {
				dp := dps.At(j)
				if dp.StartTimestamp() > dp.Timestamp() {
					t.Fatalf("%s: start after time", m.Name())
				}
				if dp.Flags().NoRecordedValue() {
					continue
				}
				bounds, counts := dp.ExplicitBounds().AsRaw(), dp.BucketCounts().AsRaw()
				if len(counts) != len(bounds)+1 {
					t.Fatalf("%s: %d counts for %d bounds", m.Name(), len(counts), len(bounds))
				}
				for k := 1; k < len(bounds); k++ {
					if !(bounds[k] > bounds[k-1]) {
						t.Fatalf("%s: bounds not increasing: %v", m.Name(), bounds)
					}
				}
				var total uint64
				for _, v := range counts {
					total += v
				}
				if total != dp.Count() {
					t.Fatalf("%s: buckets add up to %d, count %d", m.Name(), total, dp.Count())
				}
			}
		case pmetric.MetricTypeSummary:
			dps := m.Summary().DataPoints()
			n = dps.Len()
			for j := range n {
				dp := dps.At(j)
				qs := dp.QuantileValues()
				for k := range qs.Len() {
					q := qs.At(k).Quantile()
					if q < 0 || q > 1 || math.IsNaN(q) || (k > 0 && !(q > qs.At(k-1).Quantile())) {
						t.Fatalf("%s: bad quantiles", m.Name())
					}
				}
			}
		default:
			t.Fatalf("unexpected type %s", m.Type())
		}
		if n == 0 {
			t.Fatalf("%s: metric without points", m.Name())
		}
		points += n
	}
	if points != st.Series {
		t.Fatalf("%d points, Stats.Series %d", points, st.Series)
	}
}

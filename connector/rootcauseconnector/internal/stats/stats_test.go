// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

const sec = int64(time.Second)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestSeriesAdd(t *testing.T) {
	type add struct {
		t    int64
		v    float64
		want bool
	}
	tests := []struct {
		name     string
		capacity int
		width    time.Duration
		adds     []add
		want     []Point
	}{
		{
			name:     "distinct buckets append",
			capacity: 4, width: time.Second,
			adds: []add{{0, 1, true}, {1 * sec, 2, true}, {2 * sec, 3, true}},
			want: []Point{{0, 1}, {1 * sec, 2}, {2 * sec, 3}},
		},
		{
			name:     "same bucket last value wins",
			capacity: 4, width: 10 * time.Second,
			adds: []add{{1 * sec, 1, true}, {5 * sec, 2, true}, {9 * sec, 3, true}, {10 * sec, 4, true}},
			want: []Point{{9 * sec, 3}, {10 * sec, 4}},
		},
		{
			name:     "older bucket ignored",
			capacity: 4, width: time.Second,
			adds: []add{{5 * sec, 1, true}, {3 * sec, 9, false}, {4*sec + 999, 9, false}, {6 * sec, 2, true}},
			want: []Point{{5 * sec, 1}, {6 * sec, 2}},
		},
		{
			name:     "eviction keeps the newest capacity buckets",
			capacity: 3, width: time.Second,
			adds: []add{{0, 0, true}, {1 * sec, 1, true}, {2 * sec, 2, true}, {3 * sec, 3, true}, {4 * sec, 4, true}},
			want: []Point{{2 * sec, 2}, {3 * sec, 3}, {4 * sec, 4}},
		},
		{
			name:     "overwrite after wraparound",
			capacity: 2, width: time.Second,
			adds: []add{{0, 0, true}, {1 * sec, 1, true}, {2 * sec, 2, true}, {2*sec + 5, 7, true}},
			want: []Point{{1 * sec, 1}, {2*sec + 5, 7}},
		},
		{
			name:     "negative times bucket by floor",
			capacity: 4, width: time.Second,
			// -0.5s and +0.5s are in different buckets (-1 and 0).
			adds: []add{{-sec / 2, 1, true}, {sec / 2, 2, true}},
			want: []Point{{-sec / 2, 1}, {sec / 2, 2}},
		},
		{
			name:     "bad arguments clamp instead of panicking",
			capacity: 0, width: 0,
			adds: []add{{1, 1, true}, {2, 2, true}, {1, 3, false}},
			want: []Point{{2, 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSeries(tt.capacity, tt.width)
			for i, a := range tt.adds {
				if got := s.Add(a.t, a.v); got != a.want {
					t.Errorf("add #%d (%d,%v) = %v, want %v", i, a.t, a.v, got, a.want)
				}
			}
			got := s.Since(nil, math.MinInt64)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("points = %v, want %v", got, tt.want)
			}
			if s.Len() != len(tt.want) {
				t.Errorf("Len = %d, want %d", s.Len(), len(tt.want))
			}
			if f, ok := s.First(); !ok || f != tt.want[0] {
				t.Errorf("First = %v,%v, want %v", f, ok, tt.want[0])
			}
			if l, ok := s.Last(); !ok || l != tt.want[len(tt.want)-1] {
				t.Errorf("Last = %v,%v, want %v", l, ok, tt.want[len(tt.want)-1])
			}
		})
	}
}

func TestSeriesQueries(t *testing.T) {
	// Capacity 5 after 8 adds: wrapped, holding t = 3..7s.
	s := NewSeries(5, time.Second)
	for i := range int64(8) {
		s.Add(i*sec, float64(i))
	}
	t.Run("Since", func(t *testing.T) {
		for _, tt := range []struct {
			since int64
			want  []float64
		}{
			{math.MinInt64, []float64{3, 4, 5, 6, 7}},
			{5 * sec, []float64{5, 6, 7}},
			{5*sec + 1, []float64{6, 7}},
			{7 * sec, []float64{7}},
			{8 * sec, nil},
		} {
			got := s.Since(nil, tt.since)
			var vals []float64
			for _, p := range got {
				vals = append(vals, p.V)
			}
			if !slices.Equal(vals, tt.want) {
				t.Errorf("Since(%d) = %v, want %v", tt.since, vals, tt.want)
			}
		}
	})
	t.Run("Since appends", func(t *testing.T) {
		dst := []Point{{T: -1, V: -1}}
		got := s.Since(dst, 7*sec)
		if want := []Point{{-1, -1}, {7 * sec, 7}}; !slices.Equal(got, want) {
			t.Errorf("Since = %v, want %v", got, want)
		}
	})
	t.Run("At", func(t *testing.T) {
		for _, tt := range []struct {
			t      int64
			want   float64
			wantOK bool
		}{
			{2 * sec, 0, false}, // before the oldest held point (evicted)
			{3*sec - 1, 0, false},
			{3 * sec, 3, true},
			{5*sec + sec/2, 5, true},
			{7 * sec, 7, true},
			{math.MaxInt64, 7, true},
		} {
			p, ok := s.At(tt.t)
			if ok != tt.wantOK || (ok && p.V != tt.want) {
				t.Errorf("At(%d) = %v,%v, want %v,%v", tt.t, p, ok, tt.want, tt.wantOK)
			}
		}
	})
	t.Run("counter delta over a window", func(t *testing.T) {
		last, _ := s.Last()
		prev, ok := s.At(last.T - 2*sec)
		if !ok || CounterDelta(prev.V, last.V) != 2 {
			t.Errorf("delta over 2s = %v (prev %v,%v), want 2", CounterDelta(prev.V, last.V), prev, ok)
		}
	})
	t.Run("Reset", func(t *testing.T) {
		s := NewSeries(3, time.Second)
		s.Add(10*sec, 1)
		s.Reset()
		if s.Len() != 0 {
			t.Fatalf("Len after Reset = %d", s.Len())
		}
		if _, ok := s.Last(); ok {
			t.Error("Last ok after Reset")
		}
		if _, ok := s.At(math.MaxInt64); ok {
			t.Error("At ok after Reset")
		}
		// An older sample is accepted again: nothing constrains order now.
		if !s.Add(1*sec, 2) {
			t.Error("Add after Reset refused")
		}
	})
	t.Run("zero value", func(t *testing.T) {
		var z Series
		if z.Add(1, 1) || z.Len() != 0 {
			t.Error("zero Series accepted a sample")
		}
	})
}

// line returns n points one second apart on v = slope*t + noise, with
// outliers added at the given indices.
func line(n int, slope, noise float64, outliers map[int]float64) []Point {
	r := rand.New(rand.NewPCG(1, 2))
	pts := make([]Point, n)
	for i := range pts {
		v := slope*float64(i) + noise*(r.Float64()*2-1)
		v += outliers[i]
		pts[i] = Point{T: 1_700_000_000*sec + int64(i)*sec, V: v}
	}
	return pts
}

// ols is the least-squares slope per second, to show the outliers used
// below really would mislead a non-robust estimator.
func ols(pts []Point) float64 {
	var sx, sy, sxx, sxy float64
	for _, p := range pts {
		x := float64(p.T-pts[0].T) / 1e9
		sx += x
		sy += p.V
		sxx += x * x
		sxy += x * p.V
	}
	n := float64(len(pts))
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

func TestTheilSen(t *testing.T) {
	sawtooth := make([]Point, 60)
	for i := range sawtooth {
		// Grows for 10s, then is freed back: allocate/release cycles.
		sawtooth[i] = Point{T: int64(i) * sec, V: float64(i%10) * 100}
	}
	step := make([]Point, 60)
	for i := range step {
		if i >= 30 {
			step[i] = Point{T: int64(i) * sec, V: 1000}
		} else {
			step[i] = Point{T: int64(i) * sec}
		}
	}
	tests := []struct {
		name           string
		pts            []Point
		slope, slopeTo float64 // want |slope - want| <= slopeTo
		minSteady      float64
		maxSteady      float64
		notOLS         bool // OLS must be far off: the outliers matter
	}{
		{
			name:  "clean line",
			pts:   line(30, 2.5, 0, nil),
			slope: 2.5, slopeTo: 1e-9, minSteady: 1, maxSteady: 1,
		},
		{
			name:  "noisy line",
			pts:   line(60, 2.5, 5, nil),
			slope: 2.5, slopeTo: 0.15, minSteady: 0.85, maxSteady: 1,
		},
		{
			name: "noisy line with huge outliers",
			pts: line(60, 2.5, 5, map[int]float64{
				3: 1e6, 17: -1e6, 40: 5e5, 55: 1e6, 58: 1e6,
			}),
			slope: 2.5, slopeTo: 0.3, minSteady: 0.8, maxSteady: 1,
			notOLS: true,
		},
		{
			name:  "falling line",
			pts:   line(40, -1, 0.5, nil),
			slope: -1, slopeTo: 0.05, minSteady: 0, maxSteady: 0.05,
		},
		{
			name:  "flat constant",
			pts:   line(60, 0, 0, nil),
			slope: 0, slopeTo: 0, minSteady: 0, maxSteady: 0,
		},
		{
			name:  "flat noisy",
			pts:   line(60, 0, 10, nil),
			slope: 0, slopeTo: 0.1, minSteady: 0.3, maxSteady: 0.65,
		},
		{
			// Within a tooth the slope is 100/s; the median must stay an
			// order of magnitude below that.
			name:  "sawtooth",
			pts:   sawtooth,
			slope: 0, slopeTo: 10, minSteady: 0, maxSteady: 0.6,
		},
		{
			// 0 for 30s, then 1000: the 900 pairs across the step (of
			// 1770) have slopes 1000/(j-i), the rest 0. More than half are
			// positive, so the median is a positive slope: the 885th and
			// 886th smallest, i.e. the 15th and 16th smallest crossing
			// slopes, 1000/55 and 1000/54. Only steadiness (900/1770)
			// tells this apart from a leak.
			name:  "single step",
			pts:   step,
			slope: (1000.0/55 + 1000.0/54) / 2, slopeTo: 1e-9,
			minSteady: 900.0 / 1770, maxSteady: 900.0 / 1770,
		},
		{
			name:  "subsampled 600 points",
			pts:   line(600, 0.5, 3, map[int]float64{100: 1e9, 101: 1e9, 300: -1e9}),
			slope: 0.5, slopeTo: 0.02, minSteady: 0.9, maxSteady: 1,
			notOLS: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slope, steady, out, ok := TheilSen(tt.pts, nil)
			if !ok {
				t.Fatal("ok = false")
			}
			t.Logf("slope %.4g/s, steadiness %.3f", slope, steady)
			if !near(slope, tt.slope, tt.slopeTo) {
				t.Errorf("slope = %v, want %v ± %v", slope, tt.slope, tt.slopeTo)
			}
			if steady < tt.minSteady || steady > tt.maxSteady {
				t.Errorf("steadiness = %v, want in [%v, %v]", steady, tt.minSteady, tt.maxSteady)
			}
			if tt.notOLS {
				if o := ols(tt.pts); near(o, tt.slope, 10*tt.slopeTo) {
					t.Errorf("OLS slope %v is close to the truth; the outliers do not test robustness", o)
				}
			}
			if n := min(len(tt.pts), maxPairsPoints); cap(out) != n*(n-1)/2 {
				t.Errorf("scratch cap = %d, want %d (bounded by the subsample)", cap(out), n*(n-1)/2)
			}
		})
	}
}

func TestTheilSenDegenerate(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		pts    []Point
		wantOK bool
		slope  float64
	}{
		{"empty", nil, false, 0},
		{"two points", []Point{{0, 0}, {sec, 1}}, false, 0},
		{"all T equal", []Point{{5, 1}, {5, 2}, {5, 3}}, false, 0},
		// Only the pairs with distinct T count: (0,1)-(2,3) style pairs.
		{"some T equal", []Point{{0, 0}, {0, 10}, {sec, 1}, {sec, 11}}, true, 1},
		{"NaN values skipped", []Point{{0, 0}, {sec, nan}, {2 * sec, 2}, {3 * sec, 3}}, true, 1},
		{"all NaN", []Point{{0, nan}, {sec, nan}, {2 * sec, nan}}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slope, _, _, ok := TheilSen(tt.pts, nil)
			if ok != tt.wantOK || (ok && !near(slope, tt.slope, 1e-12)) {
				t.Errorf("TheilSen = %v,%v, want %v,%v", slope, ok, tt.slope, tt.wantOK)
			}
		})
	}
}

func TestTheilSenSlopeIsPerSecond(t *testing.T) {
	// 10 units per minute sampled every 15s is 1/6 unit per second.
	pts := make([]Point, 10)
	for i := range pts {
		pts[i] = Point{T: int64(i) * 15 * sec, V: float64(i) * 2.5}
	}
	slope, _, _, ok := TheilSen(pts, nil)
	if !ok || !near(slope, 1.0/6, 1e-12) {
		t.Errorf("slope = %v,%v, want 1/6", slope, ok)
	}
}

func TestTheilSenScratchReused(t *testing.T) {
	pts := line(60, 1, 1, nil)
	_, _, scratch, _ := TheilSen(pts, nil)
	allocs := testing.AllocsPerRun(100, func() {
		_, _, scratch, _ = TheilSen(pts, scratch)
	})
	if allocs != 0 {
		t.Errorf("TheilSen with reused scratch: %v allocs, want 0", allocs)
	}
	// The input is read-only: the caller's window must not be reordered.
	if !slices.Equal(pts, line(60, 1, 1, nil)) {
		t.Error("TheilSen modified its input")
	}
}

func TestMedian(t *testing.T) {
	// Compare the selection against a full sort on shapes that break
	// naive quickselects: sorted, reversed, all equal, few distinct values.
	r := rand.New(rand.NewPCG(3, 4))
	gens := map[string]func(i, n int) float64{
		"random":   func(int, int) float64 { return r.NormFloat64() },
		"sorted":   func(i, _ int) float64 { return float64(i) },
		"reversed": func(i, n int) float64 { return float64(n - i) },
		"equal":    func(int, int) float64 { return 0 },
		"few":      func(int, int) float64 { return float64(r.IntN(3)) },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 3, 4, 5, 10, 101, 2016} {
			a := make([]float64, n)
			for i := range a {
				a[i] = gen(i, n)
			}
			sorted := slices.Sorted(slices.Values(a))
			want := sorted[n/2]
			if n%2 == 0 {
				want = (sorted[n/2-1] + sorted[n/2]) / 2
			}
			if got := median(a); !near(got, want, 1e-12) {
				t.Errorf("%s n=%d: median = %v, want %v", name, n, got, want)
			}
		}
	}
}

func TestMeanStd(t *testing.T) {
	tests := []struct {
		name      string
		vals      []float64
		mean, std float64
	}{
		{"empty", nil, 0, 0},
		{"one", []float64{7}, 7, 0},
		{"population std", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, 2},
		// Large offset, small spread: the naive sum-of-squares formula
		// loses this entirely.
		{"large offset", []float64{1e12 + 1, 1e12 + 3}, 1e12 + 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, s := MeanStd(tt.vals)
			if !near(m, tt.mean, 1e-9) || !near(s, tt.std, 1e-9) {
				t.Errorf("MeanStd = %v,%v, want %v,%v", m, s, tt.mean, tt.std)
			}
		})
	}
}

func TestHistogramQuantile(t *testing.T) {
	bounds := []float64{0.1, 0.5, 1, 5}
	// 10 in (0,0.1], 20 in (0.1,0.5], 30 in (0.5,1], 30 in (1,5], 10 above 5.
	counts := []uint64{10, 20, 30, 30, 10}
	tests := []struct {
		name   string
		q      float64
		bounds []float64
		counts []uint64
		want   float64
		wantOK bool
	}{
		// rank 5 of 100, in the first bucket, interpolated from 0.
		{"first bucket from zero", 0.05, bounds, counts, 0.05, true},
		// rank 10 is exactly the first bucket's top.
		{"bucket edge", 0.10, bounds, counts, 0.1, true},
		// rank 50: 20 below, 20 of 30 into (0.5,1].
		{"median", 0.5, bounds, counts, 0.5 + 0.5*20.0/30, true},
		// rank 90: 60 below, 30 of 30 into (1,5].
		{"top of last finite bucket", 0.9, bounds, counts, 5, true},
		// rank 95 is in the +Inf bucket.
		{"+Inf bucket", 0.95, bounds, counts, 5, true},
		{"q=1", 1, bounds, counts, 5, true},
		{"q=0", 0, bounds, counts, 0, true},
		// q=0 with an empty first bucket: the lower edge of the first
		// populated one, not 0/0.
		{"q=0 empty first", 0, bounds, []uint64{0, 0, 4, 0, 0}, 0.5, true},
		// Empty buckets before the rank are skipped: rank 2 of 4, all in (0.5,1].
		{"empty leading buckets", 0.5, bounds, []uint64{0, 0, 4, 0, 0}, 0.75, true},
		// First bound <= 0: Prometheus returns the bound, no interpolation.
		{"non-positive first bound", 0.2, []float64{-1, 0, 1}, []uint64{5, 0, 5, 0}, -1, true},
		{"negative bounds interpolate", 0.75, []float64{-2, -1, 0}, []uint64{0, 2, 2, 0}, -0.5, true},
		{"everything in +Inf", 0.5, bounds, []uint64{0, 0, 0, 0, 7}, 5, true},
		{"zero total", 0.5, bounds, []uint64{0, 0, 0, 0, 0}, 0, false},
		{"len mismatch", 0.5, bounds, []uint64{1, 2, 3}, 0, false},
		{"q < 0", -0.1, bounds, counts, 0, false},
		{"q > 1", 1.1, bounds, counts, 0, false},
		{"q NaN", math.NaN(), bounds, counts, 0, false},
		{"no finite bound", 0.5, nil, []uint64{3}, 0, false},
		{"unsorted bounds", 0.5, []float64{1, 0.5}, []uint64{1, 1, 1}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := HistogramQuantile(tt.q, tt.bounds, tt.counts)
			if ok != tt.wantOK || (ok && !near(got, tt.want, 1e-12)) {
				t.Errorf("HistogramQuantile(%v) = %v,%v, want %v,%v", tt.q, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestCounterDelta(t *testing.T) {
	tests := []struct {
		name            string
		prev, cur, want float64
	}{
		{"increase", 10, 15, 5},
		{"unchanged", 10, 10, 0},
		{"reset", 100, 7, 7},
		{"reset to zero", 100, 0, 0},
	}
	for _, tt := range tests {
		if got := CounterDelta(tt.prev, tt.cur); got != tt.want {
			t.Errorf("%s: CounterDelta(%v, %v) = %v, want %v", tt.name, tt.prev, tt.cur, got, tt.want)
		}
	}
}

func TestBaseline(t *testing.T) {
	type push struct {
		t int64
		v float64
	}
	tests := []struct {
		name      string
		capacity  int
		every     time.Duration
		pushes    []push
		want      []float64
		mean, std float64
	}{
		{
			name:     "one value per period, latest wins",
			capacity: 10, every: time.Minute,
			pushes: []push{{0, 1}, {10 * sec, 2}, {59 * sec, 3}, {60 * sec, 5}, {61 * sec, 7}},
			want:   []float64{3, 7}, mean: 5, std: 2,
		},
		{
			name:     "eviction of the oldest period",
			capacity: 3, every: time.Second,
			pushes: []push{{0, 1}, {sec, 2}, {2 * sec, 3}, {3 * sec, 4}, {4 * sec, 5}},
			want:   []float64{3, 4, 5}, mean: 4, std: math.Sqrt(2.0 / 3),
		},
		{
			name:     "push for an older period ignored",
			capacity: 3, every: time.Second,
			pushes: []push{{5 * sec, 1}, {3 * sec, 100}, {6 * sec, 3}},
			want:   []float64{1, 3}, mean: 2, std: 1,
		},
		{
			name:     "empty",
			capacity: 3, every: time.Second,
			want: nil, mean: 0, std: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBaseline(tt.capacity, tt.every)
			for _, p := range tt.pushes {
				b.Push(p.t, p.v)
			}
			if got := b.Values(nil); !slices.Equal(got, tt.want) {
				t.Errorf("Values = %v, want %v", got, tt.want)
			}
			if b.Len() != len(tt.want) {
				t.Errorf("Len = %d, want %d", b.Len(), len(tt.want))
			}
			m, s := b.MeanStd()
			if !near(m, tt.mean, 1e-12) || !near(s, tt.std, 1e-12) {
				t.Errorf("MeanStd = %v,%v, want %v,%v", m, s, tt.mean, tt.std)
			}
			// The in-place statistics must agree with the free function.
			fm, fs := MeanStd(b.Values(nil))
			if m != fm || s != fs {
				t.Errorf("Baseline.MeanStd = %v,%v, MeanStd(Values) = %v,%v", m, s, fm, fs)
			}
		})
	}
}

func TestHotPathAllocs(t *testing.T) {
	s := NewSeries(120, time.Second)
	b := NewBaseline(60, time.Second)
	dst := make([]Point, 0, 120)
	vals := make([]float64, 0, 60)
	var now int64
	for range 200 {
		now += sec
		s.Add(now, 1)
		b.Push(now, 1)
	}
	allocs := testing.AllocsPerRun(100, func() {
		now += sec
		s.Add(now, 1)
		b.Push(now, 1)
		dst = s.Since(dst[:0], now-60*sec)
		s.At(now - 30*sec)
		vals = b.Values(vals[:0])
		b.MeanStd()
		HistogramQuantile(0.99, []float64{1, 2, 3}, []uint64{1, 2, 3, 4})
	})
	if allocs != 0 {
		t.Errorf("hot path: %v allocs per evaluation, want 0", allocs)
	}
}

func BenchmarkTheilSen60(b *testing.B) {
	pts := line(60, 2.5, 5, nil)
	scratch := make([]float64, 0, maxPairs)
	b.ReportAllocs()
	for b.Loop() {
		_, _, scratch, _ = TheilSen(pts, scratch)
	}
}

func BenchmarkTheilSen600(b *testing.B) {
	pts := line(600, 2.5, 5, nil)
	scratch := make([]float64, 0, maxPairs)
	b.ReportAllocs()
	for b.Loop() {
		_, _, scratch, _ = TheilSen(pts, scratch)
	}
}

func BenchmarkSeriesAdd(b *testing.B) {
	s := NewSeries(300, time.Second)
	var now int64
	b.ReportAllocs()
	for b.Loop() {
		// Half a bucket per sample: alternates overwrite and append, and
		// the ring is full (evicting) for all but the first iterations.
		now += sec / 2
		s.Add(now, 1)
	}
}

func BenchmarkHistogramQuantile(b *testing.B) {
	bounds := []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	counts := []uint64{1, 2, 4, 8, 16, 32, 64, 32, 16, 8, 4, 2, 1, 1, 1}
	b.ReportAllocs()
	for b.Loop() {
		HistogramQuantile(0.99, bounds, counts)
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package stats

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

const minute = int64(time.Minute)

func TestTierBuckets(t *testing.T) {
	tr := NewTier(time.Minute, 4*time.Minute)
	if tr.Cap() != 4 || tr.Span() != 4*minute {
		t.Fatalf("cap %d span %d", tr.Cap(), tr.Span())
	}
	tr.Add(0, 5)
	tr.Add(20*sec, 3)
	tr.Add(40*sec, 7)
	b, ok := tr.Bucket(0)
	if !ok || b.Min != 3 || b.Max != 7 || b.Mean != 5 || b.N != 3 {
		t.Fatalf("bucket 0 = %+v %v", b, ok)
	}
	// The newest bucket is still filling: not a floor yet.
	if f := tr.Floors(nil); len(f) != 0 {
		t.Fatalf("floors with one bucket = %v", f)
	}
	tr.Add(minute, 4)
	tr.Add(3*minute, 9) // minute 2 stays empty
	f := tr.Floors(nil)
	want := []Point{{0, 3}, {minute, 4}}
	if len(f) != len(want) || f[0] != want[0] || f[1] != want[1] {
		t.Fatalf("floors = %v, want %v", f, want)
	}
	// Late samples land in their bucket while it is in the ring.
	if !tr.Add(2*minute+sec, 1) {
		t.Fatal("late sample in the ring dropped")
	}
	if b, ok := tr.Bucket(2 * minute); !ok || b.Min != 1 {
		t.Fatalf("late bucket = %+v %v", b, ok)
	}
	// Advancing evicts the oldest; a sample older than the ring is dropped.
	tr.Add(4*minute, 2)
	if _, ok := tr.Bucket(0); ok {
		t.Fatal("bucket 0 should be evicted")
	}
	if tr.Add(30*sec, 0) {
		t.Fatal("a sample older than the ring was taken")
	}
	// A gap longer than the ring clears it.
	tr.Add(100*minute, 8)
	if f := tr.Floors(nil); len(f) != 0 {
		t.Fatalf("floors after a long gap = %v", f)
	}
	if n, ok := tr.Newest(); !ok || n != 100*minute {
		t.Fatalf("newest = %d %v", n, ok)
	}
}

func TestTierNegativeTimeAndNaN(t *testing.T) {
	tr := NewTier(time.Minute, 3*time.Minute)
	tr.Add(-minute-1, 1)
	tr.Add(-1, 2)
	tr.Add(0, 3)
	f := tr.Floors(nil)
	if len(f) != 2 || f[0].T != -2*minute || f[1].T != -minute {
		t.Fatalf("floors = %v", f)
	}
	if tr.Add(minute, math.NaN()) {
		t.Fatal("NaN taken")
	}
}

// TestTiersSameTimestampReplaces: the running totals of one scrape are not
// samples; only the scrape's last (complete) total is.
func TestTiersSameTimestampReplaces(t *testing.T) {
	m := NewTiers([]TierSpec{{time.Minute, time.Hour}, {10 * time.Minute, 24 * time.Hour}})
	for i := int64(0); i < 30; i++ {
		ts := i * minute
		m.Add(ts, 10)  // first attribute set
		m.Add(ts, 100) // total with the second
	}
	f := m.Tier(0).Floors(nil)
	if len(f) == 0 {
		t.Fatal("no floors")
	}
	for _, p := range f {
		if p.V != 100 {
			t.Fatalf("floor %v: a partial sum was recorded", p)
		}
	}
}

// TestTiersBounded: a subject's tiers cost the same after a week of
// samples as when created, and adding a sample allocates nothing.
func TestTiersBounded(t *testing.T) {
	specs := []TierSpec{{time.Minute, 2 * time.Hour}, {10 * time.Minute, 24 * time.Hour}, {time.Hour, 72 * time.Hour}}
	m := NewTiers(specs)
	before := m.Bytes()
	if want := (120 + 144 + 72) * 16; before < want || before > want+512 {
		t.Fatalf("Bytes = %d, want %d + struct overhead", before, want)
	}
	ts := int64(0)
	allocs := testing.AllocsPerRun(7*24*60, func() {
		m.Add(ts, float64(ts))
		ts += minute
	})
	if allocs != 0 {
		t.Fatalf("Add allocates %v per sample", allocs)
	}
	if m.Bytes() != before {
		t.Fatalf("Bytes grew %d → %d", before, m.Bytes())
	}
	t.Logf("long-horizon tiers: %d bytes per subject", before)
}

func TestCycleTheilSen(t *testing.T) {
	const hour = int64(time.Hour)
	day := 24 * hour
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name      string
		slopePerH float64 // trend
		amp       float64 // daily cycle amplitude
		phase     float64
		wantPos   bool
	}{
		{"trend only", 100, 0, 0, true},
		{"cycle only", 0, 8000, 0.3, false},
		{"cycle only, other phase", 0, 8000, 2.1, false},
		{"cycle and trend", 85, 8000, 4.0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pts []Point
			for h := int64(0); h < 72; h++ {
				ts := h * hour
				v := tc.slopePerH*float64(h) + tc.amp*math.Sin(2*math.Pi*float64(ts)/float64(day)+tc.phase) + rng.NormFloat64()*20
				pts = append(pts, Point{T: ts, V: v})
			}
			slope, steady, _, pairs, ok := CycleTheilSen(pts, day, 6, nil)
			if !ok || pairs != 48+24 {
				t.Fatalf("ok %v pairs %d", ok, pairs)
			}
			perH := slope * 3600
			if math.Abs(perH-tc.slopePerH) > 5 {
				t.Fatalf("slope %.1f/h, want %.1f", perH, tc.slopePerH)
			}
			if tc.wantPos != (steady > 0.9) {
				t.Fatalf("steadiness %.2f", steady)
			}
		})
	}
	if _, _, _, n, ok := CycleTheilSen([]Point{{0, 1}, {hour, 2}}, day, 1, nil); ok || n != 0 {
		t.Fatal("no pair a cycle apart, yet ok")
	}
}

func TestDrawdown(t *testing.T) {
	for _, tc := range []struct {
		vals []float64
		want float64
	}{
		{nil, 0},
		{[]float64{1, 2, 3}, 0},
		{[]float64{5, 1, 9, 4, 6}, 5},
		{[]float64{3, 2, 1}, 2},
	} {
		var pts []Point
		for i, v := range tc.vals {
			pts = append(pts, Point{T: int64(i), V: v})
		}
		if got := Drawdown(pts); got != tc.want {
			t.Errorf("Drawdown(%v) = %v, want %v", tc.vals, got, tc.want)
		}
	}
}

// BenchmarkTiersAdd is the per-sample cost of the three default tiers; its
// B/op for NewTiers is the memory a subject adds.
func BenchmarkTiersAdd(b *testing.B) {
	m := NewTiers([]TierSpec{{time.Minute, 2 * time.Hour}, {10 * time.Minute, 24 * time.Hour}, {time.Hour, 72 * time.Hour}})
	b.ReportMetric(float64(m.Bytes()), "B/subject")
	ts := int64(0)
	for b.Loop() {
		m.Add(ts, float64(ts&1023))
		ts += 15 * sec
	}
}

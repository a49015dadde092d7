// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package stats

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// series makes one point per second for n seconds from f(second).
func series(n int, f func(s float64) float64) []Point {
	pts := make([]Point, n)
	for i := range pts {
		pts[i] = Point{T: int64(i) * int64(time.Second), V: f(float64(i))}
	}
	return pts
}

func TestOnsetFindsTheChangePoint(t *testing.T) {
	const mib = 1 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name        string
		onset       int
		rate, noise float64 // MiB/s, MiB
		n           int
		tolerance   int
	}{
		{"clean, half way", 30, 8, 0, 60, 1},
		{"noisy, late", 45, 8, 16, 64, 4},
		{"slow and noisy, early", 15, 2, 4, 60, 5},
	} {
		pts := series(tc.n, func(s float64) float64 {
			v := 60*1024*mib + tc.noise*mib*(rng.Float64()*2-1)
			if s >= float64(tc.onset) {
				v += tc.rate * mib * (s - float64(tc.onset) + 1)
			}
			return v
		})
		c, ok := FindChange(pts, 3, 4)
		if !ok || int(math.Abs(float64(c.Index-tc.onset))) > tc.tolerance || !c.Flat() {
			t.Errorf("%s: change %+v (ok %v), want a flat stretch, then a climb from %d ± %d", tc.name, c, ok, tc.onset, tc.tolerance)
		}
		if ok && math.Abs(c.After-tc.rate*mib)/(tc.rate*mib) > 0.15 {
			t.Errorf("%s: %.2f MiB/s after the onset, want %g", tc.name, c.After/mib, tc.rate)
		}
	}
}

// TestChangeFindsASpeedUp: a leak of 2 MiB/s that becomes 5 MiB/s is not
// flat before its change, and the pace after it is the new one.
func TestChangeFindsASpeedUp(t *testing.T) {
	const mib = 1 << 20
	pts := series(64, func(s float64) float64 { return 2*mib*math.Min(s, 40) + 5*mib*math.Max(0, s-40) })
	c, ok := FindChange(pts, 3, 4)
	if !ok || c.Flat() || c.Index < 39 || c.Index > 42 || math.Abs(c.After/mib-5) > 0.2 || math.Abs(c.Before/mib-2) > 0.2 {
		t.Fatalf("want a speed-up from 2 to 5 MiB/s at 40: %+v (ok %v, %.2f → %.2f MiB/s)", c, ok, c.Before/mib, c.After/mib)
	}
}

func TestOnsetRefusesWhatIsNotAFlatThenClimb(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name string
		f    func(s float64) float64
	}{
		{"a steady climb over the whole window", func(s float64) float64 { return 8 * mib * s }},
		{"flat", func(s float64) float64 { return 1024 * mib }},
		{"a sawtooth: allocate, free", func(s float64) float64 { return mib * 20 * math.Mod(s, 20) }},
		{"a fall", func(s float64) float64 { return 1024*mib - math.Max(0, s-30)*8*mib }},
		{"a step", func(s float64) float64 { return map[bool]float64{true: 4096 * mib}[s > 30] }},
		{"a slow-down", func(s float64) float64 { return 8*mib*math.Min(s, 30) + 2*mib*math.Max(0, s-30) }},
	} {
		if c, ok := FindChange(series(60, tc.f), 3, 4); ok {
			t.Errorf("%s: change %+v", tc.name, c)
		}
	}
	if _, ok := FindChange(series(5, func(s float64) float64 { return s }), 3, 4); ok {
		t.Error("5 points cannot hold 3 flat and 4 climbing")
	}
}

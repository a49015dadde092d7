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
		k, ok := Onset(pts, 3, 4)
		if !ok || int(math.Abs(float64(k-tc.onset))) > tc.tolerance {
			t.Errorf("%s: onset at %d (ok %v), want %d ± %d", tc.name, k, ok, tc.onset, tc.tolerance)
		}
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
	} {
		if k, ok := Onset(series(60, tc.f), 3, 4); ok {
			t.Errorf("%s: onset at %d", tc.name, k)
		}
	}
	if _, ok := Onset(series(5, func(s float64) float64 { return s }), 3, 4); ok {
		t.Error("5 points cannot hold 3 flat and 4 climbing")
	}
}

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

// fitHinge is the direct least-squares fit, the reference the running
// sums of FindChange are checked against: y − mean = c + a·t + b·max(0, t − hinge)
// and its squared error (ok=false when the system is singular).
func fitHinge(pts []Point, mean float64, sec func(int64) float64, hinge float64) (sse, c, a, b float64, ok bool) {
	// Normal equations M·[c a b] = v over the basis (1, t, h).
	var m [3][3]float64
	var v [3]float64
	var syy float64
	for _, p := range pts {
		t := sec(p.T)
		basis := [3]float64{1, t, math.Max(0, t-hinge)}
		y := p.V - mean
		for i := range 3 {
			for j := range 3 {
				m[i][j] += basis[i] * basis[j]
			}
			v[i] += basis[i] * y
		}
		syy += y * y
	}
	x, ok := solve3(m, v)
	if !ok {
		return 0, 0, 0, 0, false
	}
	return math.Max(0, syy-x[0]*v[0]-x[1]*v[1]-x[2]*v[2]), x[0], x[1], x[2], true
}

// The O(1)-per-candidate fit from running sums gives what a direct fit of
// every point gives, at every candidate hinge, on series of several shapes
// and scales (bytes around 10¹⁰, irregular times).
func TestHingeFromSumsMatchesDirectFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 20 {
		n := 8 + rng.IntN(120)
		pts := make([]Point, n)
		ts := int64(1_700_000_000) * 1e9
		for i := range pts {
			ts += int64(1+rng.IntN(3)) * 1e9
			v := 4e10 + float64(i)*float64(trial)*1e6 + rng.NormFloat64()*5e7
			if i > n/2 {
				v += float64(i-n/2) * 3e8
			}
			pts[i] = Point{T: ts, V: v}
		}
		var mean float64
		for _, p := range pts {
			mean += p.V
		}
		mean /= float64(n)
		t0 := pts[0].T
		sec := func(t int64) float64 { return float64(t-t0) / 1e9 }
		var all, suf sums
		for _, p := range pts {
			all.add(sec(p.T), p.V-mean)
		}
		for k := n - 1; k >= 1; k-- {
			suf.add(sec(pts[k].T), pts[k].V-mean)
			h := sec(pts[k-1].T)
			e1, c1, a1, b1, ok1 := fitHinge(pts, mean, sec, h)
			e2, c2, a2, b2, ok2 := hingeFromSums(&all, &suf, h)
			if ok1 != ok2 {
				t.Fatalf("trial %d k %d: ok %v vs %v", trial, k, ok1, ok2)
			}
			if !ok1 {
				continue
			}
			for _, c := range [][2]float64{{e1, e2}, {c1, c2}, {a1, a2}, {b1, b2}} {
				if d := math.Abs(c[0] - c[1]); d > 1e-6*math.Max(1, math.Abs(c[0])) && d > 1e-3*math.Sqrt(math.Abs(e1)+1) {
					t.Fatalf("trial %d k %d: direct %v, from sums %v", trial, k, c[0], c[1])
				}
			}
		}
	}
}

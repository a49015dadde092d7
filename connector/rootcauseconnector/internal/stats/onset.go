// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package stats

import "math"

// Change is where a climbing series changed pace: the first point of the
// faster stretch, and the slopes (per second) before and after it.
type Change struct {
	Index         int
	Before, After float64
}

// Flat says whether the stretch before the change was flat: the change is
// the onset of the climb, not a speed-up of one already under way.
func (c Change) Flat() bool { return math.Abs(c.Before) <= c.After/10 }

// FindChange finds where a series began to climb, or began to climb
// faster: the change point of a continuous two-piece line. A slope fitted
// over a window that still holds the flat (or slower) stretch before a
// leak began (or sped up) understates it just when it matters; fitted from
// the change, it does not.
//
// For each candidate point k it fits y = c + a·t + b·max(0, t − t_k) by
// least squares (running sums, a 3×3 solve: O(n) per candidate, O(n²) for
// the n points of a window, about 4,000 steps for 64) and keeps the k with
// the smallest squared error. It reports a change only when that fit is
// clearly better than one straight line (at most half its squared error),
// the pace after it is positive and at least 1.5× the pace before, and the
// stretch before it is clean: its points stray from their own line by at
// most half the rise after the change, which a sawtooth (allocate/free
// cycles) or a single step does not.
//
// ok=false when there is no such change, or fewer than minPre points
// before it or minPost from it.
func FindChange(pts []Point, minPre, minPost int) (Change, bool) {
	n := len(pts)
	minPre, minPost = max(minPre, 3), max(minPost, 3)
	if n < minPre+minPost {
		return Change{}, false
	}
	// Centre values and count time from the first point: squares of raw
	// byte counts (10¹¹) and Unix nanoseconds would lose the noise to
	// rounding.
	var mean float64
	for _, p := range pts {
		mean += p.V
	}
	mean /= float64(n)
	t0 := pts[0].T
	sec := func(t int64) float64 { return float64(t-t0) / 1e9 }
	lineSSE, _, _ := fitLine(pts, mean, sec)
	best, bestK := math.Inf(1), -1
	var bestA, bestB, bestC float64
	for k := minPre; k <= n-minPost; k++ {
		// The hinge sits at the last point of the slower stretch: the
		// faster one starts after it.
		hinge := sec(pts[k-1].T)
		if e, c, a, b, ok := fitHinge(pts, mean, sec, hinge); ok && e < best {
			best, bestK, bestC, bestA, bestB = e, k, c, a, b
		}
	}
	if bestK < 0 {
		return Change{}, false
	}
	before, after := bestA, bestA+bestB
	if after <= 0 || after < 1.5*before || best > lineSSE/2 {
		return Change{}, false
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pts[:bestK] {
		r := p.V - mean - (bestC + bestA*sec(p.T))
		lo, hi = math.Min(lo, r), math.Max(hi, r)
	}
	rise := after * (sec(pts[n-1].T) - sec(pts[bestK-1].T))
	if hi-lo > rise/2 {
		return Change{}, false
	}
	return Change{Index: bestK, Before: before, After: after}, true
}

// fitLine is the least-squares line y − mean = c + a·t and its squared
// error.
func fitLine(pts []Point, mean float64, sec func(int64) float64) (sse, c, a float64) {
	var sx, sy, sxx, sxy, syy float64
	for _, p := range pts {
		x, y := sec(p.T), p.V-mean
		sx, sy, sxx, sxy, syy = sx+x, sy+y, sxx+x*x, sxy+x*y, syy+y*y
	}
	fn := float64(len(pts))
	den := fn*sxx - sx*sx
	if den <= 0 {
		return math.Inf(1), 0, 0
	}
	a = (fn*sxy - sx*sy) / den
	c = (sy - a*sx) / fn
	return math.Max(0, syy-c*sy-a*sxy), c, a
}

// fitHinge is the least-squares y − mean = c + a·t + b·max(0, t − hinge)
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

// solve3 solves m·x = v by Cramer's rule.
func solve3(m [3][3]float64, v [3]float64) ([3]float64, bool) {
	det := func(a [3][3]float64) float64 {
		return a[0][0]*(a[1][1]*a[2][2]-a[1][2]*a[2][1]) -
			a[0][1]*(a[1][0]*a[2][2]-a[1][2]*a[2][0]) +
			a[0][2]*(a[1][0]*a[2][1]-a[1][1]*a[2][0])
	}
	d := det(m)
	if d == 0 || math.IsNaN(d) {
		return [3]float64{}, false
	}
	var x [3]float64
	for col := range 3 {
		mc := m
		for row := range 3 {
			mc[row][col] = v[row]
		}
		x[col] = det(mc) / d
	}
	return x, true
}

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
// least squares (a 3×3 solve from running sums: O(1) per candidate, O(n)
// for the n points of a window) and keeps the k with
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
	// Sums over every point (the basis 1 and t, and y) and, built up as k
	// goes down, over the points from k on: the hinge term max(0, t − H)
	// is t − H there and 0 before (times are in order), so each
	// candidate's normal equations come from these sums in O(1) and the
	// scan is O(n), not a fit of the whole window per candidate.
	var all, suf sums
	for _, p := range pts {
		all.add(sec(p.T), p.V-mean)
	}
	for i := n - 1; i > n-minPost; i-- {
		suf.add(sec(pts[i].T), pts[i].V-mean)
	}
	best, bestK := math.Inf(1), -1
	var bestA, bestB, bestC float64
	for k := n - minPost; k >= minPre; k-- {
		suf.add(sec(pts[k].T), pts[k].V-mean)
		// The hinge sits at the last point of the slower stretch: the
		// faster one starts after it.
		hinge := sec(pts[k-1].T)
		if e, c, a, b, ok := hingeFromSums(&all, &suf, hinge); ok && e <= best {
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

// sums are the running sums the normal equations are made of.
type sums struct{ n, t, tt, y, ty, yy float64 }

func (s *sums) add(t, y float64) {
	s.n++
	s.t += t
	s.tt += t * t
	s.y += y
	s.ty += t * y
	s.yy += y * y
}

// hingeFromSums is fitHinge from the sums over all points and over those
// after the hinge H (h = t − H there): Σh = Σt − H·n, Σh² = Σt² − 2H·Σt +
// H²·n, Σt·h = Σt² − H·Σt, Σh·y = Σt·y − H·Σy, all over the suffix.
func hingeFromSums(all, suf *sums, hinge float64) (sse, c, a, b float64, ok bool) {
	sh := suf.t - hinge*suf.n
	shh := suf.tt - 2*hinge*suf.t + hinge*hinge*suf.n
	sth := suf.tt - hinge*suf.t
	shy := suf.ty - hinge*suf.y
	m := [3][3]float64{{all.n, all.t, sh}, {all.t, all.tt, sth}, {sh, sth, shh}}
	v := [3]float64{all.y, all.ty, shy}
	x, ok := solve3(m, v)
	if !ok {
		return 0, 0, 0, 0, false
	}
	return math.Max(0, all.yy-x[0]*v[0]-x[1]*v[1]-x[2]*v[2]), x[0], x[1], x[2], true
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

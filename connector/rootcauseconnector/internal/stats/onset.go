// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package stats

import "math"

// Onset finds where a series that was flat began to climb: the change point
// of a "hinge" (constant, then a straight rise from the hinge on). A slope
// fitted over a window that still holds the flat stretch before a leak
// began understates the leak when it matters most; fitted from the onset,
// it does not.
//
// For each candidate hinge it fits y = c + s·max(0, t − t_k) by least
// squares (one pass with running sums per candidate: O(n²) for the n
// points of a window, about 4,000 steps for 64) and keeps the one with the
// smallest squared error. It reports an onset only when the hinge is
// clearly better than one straight line over the whole window (at most half
// its squared error), the rise is positive, and the stretch before it is
// flat: its spread is at most half the rise after it, which a sawtooth
// (allocate/free cycles) or a noisy plateau is not.
//
// It returns the index in pts of the first point of the climb; ok=false
// when there is no such onset, or fewer than minPre points before it or
// minPost from it.
func Onset(pts []Point, minPre, minPost int) (k int, ok bool) {
	n := len(pts)
	minPre, minPost = max(minPre, 2), max(minPost, 3)
	if n < minPre+minPost {
		return 0, false
	}
	// Centre values and times: squares of raw byte counts (10¹¹) would
	// lose the noise to rounding.
	var mean float64
	for _, p := range pts {
		mean += p.V
	}
	mean /= float64(n)
	t0 := pts[0].T
	sse := func(hinge int64) (float64, float64) {
		var sx, sy, sxx, sxy, syy float64
		for _, p := range pts {
			x := math.Max(0, float64(p.T-hinge)/1e9)
			y := p.V - mean
			sx += x
			sy += y
			sxx += x * x
			sxy += x * y
			syy += y * y
		}
		fn := float64(n)
		den := fn*sxx - sx*sx
		if den <= 0 {
			return math.Inf(1), 0
		}
		s := (fn*sxy - sx*sy) / den
		c := (sy - s*sx) / fn
		return math.Max(0, syy-c*sy-s*sxy), s
	}
	line, _ := sse(t0)
	best, bestK, bestS := math.Inf(1), -1, 0.0
	for i := minPre; i <= n-minPost; i++ {
		if e, s := sse(pts[i-1].T); e < best {
			// The hinge sits at the last flat point: the climb starts
			// after it.
			best, bestK, bestS = e, i, s
		}
	}
	if bestK < 0 || bestS <= 0 || best > line/2 {
		return 0, false
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pts[:bestK] {
		lo, hi = math.Min(lo, p.V), math.Max(hi, p.V)
	}
	rise := pts[n-1].V - pts[bestK-1].V
	if rise <= 0 || hi-lo > rise/2 {
		return 0, false
	}
	return bestK, true
}

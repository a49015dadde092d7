// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package stats

// maxPairsPoints caps the points Theil–Sen looks at. The estimator is
// quadratic in the number of points, and a window of per-second samples can
// be hundreds long; 64 evenly spread points keep the median's accuracy for
// a trend while bounding the work (and the scratch buffer) to 2016 pairs.
const maxPairsPoints = 64

// maxPairs is the number of pairs among maxPairsPoints points, the largest
// scratch TheilSen ever needs.
const maxPairs = maxPairsPoints * (maxPairsPoints - 1) / 2

// TheilSen returns the median of pairwise slopes (per second) of pts (sorted
// by T), and steadiness = the share of pairs (with distinct T) whose slope is
// > 0. scratch is reused (grown when too small) and returned so callers keep
// it; ok=false with fewer than 3 points or all T equal. For n >
// maxPairsPoints (64), it subsamples evenly to 64 points first so the cost
// stays bounded (64*63/2 pairs).
//
// The median of slopes is used instead of least squares because a leak
// detector must not be swung by a single spike (a burst allocation, a
// scrape glitch): up to ~29% of the points can be arbitrary without moving
// it far. Steadiness complements it: a sawtooth (allocate/free cycles) or a
// single step can have a positive median slope, but only a steady climb has
// nearly all of its pairwise slopes positive.
//
// Pairs whose slope is not finite (NaN or infinite values) are skipped, as
// they carry no ordering information and would corrupt the selection. The
// returned scratch has length 0; its contents are not meaningful.
func TheilSen(pts []Point, scratch []float64) (slopePerSec, steadiness float64, out []float64, ok bool) {
	n := len(pts)
	if n < 3 {
		return 0, 0, scratch[:0], false
	}
	if n > maxPairsPoints {
		// Copy the subsample to the stack so the pair loop below is the
		// same for both paths; 1 KiB does not escape.
		var sub [maxPairsPoints]Point
		for i := range sub {
			// Endpoints included so the subsample spans the whole window.
			sub[i] = pts[i*(n-1)/(maxPairsPoints-1)]
		}
		return theilSen(sub[:], scratch)
	}
	return theilSen(pts, scratch)
}

func theilSen(pts []Point, scratch []float64) (slopePerSec, steadiness float64, out []float64, ok bool) {
	n := len(pts)
	need := n * (n - 1) / 2
	if cap(scratch) < need {
		scratch = make([]float64, 0, need)
	}
	// Written by index rather than append: the capacity is known, and
	// this keeps the grow check out of the innermost loop.
	slopes := scratch[:need]
	m, positive := 0, 0
	for i := 0; i < n-1; i++ {
		pi := pts[i]
		for _, pj := range pts[i+1:] {
			dt := pj.T - pi.T
			if dt == 0 {
				continue
			}
			// Scale the numerator rather than dividing dt by 1e9: one
			// division per pair instead of two.
			slope := (pj.V - pi.V) * 1e9 / float64(dt)
			if slope-slope != 0 {
				// NaN or ±Inf (x-x is NaN for both): one compare
				// instead of two calls in the innermost loop.
				continue
			}
			if slope > 0 {
				positive++
			}
			slopes[m] = slope
			m++
		}
	}
	if m == 0 {
		return 0, 0, scratch[:0], false
	}
	return median(slopes[:m]), float64(positive) / float64(m), scratch[:0], true
}

// median reorders a (len > 0) and returns its median, averaging the two
// middle values for an even length. Selection rather than sorting: it is
// linear, which matters at 2016 slopes per subject per evaluation.
func median(a []float64) float64 {
	k := len(a) / 2
	hi := nthElement(a, k)
	if len(a)%2 == 1 {
		return hi
	}
	// nthElement leaves everything before k <= a[k], so the lower middle
	// value is the largest of those.
	lo := a[0]
	for _, v := range a[1:k] {
		if v > lo {
			lo = v
		}
	}
	return lo + (hi-lo)/2
}

// nthElement partially orders a (no NaNs) so that a[k] is the value a full
// sort would put there, everything before it is <= a[k] and everything
// after is >= a[k], and returns a[k].
//
// Hoare's partition (both scans stop on elements equal to the pivot) is
// used because equal slopes are common, not exceptional: a flat gauge gives
// all-zero slopes, and stopping on equals still splits those in half where
// a Lomuto partition would go quadratic. It also swaps far less than a
// three-way partition, which measured about 1.6x slower here.
func nthElement(a []float64, k int) float64 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		p := medianOf3(a[lo], a[lo+(hi-lo)/2], a[hi])
		i, j := lo, hi
		for i <= j {
			// p is in a[lo:hi+1], so neither scan can run off the range.
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		// Now a[lo:j+1] <= p, a[i:hi+1] >= p and anything between is p.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}

// medianOf3 picks the pivot; it avoids the quadratic case on already
// ordered input, which pairwise slopes of a clean trend come close to.
func medianOf3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	if a > b {
		b = a
	}
	return b
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package signals

// MaxMemoryPoints bounds each memory series an import emits (per device,
// and per process for Nsight exports): beyond it the window is cut into
// MaxMemoryPoints equal time buckets and each bucket keeps its highest
// point, so the peaks a reader looks for survive thinning.
const MaxMemoryPoints = 10000

// Thin appends to dst the indexes i < n of the points to emit: every point
// with a value when there are at most MaxMemoryPoints, else the highest of
// each bucket of [from, to]. point(i) gives the time and value of point i,
// in time order; ok false leaves it out (a value the event does not have).
// Callers pass their own storage by callback, so nothing is copied.
func Thin(dst []int, n int, from, to int64, point func(i int) (ts, v int64, ok bool)) []int {
	if n <= MaxMemoryPoints {
		for i := range n {
			if _, _, ok := point(i); ok {
				dst = append(dst, i)
			}
		}
		return dst
	}
	width := max((to-from)/MaxMemoryPoints+1, 1)
	bucket, best, bestV := int64(-1), -1, int64(0)
	for i := range n {
		ts, v, ok := point(i)
		if !ok {
			continue
		}
		if bk := (ts - from) / width; bk != bucket {
			if best >= 0 {
				dst = append(dst, best)
			}
			bucket, best, bestV = bk, i, v
		} else if v > bestV {
			best, bestV = i, v
		}
	}
	if best >= 0 {
		dst = append(dst, best)
	}
	return dst
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package stats

import "math"

// HistogramQuantile estimates quantile q of a histogram from explicit upper
// bounds (len n) and bucket counts (len n+1, last is +Inf), the way
// Prometheus's histogram_quantile does it: linear interpolation inside the
// bucket, lower bound 0 for the first bucket when its upper bound is > 0;
// if the quantile falls into the +Inf bucket it returns the largest finite
// bound. ok=false when the total count is 0, len mismatch, or q outside
// [0,1]; also when there is no finite bound or the bounds are not strictly
// increasing, since no bucket can then be interpolated.
//
// counts are per bucket (OpenTelemetry's explicit-bucket layout), not
// cumulative as in Prometheus; the cumulative sums are formed on the fly so
// nothing is allocated. Matching Prometheus's arithmetic keeps the
// processor's latency figures comparable with dashboards built on
// histogram_quantile over the same data.
func HistogramQuantile(q float64, bounds []float64, counts []uint64) (float64, bool) {
	if !(q >= 0 && q <= 1) || len(bounds) == 0 || len(counts) != len(bounds)+1 {
		return 0, false
	}
	var total uint64
	for i, c := range counts {
		if i < len(bounds) {
			if math.IsNaN(bounds[i]) || (i > 0 && bounds[i] <= bounds[i-1]) {
				return 0, false
			}
		}
		total += c
	}
	if total == 0 {
		return 0, false
	}
	rank := q * float64(total)
	var below uint64 // observations in the buckets before i
	for i, c := range counts[:len(bounds)] {
		cum := below + c
		// The bucket holding the rank-th observation. Requiring c > 0
		// skips empty leading buckets so q=0 lands on the lower edge of
		// the first populated bucket instead of dividing 0 by 0.
		if c > 0 && float64(cum) >= rank {
			upper := bounds[i]
			if i == 0 && upper <= 0 {
				// No lower edge to interpolate from; Prometheus returns
				// the bound itself.
				return upper, true
			}
			lower := 0.0
			if i > 0 {
				lower = bounds[i-1]
			}
			return lower + (upper-lower)*((rank-float64(below))/float64(c)), true
		}
		below = cum
	}
	// The rank lies in the +Inf bucket, whose width is unknown; the largest
	// finite bound is the only defensible (under-)estimate.
	return bounds[len(bounds)-1], true
}

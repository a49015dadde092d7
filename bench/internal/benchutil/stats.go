// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package benchutil

import "slices"

// Median returns the median of xs, which it sorts in place (0 for none).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

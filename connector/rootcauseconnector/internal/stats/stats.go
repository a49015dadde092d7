// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package stats is the numeric core of the rootcause connector: bounded
// time-bucketed series, a robust (Theil–Sen) trend estimate, histogram
// quantiles and rolling baselines.
//
// The detectors run every evaluation interval over every tracked subject, so
// everything here is allocation-free once its buffers exist and bounded in
// memory by construction: capacities are fixed when a Series or Baseline is
// created and Theil–Sen's work is capped regardless of the window size.
// Nothing here is safe for concurrent use; the processor guards its state.
package stats // import "github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector/internal/stats"

import "math"

// Point is one sample: T in Unix nanoseconds, V the value.
type Point struct {
	T int64
	V float64
}

// MeanStd over vals (population std). n==0 → 0,0.
func MeanStd(vals []float64) (mean, std float64) {
	var w welford
	for _, v := range vals {
		w.add(v)
	}
	return w.result()
}

// CounterDelta returns cur-prev for a monotonic counter, treating a decrease
// as a reset (delta = cur).
//
// After a reset the counter restarted from zero, so everything it holds was
// counted since the reset; that is the best lower bound on the increase we
// can give without knowing the value it reached before restarting.
func CounterDelta(prev, cur float64) float64 {
	if cur < prev {
		return cur
	}
	return cur - prev
}

// welford accumulates mean and variance in one pass. It is used instead of
// sum / sum-of-squares because the values (bytes of GPU memory, token
// counts) can be large with a small spread, where the naive formula loses
// all precision to cancellation.
type welford struct {
	n    int
	mean float64
	m2   float64
}

func (w *welford) add(v float64) {
	w.n++
	d := v - w.mean
	w.mean += d / float64(w.n)
	w.m2 += d * (v - w.mean)
}

func (w *welford) result() (mean, std float64) {
	if w.n == 0 {
		return 0, 0
	}
	variance := w.m2 / float64(w.n)
	// Rounding can leave a tiny negative m2 for constant input; clamp so
	// callers never see NaN from an all-equal window.
	if variance < 0 {
		variance = 0
	}
	return w.mean, math.Sqrt(variance)
}

// floorDiv divides rounding towards negative infinity, so that bucket
// boundaries are evenly spaced even for (test or pre-epoch) negative times,
// where Go's truncating division would make bucket 0 twice as wide.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

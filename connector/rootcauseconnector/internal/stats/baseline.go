// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package stats

import "time"

// Baseline is a fixed-capacity ring of recent values (e.g. one p99 per
// evaluation) with mean/std over what it holds; values are pushed at most
// once per `every` (older pushes inside the same period are replaced) so
// capacity*every spans the baseline period.
//
// It is a Series underneath: a period is exactly a bucket, and keeping the
// timestamps is what lets a push within the same period replace rather than
// append. Like Series, a copy shares storage with the original.
type Baseline struct {
	s Series
}

// NewBaseline returns an empty Baseline holding at most capacity values, one
// per period of length every. Out-of-range arguments are clamped as in
// NewSeries.
func NewBaseline(capacity int, every time.Duration) Baseline {
	return Baseline{s: NewSeries(capacity, every)}
}

// Push records v at t. A push for the period already held replaces its
// value, so the baseline reflects the latest evaluation in each period; a
// push for an earlier period is ignored, as for Series.Add.
func (b *Baseline) Push(t int64, v float64) {
	b.s.Add(t, v)
}

// Len returns the number of values held.
func (b *Baseline) Len() int { return b.s.n }

// MeanStd returns the mean and population standard deviation of the held
// values (0,0 when empty), computed in place without copying them out.
func (b *Baseline) MeanStd() (mean, std float64) {
	var w welford
	for i := 0; i < b.s.n; i++ {
		w.add(b.s.buf[b.s.idx(i)].V)
	}
	return w.result()
}

// Values appends the held values (oldest first) to dst.
func (b *Baseline) Values(dst []float64) []float64 {
	for i := 0; i < b.s.n; i++ {
		dst = append(dst, b.s.buf[b.s.idx(i)].V)
	}
	return dst
}

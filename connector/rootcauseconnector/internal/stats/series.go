// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package stats

import "time"

// Series is a fixed-capacity ring of time-bucketed samples: samples whose T
// falls in the same bucket (T / width) replace each other (last value wins,
// gauges), so capacity*width covers the window. Value type, zero value
// unusable; create with NewSeries.
//
// Bucketing keeps the memory of a window independent of how often a metric
// is scraped: a 1s scrape and a 15s scrape of the same window cost the same.
// Because buckets are strictly increasing, the held points are strictly
// increasing in T, which lets Since and At binary-search.
//
// A copy of a Series shares its backing storage with the original, so keep
// one owner (store it in a struct and use it through a pointer).
type Series struct {
	buf   []Point // len(buf) is the capacity; never reallocated
	head  int     // index in buf of the oldest point
	n     int     // number of points held
	width int64   // bucket width in nanoseconds, > 0
}

// NewSeries returns an empty Series holding at most capacity buckets of the
// given width. A capacity below 1 is raised to 1 and a width below 1ns to 1ns
// so a bad configuration degrades to a tiny window instead of a panic on the
// hot path.
func NewSeries(capacity int, width time.Duration) Series {
	if capacity < 1 {
		capacity = 1
	}
	if width < 1 {
		width = 1
	}
	return Series{buf: make([]Point, capacity), width: int64(width)}
}

// Add records v at t. A sample older than the newest bucket is ignored
// (out-of-order) and Add returns false; same bucket overwrites; newer bucket
// appends (evicting the oldest when full).
func (s *Series) Add(t int64, v float64) bool {
	if len(s.buf) == 0 {
		// Zero value: there is nowhere to store the sample.
		return false
	}
	if s.n > 0 {
		last := s.idx(s.n - 1)
		lb, b := floorDiv(s.buf[last].T, s.width), floorDiv(t, s.width)
		switch {
		case b < lb:
			return false
		case b == lb:
			s.buf[last] = Point{T: t, V: v}
			return true
		}
	}
	if s.n == len(s.buf) {
		// Full: the slot of the oldest point becomes the newest.
		s.buf[s.head] = Point{T: t, V: v}
		s.head++
		if s.head == len(s.buf) {
			s.head = 0
		}
		return true
	}
	s.buf[s.idx(s.n)] = Point{T: t, V: v}
	s.n++
	return true
}

// Len returns the number of points (buckets) held.
func (s *Series) Len() int { return s.n }

// Last returns the newest point.
func (s *Series) Last() (Point, bool) {
	if s.n == 0 {
		return Point{}, false
	}
	return s.buf[s.idx(s.n-1)], true
}

// First returns the oldest point.
func (s *Series) First() (Point, bool) {
	if s.n == 0 {
		return Point{}, false
	}
	return s.buf[s.head], true
}

// Since appends to dst the points with T >= since, oldest first, and returns
// it (no allocation when dst has room).
func (s *Series) Since(dst []Point, since int64) []Point {
	for i := s.search(since, false); i < s.n; i++ {
		dst = append(dst, s.buf[s.idx(i)])
	}
	return dst
}

// At returns the newest point with T <= t (false if none): used to take
// counter deltas over a window.
func (s *Series) At(t int64) (Point, bool) {
	// The first point with T > t is right after the one we want.
	i := s.search(t, true) - 1
	if i < 0 {
		return Point{}, false
	}
	return s.buf[s.idx(i)], true
}

// Reset drops every point but keeps the storage.
func (s *Series) Reset() {
	s.head, s.n = 0, 0
}

// idx maps the i-th oldest point to its slot in buf. A compare-and-subtract
// replaces the modulo because this runs for every point on every evaluation.
func (s *Series) idx(i int) int {
	j := s.head + i
	if j >= len(s.buf) {
		j -= len(s.buf)
	}
	return j
}

// search returns the logical index of the first point with T >= t, or with
// T > t when after is set (s.n if none). Written out rather than with
// sort.Search to keep a closure off the hot path; the after flag avoids
// computing t+1, which would overflow for t = MaxInt64.
func (s *Series) search(t int64, after bool) int {
	lo, hi := 0, s.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if pt := s.buf[s.idx(mid)].T; pt < t || (after && pt == t) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

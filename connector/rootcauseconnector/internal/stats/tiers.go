// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package stats

import (
	"math"
	"time"
	"unsafe"
)

// Bucket summarises the samples of one time bucket of a Tier. float32 is
// enough for what a verdict over hours needs (at 80 GB a float32 is exact to
// ~8 KB) and halves the state of a subject.
type Bucket struct {
	Min, Max, Mean float32
	N              uint32 // samples in the bucket; 0: empty
}

// Tier is a fixed ring of buckets of one width: a downsampled window (for
// example 1-hour buckets over 3 days) whose memory does not depend on how
// long it has run or how often samples come. A bucket's time is implicit
// (its number × width), so a bucket is 16 bytes.
//
// Unlike Series, a sample older than the newest bucket still lands in its
// bucket as long as that bucket is in the ring: history sent late (a
// backfill, a retried batch) is not lost.
type Tier struct {
	buf    []Bucket
	width  int64 // ns, > 0
	newest int64 // bucket number (T / width) of the newest bucket
	have   bool
}

// NewTier returns an empty Tier of span/width buckets (at least 2) of the
// given width (at least 1ns).
func NewTier(width, span time.Duration) Tier {
	if width < 1 {
		width = 1
	}
	n := max(int(span/width), 2)
	return Tier{buf: make([]Bucket, n), width: int64(width)}
}

// Width is the bucket width (ns).
func (t *Tier) Width() int64 { return t.width }

// Cap is the number of buckets, so Cap × Width is the span.
func (t *Tier) Cap() int { return len(t.buf) }

// Span is the time the ring covers (ns).
func (t *Tier) Span() int64 { return int64(len(t.buf)) * t.width }

// slot is where bucket number b lives.
func (t *Tier) slot(b int64) *Bucket {
	i := b % int64(len(t.buf))
	if i < 0 {
		i += int64(len(t.buf))
	}
	return &t.buf[i]
}

// Add records v at ts. A bucket newer than the newest clears the buckets
// it skips (a gap stays empty); a sample older than the ring is dropped and
// Add returns false.
func (t *Tier) Add(ts int64, v float64) bool {
	if len(t.buf) == 0 || v != v {
		return false
	}
	b := floorDiv(ts, t.width)
	n := int64(len(t.buf))
	switch {
	case !t.have:
		clear(t.buf)
		t.newest, t.have = b, true
	case b > t.newest:
		if b-t.newest >= n {
			clear(t.buf)
		} else {
			for k := t.newest + 1; k <= b; k++ {
				*t.slot(k) = Bucket{}
			}
		}
		t.newest = b
	case b <= t.newest-n:
		return false
	}
	s := t.slot(b)
	f := float32(v)
	if s.N == 0 {
		*s = Bucket{Min: f, Max: f, Mean: f, N: 1}
		return true
	}
	s.Min = min(s.Min, f)
	s.Max = max(s.Max, f)
	if s.N < math.MaxUint32 {
		s.N++
	}
	s.Mean += (f - s.Mean) / float32(s.N)
	return true
}

// Newest is the start (Unix ns) of the newest bucket (false: empty).
func (t *Tier) Newest() (int64, bool) { return t.newest * t.width, t.have }

// Floors appends to dst the minimum of every non-empty bucket in the ring
// except the newest (still filling: its minimum is of fewer samples),
// oldest first, with T the bucket's start, and returns it.
func (t *Tier) Floors(dst []Point) []Point {
	if !t.have {
		return dst
	}
	for b := t.newest - int64(len(t.buf)) + 1; b < t.newest; b++ {
		if s := t.slot(b); s.N > 0 {
			dst = append(dst, Point{T: b * t.width, V: float64(s.Min)})
		}
	}
	return dst
}

// Bucket returns the bucket starting at or containing ts (false: outside
// the ring or empty).
func (t *Tier) Bucket(ts int64) (Bucket, bool) {
	b := floorDiv(ts, t.width)
	if !t.have || b > t.newest || b <= t.newest-int64(len(t.buf)) {
		return Bucket{}, false
	}
	s := t.slot(b)
	return *s, s.N > 0
}

// TierSpec is the width and span of one tier.
type TierSpec struct {
	Width, Span time.Duration
}

// Tiers feeds every sample into a set of tiers. A sample with the same T
// as the previous one replaces it rather than being recorded: callers that
// sum the points of one scrape pass running totals, and only the last of
// them is the scrape's value (recording the partial sums would pull the
// bucket minima down). A sample is recorded when a later T arrives.
type Tiers struct {
	tiers []Tier
	pendT int64
	pendV float64
	pend  bool
}

// NewTiers returns empty tiers for specs.
func NewTiers(specs []TierSpec) Tiers {
	ts := Tiers{tiers: make([]Tier, len(specs))}
	for i, s := range specs {
		ts.tiers[i] = NewTier(s.Width, s.Span)
	}
	return ts
}

// Add takes one sample (see Tiers for the same-T rule).
func (m *Tiers) Add(t int64, v float64) {
	if m.pend && t == m.pendT {
		m.pendV = v
		return
	}
	if m.pend {
		for i := range m.tiers {
			m.tiers[i].Add(m.pendT, m.pendV)
		}
	}
	m.pendT, m.pendV, m.pend = t, v, true
}

// Len is the number of tiers.
func (m *Tiers) Len() int { return len(m.tiers) }

// Tier returns the i-th tier.
func (m *Tiers) Tier(i int) *Tier { return &m.tiers[i] }

// Bytes is the memory the tiers hold (struct and buckets): fixed from
// NewTiers on.
func (m *Tiers) Bytes() int {
	n := int(unsafe.Sizeof(*m)) + len(m.tiers)*int(unsafe.Sizeof(Tier{}))
	for i := range m.tiers {
		n += cap(m.tiers[i].buf) * int(unsafe.Sizeof(Bucket{}))
	}
	return n
}

// CycleTheilSen is Theil–Sen restricted to pairs of points a whole number
// of cycles apart (T differs by k × cycle, k ≥ 1): the median of their
// slopes (per second) and the share of them that are positive. A load that
// repeats every cycle moves both points of such a pair alike, so it cancels
// out of every slope; a trend does not. pts must be sorted by T; scratch is
// reused as in TheilSen. ok is false with fewer than minPairs pairs.
func CycleTheilSen(pts []Point, cycle int64, minPairs int, scratch []float64) (slopePerSec, steadiness float64, out []float64, pairs int, ok bool) {
	slopes := scratch[:0]
	positive := 0
	if cycle <= 0 || len(pts) < 2 {
		return 0, 0, slopes, 0, false
	}
	// One merge walk per lag: O(points × cycles spanned), not O(points²).
	for lag := cycle; lag <= pts[len(pts)-1].T-pts[0].T; lag += cycle {
		j := 0
		for i := range pts {
			want := pts[i].T + lag
			for j < len(pts) && pts[j].T < want {
				j++
			}
			if j == len(pts) {
				break
			}
			if pts[j].T != want {
				continue
			}
			s := (pts[j].V - pts[i].V) * 1e9 / float64(lag)
			if s-s != 0 {
				continue
			}
			if s > 0 {
				positive++
			}
			slopes = append(slopes, s)
		}
	}
	if len(slopes) < max(minPairs, 1) {
		return 0, 0, slopes[:0], len(slopes), false
	}
	n := len(slopes)
	return median(slopes), float64(positive) / float64(n), slopes[:0], n, true
}

// Drawdown is the largest fall in pts (sorted by T) from a value to a later
// one: 0 for a series that never falls. A load cycle that returns at night
// has a drawdown of its whole swing; a leak's floor falls only by noise.
func Drawdown(pts []Point) float64 {
	if len(pts) == 0 {
		return 0
	}
	peak, dd := pts[0].V, 0.0
	for _, p := range pts[1:] {
		peak = max(peak, p.V)
		dd = max(dd, peak-p.V)
	}
	return dd
}

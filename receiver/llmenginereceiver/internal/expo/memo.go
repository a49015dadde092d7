// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo

import "github.com/cespare/xxhash/v2"

// lineMemo remembers what each sample line of the last successful scrape was
// made into, by the line's place among the samples, so that a line repeated
// at the same place in the next scrape skips its label set: promtext does not
// read it (Parser.SetKnown) and this package neither interns its labels nor
// takes the le or quantile label out, sorts and hashes them again.
//
// An engine writes its exposition in the same order on every scrape and
// changes only the values, so nearly every line is found where it was; a
// line that is not (a series added or gone shifts the ones after it) is read
// as usual and remembered at its new place for the next scrape. On the
// 10,000-series exposition of bench/llmengine this takes the label set's
// share of a scrape's CPU off: see the receiver's README for the figures.
//
// A line is recognized by the 64-bit hash and the length of its series
// bytes (name and label set, as written) at the same place: remembering the
// bytes themselves would double the memory of a large target for a
// collision chance of 2^-64 per changed line.
//
// What is remembered takes about 32 bytes per sample line and, for each
// series, its labels as in the scrape's scratch (which is kept twice: the
// last scrape's and the one being read).
type lineMemo struct {
	om      bool       // the format prev was read in: the same bytes read differently in the other
	prev    []memoLine // by sample ordinal, from the last successful scrape
	cur     []memoLine // being recorded
	series  []memoSeries
	labels  []labelPair // the last successful scrape's Converter.labels, which series index
	pending memoPending
}

// memoLine is one sample line remembered. n == 0: nothing (the line had no
// label set, its labels were not usable, or it was not asked about).
type memoLine struct {
	h      uint64
	n      int32 // length of the series bytes
	series int32 // in lineMemo.series
	role   role
	bound  float64 // le or quantile, for a bucket or quantile line
}

type memoSeries struct {
	lh     uint64
	lo, hi int32
}

// memoPending is what known learned about the sample being read.
type memoPending struct {
	asked bool
	h     uint64
	n     int32
	hit   int32 // index in prev when known said yes
}

// known is promtext's SetKnown question for the sample being read, the
// len(cur)-th of this scrape.
func (m *lineMemo) known(s []byte) bool {
	k := len(m.cur)
	h := xxhash.Sum64(s)
	m.pending = memoPending{asked: true, h: h, n: int32(len(s)), hit: -1}
	if k < len(m.prev) && m.prev[k].n == int32(len(s)) && m.prev[k].h == h {
		m.pending.hit = int32(k)
		return true
	}
	return false
}

// record remembers the sample just filed (its series si and bound, when
// clean) or a blank for it, keeping cur aligned with the samples read.
func (m *lineMemo) record(clean bool, si int32, r role, bound float64) {
	p := m.pending
	m.pending = memoPending{}
	if !clean || !p.asked {
		m.cur = append(m.cur, memoLine{})
		return
	}
	m.cur = append(m.cur, memoLine{h: p.h, n: p.n, series: si, role: r, bound: bound})
}

// begin starts a scrape in format om; what a failed scrape recorded is
// dropped.
func (m *lineMemo) begin(om bool) {
	m.cur = m.cur[:0]
	m.pending = memoPending{}
	if om != m.om {
		m.prev = m.prev[:0]
		m.om = om
	}
}

// commit keeps the successful scrape's lines and series; the caller hands
// over its labels scratch and gets the old one back to reuse.
func (m *lineMemo) commit(series []series, labels []labelPair) []labelPair {
	m.prev, m.cur = m.cur, m.prev[:0]
	m.series = m.series[:0]
	for i := range series {
		m.series = append(m.series, memoSeries{lh: series[i].lh, lo: series[i].lo, hi: series[i].hi})
	}
	old := m.labels
	m.labels = labels
	clear(old) // drop the strings the old scratch still points to
	return old[:0]
}

// release forgets everything (after a spike, with the series index).
func (m *lineMemo) release() { *m = lineMemo{om: m.om} }

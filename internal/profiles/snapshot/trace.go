// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

// maxSeriesPoints bounds the memory points kept per device while replaying:
// past 2× this, neighbours are merged pairwise keeping each one's highest
// values, so that peaks survive and memory stays bounded however long the
// ring is.
const maxSeriesPoints = 10000

// point is the allocator state after an entry, relative to the start of
// the ring (the ring starts mid-run: absolute values are known only at the
// end, from the segments).
type point struct {
	t    int64 // time_us
	a, r int64 // allocated, reserved relative to the start of the ring
}

type liveAlloc struct {
	size, timeUS, seq int64
	step              int64 // index among its stack's allocations in the ring
	stack, meta       uint32
}

// stackStat is what the replay keeps per stack (one record per distinct
// stack of a device, whatever the ring's length): the bytes allocated, and
// what the leak patterns need (patterns.go): how many allocations the
// stack made (its steps), how their sizes moved from one to the next, and
// sums for the least-squares fit of size over step.
type stackStat struct {
	bytes, n          int64 // bytes allocated and allocations over the ring
	last              int64 // size of the latest allocation
	inc, dec          int64 // allocations larger / smaller than the previous one
	firstUS, lastUS   int64 // times of the first and latest allocations
	firstSeq, lastSeq int64 // their positions in the ring
	sumS, sumKS       float64
}

// sizeStackStat is a stackStat with its index entry (memory accounting).
const sizeStackStat = 96 + sizeMapEntry

type oomEvent struct {
	e      entry
	a, r   int64 // relative allocated/reserved when it happened
	seq    int64
	hasRel bool
}

// traceList replays one device's trace ring as its entries are decoded.
type traceList struct {
	entries    int64
	byAction   [numActions]int64
	skipped    int64 // items of the list that are not trace entries
	first, end int64 // first and last time_us seen (0: none)
	live       map[int64]liveAlloc
	statIdx    map[uint32]int32 // stack → index in stats
	stats      []stackStat
	a, r       int64
	pts        []point
	merged     int // pairwise merges done on pts
	ooms       []oomEvent
	unmatched  int64 // frees of addresses the ring never saw allocated
	hasTime    bool
	liveHigh   int // most entries live has held (memory accounting)
}

func newTraceList() *traceList {
	return &traceList{live: make(map[int64]liveAlloc), statIdx: make(map[uint32]int32)}
}

// stat is the replay state of stack, created on its first allocation.
func (tl *traceList) stat(stack uint32) *stackStat {
	i, ok := tl.statIdx[stack]
	if !ok {
		i = int32(len(tl.stats))
		tl.statIdx[stack] = i
		tl.stats = append(tl.stats, stackStat{})
	}
	return &tl.stats[i]
}

func (tl *traceList) add(e *entry) {
	seq := tl.entries
	tl.entries++
	tl.byAction[e.action]++
	if e.timeUS != 0 {
		if !tl.hasTime || e.timeUS < tl.first {
			tl.first = e.timeUS
		}
		tl.end = max(tl.end, e.timeUS)
		tl.hasTime = true
	}
	changed := true
	switch e.action {
	case actAlloc:
		st := tl.stat(e.stack)
		k := st.n
		tl.live[e.addr] = liveAlloc{size: e.size, timeUS: e.timeUS, seq: seq, step: k, stack: e.stack, meta: e.meta}
		st.bytes += e.size
		switch {
		case k == 0:
			st.firstUS, st.firstSeq = e.timeUS, seq
		case e.size > st.last:
			st.inc++
		case e.size < st.last:
			st.dec++
		}
		st.n++
		st.last, st.lastUS, st.lastSeq = e.size, e.timeUS, seq
		st.sumS += float64(e.size)
		st.sumKS += float64(k) * float64(e.size)
		tl.a += e.size
	case actFreeRequested:
		// The program let go of the tensor; the block may wait for its
		// streams (free_completed) but is not leaked.
		if _, ok := tl.live[e.addr]; ok {
			delete(tl.live, e.addr)
		} else {
			tl.unmatched++
		}
		changed = false
	case actFreeCompleted:
		delete(tl.live, e.addr)
		tl.a -= e.size
	case actSegmentAlloc, actSegmentMap:
		tl.r += e.size
	case actSegmentFree, actSegmentUnmap:
		tl.r -= e.size
	case actOOM:
		tl.ooms = append(tl.ooms, oomEvent{e: *e, a: tl.a, r: tl.r, seq: seq, hasRel: true})
		changed = false
	default:
		changed = false
	}
	if changed && e.timeUS != 0 {
		tl.pts = append(tl.pts, point{t: e.timeUS, a: tl.a, r: tl.r})
		if len(tl.pts) >= 2*maxSeriesPoints {
			tl.halve()
		}
	}
}

// halve merges neighbouring points, keeping the earlier time and the
// higher values of each pair.
func (tl *traceList) halve() {
	n := 0
	for i := 0; i < len(tl.pts); i += 2 {
		p := tl.pts[i]
		if i+1 < len(tl.pts) {
			q := tl.pts[i+1]
			p.a, p.r = max(p.a, q.a), max(p.r, q.r)
		}
		tl.pts[n] = p
		n++
	}
	tl.pts = tl.pts[:n]
	tl.merged++
}

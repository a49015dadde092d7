// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector/internal/stats"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// subjectKind says what a subject is.
type subjectKind uint8

const (
	kindGPU subjectKind = iota
	kindProcess
	kindEngine
	kindRule
)

// subject is one thing incidents are about: a GPU, a process on a GPU, an
// engine target, or one series a user rule watches. Its state is a set of
// fixed-size windows, so a subject's memory does not grow with time.
type subject struct {
	kind      subjectKind
	key       string
	firstSeen int64 // Unix ns of the first sample
	lastSeen  int64 // Unix ns of the newest sample
	// LRU list (most recently seen at the front).
	prev, next *subject

	// Identity, as far as known.
	hwID, hwName string
	pid          int64
	exe          string
	containerID  string
	podUID       string
	podName      string
	namespace    string
	engineName   string
	target       string
	model        string
	// service and instance: service.name and service.instance.id of an
	// application whose signals a rule watches.
	service, instance string

	gpu    *gpuState
	proc   *procState
	engine *engineState
	rule   *ruleState
}

// accum sums the points of one signal that share a timestamp (several
// attribute sets of one metric in one scrape), so the window stores one
// value per scrape.
type accum struct {
	t int64
	v float64
}

func (a *accum) add(t int64, v float64) float64 {
	if t != a.t {
		a.t, a.v = t, 0
	}
	a.v += v
	return a.v
}

func (a *accum) max(t int64, v float64) float64 {
	if t != a.t {
		a.t, a.v = t, v
	} else if v > a.v {
		a.v = v
	}
	return a.v
}

type gpuState struct {
	mem    stats.Series
	memAcc accum
	limit  float64
	util   stats.Series
	// throttle: one run per reason that matters (thermal, hardware,
	// power) held without a break, and the newest scrape with any reason.
	throttle  []throttleRun
	throttleT int64
	// Error counters: the last value per XID code and of uncorrected ECC.
	xid        map[int64]float64
	xidFired   map[int64]int64 // code -> Unix ns of its newest increase
	ecc        float64
	eccSeen    bool
	eccFiredAt int64
	// eccCorr: the last volatile corrected-ECC count (only its fall, a
	// reset, matters).
	eccCorr     float64
	eccCorrSeen bool
	// resetAt: the newest reset or driver reload seen (volatile ECC
	// counters fell, or the GPU came back from failed); failedAt: since
	// when hw.status says failed (0: not failed).
	resetAt, failedAt int64
	// Acknowledgments (Unix ns) per XID code and of the ECC errors.
	xidAck map[int64]int64
	eccAck int64
	fit    leakFit
	long   *longState // nil: long horizon off
	// tte is the latest time to exhaustion (s, -1: not growing) and slopeOK
	// whether fit.slope is worth reporting, for the derived metrics.
	tte     float64
	slopeOK bool
}

// throttleRun is one clock-event reason held from since to last (the
// newest scrape that reported it).
type throttleRun struct {
	reason      string
	since, last int64
}

// activeThrottle drops the runs the GPU's newest sample (at lastSeen) no
// longer reports and returns the rest.
func (g *gpuState) activeThrottle(lastSeen int64) []throttleRun {
	kept := g.throttle[:0]
	for _, r := range g.throttle {
		if r.last >= lastSeen {
			kept = append(kept, r)
		}
	}
	g.throttle = kept
	return kept
}

// leakFit caches the leak detector's last fit of a memory window: the fit is
// redone only when the window has a new bucket, not every evaluation.
type leakFit struct {
	fitT  int64 // newest sample time at the last fit
	slope float64
	f     finding
	ok    bool
}

type procState struct {
	mem    stats.Series
	memAcc accum
	fit    leakFit
	long   *longState // nil: long horizon off
}

// histogram indexes of engineState.hist.
const (
	histTTFT = iota
	histTPOT
	histITL
	histDuration
	histQueue
	numHists
)

var histMetric = [numHists]string{
	spec.GenAIServerTimeToFirstToken,
	spec.GenAIServerTimePerOutputToken,
	spec.EngineInterTokenLatency,
	spec.GenAIServerRequestDuration,
	spec.EngineRequestQueueDuration,
}

var histShort = [numHists]string{"time to first token", "time per output token", "inter-token latency", "request duration", "queue time"}

type engineState struct {
	kv, kvLong    stats.Series
	kvAcc         accum
	waiting       stats.Series
	waitAcc       accum
	running       accum
	preempt       stats.Series
	preemptAcc    accum
	queries, hits stats.Series
	qAcc, hAcc    accum
	outTokens     stats.Series
	tokAcc        accum
	hist          [numHists]*histState
	latBase       [numHists]stats.Baseline
	tputBase      stats.Baseline
	hitBase       stats.Baseline
	// lastLatency / lastCache: when the latency and cache detectors last
	// fired, for the joint trigger.
	lastLatency, lastCache int64
	// capacity: the newest KV-cache capacity figures llmnormalize computed
	// from the engine's cache configuration (kvCapacity).
	capacity kvCapacity
}

// kvCapacity holds the newest value of each KV-cache capacity figure (a
// zero time: the engine has not reported it). Figures are summed over the
// engine's ranks at one timestamp, like the utilization is maxed.
type kvCapacity struct {
	blockLimit, blockUsage, memLimit, memUsage, frag accum
	fragEstimated                                    bool
}

// histState keeps cumulative snapshots of one histogram (summed over its
// attribute sets) so the quantile over the last window comes from deltas.
type histState struct {
	bounds []float64
	cur    []uint64
	curT   int64
	snaps  []histSnap // ring
	head   int        // index of the newest
	n      int
	width  int64
}

type histSnap struct {
	t      int64
	counts []uint64
}

func newHistState(bounds []float64, window time.Duration) *histState {
	const slots = 12
	h := &histState{bounds: append([]float64(nil), bounds...), cur: make([]uint64, len(bounds)+1),
		snaps: make([]histSnap, slots), width: max(int64(window)/(slots-2), 1)}
	for i := range h.snaps {
		h.snaps[i].counts = make([]uint64, len(bounds)+1)
	}
	return h
}

func sameBounds(a []float64, b pcommon.Float64Slice) bool {
	if len(a) != b.Len() {
		return false
	}
	for i := range a {
		if a[i] != b.At(i) {
			return false
		}
	}
	return true
}

// add sums one point's bucket counts into the snapshot of its timestamp.
func (h *histState) add(t int64, counts pcommon.UInt64Slice) {
	if counts.Len() != len(h.cur) {
		return
	}
	if t != h.curT {
		if t < h.curT {
			return // out of order
		}
		h.curT = t
		clear(h.cur)
	}
	for i := range h.cur {
		h.cur[i] += counts.At(i)
	}
	// Commit: the newest snapshot is overwritten while in the same slot
	// period, otherwise a new one is pushed (evicting the oldest).
	if h.n > 0 && h.snaps[h.head].t/h.width == t/h.width {
		h.snaps[h.head].t = t
		copy(h.snaps[h.head].counts, h.cur)
		return
	}
	h.head = (h.head + 1) % len(h.snaps)
	if h.n < len(h.snaps) {
		h.n++
	}
	h.snaps[h.head].t = t
	copy(h.snaps[h.head].counts, h.cur)
}

// window returns newest − (newest snapshot at or before since) in delta, or
// false when the history does not reach back that far.
func (h *histState) window(since int64, delta []uint64) ([]uint64, bool) {
	if h.n < 2 {
		return delta, false
	}
	newest := &h.snaps[h.head]
	var base *histSnap
	for i := 1; i < h.n; i++ {
		s := &h.snaps[(h.head-i+len(h.snaps))%len(h.snaps)]
		if s.t <= since {
			base = s
			break
		}
	}
	if base == nil {
		return delta, false
	}
	delta = delta[:0]
	for i := range newest.counts {
		c, b := newest.counts[i], base.counts[i]
		if c < b { // reset: the newest counts are the delta
			delta = append(delta[:0], newest.counts...)
			return delta, true
		}
		delta = append(delta, c-b)
	}
	return delta, true
}

// ruleState is one series a rule watches.
type ruleState struct {
	rule      int // index in diagnoser.rules
	metric    string
	labels    string // the series' identifying attributes, for the subject text
	vals      stats.Series
	base      stats.Baseline
	last      float64
	lastT     int64
	condSince int64
	// hi and lo: the highest and lowest value since the last evaluation
	// (n points). A rule with no hold fires on the worst of them (one
	// 0.97 injection score between two evaluations is not missed); a rule
	// with a hold needs every one of them past its threshold.
	hi, lo float64
	n      int
}

// subjectLRU holds every subject, bounded by max, evicting the least recently
// seen.
type subjectLRU struct {
	max       int
	gpus      map[string]*subject
	procs     map[procKey]*subject
	engines   map[string]*subject
	rules     map[string]*subject
	count     int
	head      *subject // most recently seen
	tail      *subject // least recently seen
	evicted   int64    // since the last telemetry flush
	onEvicted func(s *subject)
	now       func() int64 // the connector's clock (Unix ns)
}

type procKey struct {
	hwID string
	pid  int64
}

func newSubjectLRU(limit int, now func() int64) *subjectLRU {
	return &subjectLRU{max: limit, now: now, gpus: map[string]*subject{}, procs: map[procKey]*subject{},
		engines: map[string]*subject{}, rules: map[string]*subject{}}
}

// touch marks s as seen at t and moves it to the front.
func (r *subjectLRU) touch(s *subject, t int64) {
	if t > s.lastSeen {
		s.lastSeen = t
	}
	if r.head == s {
		return
	}
	r.unlink(s)
	s.next = r.head
	if r.head != nil {
		r.head.prev = s
	}
	r.head = s
	if r.tail == nil {
		r.tail = s
	}
}

func (r *subjectLRU) unlink(s *subject) {
	if s.prev != nil {
		s.prev.next = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	}
	if r.head == s {
		r.head = s.next
	}
	if r.tail == s {
		r.tail = s.prev
	}
	s.prev, s.next = nil, nil
}

// added accounts for a new subject and evicts the least recently seen ones
// beyond the bound.
func (r *subjectLRU) added(s *subject, t int64) {
	if t <= 0 {
		// A metric without points named it: its age starts now, not at
		// the epoch (which would skip the cold-start warm-up).
		t = r.now()
	}
	s.firstSeen, s.lastSeen = t, t
	r.count++
	r.touch(s, t)
	for r.count > r.max && r.tail != nil && r.tail != s {
		r.remove(r.tail)
		r.evicted++
	}
}

func (r *subjectLRU) remove(s *subject) {
	r.unlink(s)
	switch s.kind {
	case kindGPU:
		delete(r.gpus, s.key)
	case kindProcess:
		delete(r.procs, procKey{s.hwID, s.pid})
	case kindEngine:
		delete(r.engines, s.key)
	case kindRule:
		delete(r.rules, s.key)
	}
	r.count--
	if r.onEvicted != nil {
		r.onEvicted(s)
	}
}

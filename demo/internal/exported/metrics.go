// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package exported

import (
	"math"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// How the values of one series that share a timestamp (one scrape) combine.
type aggKind int

const (
	aggLast aggKind = iota // one point per scrape: the newest line wins
	aggMax                 // several points (ranks, models): the worst one
	aggSum                 // several points: the total
)

func (k aggKind) combine(a, b float64) float64 {
	switch k {
	case aggMax:
		return math.Max(a, b)
	case aggSum:
		return a + b
	}
	return b
}

// pendingSet collects one Update's points per series and timestamp before
// they are appended in time order. Lines of different engines and GPUs
// interleave in the file, and the points of one scrape may be spread over
// several points (ranks, models) that must be combined first.
type pendingSet struct {
	series map[*Series]*pendingSeries
	tokens map[*Engine]map[int64]float64
	hists  map[*histState]map[int64]*histSnap
}

type pendingSeries struct {
	agg  aggKind
	vals map[int64]float64
}

func (p *pendingSet) put(s *Series, agg aggKind, ts int64, v float64) {
	if p.series == nil {
		p.series = map[*Series]*pendingSeries{}
	}
	ps := p.series[s]
	if ps == nil {
		ps = &pendingSeries{agg: agg, vals: map[int64]float64{}}
		p.series[s] = ps
	}
	if old, ok := ps.vals[ts]; ok {
		v = agg.combine(old, v)
	}
	ps.vals[ts] = v
}

func sortedKeys[V any](m map[int64]V) []int64 {
	ks := make([]int64, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// flush appends the pending points in time order and computes the derived
// series (token rate, p99).
func (r *Reader) flush() {
	for s, ps := range r.pend.series {
		for _, ts := range sortedKeys(ps.vals) {
			t := time.Unix(0, ts).UTC()
			v := ps.vals[ts]
			if last, ok := s.Last(); ok {
				if t.Equal(last.T) {
					// The rest of a scrape whose first part an earlier
					// Update already appended.
					(*s)[len(*s)-1].V = ps.agg.combine(last.V, v)
					continue
				}
				if t.Before(last.T) {
					// A late line for a time already charted: dropped, as
					// inserting would reorder what the caller may be drawing.
					continue
				}
			}
			s.add(Point{T: t, V: v})
		}
	}
	for e, vals := range r.pend.tokens {
		for _, ts := range sortedKeys(vals) {
			e.tokens.next(ts, vals[ts], &e.TokenRate)
		}
	}
	for h, snaps := range r.pend.hists {
		for _, ts := range sortedKeys(snaps) {
			h.next(ts, snaps[ts])
		}
	}
	r.pend = pendingSet{}
}

// counterState turns a cumulative counter into a rate.
type counterState struct {
	have bool
	ts   int64
	v    float64
}

func (c *counterState) next(ts int64, v float64, out *Series) {
	if c.have && ts <= c.ts {
		return
	}
	if c.have && v >= c.v {
		dt := float64(ts-c.ts) / 1e9
		out.add(Point{T: time.Unix(0, ts).UTC(), V: (v - c.v) / dt})
	}
	// v < c.v is a counter reset (restarted engine): no rate for this
	// interval, the new value is the next baseline.
	c.have, c.ts, c.v = true, ts, v
}

// histSnap is one scrape's cumulative histogram, summed over its points.
type histSnap struct {
	ts     int64
	bounds []float64
	counts []uint64
}

// histState keeps the recent cumulative snapshots of one histogram of one
// engine, enough to difference the newest against the one LatencyWindow ago.
type histState struct {
	out   *Series
	snaps []*histSnap
}

func (h *histState) next(ts int64, cur *histSnap) {
	if n := len(h.snaps); n > 0 && ts <= h.snaps[n-1].ts {
		return
	}
	cur.ts = ts
	// The base is the newest snapshot at least LatencyWindow old; until there
	// is one (the first seconds) the oldest, so the chart starts early.
	var base *histSnap
	cut := ts - int64(LatencyWindow)
	keepFrom := 0
	for i, s := range h.snaps {
		if s.ts <= cut {
			base = s
			keepFrom = i
		}
	}
	if base == nil && len(h.snaps) > 0 {
		base = h.snaps[0]
	}
	h.snaps = append(h.snaps[keepFrom:], cur)
	if base == nil || !slices.Equal(base.bounds, cur.bounds) {
		return
	}
	delta := make([]uint64, len(cur.counts))
	for i := range cur.counts {
		if cur.counts[i] < base.counts[i] {
			// Counter reset: what was before is gone; start the window over.
			h.snaps = []*histSnap{cur}
			return
		}
		delta[i] = cur.counts[i] - base.counts[i]
	}
	if q, ok := quantile(0.99, cur.bounds, delta); ok {
		h.out.add(Point{T: time.Unix(0, ts).UTC(), V: q})
	}
}

// quantile estimates the q-quantile of explicit-bucket counts by linear
// interpolation inside the bucket holding it (as Prometheus'
// histogram_quantile does). The first bucket starts at 0 (durations); a
// quantile in the +Inf bucket is reported as the highest finite bound.
// No observations: ok is false.
func quantile(q float64, bounds []float64, counts []uint64) (float64, bool) {
	var total uint64
	for _, c := range counts {
		total += c
	}
	if total == 0 || len(counts) == 0 {
		return 0, false
	}
	rank := q * float64(total)
	var cum float64
	for i, c := range counts {
		next := cum + float64(c)
		if next >= rank && c > 0 {
			if i >= len(bounds) {
				if len(bounds) == 0 {
					return 0, false
				}
				return bounds[len(bounds)-1], true
			}
			lo := 0.0
			if i > 0 {
				lo = bounds[i-1]
			}
			hi := bounds[i]
			return lo + (hi-lo)*(rank-cum)/float64(c), true
		}
		cum = next
	}
	return bounds[len(bounds)-1], true
}

// lookup reads an attribute from the point, falling back to the resource:
// receivers differ in where they put hw.id or llm.engine.target.
func lookup(res, attrs pcommon.Map, key string) (pcommon.Value, bool) {
	if v, ok := attrs.Get(key); ok {
		return v, true
	}
	return res.Get(key)
}

func lookupStr(res, attrs pcommon.Map, key string) string {
	if v, ok := lookup(res, attrs, key); ok {
		return v.AsString()
	}
	return ""
}

func asInt(v pcommon.Value) (int64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int(), true
	case pcommon.ValueTypeDouble:
		return int64(v.Double()), true
	case pcommon.ValueTypeStr:
		n, err := strconv.ParseInt(v.Str(), 10, 64)
		return n, err == nil
	}
	return 0, false
}

func numberValue(dp pmetric.NumberDataPoint) float64 {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(dp.IntValue())
	}
	return dp.DoubleValue()
}

// numberPoints returns the points of a gauge or sum, and whether a sum is
// cumulative (gauges count as cumulative: they are absolute values).
func numberPoints(m pmetric.Metric) (pmetric.NumberDataPointSlice, bool, bool) {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints(), true, true
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints(), m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityDelta, true
	}
	return pmetric.NumberDataPointSlice{}, false, false
}

func (r *Reader) gpu(id string) *GPU {
	g := r.data.GPUs[id]
	if g == nil {
		g = &GPU{ID: id, Processes: map[int64]*Process{}}
		r.data.GPUs[id] = g
	}
	return g
}

// engineKey names an engine: its scrape target, or for engines that push
// OTLP (no target) its service instance or engine name.
func engineKey(res pcommon.Map) string {
	for _, k := range []string{spec.AttrEngineTarget, "service.instance.id", spec.AttrEngineName} {
		if v, ok := res.Get(k); ok && v.AsString() != "" {
			return v.AsString()
		}
	}
	return ""
}

func (r *Reader) engine(res, attrs pcommon.Map) *Engine {
	key := lookupStr(res, attrs, spec.AttrEngineTarget)
	if key == "" {
		key = engineKey(res)
	}
	if key == "" {
		return nil
	}
	e := r.data.Engines[key]
	if e == nil {
		e = &Engine{Target: key}
		e.latency.out = &e.P99
		e.ttft.out = &e.TTFTP99
		r.data.Engines[key] = e
	}
	if e.Name == "" {
		e.Name = lookupStr(res, attrs, spec.AttrEngineName)
	}
	if e.Model == "" {
		e.Model = lookupStr(res, attrs, spec.AttrGenAIRequestModel)
	}
	return e
}

type throttleScrape struct {
	ts      int64
	reasons []string
}

func (r *Reader) ingestMetrics(md pmetric.Metrics) {
	// Throttle reasons of this request per GPU: only the newest timestamp
	// counts, and it replaces the GPU's reasons only if newer.
	throttles := map[*GPU]*throttleScrape{}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		res := rm.Resource().Attributes()
		sms := rm.ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				switch m.Name() {
				case spec.GenAIServerRequestDuration, spec.GenAIServerTimeToFirstToken:
					r.ingestHistogram(res, m)
					continue
				}
				dps, cumulative, ok := numberPoints(m)
				if !ok || !cumulative {
					// Delta sums are not what the demo's receivers emit;
					// mixing them in would need their start times.
					continue
				}
				for p := 0; p < dps.Len(); p++ {
					dp := dps.At(p)
					r.ingestNumber(res, m.Name(), dp, throttles)
				}
			}
		}
	}
	for g, th := range throttles {
		t := time.Unix(0, th.ts).UTC()
		if t.Before(g.ThrottleSeen) {
			continue
		}
		slices.Sort(th.reasons)
		g.Throttle = slices.Compact(th.reasons)
		g.ThrottleSeen = t
	}
}

func (r *Reader) ingestNumber(res pcommon.Map, name string, dp pmetric.NumberDataPoint, throttles map[*GPU]*throttleScrape) {
	attrs := dp.Attributes()
	ts := int64(dp.Timestamp())
	if ts == 0 {
		return
	}
	v := numberValue(dp)
	switch name {
	case spec.HwGpuMemoryUsage, spec.HwGpuMemoryLimit, spec.HwGpuMemoryGrowthRate, spec.HwGpuUtilization,
		spec.HwGpuThrottle, spec.ProcessGpuMemoryUsage:
		id := lookupStr(res, attrs, spec.AttrHwID)
		if id == "" {
			return
		}
		g := r.gpu(id)
		if g.Name == "" {
			g.Name = lookupStr(res, attrs, spec.AttrHwModel)
			if g.Name == "" {
				g.Name = lookupStr(res, attrs, spec.AttrHwName) // older agents
			}
		}
		r.data.observe(time.Unix(0, ts))
		switch name {
		case spec.HwGpuMemoryUsage:
			r.pend.put(&g.Memory, aggLast, ts, v)
		case spec.HwGpuMemoryLimit:
			r.pend.put(&g.Limit, aggLast, ts, v)
		case spec.HwGpuMemoryGrowthRate:
			r.pend.put(&g.GrowthRate, aggLast, ts, v)
		case spec.HwGpuUtilization:
			if task := lookupStr(res, attrs, spec.AttrHwGpuTask); task == "" || task == "general" {
				r.pend.put(&g.Utilization, aggMax, ts, v)
			}
		case spec.HwGpuThrottle:
			th := throttles[g]
			if th == nil || ts > th.ts {
				th = &throttleScrape{ts: ts}
				throttles[g] = th
			} else if ts < th.ts {
				return
			}
			if reason := lookupStr(res, attrs, spec.AttrHwGpuThrottleKind); reason != "" && v != 0 {
				th.reasons = append(th.reasons, reason)
			}
		case spec.ProcessGpuMemoryUsage:
			pv, ok := lookup(res, attrs, spec.AttrProcessPid)
			if !ok {
				return
			}
			pid, ok := asInt(pv)
			if !ok {
				return
			}
			proc := g.Processes[pid]
			if proc == nil {
				proc = &Process{PID: pid}
				g.Processes[pid] = proc
			}
			if n := lookupStr(res, attrs, spec.AttrProcessExecutableName); n != "" {
				proc.Name = n
			}
			r.pend.put(&proc.Memory, aggLast, ts, v)
		}
	case spec.EngineKvCacheUtilization, spec.EngineRequestsWaiting, spec.EngineTokens:
		e := r.engine(res, attrs)
		if e == nil {
			return
		}
		r.data.observe(time.Unix(0, ts))
		switch name {
		case spec.EngineKvCacheUtilization:
			r.pend.put(&e.KV, aggMax, ts, v)
		case spec.EngineRequestsWaiting:
			r.pend.put(&e.Waiting, aggSum, ts, v)
		case spec.EngineTokens:
			if lookupStr(res, attrs, spec.AttrGenAITokenType) != "output" {
				return
			}
			if r.pend.tokens == nil {
				r.pend.tokens = map[*Engine]map[int64]float64{}
			}
			if r.pend.tokens[e] == nil {
				r.pend.tokens[e] = map[int64]float64{}
			}
			r.pend.tokens[e][ts] += v
		}
	}
}

func (r *Reader) ingestHistogram(res pcommon.Map, m pmetric.Metric) {
	if m.Type() != pmetric.MetricTypeHistogram || m.Histogram().AggregationTemporality() == pmetric.AggregationTemporalityDelta {
		return
	}
	dps := m.Histogram().DataPoints()
	for p := 0; p < dps.Len(); p++ {
		dp := dps.At(p)
		ts := int64(dp.Timestamp())
		if ts == 0 || dp.BucketCounts().Len() == 0 || dp.BucketCounts().Len() != dp.ExplicitBounds().Len()+1 {
			continue
		}
		e := r.engine(res, dp.Attributes())
		if e == nil {
			continue
		}
		r.data.observe(time.Unix(0, ts))
		h := &e.latency
		if m.Name() == spec.GenAIServerTimeToFirstToken {
			h = &e.ttft
		}
		if r.pend.hists == nil {
			r.pend.hists = map[*histState]map[int64]*histSnap{}
		}
		byTS := r.pend.hists[h]
		if byTS == nil {
			byTS = map[int64]*histSnap{}
			r.pend.hists[h] = byTS
		}
		s := byTS[ts]
		if s == nil {
			byTS[ts] = &histSnap{bounds: dp.ExplicitBounds().AsRaw(), counts: dp.BucketCounts().AsRaw()}
			continue
		}
		// Points of one scrape (ranks, finish reasons, models) add up; a
		// point with other bounds cannot be added bucket by bucket and is
		// left out.
		if !slices.Equal(s.bounds, dp.ExplicitBounds().AsRaw()) {
			continue
		}
		for i := 0; i < dp.BucketCounts().Len(); i++ {
			s.counts[i] += dp.BucketCounts().At(i)
		}
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo

import (
	"math"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// resetEpsilon is subtracted from a point's timestamp to make the start time
// of a series that was just seen to reset: the reset happened at some time
// since the previous scrape, and the start must be before the point.
const resetEpsilon = int64(1e6) // 1ms

func hashString(s string) uint64 { return xxhash.Sum64String(s) }

// resolveCreatedFamilies handles the text-format convention of
// prometheus_client (Python): the creation times of counter X_total and of
// histogram or summary X are exposed as their own gauge family X_created.
// Such a family, when its base family exists in the same scrape (before or
// after it), is consumed: its values become the start times of the base
// series with the same labels, and it is not emitted.
func (c *Converter) resolveCreatedFamilies() {
	const suffix = "_created"
	for fi := range c.fams {
		f := &c.fams[fi]
		if (f.typ != typeGauge && f.typ != typeUntyped) || !strings.HasSuffix(f.name, suffix) {
			continue
		}
		base := f.name[:len(f.name)-len(suffix)]
		bi := int32(-1)
		c.tmp = append(append(c.tmp[:0], base...), "_total"...)
		if i, ok := c.famByName[string(c.tmp)]; ok && c.fams[i].typ == typeCounter {
			bi = i
		} else if i, ok := c.famByName[base]; ok {
			switch c.fams[i].typ {
			case typeCounter, typeHistogram, typeSummary:
				bi = i
			}
		}
		if bi < 0 {
			continue
		}
		f.consumed = true
		bh := c.fams[bi].nameHash
		for si := f.head; si >= 0; si = c.series[si].next {
			s := &c.series[si]
			if s.invalid || !s.hasVal {
				continue
			}
			if ti, ok := c.seriesIdx.get(mix(bh, s.lh)); ok {
				if t := &c.series[ti]; t.fam == bi && !t.hasCreated {
					t.created, t.hasCreated = s.val, true
				}
			}
		}
	}
}

// build appends the metrics of the parsed scrape to dst and updates the
// cross-scrape state. It cannot fail.
func (c *Converter) build(dst pmetric.MetricSlice) {
	c.stateEvicted = false
	for fi := range c.fams {
		f := &c.fams[fi]
		if f.consumed || f.head < 0 {
			continue
		}
		switch f.typ {
		case typeCounter:
			c.buildCounter(dst, f)
		case typeHistogram:
			c.buildHistogram(dst, f)
		case typeSummary:
			c.buildSummary(dst, f)
		case typeGaugeHistogram:
			c.buildGaugeHistogram(dst, f)
		default: // gauge, untyped/unknown, info, stateset
			c.buildGauge(dst, f, f.emitName, false)
		}
	}
}

func (c *Converter) newMetric(dst pmetric.MetricSlice, f *family, name string) pmetric.Metric {
	m := dst.AppendEmpty()
	m.SetName(name)
	m.SetDescription(f.help)
	if c.om && f.hasUnit {
		m.SetUnit(f.unit)
	}
	c.st.Families++
	return m
}

func (c *Converter) pointTS(s *series) int64 {
	if s.hasTS {
		return s.ts
	}
	return max(c.nowNS, 0)
}

// stateHash identifies a family in the cross-scrape state by its emitted
// name and type, so that the same engine scraped in either format keeps its
// series.
func stateHash(name string, t famType) uint64 {
	return mix(hashString(name), uint64(t))
}

func (c *Converter) buildGauge(dst pmetric.MetricSlice, f *family, name string, gcount bool) {
	var dps pmetric.NumberDataPointSlice
	made := false
	for si := f.head; si >= 0; si = c.series[si].next {
		s := &c.series[si]
		v, ok := s.val, s.hasVal
		if gcount {
			v, ok = c.gaugeHistogramCount(f, s)
		}
		if s.invalid || !ok {
			continue
		}
		if !made {
			dps = c.newMetric(dst, f, name).SetEmptyGauge().DataPoints()
			dps.EnsureCapacity(int(f.nSeries))
			made = true
		}
		dp := dps.AppendEmpty()
		dp.SetTimestamp(pcommon.Timestamp(c.pointTS(s)))
		dp.SetDoubleValue(v)
		c.putAttrs(dp.Attributes(), s)
		c.st.Series++
	}
}

func (c *Converter) buildCounter(dst pmetric.MetricSlice, f *family) {
	var dps pmetric.NumberDataPointSlice
	made := false
	var sh uint64
	for si := f.head; si >= 0; si = c.series[si].next {
		s := &c.series[si]
		if s.invalid || !s.hasVal {
			continue
		}
		if !made {
			sum := c.newMetric(dst, f, f.emitName).SetEmptySum()
			sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			sum.SetIsMonotonic(true)
			dps = sum.DataPoints()
			dps.EnsureCapacity(int(f.nSeries))
			sh = stateHash(f.emitName, f.typ)
			made = true
		}
		dp := dps.AppendEmpty()
		ts := c.pointTS(s)
		known := !math.IsNaN(s.val)
		dp.SetStartTimestamp(pcommon.Timestamp(c.startTime(mix(sh, s.lh), s, ts, s.val, known)))
		dp.SetTimestamp(pcommon.Timestamp(ts))
		if known {
			dp.SetDoubleValue(s.val)
		} else {
			dp.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
		}
		c.putAttrs(dp.Attributes(), s)
		c.putExemplars(dp.Exemplars(), s, ts)
		c.st.Series++
	}
}

func (c *Converter) buildHistogram(dst pmetric.MetricSlice, f *family) {
	var dps pmetric.HistogramDataPointSlice
	made := false
	var sh uint64
	for si := f.head; si >= 0; si = c.series[si].next {
		s := &c.series[si]
		if s.invalid {
			continue
		}
		bs := c.gatherSubs(s, "le")
		if len(bs) == 0 && !s.hasCount && !s.hasSum {
			continue // only a _created sample
		}
		if len(bs) == 0 || !math.IsInf(bs[len(bs)-1].bound, 1) {
			c.invalidSeries(int(s.line), "histogram without +Inf bucket", f.name, s)
			continue
		}
		noValue := false
		for k := range bs {
			if math.IsNaN(bs[k].v) {
				noValue = true
				break
			}
		}
		if !noValue && !c.checkBuckets(bs, f, s) {
			continue
		}
		count := bs[len(bs)-1].v
		if s.hasCount && s.count != count && !(math.IsNaN(s.count) && noValue) {
			if c.wantProblem() {
				c.problem(int(s.line), "histogram %s: _count %v differs from the +Inf bucket %v, using the bucket", c.seriesDesc(f.name, s), s.count, count)
			}
		}
		if !made {
			h := c.newMetric(dst, f, f.name).SetEmptyHistogram()
			h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			dps = h.DataPoints()
			dps.EnsureCapacity(int(f.nSeries))
			sh = stateHash(f.name, f.typ)
			made = true
		}
		dp := dps.AppendEmpty()
		ts := c.pointTS(s)
		dp.SetStartTimestamp(pcommon.Timestamp(c.startTime(mix(sh, s.lh), s, ts, count, !noValue)))
		dp.SetTimestamp(pcommon.Timestamp(ts))
		if noValue {
			dp.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
		} else {
			c.bounds, c.counts = c.bounds[:0], c.counts[:0]
			var prev uint64
			for k := range bs {
				cum := toCount(bs[k].v)
				if k < len(bs)-1 {
					c.bounds = append(c.bounds, bs[k].bound)
				}
				c.counts = append(c.counts, cum-prev)
				prev = cum
			}
			dp.ExplicitBounds().FromRaw(c.bounds)
			dp.BucketCounts().FromRaw(c.counts)
			dp.SetCount(prev)
			if s.hasSum {
				dp.SetSum(s.sum)
			}
			c.putExemplars(dp.Exemplars(), s, ts)
		}
		c.putAttrs(dp.Attributes(), s)
		c.st.Series++
	}
}

// checkBuckets verifies that cumulative bucket counts are non-negative and
// never decrease.
func (c *Converter) checkBuckets(bs []subPoint, f *family, s *series) bool {
	for k := range bs {
		if bs[k].v < 0 {
			c.invalidSeries(int(bs[k].line), "histogram with a negative bucket count", f.name, s)
			return false
		}
		if k > 0 && bs[k].v < bs[k-1].v {
			c.invalidSeries(int(bs[k].line), "histogram buckets decrease", f.name, s)
			return false
		}
	}
	return true
}

func (c *Converter) buildSummary(dst pmetric.MetricSlice, f *family) {
	var dps pmetric.SummaryDataPointSlice
	made := false
	var sh uint64
	for si := f.head; si >= 0; si = c.series[si].next {
		s := &c.series[si]
		if s.invalid {
			continue
		}
		qs := c.gatherSubs(s, "quantile")
		if len(qs) == 0 && !s.hasCount && !s.hasSum {
			continue // only a _created sample
		}
		noValue := s.hasCount && math.IsNaN(s.count)
		if s.hasCount && s.count < 0 {
			c.invalidSeries(int(s.line), "summary with a negative count", f.name, s)
			continue
		}
		if !made {
			dps = c.newMetric(dst, f, f.name).SetEmptySummary().DataPoints()
			dps.EnsureCapacity(int(f.nSeries))
			sh = stateHash(f.name, f.typ)
			made = true
		}
		dp := dps.AppendEmpty()
		ts := c.pointTS(s)
		dp.SetStartTimestamp(pcommon.Timestamp(c.startTime(mix(sh, s.lh), s, ts, s.count, s.hasCount && !noValue)))
		dp.SetTimestamp(pcommon.Timestamp(ts))
		if noValue {
			dp.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
		} else {
			if s.hasCount {
				dp.SetCount(toCount(s.count))
			}
			if s.hasSum {
				dp.SetSum(s.sum)
			}
			if len(qs) > 0 {
				qv := dp.QuantileValues()
				qv.EnsureCapacity(len(qs))
				for k := range qs {
					q := qv.AppendEmpty()
					q.SetQuantile(qs[k].bound)
					q.SetValue(qs[k].v)
				}
			}
		}
		c.putAttrs(dp.Attributes(), s)
		c.st.Series++
	}
}

// buildGaugeHistogram emits an OpenMetrics gauge histogram as a Gauge named
// <family>_gcount holding the current count (_gcount, or the +Inf bucket when
// _gcount is absent). Its buckets and _gsum are not converted: pdata has no
// non-cumulative histogram that is not a delta.
func (c *Converter) buildGaugeHistogram(dst pmetric.MetricSlice, f *family) {
	c.tmp = append(append(c.tmp[:0], f.name...), "_gcount"...)
	c.buildGauge(dst, f, c.strs.bytes(c.tmp), true)
}

func (c *Converter) gaugeHistogramCount(f *family, s *series) (float64, bool) {
	if s.invalid {
		return 0, false
	}
	bs := c.gatherSubs(s, "le")
	if s.hasCount {
		return s.count, true
	}
	if n := len(bs); n > 0 && math.IsInf(bs[n-1].bound, 1) {
		return bs[n-1].v, true
	}
	if len(bs) > 0 || s.hasSum {
		c.invalidSeries(int(s.line), "gauge histogram without _gcount or +Inf bucket", f.name, s)
	}
	return 0, false
}

// gatherSubs collects the buckets or quantiles of a series sorted by bound,
// dropping (and counting) repeated bounds: the first in the body wins.
func (c *Converter) gatherSubs(s *series, label string) []subPoint {
	ss := c.sorted[:0]
	for k := s.subHead; k >= 0; k = c.subs[k].next {
		ss = append(ss, c.subs[k])
	}
	c.sorted = ss
	if !slices.IsSortedFunc(ss, cmpBound) {
		slices.SortStableFunc(ss, cmpBound)
	}
	w := 0
	for i := range ss {
		if w > 0 && ss[i].bound == ss[w-1].bound {
			c.st.DuplicateSeries++
			if c.wantProblem() {
				c.problem(int(ss[i].line), "duplicate sample %s{%s=%v} (first wins)", c.seriesDesc(c.fams[s.fam].name, s), label, ss[i].bound)
			}
			continue
		}
		ss[w] = ss[i]
		w++
	}
	return ss[:w]
}

func cmpBound(a, b subPoint) int {
	switch {
	case a.bound < b.bound:
		return -1
	case a.bound > b.bound:
		return 1
	}
	return 0
}

// toCount converts a (non-negative) float count into an integer one.
func toCount(v float64) uint64 {
	switch {
	case !(v > 0):
		return 0
	case v >= math.MaxUint64:
		return math.MaxUint64
	}
	return uint64(math.Round(v))
}

// startTime returns the start time of a cumulative point and updates the
// series state. The start is, in order of preference: the _created time
// (when not after the point), the time of the last detected reset (the point
// minus resetEpsilon), the time the series was first seen by this Converter.
// known is false when v is not a usable value (NaN): the state then keeps its
// last value.
func (c *Converter) startTime(key uint64, s *series, ts int64, v float64, known bool) int64 {
	created, hasCreated := int64(0), false
	if s.hasCreated {
		if ns, ok := secondsToNanos(s.created); ok && ns <= ts {
			created, hasCreated = ns, true
		}
	}
	stale := uint32(c.opts.StaleAfter)
	e, ok := c.state[key]
	if ok && c.gen-e.seen > stale {
		ok = false // forgotten, not swept yet
	}
	if !ok {
		if len(c.state) >= c.opts.MaxSeries && !c.stateEvicted {
			c.stateEvicted = true
			c.evictStale(stale + 1)
		}
		if _, present := c.state[key]; !present && len(c.state) >= c.opts.MaxSeries {
			c.st.UntrackedSeries++
			if hasCreated {
				return created
			}
			return ts
		}
		e = seriesState{start: ts}
		if known {
			e.last, e.hasLast = v, true
		}
	} else if known {
		if e.hasLast && v < e.last {
			e.start = max(ts-resetEpsilon, 0)
			c.st.Resets++
		}
		e.last, e.hasLast = v, true
	}
	if hasCreated {
		e.start = created
	}
	if e.seen != c.gen {
		c.stateTouched++
	}
	e.seen = c.gen
	c.state[key] = e
	return min(e.start, ts)
}

// evictStale forgets series not seen in the last `after` scrapes.
func (c *Converter) evictStale(after uint32) {
	for k, e := range c.state {
		if c.gen-e.seen >= after {
			delete(c.state, k)
		}
	}
}

// sweepState runs after each successful scrape and forgets the series not
// seen for StaleAfter scrapes (see worthSweeping for when it bothers); the
// lazy check in startTime makes the StaleAfter semantics exact either way.
// After a spike the map is rebuilt to release memory.
func (c *Converter) sweepState() {
	n := len(c.state)
	if n > c.statePeak {
		c.statePeak = n
	}
	if !worthSweeping(n, n-c.stateTouched, c.gen, uint32(c.opts.StaleAfter)) {
		return
	}
	c.evictStale(uint32(c.opts.StaleAfter))
	if c.statePeak > 4096 && len(c.state)*4 < c.statePeak {
		m := make(map[uint64]seriesState, len(c.state))
		for k, e := range c.state {
			m[k] = e
		}
		c.state, c.statePeak = m, len(m)
	}
}

func (c *Converter) putAttrs(m pcommon.Map, s *series) {
	ls := c.labels[s.lo:s.hi]
	if len(ls) == 0 {
		return
	}
	m.EnsureCapacity(len(ls))
	for _, p := range ls {
		m.PutStr(p.name, p.value)
	}
}

// putExemplars converts the exemplars of a series. trace_id and span_id
// labels holding hex ids of the right length become the exemplar's trace and
// span ids; every other label is a filtered attribute. An exemplar without a
// timestamp gets the point's.
func (c *Converter) putExemplars(es pmetric.ExemplarSlice, s *series, ts int64) {
	for ei := s.exHead; ei >= 0; ei = c.exs[ei].next {
		e := &c.exs[ei]
		x := es.AppendEmpty()
		x.SetDoubleValue(e.v)
		if e.hasTS && e.ts >= 0 {
			x.SetTimestamp(pcommon.Timestamp(e.ts))
		} else {
			x.SetTimestamp(pcommon.Timestamp(ts))
		}
		for _, p := range c.exLabels[e.lo:e.hi] {
			switch p.name {
			case "trace_id":
				var id pcommon.TraceID
				if decodeHex(id[:], p.value) {
					x.SetTraceID(id)
					continue
				}
			case "span_id":
				var id pcommon.SpanID
				if decodeHex(id[:], p.value) {
					x.SetSpanID(id)
					continue
				}
			}
			x.FilteredAttributes().PutStr(p.name, p.value)
		}
	}
}

func decodeHex(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := range dst {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func unhex(ch byte) (byte, bool) {
	switch {
	case ch >= '0' && ch <= '9':
		return ch - '0', true
	case ch >= 'a' && ch <= 'f':
		return ch - 'a' + 10, true
	case ch >= 'A' && ch <= 'F':
		return ch - 'A' + 10, true
	}
	return 0, false
}

func (c *Converter) wantProblem() bool { return len(c.st.Problems) < maxProblems }

// invalidSeries counts a series skipped at build time.
func (c *Converter) invalidSeries(line int, what, name string, s *series) {
	c.st.InvalidSeries++
	if c.wantProblem() {
		c.problem(line, "%s: %s", what, c.seriesDesc(name, s))
	}
}

// seriesDesc renders name{labels} for problem messages.
func (c *Converter) seriesDesc(name string, s *series) string {
	var b strings.Builder
	b.WriteString(name)
	ls := c.labels[s.lo:s.hi]
	if len(ls) > 0 {
		b.WriteByte('{')
		for i, p := range ls {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(p.name)
			b.WriteString(`="`)
			b.WriteString(p.value)
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	return b.String()
}

// worthSweeping decides whether to walk a map of n entries, untouched of
// which were not used by the current scrape: always for small maps, and for
// large ones only when many entries went unused or once every `every`
// scrapes, so that a few vanished series do not cost a full walk per scrape.
func worthSweeping(n, untouched int, gen, every uint32) bool {
	switch {
	case untouched <= 0:
		return false
	case n <= 4096 || untouched >= 1024:
		return true
	}
	return gen%every == 0
}

// secondsToNanos converts a _created value (Unix seconds, float) into
// nanoseconds; the integer and fractional parts are converted separately to
// keep sub-microsecond digits that a plain v*1e9 would round away.
func secondsToNanos(v float64) (int64, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v >= math.MaxInt64/1000000000 {
		return 0, false
	}
	s := math.Floor(v)
	return int64(s)*1000000000 + int64(math.Round((v-s)*1e9)), true
}

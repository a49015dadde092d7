// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector/internal/stats"
	"github.com/llmops-otel/otelcol-llmops/internal/pdatautil"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// newWindow makes a series covering window with at most ~60 buckets, none
// finer than the evaluation interval (finer would only cost memory).
func newWindow(window, eval time.Duration) stats.Series {
	width := max(eval, window/60)
	return stats.NewSeries(int(window/width)+3, width)
}

func newBaseline(period time.Duration) stats.Baseline {
	const n = 60
	return stats.NewBaseline(n, max(period/n, time.Millisecond))
}

// throttleMatters are the hw.gpu.throttle.reason values that slow a busy GPU
// down (idle, application clocks and sync boost are not problems).
func throttleMatters(reason string) bool {
	switch reason {
	case "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_slowdown", "hw_power_brake_slowdown", "sw_power_cap":
		return true
	}
	return false
}

// ingestMetrics feeds every point the detectors use into the subjects'
// windows. The caller holds d.mu.
func (d *diagnoser) ingestMetrics(md pmetric.Metrics) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		res := rm.Resource().Attributes()
		var eng *subject // resolved lazily: only engine metrics need it
		sms := rm.ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				name := m.Name()
				switch name {
				case spec.HwGpuMemoryUsage:
					d.eachNumber(m, func(t int64, v float64, a pcommon.Map) {
						if g := d.gpu(res, a, t); g != nil {
							total := g.gpu.memAcc.add(t, v)
							g.gpu.mem.Add(t, total)
							g.gpu.long.add(t, total)
						}
					})
				case spec.HwGpuMemoryLimit:
					d.eachNumber(m, func(t int64, v float64, a pcommon.Map) {
						if g := d.gpu(res, a, t); g != nil {
							g.gpu.limit = v
						}
					})
				case spec.HwGpuUtilization:
					d.eachNumber(m, func(t int64, v float64, a pcommon.Map) {
						if task, ok := a.Get(spec.AttrHwGpuTask); ok && task.Str() != "general" {
							return
						}
						if g := d.gpu(res, a, t); g != nil {
							g.gpu.util.Add(t, v)
						}
					})
				case spec.HwGpuThrottle:
					d.eachNumber(m, func(t int64, v float64, a pcommon.Map) {
						g := d.gpu(res, a, t)
						if g == nil || v <= 0 {
							return
						}
						r, _ := a.Get(spec.AttrHwGpuThrottleKind)
						if !throttleMatters(r.Str()) {
							return
						}
						if t < g.gpu.throttleT {
							return
						}
						if t > g.gpu.throttleT {
							// A new scrape: a reason the previous one did
							// not report has broken its run.
							prev := g.gpu.throttleT
							g.gpu.throttle = slices.DeleteFunc(g.gpu.throttle, func(run throttleRun) bool { return run.last < prev })
							g.gpu.throttleT = t
						}
						for i := range g.gpu.throttle {
							if g.gpu.throttle[i].reason == r.Str() {
								g.gpu.throttle[i].last = t
								return
							}
						}
						g.gpu.throttle = append(g.gpu.throttle, throttleRun{reason: r.Str(), since: t, last: t})
					})
				case spec.HwErrors:
					d.eachNumber(m, func(t int64, v float64, a pcommon.Map) {
						g := d.gpu(res, a, t)
						if g == nil {
							return
						}
						et, _ := a.Get(spec.AttrErrorType)
						switch et.Str() {
						case "xid":
							code := int64(-1)
							if c, ok := a.Get(spec.AttrHwGpuXid); ok {
								code = intValue(c)
							}
							if g.gpu.xid == nil {
								g.gpu.xid, g.gpu.xidFired = map[int64]float64{}, map[int64]int64{}
							}
							// XIDs are counted from the receiver's start: a
							// first point above zero is an event seen now.
							if last, seen := g.gpu.xid[code]; v > last || (!seen && v > 0) {
								g.gpu.xidFired[code] = t
							}
							g.gpu.xid[code] = v
						case "uncorrected":
							// NVML's volatile ECC totals survive a collector
							// restart: only an increase is news. They fall
							// only when the GPU is reset or its driver
							// reloaded, which handles the errors.
							if g.gpu.eccSeen && v > g.gpu.ecc {
								g.gpu.eccFiredAt = t
							}
							if g.gpu.eccSeen && v < g.gpu.ecc {
								g.gpu.resetAt = t
							}
							g.gpu.ecc, g.gpu.eccSeen = v, true
						case "corrected":
							if g.gpu.eccCorrSeen && v < g.gpu.eccCorr {
								g.gpu.resetAt = t
							}
							g.gpu.eccCorr, g.gpu.eccCorrSeen = v, true
						}
					})
				case spec.HwStatus:
					// A GPU that failed (fell off the bus, lost) and
					// answers again was reset.
					d.eachNumber(m, func(t int64, v float64, a pcommon.Map) {
						st, _ := a.Get(spec.AttrHwState)
						if v <= 0 || (st.Str() != "failed" && st.Str() != "ok") {
							return
						}
						g := d.gpu(res, a, t)
						if g == nil {
							return
						}
						switch {
						case st.Str() == "failed" && g.gpu.failedAt == 0:
							g.gpu.failedAt = t
						case st.Str() == "ok" && g.gpu.failedAt != 0 && t > g.gpu.failedAt:
							g.gpu.resetAt, g.gpu.failedAt = t, 0
						}
					})
				case spec.ProcessGpuMemoryUsage:
					d.eachNumber(m, func(t int64, v float64, a pcommon.Map) {
						if p := d.process(res, a, t); p != nil {
							total := p.proc.memAcc.add(t, v)
							p.proc.mem.Add(t, total)
							p.proc.long.add(t, total)
						}
					})
				case spec.EngineKvCacheUtilization, spec.EngineRequestsWaiting, spec.EngineRequestsRunning,
					spec.EnginePreemptions, spec.EnginePrefixCacheQueries, spec.EnginePrefixCacheHits, spec.EngineTokens,
					spec.EngineKvCacheBlockLimit, spec.EngineKvCacheBlockUsage, spec.EngineKvCacheMemoryLimit,
					spec.EngineKvCacheMemoryUsage, spec.EngineKvCacheFragmentation:
					if eng == nil {
						if eng = d.engineSubject(res, m); eng == nil {
							continue
						}
					}
					d.ingestEngineNumber(eng, name, m)
				case histMetric[histTTFT], histMetric[histTPOT], histMetric[histITL], histMetric[histDuration], histMetric[histQueue]:
					if m.Type() != pmetric.MetricTypeHistogram {
						continue
					}
					if eng == nil {
						if eng = d.engineSubject(res, m); eng == nil {
							continue
						}
					}
					d.ingestHistogram(eng, name, m.Histogram())
				case spec.ProfileMemoryOutstanding:
					d.drill.ingestOutstanding(res, m)
				default:
					if len(d.rulesByMetric) > 0 {
						if idx, ok := d.rulesByMetric[name]; ok {
							d.ingestRule(idx, res, m)
						}
					}
				}
			}
		}
	}
}

// eachNumber calls fn for every number point of a gauge or sum.
func (d *diagnoser) eachNumber(m pmetric.Metric, fn func(t int64, v float64, a pcommon.Map)) {
	dps, ok := pdatautil.NumberPoints(m)
	if !ok {
		return
	}
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		var v float64
		switch dp.ValueType() {
		case pmetric.NumberDataPointValueTypeInt:
			v = float64(dp.IntValue())
		case pmetric.NumberDataPointValueTypeDouble:
			v = dp.DoubleValue()
		default:
			continue
		}
		if v != v { // NaN: a missing sample, not a value
			continue
		}
		fn(int64(dp.Timestamp()), v, dp.Attributes())
	}
}

// lookup finds an attribute on the point first, then on its resource.
func lookup(res, a pcommon.Map, key string) (pcommon.Value, bool) {
	if v, ok := a.Get(key); ok {
		return v, true
	}
	return res.Get(key)
}

// emptyMap stands for "no point attributes" in lookups; never written.
var emptyMap = pcommon.NewMap()

func intValue(v pcommon.Value) int64 {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int()
	case pcommon.ValueTypeDouble:
		return int64(v.Double())
	case pcommon.ValueTypeStr:
		n, err := strconv.ParseInt(v.Str(), 10, 64)
		if err == nil {
			return n
		}
	}
	return -1
}

func strValue(res, a pcommon.Map, key string) string {
	if v, ok := lookup(res, a, key); ok {
		return v.AsString()
	}
	return ""
}

// gpu returns (creating it on first sight) the GPU subject of a point.
func (d *diagnoser) gpu(res, a pcommon.Map, t int64) *subject {
	id, ok := lookup(res, a, spec.AttrHwID)
	if !ok || id.Str() == "" {
		return nil
	}
	if s := d.subjects.gpus[id.Str()]; s != nil {
		d.subjects.touch(s, t)
		return s
	}
	s := &subject{kind: kindGPU, key: id.Str(), hwID: id.Str(), hwName: gpuModel(res, a), pid: -1,
		gpu: &gpuState{mem: newWindow(d.cfg.Leak.Window, d.cfg.EvaluationInterval), long: d.newLongState(),
			util: newWindow(d.cfg.Throughput.Window, d.cfg.EvaluationInterval)}}
	d.subjects.gpus[s.key] = s
	d.subjects.added(s, t)
	return s
}

// process returns (creating it on first sight) the subject of a process on
// a GPU.
func (d *diagnoser) process(res, a pcommon.Map, t int64) *subject {
	id, ok := lookup(res, a, spec.AttrHwID)
	pv, ok2 := lookup(res, a, spec.AttrProcessPid)
	if !ok || !ok2 {
		return nil
	}
	k := procKey{id.Str(), intValue(pv)}
	if s := d.subjects.procs[k]; s != nil {
		d.subjects.touch(s, t)
		return s
	}
	s := &subject{kind: kindProcess, key: k.hwID + "/" + strconv.FormatInt(k.pid, 10), hwID: k.hwID, pid: k.pid,
		exe: strValue(res, a, spec.AttrProcessExecutableName), containerID: strValue(res, a, spec.AttrContainerID),
		podUID: strValue(res, a, spec.AttrK8sPodUID), podName: strValue(res, a, spec.AttrK8sPodName),
		namespace: strValue(res, a, spec.AttrK8sNamespaceName),
		proc:      &procState{mem: newWindow(d.cfg.Leak.Window, d.cfg.EvaluationInterval), long: d.newLongState()}}
	d.subjects.procs[k] = s
	d.subjects.added(s, t)
	return s
}

// engineSubject returns the engine target a resource's metrics come from:
// keyed by llm.engine.target (the scraped endpoint) or, for engines that
// push OTLP, by name and service instance.
func (d *diagnoser) engineSubject(res pcommon.Map, m pmetric.Metric) *subject {
	empty := emptyMap
	name := strValue(res, empty, spec.AttrEngineName)
	target := strValue(res, empty, spec.AttrEngineTarget)
	if name == "" && target == "" {
		return nil
	}
	key := target
	if key == "" {
		key = name + "|" + strValue(res, empty, "service.instance.id")
	}
	t := int64(0)
	if ts := firstTimestamp(m); ts != 0 {
		t = ts
	}
	if s := d.subjects.engines[key]; s != nil {
		d.subjects.touch(s, t)
		if mdl := strValue(res, empty, spec.AttrGenAIRequestModel); mdl != "" {
			s.model = mdl
		}
		return s
	}
	cfg := d.cfg
	es := &engineState{
		kv:        newWindow(max(cfg.KVCache.For, cfg.EvaluationInterval)*2, cfg.EvaluationInterval),
		kvLong:    newWindow(cfg.Leak.Window, cfg.EvaluationInterval),
		waiting:   newWindow(max(cfg.Queue.For, cfg.EvaluationInterval)*2, cfg.EvaluationInterval),
		preempt:   newWindow(max(cfg.KVCache.For, cfg.EvaluationInterval)*2, cfg.EvaluationInterval),
		queries:   newWindow(cfg.CacheHit.Window*2, cfg.EvaluationInterval),
		hits:      newWindow(cfg.CacheHit.Window*2, cfg.EvaluationInterval),
		outTokens: newWindow(cfg.Throughput.Window*2, cfg.EvaluationInterval),
		tputBase:  newBaseline(cfg.Throughput.Baseline),
		hitBase:   newBaseline(cfg.CacheHit.Baseline),
	}
	for i := range es.latBase {
		es.latBase[i] = newBaseline(cfg.Latency.Baseline)
	}
	pid := int64(-1)
	if v, ok := res.Get(spec.AttrProcessPid); ok {
		pid = intValue(v)
	}
	s := &subject{kind: kindEngine, key: key, engineName: name, target: target, pid: pid,
		model: strValue(res, empty, spec.AttrGenAIRequestModel), hwID: strValue(res, empty, spec.AttrHwID),
		podName: strValue(res, empty, spec.AttrK8sPodName), podUID: strValue(res, empty, spec.AttrK8sPodUID),
		namespace: strValue(res, empty, spec.AttrK8sNamespaceName), engine: es}
	d.subjects.engines[key] = s
	d.subjects.added(s, t)
	return s
}

func firstTimestamp(m pmetric.Metric) int64 {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		if m.Gauge().DataPoints().Len() > 0 {
			return int64(m.Gauge().DataPoints().At(0).Timestamp())
		}
	case pmetric.MetricTypeSum:
		if m.Sum().DataPoints().Len() > 0 {
			return int64(m.Sum().DataPoints().At(0).Timestamp())
		}
	case pmetric.MetricTypeHistogram:
		if m.Histogram().DataPoints().Len() > 0 {
			return int64(m.Histogram().DataPoints().At(0).Timestamp())
		}
	}
	return 0
}

func (d *diagnoser) ingestEngineNumber(s *subject, name string, m pmetric.Metric) {
	es := s.engine
	d.eachNumber(m, func(t int64, v float64, a pcommon.Map) {
		if t > s.lastSeen {
			s.lastSeen = t
		}
		switch name {
		case spec.EngineKvCacheUtilization:
			kv := es.kvAcc.max(t, v)
			es.kv.Add(t, kv)
			es.kvLong.Add(t, kv)
		case spec.EngineRequestsWaiting:
			es.waiting.Add(t, es.waitAcc.add(t, v))
		case spec.EngineRequestsRunning:
			es.running.add(t, v)
		case spec.EnginePreemptions:
			es.preempt.Add(t, es.preemptAcc.add(t, v))
		case spec.EnginePrefixCacheQueries:
			es.queries.Add(t, es.qAcc.add(t, v))
		case spec.EnginePrefixCacheHits:
			es.hits.Add(t, es.hAcc.add(t, v))
		case spec.EngineTokens:
			if tt, ok := a.Get(spec.AttrGenAITokenType); ok && tt.Str() == "output" {
				es.outTokens.Add(t, es.tokAcc.add(t, v))
			}
		case spec.EngineKvCacheBlockLimit:
			es.capacity.blockLimit.add(t, v)
		case spec.EngineKvCacheBlockUsage:
			es.capacity.blockUsage.add(t, v)
		case spec.EngineKvCacheMemoryLimit:
			es.capacity.memLimit.add(t, v)
		case spec.EngineKvCacheMemoryUsage:
			es.capacity.memUsage.add(t, v)
		case spec.EngineKvCacheFragmentation:
			// The worst rank's share is the engine's.
			es.capacity.frag.max(t, v)
			m, _ := a.Get(spec.AttrEngineKvCacheFragmentationMethod)
			es.capacity.fragEstimated = m.Str() == spec.KVFragmentationEstimated
		}
	})
}

func (d *diagnoser) ingestHistogram(s *subject, name string, h pmetric.Histogram) {
	idx := 0
	for i, n := range histMetric {
		if n == name {
			idx = i
		}
	}
	es := s.engine
	dps := h.DataPoints()
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		bounds, counts := dp.ExplicitBounds(), dp.BucketCounts()
		if counts.Len() != bounds.Len()+1 {
			continue
		}
		hs := es.hist[idx]
		if hs == nil || !sameBounds(hs.bounds, bounds) {
			// A new layout (engine restarted with other buckets) starts over.
			hs = newHistState(bounds.AsRaw(), d.cfg.Latency.Window)
			es.hist[idx] = hs
		}
		t := int64(dp.Timestamp())
		if t > s.lastSeen {
			s.lastSeen = t
		}
		hs.add(t, counts)
	}
}

// gpuModel is the GPU's product name: hw.model, or hw.name from an agent of
// the release before (kept for one release; see docs/metric-spec.md).
func gpuModel(res, a pcommon.Map) string {
	if m := strValue(res, a, spec.AttrHwModel); m != "" {
		return m
	}
	return strValue(res, a, spec.AttrHwName)
}

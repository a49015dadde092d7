// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/pdatautil"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

func (d *diagnoser) rememberExemplar(inc *incident) {
	if !d.cfg.Derived.Exemplars || inc.drill.traceID.IsEmpty() || inc.f.subj == nil {
		return
	}
	d.exemplars[inc.f.subj] = exemplarRef{traceID: inc.drill.traceID, spanID: inc.drill.spanID}
}

func (d *diagnoser) forgetExemplar(inc *incident) {
	if inc.f.subj != nil {
		delete(d.exemplars, inc.f.subj)
	}
}

func addExemplar(dp pmetric.NumberDataPoint, ref exemplarRef) {
	ex := dp.Exemplars().AppendEmpty()
	ex.SetTimestamp(dp.Timestamp())
	switch dp.ValueType() {
	case pmetric.NumberDataPointValueTypeInt:
		ex.SetIntValue(dp.IntValue())
	default:
		ex.SetDoubleValue(dp.DoubleValue())
	}
	ex.SetTraceID(ref.traceID)
	ex.SetSpanID(ref.spanID)
}

// enrich adds the derived metrics next to the metrics they come from, and
// exemplars pointing at the implicated span on the points of subjects with
// a firing incident. The caller holds d.mu; ingestMetrics ran first.
func (d *diagnoser) enrich(md pmetric.Metrics) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		res := rm.Resource().Attributes()
		sms := rm.ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			n := ms.Len()
			var growth, tte, ratio pmetric.NumberDataPointSlice
			haveGrowth, haveRatio := false, false
			for k := 0; k < n; k++ {
				m := ms.At(k)
				switch m.Name() {
				case spec.HwGpuMemoryUsage:
					dps, ok := pdatautil.NumberPoints(m)
					if !ok {
						continue
					}
					for p := 0; p < dps.Len(); p++ {
						dp := dps.At(p)
						id, ok := lookup(res, dp.Attributes(), spec.AttrHwID)
						if !ok {
							continue
						}
						g := d.subjects.gpus[id.Str()]
						if g == nil {
							continue
						}
						if ref, ok := d.exemplars[g]; ok && d.cfg.Derived.Exemplars {
							addExemplar(dp, ref)
						}
						if !d.cfg.Derived.Metrics {
							continue
						}
						// This batch's sample is in the window already
						// (ingestMetrics ran): refit now, not at the next
						// evaluation, so the derived points describe it.
						d.fitGPU(g, int64(dp.Timestamp()))
						if !g.gpu.slopeOK {
							continue
						}
						if !haveGrowth {
							growth, tte = spec.AppendNumberMetric(ms, spec.HwGpuMemoryGrowthRate,
								"Robust (Theil–Sen) slope of hw.gpu.memory.usage over leak.window."),
								spec.AppendNumberMetric(ms, spec.HwGpuMemoryTimeToExhaustion,
									"Seconds until hw.gpu.memory.usage reaches hw.gpu.memory.limit at the current growth rate; absent while memory is not growing.")
							haveGrowth = true
						}
						gp := growth.AppendEmpty()
						gp.SetTimestamp(dp.Timestamp())
						gp.SetDoubleValue(g.gpu.fit.slope)
						gp.Attributes().PutStr(spec.AttrHwID, id.Str())
						if g.gpu.tte >= 0 {
							tp := tte.AppendEmpty()
							tp.SetTimestamp(dp.Timestamp())
							tp.SetDoubleValue(g.gpu.tte)
							tp.Attributes().PutStr(spec.AttrHwID, id.Str())
						}
					}
				case spec.ProcessGpuMemoryUsage:
					if !d.cfg.Derived.Exemplars || len(d.exemplars) == 0 {
						continue
					}
					dps, ok := pdatautil.NumberPoints(m)
					if !ok {
						continue
					}
					for p := 0; p < dps.Len(); p++ {
						dp := dps.At(p)
						id, ok1 := lookup(res, dp.Attributes(), spec.AttrHwID)
						pid, ok2 := lookup(res, dp.Attributes(), spec.AttrProcessPid)
						if !ok1 || !ok2 {
							continue
						}
						if s := d.subjects.procs[procKey{id.Str(), intValue(pid)}]; s != nil {
							if ref, ok := d.exemplars[s]; ok {
								addExemplar(dp, ref)
							}
						}
					}
				case spec.EngineKvCacheUtilization:
					if !d.cfg.Derived.Exemplars || len(d.exemplars) == 0 {
						continue
					}
					if s := d.engineOf(res); s != nil {
						if ref, ok := d.exemplars[s]; ok {
							if dps, ok := pdatautil.NumberPoints(m); ok {
								for p := 0; p < dps.Len(); p++ {
									addExemplar(dps.At(p), ref)
								}
							}
						}
					}
				case histMetric[histTTFT], histMetric[histTPOT], histMetric[histITL], histMetric[histDuration], histMetric[histQueue]:
					if !d.cfg.Derived.Exemplars || len(d.exemplars) == 0 || m.Type() != pmetric.MetricTypeHistogram {
						continue
					}
					if s := d.engineOf(res); s != nil {
						if ref, ok := d.exemplars[s]; ok {
							dps := m.Histogram().DataPoints()
							for p := 0; p < dps.Len(); p++ {
								dp := dps.At(p)
								ex := dp.Exemplars().AppendEmpty()
								ex.SetTimestamp(dp.Timestamp())
								if dp.HasMax() {
									ex.SetDoubleValue(dp.Max())
								} else if dp.Count() > 0 {
									ex.SetDoubleValue(dp.Sum() / float64(dp.Count()))
								}
								ex.SetTraceID(ref.traceID)
								ex.SetSpanID(ref.spanID)
							}
						}
					}
				case spec.EnginePrefixCacheHits:
					if !d.cfg.Derived.Metrics || haveRatio {
						continue
					}
					s := d.engineOf(res)
					if s == nil {
						continue
					}
					hr, ok := d.hitRatio(s)
					if !ok {
						continue
					}
					ts := pcommon.Timestamp(s.lastSeen)
					ratio = spec.AppendNumberMetric(ms, spec.EnginePrefixCacheHitRatio,
						"Prefix-cache hits / queries over cache_hit.window, from the counters' deltas.")
					haveRatio = true
					rp := ratio.AppendEmpty()
					rp.SetTimestamp(ts)
					rp.SetDoubleValue(hr)
				}
			}
		}
	}
}

// engineOf finds, without creating it, the engine subject of a resource.
func (d *diagnoser) engineOf(res pcommon.Map) *subject {
	if v, ok := res.Get(spec.AttrEngineTarget); ok && v.Str() != "" {
		return d.subjects.engines[v.Str()]
	}
	return d.subjects.engines[strValue(res, emptyMap, spec.AttrEngineName)+"|"+strValue(res, emptyMap, "service.instance.id")]
}

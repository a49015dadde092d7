// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"math"

	"github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector/internal/stats"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// latencyDetector: the latency.quantile of each engine histogram (TTFT,
// time per output token, inter-token latency, request duration, queue time) over latency.window,
// from cumulative deltas, above mean + sigma·σ of its own recent quantiles
// and above an absolute floor. One incident per engine: the worst
// histogram, with the others as evidence.
type latencyDetector struct{ cfg LatencyConfig }

func (det latencyDetector) detect(d *diagnoser, ev *evaluation) {
	for _, s := range d.subjects.engines {
		f, ok := det.spiked(d, s, ev.now)
		if !ok {
			continue
		}
		// A saturated KV cache is the cause: requests wait for cache
		// space. The spike is evidence of that incident.
		if kv := ev.finding(s, spec.IncidentKindKVCacheSaturation); kv != nil {
			kv.evidence = append(kv.evidence, f.evidence...)
			kv.body += "; " + f.body + " with it"
			ev.supersede(s, spec.IncidentKindLatencySpike, incidentKey(kv))
			continue
		}
		f.action = d.latencyAction(s)
		// The request's own duration is what users wait for: its spike
		// calls for the configured response (by default, bring up the
		// quantized model to take load).
		if id := det.cfg.RequestDurationActionID; id != "" && f.evidence[0].signal == spec.GenAIServerRequestDuration {
			f.actionID = id
			f.action = "Response " + id + ": shift load to a faster variant (the quantized model) while it lasts. " + f.action
		}
		d.explainLatency(s, &f, ev)
		ev.add(f)
	}
}

// explainLatency rules out what does not explain a latency spike, and holds
// it back while a cause may be about to show: the KV cache near its
// threshold, or memory growing with a cache-hit drop (the joint incident).
func (d *diagnoser) explainLatency(s *subject, f *finding, ev *evaluation) {
	d.explainByKV(s, f)
	if g := d.engineGPU(s); g != nil {
		if u, ok := g.gpu.util.Last(); ok && u.V < 0.95 {
			f.ruleOut(fmt.Sprintf("not GPU saturation: the GPU is %.0f%% busy", 100*u.V))
		}
	}
	if w, ok := s.engine.waiting.Last(); ok && w.V < d.cfg.Queue.MinWaiting {
		f.ruleOut(fmt.Sprintf("not queueing: %.0f requests wait", w.V))
	}
	d.holdForJoint(s, f, ev)
}

// holdForJoint holds a latency or cache symptom back while the joint
// incident may form: the engine's memory grows at a quarter of the leak
// threshold or more, or the other symptom is already seen.
func (d *diagnoser) holdForJoint(s *subject, f *finding, ev *evaluation) {
	if !d.cfg.Joint.Enabled {
		return
	}
	minSlope := d.cfg.Leak.MinSlopeMiBPerMinute * mib / 60
	if slope, _ := d.memorySlope(s); slope >= minSlope/4 {
		f.hold, f.holdReason = true, fmt.Sprintf("memory of the engine grows %.0f MiB/min", slope*60/mib)
		return
	}
	other, otherSeen := spec.IncidentKindCacheHitDrop, s.engine.lastCache
	if f.kind == spec.IncidentKindCacheHitDrop {
		other, otherSeen = spec.IncidentKindLatencySpike, s.engine.lastLatency
	}
	if ev.finding(s, other) != nil || (otherSeen != 0 && ev.now-otherSeen <= int64(d.cfg.Joint.Window)) {
		f.hold, f.holdReason = true, other+" on the same engine"
	}
}

func (det latencyDetector) spiked(d *diagnoser, s *subject, now int64) (finding, bool) {
	cfg, es := det.cfg, s.engine
	warm := d.warm(s)
	var worst *finding
	for i, hs := range es.hist {
		if hs == nil {
			continue
		}
		delta, ok := hs.window(hs.curT-int64(cfg.Window), d.scratch.delta)
		d.scratch.delta = delta
		if !ok {
			continue
		}
		p, ok := stats.HistogramQuantile(cfg.Quantile, hs.bounds, delta)
		if !ok {
			continue
		}
		mean, std := es.latBase[i].MeanStd()
		n := es.latBase[i].Len()
		thr := mean + cfg.Sigma*math.Max(std, 0.05*mean)
		floor := d.latencyFloor(i)
		// A quantile of few requests jumps with one slow request: fire
		// only when at least 3 requests, and 3× as many as the quantile
		// allows, lie above the threshold.
		total, above := observationsAbove(hs.bounds, delta, math.Max(thr, floor))
		significant := above >= math.Max(3, 3*total*(1-cfg.Quantile))
		if !(warm && n >= minBaseline && p > thr && p > floor && significant) {
			if warm {
				// The baseline learns what is normal: a quantile above the
				// threshold that is not (yet) an incident — the leading edge
				// of a spike, with too few slow requests to count — enters
				// it clipped at the threshold. Unclipped, two such values
				// double σ and the spike that follows stays under it.
				if n >= minBaseline {
					p = math.Min(p, thr)
				}
				es.latBase[i].Push(now, p)
			}
			continue
		}
		f := finding{kind: spec.IncidentKindLatencySpike, quadrant: spec.QuadrantLatency, severity: spec.SeverityWarning, subj: s,
			start: now, score: math.Min(1, 0.5+(p-thr)/math.Max(thr, 1e-9)/2), drill: drillTime}
		f.evidence = append(f.evidence, evidence{signal: histMetric[i], value: p, baseline: mean, hasBaseline: true,
			threshold: math.Max(thr, floor), hasThresh: true, unit: "s",
			note: fmt.Sprintf("p%g over %s", 100*cfg.Quantile, cfg.Window)})
		f.body = fmt.Sprintf("p%g %s of %s is %.2fs, baseline %.2fs", 100*cfg.Quantile, histShort[i],
			engineName(s), p, mean)
		if worst == nil || f.score > worst.score {
			ff := f
			worst = &ff
		} else {
			worst.evidence = append(worst.evidence, f.evidence...)
		}
	}
	if worst == nil {
		return finding{}, false
	}
	return *worst, true
}

// latencyAction suggests where the time goes, from what else is seen on
// the engine and its GPU.
func (d *diagnoser) latencyAction(s *subject) string {
	if w, ok := s.engine.waiting.Last(); ok && w.V >= d.cfg.Queue.MinWaiting {
		return d.gpuCause(s, "Requests queue: add replicas or reduce load.")
	}
	return d.gpuCause(s, "Look at the profiler spans linked here for the slow layer; check for longer prompts or a new model version.")
}

func (d *diagnoser) latencyFloor(i int) float64 {
	switch i {
	case histTTFT:
		return d.cfg.Latency.TimeToFirstTokenFloor
	case histTPOT:
		return d.cfg.Latency.TimePerOutputTokenFloor
	case histITL:
		return d.cfg.Latency.InterTokenLatencyFloor
	case histDuration:
		return d.cfg.Latency.RequestDurationFloor
	default:
		return d.cfg.Latency.QueueDurationFloor
	}
}

// observationsAbove counts a histogram delta's observations and how many of
// them lie above thr (a bucket straddling thr counts in proportion).
func observationsAbove(bounds []float64, counts []uint64, thr float64) (total, above float64) {
	for i, c := range counts {
		if c == 0 {
			continue
		}
		n := float64(c)
		total += n
		lo := 0.0
		if i > 0 {
			lo = bounds[i-1]
		}
		if i == len(bounds) { // +Inf bucket
			if lo >= thr {
				above += n
			} else {
				above += n / 2 // unknown spread: half of it
			}
			continue
		}
		hi := bounds[i]
		switch {
		case lo >= thr:
			above += n
		case hi > thr:
			above += n * (hi - thr) / (hi - lo)
		}
	}
	return total, above
}

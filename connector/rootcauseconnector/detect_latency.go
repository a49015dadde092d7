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
		if f, ok := det.spiked(d, s, ev.now); ok {
			f.action = d.latencyAction(s, ev.finding(s, spec.IncidentKindKVCacheSaturation) != nil)
			ev.add(f)
		}
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
func (d *diagnoser) latencyAction(s *subject, kvSaturated bool) string {
	if kvSaturated {
		return "The KV cache is saturated: requests wait for cache space. Add replicas, raise gpu_memory_utilization or lower max_num_seqs."
	}
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

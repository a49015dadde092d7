// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"math"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// queueDetector: requests waiting at or above queue.min_waiting for
// queue.for. A saturated KV cache explains its queue (that incident says
// so), and an idle GPU under a queue points at the engine's CPU side.
type queueDetector struct{ cfg QueueConfig }

func (det queueDetector) detect(d *diagnoser, ev *evaluation) {
	for _, s := range d.subjects.engines {
		if ev.finding(s, spec.IncidentKindKVCacheSaturation) != nil || d.kvHigh(s) {
			continue
		}
		if f, ok := det.buildup(d, s, ev.now); ok {
			d.explainByKV(s, &f)
			ev.add(f)
		}
	}
}

func (det queueDetector) buildup(d *diagnoser, s *subject, now int64) (finding, bool) {
	cfg, es := det.cfg, s.engine
	waiting, ok := es.waiting.Last()
	if !ok {
		return finding{}, false
	}
	d.scratch.pts = es.waiting.Since(d.scratch.pts[:0], 0)
	pts := d.scratch.pts
	since := heldSince(pts, cfg.MinWaiting)
	if since == 0 {
		return finding{}, false
	}
	held := d.heldFor(since, waiting.T, now)
	if held < int64(cfg.For) {
		return finding{}, false
	}
	f := finding{kind: spec.IncidentKindQueueBuildup, quadrant: spec.QuadrantLatency, severity: spec.SeverityWarning, subj: s,
		start: since, score: math.Min(1, 0.4+waiting.V/(10*math.Max(cfg.MinWaiting, 1))), drill: drillTime}
	f.evidence = append(f.evidence, evidence{signal: spec.EngineRequestsWaiting, value: waiting.V,
		baseline: pts[0].V, hasBaseline: true, threshold: cfg.MinWaiting, hasThresh: true, unit: "{request}"})
	if es.running.t != 0 {
		f.evidence = append(f.evidence, evidence{signal: spec.EngineRequestsRunning, value: es.running.v, unit: "{request}"})
	}
	cause := ""
	if g := d.engineGPU(s); g != nil {
		if u, ok := g.gpu.util.Last(); ok {
			f.evidence = append(f.evidence, evidence{signal: spec.HwGpuUtilization, value: u.V, threshold: 0.3,
				hasThresh: true, unit: "1", note: "below the threshold the GPU is idle"})
			if u.V < 0.3 {
				f.ruleOut(fmt.Sprintf("not the GPU: it is %.0f%% busy, so the engine's CPU side (scheduler, tokenizer) is the bottleneck", 100*u.V))
				cause = fmt.Sprintf(" while its GPU is %.0f%% busy: the scheduler/CPU side is the bottleneck, not the GPU", 100*u.V)
				f.action = "CPU-bound: check the pod's CPU limit and throttling, tokenizer/detokenizer and Python overhead; raise CPU, use more API server processes, or enable async output processing."
			}
		}
	}
	if f.action == "" {
		f.action = "Add replicas or reduce load; check KV cache and GPU utilization of this engine."
	}
	f.body = fmt.Sprintf("%.0f requests waiting at %s for %s%s", waiting.V, engineName(s), fmtDur(held), cause)
	return f, true
}

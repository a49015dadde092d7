// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"math"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// throughputDetector: an engine's output-token rate over throughput.window
// more than throughput.drop below its baseline while requests wait (a rate
// that falls because load fell is not a drop).
type throughputDetector struct{ cfg ThroughputConfig }

func (det throughputDetector) detect(d *diagnoser, ev *evaluation) {
	for _, s := range d.subjects.engines {
		f, ok := det.dropped(d, s, ev.now)
		if !ok {
			continue
		}
		// A GPU held back by throttling is the cause: the drop is its
		// evidence, not an incident of its own.
		if g := d.engineGPU(s); g != nil {
			if tf := ev.finding(g, spec.IncidentKindGPUThrottling); tf != nil {
				tf.evidence = append(tf.evidence, f.evidence...)
				ev.supersede(s, spec.IncidentKindThroughputDrop, incidentKey(tf))
				continue
			}
		}
		d.explainThroughput(s, &f)
		ev.add(f)
	}
}

// explainThroughput rules out what does not explain a throughput drop, and
// holds the finding back while a cause may be about to show.
func (d *diagnoser) explainThroughput(s *subject, f *finding) {
	if w, ok := s.engine.waiting.Last(); ok {
		f.ruleOut(fmt.Sprintf("not less load: %.0f requests wait", w.V))
	}
	if g := d.engineGPU(s); g != nil {
		if runs := g.gpu.activeThrottle(g.lastSeen); len(runs) > 0 {
			f.hold, f.holdReason = true, "its GPU is throttled ("+throttleReasons(runs)+") for less than throttle.for"
		} else {
			f.ruleOut("not throttling: the GPU's clocks are not held back")
		}
	}
	d.explainByKV(s, f)
}

// explainByKV rules KV-cache pressure out of a symptom, or holds it back
// when the engine's KV cache is within 10 points of kv_cache.threshold
// (the saturation incident may follow and replace it).
func (d *diagnoser) explainByKV(s *subject, f *finding) {
	kv, ok := s.engine.kv.Last()
	if !ok || !d.cfg.KVCache.Enabled {
		return
	}
	if kv.V >= d.cfg.KVCache.Threshold-0.1 {
		f.hold, f.holdReason = true, fmt.Sprintf("KV cache at %.0f%%, near kv_cache.threshold", 100*kv.V)
		return
	}
	f.ruleOut(fmt.Sprintf("not KV-cache pressure: KV cache at %.0f%%", 100*kv.V))
}

func (det throughputDetector) dropped(d *diagnoser, s *subject, now int64) (finding, bool) {
	cfg, es := det.cfg, s.engine
	rate, ok := d.tokenRate(s)
	if !ok || !d.warm(s) {
		return finding{}, false
	}
	mean, _ := es.tputBase.MeanStd()
	n := es.tputBase.Len()
	low := n >= minBaseline && rate < mean*(1-cfg.Drop)
	waiting, haveWaiting := es.waiting.Last()
	if !low || !haveWaiting || waiting.V <= 0 {
		// A low rate with nobody waiting is less load, not a drop: it
		// stays out of the baseline too.
		if !low {
			es.tputBase.Push(now, rate)
		}
		return finding{}, false
	}
	f := finding{kind: spec.IncidentKindThroughputDrop, quadrant: spec.QuadrantThroughput, severity: spec.SeverityWarning, subj: s,
		start: now, score: math.Min(1, (mean-rate)/math.Max(mean, 1e-9)), drill: drillTime}
	f.evidence = append(f.evidence, evidence{signal: spec.EvidenceTokensRate, value: rate, baseline: mean,
		hasBaseline: true, threshold: mean * (1 - cfg.Drop), hasThresh: true, unit: "{token}/s",
		note: "gen_ai.token.type=output"},
		evidence{signal: spec.EngineRequestsWaiting, value: waiting.V, unit: "{request}"})
	f.body = fmt.Sprintf("Output tokens/s of %s down to %.0f from %.0f while %.0f requests wait", engineName(s), rate, mean, waiting.V)
	f.action = d.gpuCause(s, "Check what else runs on the GPU and for throttling; scale out if load grew.")
	return f, true
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"math"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// kvSaturationDetector: an engine's KV-cache utilization at or above
// kv_cache.threshold for kv_cache.for without a break, with its preemptions
// and queue as evidence.
type kvSaturationDetector struct{ cfg KVCacheConfig }

func (det kvSaturationDetector) detect(d *diagnoser, ev *evaluation) {
	for _, s := range d.subjects.engines {
		if f, ok := det.saturated(d, s, ev.now); ok {
			ev.add(f)
		}
	}
}

func (det kvSaturationDetector) saturated(d *diagnoser, s *subject, now int64) (finding, bool) {
	cfg, es := det.cfg, s.engine
	d.scratch.pts = es.kv.Since(d.scratch.pts[:0], 0)
	pts := d.scratch.pts
	since := heldSince(pts, cfg.Threshold)
	if since == 0 {
		return finding{}, false
	}
	held := d.heldFor(since, pts[len(pts)-1].T, now)
	if held < int64(cfg.For) {
		return finding{}, false
	}
	kv := pts[len(pts)-1].V
	f := finding{kind: spec.IncidentKindKVCacheSaturation, quadrant: spec.QuadrantSaturation, severity: spec.SeverityWarning, subj: s,
		start: since, score: math.Min(1, 0.5+(kv-cfg.Threshold)/(1-cfg.Threshold+1e-9)/2), drill: drillTime}
	f.evidence = append(f.evidence, evidence{signal: spec.EngineKvCacheUtilization, value: kv,
		threshold: cfg.Threshold, hasThresh: true, unit: "1"})
	extra := ""
	if n, ok := counterDelta(es.preempt, cfg.For); ok {
		f.evidence = append(f.evidence, evidence{signal: spec.EnginePreemptions, value: n, unit: "{preemption}",
			note: "increase over kv_cache.for"})
		if n > 0 {
			extra += fmt.Sprintf(", %.0f preemptions", n)
			f.score = math.Min(1, f.score+0.2)
		}
	}
	if w, ok := es.waiting.Last(); ok {
		f.evidence = append(f.evidence, evidence{signal: spec.EngineRequestsWaiting, value: w.V, unit: "{request}"})
		if w.V > 0 {
			extra += fmt.Sprintf(", %.0f requests waiting", w.V)
		}
	}
	f.body = fmt.Sprintf("KV cache of %s at %.0f%% for %s%s: requests are queued and preempted for cache space",
		engineName(s), 100*kv, fmtDur(held), extra)
	f.action = "Add replicas or move load; or raise gpu_memory_utilization, lower max_num_seqs / max_model_len, enable prefix caching or KV-cache quantization."
	return f, true
}

// kvHigh says whether an engine's newest KV utilization is at the
// saturation threshold: that explains a queue even before kv_cache.for has
// passed (the saturation incident follows).
func (d *diagnoser) kvHigh(s *subject) bool {
	kv, ok := s.engine.kv.Last()
	return ok && d.cfg.KVCache.Enabled && kv.V >= d.cfg.KVCache.Threshold
}

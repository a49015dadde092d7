// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"math"
	"strconv"
	"strings"

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
	capText := kvCapacityText(&f, &es.capacity, s.lastSeen)
	f.body = fmt.Sprintf("KV cache of %s at %.0f%%%s for %s%s: requests are queued and preempted for cache space",
		engineName(s), 100*kv, capText, fmtDur(held), extra)
	f.action = "Add replicas or move load; or raise gpu_memory_utilization, lower max_num_seqs / max_model_len, enable prefix caching or KV-cache quantization."
	return f, true
}

// kvCapacityText tells what the utilization means in blocks and bytes
// ("12,288 of 12,672 blocks, ≈ 3.1 GiB free of 48.0 GiB; block
// fragmentation 18%") and adds the figures as evidence. Figures older than
// the engine's newest scrape are left out: an engine that stopped
// publishing its configuration is not described by its old one.
func kvCapacityText(f *finding, c *kvCapacity, lastSeen int64) string {
	fresh := func(a accum) bool { return a.t != 0 && a.t >= lastSeen }
	var parts []string
	if fresh(c.blockLimit) && fresh(c.blockUsage) {
		parts = append(parts, fmt.Sprintf("%s of %s blocks", groupDigits(c.blockUsage.v), groupDigits(c.blockLimit.v)))
		f.evidence = append(f.evidence, evidence{signal: spec.EngineKvCacheBlockUsage, value: c.blockUsage.v,
			threshold: c.blockLimit.v, hasThresh: true, unit: "{block}", note: "threshold: the blocks allocated (block.limit)"})
	}
	if fresh(c.memLimit) && fresh(c.memUsage) {
		free := math.Max(0, c.memLimit.v-c.memUsage.v)
		parts = append(parts, fmt.Sprintf("≈ %s free of %s", fmtBytes(free), fmtBytes(c.memLimit.v)))
		f.evidence = append(f.evidence, evidence{signal: spec.EngineKvCacheMemoryUsage, value: c.memUsage.v,
			threshold: c.memLimit.v, hasThresh: true, unit: "By", note: "threshold: the KV cache's memory (memory.limit)"})
	}
	text := strings.Join(parts, ", ")
	if fresh(c.frag) {
		how := ""
		if c.fragEstimated {
			how = " (estimated: half a block per running request)"
		}
		if text != "" {
			text += "; "
		}
		text += fmt.Sprintf("block fragmentation %.0f%%%s", 100*c.frag.v, how)
		f.evidence = append(f.evidence, evidence{signal: spec.EngineKvCacheFragmentation, value: c.frag.v, unit: "1"})
	}
	if text == "" {
		return ""
	}
	return ": " + text + ","
}

// groupDigits writes a count with thousands separators (12,672).
func groupDigits(v float64) string {
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// kvHigh says whether an engine's newest KV utilization is at the
// saturation threshold: that explains a queue even before kv_cache.for has
// passed (the saturation incident follows).
func (d *diagnoser) kvHigh(s *subject) bool {
	kv, ok := s.engine.kv.Last()
	return ok && d.cfg.KVCache.Enabled && kv.V >= d.cfg.KVCache.Threshold
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"math"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// cacheHitDetector: the prefix-cache hit ratio over cache_hit.window below
// cache_hit.min_ratio after a baseline above it, or cache_hit.sigma σ below
// its own baseline. A workload that never hit the cache does not fire.
type cacheHitDetector struct{ cfg CacheHitConfig }

func (det cacheHitDetector) detect(d *diagnoser, ev *evaluation) {
	for _, s := range d.subjects.engines {
		if f, ok := det.dropped(d, s, ev.now); ok {
			d.holdForJoint(s, &f, ev)
			ev.add(f)
		}
	}
}

// hitRatio is the engine's prefix-cache hits / queries over
// cache_hit.window from the counters' deltas; false while fewer than
// cache_hit.min_queries were looked up. The pass-through pair emits it as
// llm.engine.prefix_cache.hit_ratio with the batch that moved it.
func (d *diagnoser) hitRatio(s *subject) (float64, bool) {
	cfg, es := d.cfg.CacheHit, s.engine
	q, okq := counterDelta(es.queries, cfg.Window)
	h, okh := counterDelta(es.hits, cfg.Window)
	if !okq || !okh || q < cfg.MinQueries || q <= 0 {
		return 0, false
	}
	return math.Min(1, h/q), true
}

func (det cacheHitDetector) dropped(d *diagnoser, s *subject, now int64) (finding, bool) {
	cfg, es := det.cfg, s.engine
	ratio, ok := d.hitRatio(s)
	if !ok || !d.warm(s) {
		return finding{}, false
	}
	mean, std := es.hitBase.MeanStd()
	n := es.hitBase.Len()
	belowAbs := n >= minBaseline && mean >= cfg.MinRatio && ratio < cfg.MinRatio
	sigmaThr := mean - cfg.Sigma*math.Max(std, 0.02)
	belowSigma := n >= minBaseline && cfg.Sigma > 0 && ratio < sigmaThr
	if !belowAbs && !belowSigma {
		es.hitBase.Push(now, ratio)
		return finding{}, false
	}
	f := finding{kind: spec.IncidentKindCacheHitDrop, quadrant: spec.QuadrantLatency, severity: spec.SeverityWarning, subj: s,
		start: now, score: math.Min(1, (mean-ratio)/math.Max(mean, 1e-9)+0.3), drill: drillTime}
	thr := cfg.MinRatio
	if belowSigma && !belowAbs {
		thr = sigmaThr
	}
	f.evidence = append(f.evidence, evidence{signal: spec.EnginePrefixCacheHitRatio, value: ratio, baseline: mean,
		hasBaseline: true, threshold: thr, hasThresh: true, unit: "1"})
	f.body = fmt.Sprintf("Prefix-cache hit ratio of %s fell to %.0f%% (baseline %.0f%%): more prefill work per request",
		engineName(s), 100*ratio, 100*mean)
	f.action = "Check for a change in prompts (system prompt, templates), routing that breaks cache affinity, or cache evictions under memory pressure."
	return f, true
}

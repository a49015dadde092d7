package rootcauseprocessor

import (
	"fmt"
	"math"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/processor/rootcauseprocessor/internal/stats"
)

// minBaseline is how many baseline values a dynamic threshold needs before
// it is trusted.
const minBaseline = 10

func engineName(s *subject) string {
	n := s.engineName
	if n == "" {
		n = "engine"
	}
	if s.model != "" {
		n += " " + s.model
	}
	if s.target != "" {
		n += " at " + s.target
	}
	return n
}

// engineDetectors runs the engine-level detectors on one engine target and
// merges a latency spike, a cache hit-rate drop and a memory slope into one
// joint incident.
func (e *engine) engineDetectors(s *subject, now int64, out []finding) []finding {
	cfg := e.cfg
	es := s.eng
	warm := s.lastSeen-s.firstSeen >= int64(cfg.Warmup)
	var kvF, cacheF, latF *finding
	var found []finding

	// KV-cache saturation: utilization at or above the threshold for
	// kv_cache.for without a break.
	if cfg.KVCache.Enabled {
		e.scratch.pts = es.kv.Since(e.scratch.pts[:0], 0)
		pts := e.scratch.pts
		since := int64(0)
		for i := len(pts) - 1; i >= 0 && pts[i].V >= cfg.KVCache.Threshold; i-- {
			since = pts[i].T
		}
		held := int64(0)
		if since > 0 {
			held = e.heldFor(since, pts[len(pts)-1].T, now)
		}
		if since > 0 && held >= int64(cfg.KVCache.For) {
			kv := pts[len(pts)-1].V
			f := finding{kind: KindKVCacheSaturation, quadrant: QuadrantSaturation, severity: SeverityWarning, subj: s,
				start: since, score: math.Min(1, 0.5+(kv-cfg.KVCache.Threshold)/(1-cfg.KVCache.Threshold+1e-9)/2), drill: drillTime}
			f.evidence = append(f.evidence, evidence{signal: spec.EngineKvCacheUtilization, value: kv,
				threshold: cfg.KVCache.Threshold, hasThresh: true, unit: "1"})
			extra := ""
			if d, ok := counterDelta(es.preempt, cfg.KVCache.For); ok {
				f.evidence = append(f.evidence, evidence{signal: spec.EnginePreemptions, value: d, unit: "{preemption}",
					note: "increase over kv_cache.for"})
				if d > 0 {
					extra += fmt.Sprintf(", %.0f preemptions", d)
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
			found = append(found, f)
			kvF = &found[len(found)-1]
		}
	}

	// Prefix/KV cache hit ratio from the counters' deltas.
	if cfg.CacheHit.Enabled {
		q, okq := counterDelta(es.queries, cfg.CacheHit.Window)
		h, okh := counterDelta(es.hits, cfg.CacheHit.Window)
		es.hitRatioOK = false
		if okq && okh && q >= cfg.CacheHit.MinQueries && q > 0 {
			ratio := math.Min(1, h/q)
			es.hitRatio, es.hitRatioOK = ratio, true
			mean, std := es.hitBase.MeanStd()
			n := es.hitBase.Len()
			dropBelowAbs := n >= minBaseline && mean >= cfg.CacheHit.MinRatio && ratio < cfg.CacheHit.MinRatio
			sigmaThr := mean - cfg.CacheHit.Sigma*math.Max(std, 0.02)
			dropBelowSigma := n >= minBaseline && cfg.CacheHit.Sigma > 0 && ratio < sigmaThr
			if warm && (dropBelowAbs || dropBelowSigma) {
				f := finding{kind: KindCacheHitDrop, quadrant: QuadrantLatency, severity: SeverityWarning, subj: s,
					start: now, score: math.Min(1, (mean-ratio)/math.Max(mean, 1e-9)+0.3), drill: drillTime}
				thr := cfg.CacheHit.MinRatio
				if dropBelowSigma && !dropBelowAbs {
					thr = sigmaThr
				}
				f.evidence = append(f.evidence, evidence{signal: spec.EnginePrefixCacheHitRatio, value: ratio, baseline: mean,
					hasBaseline: true, threshold: thr, hasThresh: true, unit: "1"})
				f.body = fmt.Sprintf("Prefix-cache hit ratio of %s fell to %.0f%% (baseline %.0f%%): more prefill work per request",
					engineName(s), 100*ratio, 100*mean)
				f.action = "Check for a change in prompts (system prompt, templates), routing that breaks cache affinity, or cache evictions under memory pressure."
				found = append(found, f)
				cacheF = &found[len(found)-1]
			} else if warm {
				es.hitBase.Push(now, ratio)
			}
		}
	}

	// Latency: the quantile of each histogram over the window against its
	// own recent quantiles and an absolute floor.
	if cfg.Latency.Enabled {
		var worst *finding
		for i, hs := range es.hist {
			if hs == nil {
				continue
			}
			delta, ok := hs.window(hs.curT-int64(cfg.Latency.Window), e.scratch.delta)
			e.scratch.delta = delta
			if !ok {
				continue
			}
			p, ok := stats.HistogramQuantile(cfg.Latency.Quantile, hs.bounds, delta)
			if !ok {
				continue
			}
			es.lastP[i] = p
			mean, std := es.latBase[i].MeanStd()
			n := es.latBase[i].Len()
			thr := mean + cfg.Latency.Sigma*math.Max(std, 0.05*mean)
			floor := e.latencyFloor(i)
			// A quantile of few requests jumps with one slow request: fire
			// only when at least 3 requests, and 3× as many as the
			// quantile allows, lie above the threshold.
			total, above := observationsAbove(hs.bounds, delta, math.Max(thr, floor))
			significant := above >= math.Max(3, 3*total*(1-cfg.Latency.Quantile))
			if warm && n >= minBaseline && p > thr && p > floor && significant {
				f := finding{kind: KindLatencySpike, quadrant: QuadrantLatency, severity: SeverityWarning, subj: s,
					start: now, score: math.Min(1, 0.5+(p-thr)/math.Max(thr, 1e-9)/2), drill: drillTime}
				f.evidence = append(f.evidence, evidence{signal: histMetric[i], value: p, baseline: mean, hasBaseline: true,
					threshold: math.Max(thr, floor), hasThresh: true, unit: "s",
					note: fmt.Sprintf("p%g over %s", 100*cfg.Latency.Quantile, cfg.Latency.Window)})
				f.body = fmt.Sprintf("p%g %s of %s is %.2fs, baseline %.2fs", 100*cfg.Latency.Quantile, histShort[i],
					engineName(s), p, mean)
				if worst == nil || f.score > worst.score {
					ff := f
					worst = &ff
				} else {
					worst.evidence = append(worst.evidence, f.evidence...)
				}
			} else if warm {
				es.latBase[i].Push(now, p)
			}
		}
		if worst != nil {
			worst.action = e.latencyAction(s, now, kvF != nil)
			found = append(found, *worst)
			latF = &found[len(found)-1]
		}
	}

	// Throughput: output tokens/s well below baseline while requests wait.
	waiting, haveWaiting := es.waiting.Last()
	if cfg.Throughput.Enabled {
		if rate, ok := e.tokenRate(s, now); ok {
			mean, _ := es.tputBase.MeanStd()
			n := es.tputBase.Len()
			if warm && n >= minBaseline && rate < mean*(1-cfg.Throughput.Drop) && haveWaiting && waiting.V > 0 {
				f := finding{kind: KindThroughputDrop, quadrant: QuadrantThroughput, severity: SeverityWarning, subj: s,
					start: now, score: math.Min(1, (mean-rate)/math.Max(mean, 1e-9)), drill: drillTime}
				f.evidence = append(f.evidence, evidence{signal: "llm.engine.tokens.rate", value: rate, baseline: mean,
					hasBaseline: true, threshold: mean * (1 - cfg.Throughput.Drop), hasThresh: true, unit: "{token}/s",
					note: "gen_ai.token.type=output"},
					evidence{signal: spec.EngineRequestsWaiting, value: waiting.V, unit: "{request}"})
				f.body = fmt.Sprintf("Output tokens/s of %s down to %.0f from %.0f while %.0f requests wait", engineName(s), rate, mean, waiting.V)
				f.action = e.gpuCause(s, "Check what else runs on the GPU and for throttling; scale out if load grew.")
				found = append(found, f)
			} else if warm && (n < minBaseline || rate >= mean*(1-cfg.Throughput.Drop)) {
				es.tputBase.Push(now, rate)
			}
		}
	}

	// Queue build-up: requests waiting above queue.min_waiting for
	// queue.for. With a saturated KV cache the queue is its symptom.
	// A KV cache at the saturation threshold explains the queue even
	// before kv_cache.for has passed: that incident follows.
	kvHigh := false
	if kv, ok := es.kv.Last(); ok && cfg.KVCache.Enabled && kv.V >= cfg.KVCache.Threshold {
		kvHigh = true
	}
	if cfg.Queue.Enabled && kvF == nil && !kvHigh && haveWaiting {
		e.scratch.pts = es.waiting.Since(e.scratch.pts[:0], 0)
		pts := e.scratch.pts
		since := int64(0)
		for i := len(pts) - 1; i >= 0 && pts[i].V >= cfg.Queue.MinWaiting; i-- {
			since = pts[i].T
		}
		held := int64(0)
		if since > 0 {
			held = e.heldFor(since, waiting.T, now)
		}
		if since > 0 && held >= int64(cfg.Queue.For) {
			f := finding{kind: KindQueueBuildup, quadrant: QuadrantLatency, severity: SeverityWarning, subj: s,
				start: since, score: math.Min(1, 0.4+waiting.V/(10*math.Max(cfg.Queue.MinWaiting, 1))), drill: drillTime}
			f.evidence = append(f.evidence, evidence{signal: spec.EngineRequestsWaiting, value: waiting.V,
				baseline: pts[0].V, hasBaseline: true, threshold: cfg.Queue.MinWaiting, hasThresh: true, unit: "{request}"})
			if es.running.t != 0 {
				f.evidence = append(f.evidence, evidence{signal: spec.EngineRequestsRunning, value: es.running.v, unit: "{request}"})
			}
			cause := ""
			if g := e.engineGPU(s); g != nil {
				if u, ok := g.gpu.util.Last(); ok {
					f.evidence = append(f.evidence, evidence{signal: spec.HwGpuUtilization, value: u.V, threshold: 0.3,
						hasThresh: true, unit: "1", note: "below the threshold the GPU is idle"})
					if u.V < 0.3 {
						cause = fmt.Sprintf(" while its GPU is %.0f%% busy: the scheduler/CPU side is the bottleneck, not the GPU", 100*u.V)
						f.action = "CPU-bound: check the pod's CPU limit and throttling, tokenizer/detokenizer and Python overhead; raise CPU, use more API server processes, or enable async output processing."
					}
				}
			}
			if f.action == "" {
				f.action = "Add replicas or reduce load; check KV cache and GPU utilization of this engine."
			}
			f.body = fmt.Sprintf("%.0f requests waiting at %s for %s%s", waiting.V, engineName(s), fmtDur(held), cause)
			found = append(found, f)
		}
	}

	// Joint trigger: latency + cache + memory slope within joint.window
	// become one critical incident instead of three.
	if cfg.Joint.Enabled {
		if latF != nil {
			es.lastLatency = now
		}
		if cacheF != nil {
			es.lastCache = now
		}
		memSlope, memSubj := e.memorySlope(s)
		minSlope := cfg.Leak.MinSlopeMiBPerMinute * mib / 60
		win := int64(cfg.Joint.Window)
		if es.lastLatency >= now-win && es.lastCache >= now-win && memSlope >= minSlope/2 && (latF != nil || cacheF != nil) {
			w := cfg.Joint.Weights
			total := w.Latency + w.Cache + w.Memory
			score := (w.Latency*1 + w.Cache*1 + w.Memory*math.Min(1, memSlope/minSlope)) / total
			f := finding{kind: KindJoint, quadrant: QuadrantLatency, severity: SeverityCritical, subj: s, start: now,
				score: score, drill: drillMemory}
			for _, part := range found {
				if part.kind == KindLatencySpike || part.kind == KindCacheHitDrop {
					f.evidence = append(f.evidence, part.evidence...)
				}
			}
			f.evidence = append(f.evidence, evidence{signal: "memory.growth_rate", value: memSlope * 60 / mib,
				threshold: cfg.Leak.MinSlopeMiBPerMinute / 2, hasThresh: true, unit: "MiBy/min"})
			who := ""
			if memSubj != nil {
				who = " of " + processOrGPU(memSubj)
			}
			f.body = fmt.Sprintf("%s degrades on three fronts at once: latency spike, prefix-cache hit ratio drop and GPU memory%s growing %.0f MiB/min",
				engineName(s), who, memSlope*60/mib)
			f.action = "Memory pressure is evicting cache and slowing requests: drain the instance and look at the layer named below."
			kept := found[:0]
			for _, part := range found {
				if part.kind != KindLatencySpike && part.kind != KindCacheHitDrop {
					kept = append(kept, part)
				}
			}
			found = append(kept, f)
			e.jointSuppressed[memSubj] = true
		}
	}
	return append(out, found...)
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

func processOrGPU(s *subject) string {
	if s.kind == kindProcess {
		return processName(s)
	}
	return "GPU " + s.hwID
}

// memorySlope is the steepest memory slope among the engine's process and
// GPU (bytes/s), from the last evaluation.
func (e *engine) memorySlope(s *subject) (float64, *subject) {
	best, who := 0.0, (*subject)(nil)
	for k, p := range e.reg.procs {
		if (s.pid >= 0 && k.pid == s.pid) || (s.hwID != "" && k.hwID == s.hwID && s.pid < 0) {
			if p.proc.fit.slope > best {
				best, who = p.proc.fit.slope, p
			}
		}
	}
	if g := e.engineGPU(s); g != nil && g.gpu.fit.slope > best && who == nil {
		best, who = g.gpu.fit.slope, g
	}
	return best, who
}

func (e *engine) latencyFloor(i int) float64 {
	switch i {
	case histTTFT:
		return e.cfg.Latency.TimeToFirstTokenFloor
	case histTPOT:
		return e.cfg.Latency.TimePerOutputTokenFloor
	case histDuration:
		return e.cfg.Latency.RequestDurationFloor
	default:
		return e.cfg.Latency.QueueDurationFloor
	}
}

// latencyAction suggests where the time goes, from what else is seen on
// the engine and its GPU.
func (e *engine) latencyAction(s *subject, now int64, kvSaturated bool) string {
	if kvSaturated {
		return "The KV cache is saturated: requests wait for cache space. Add replicas, raise gpu_memory_utilization or lower max_num_seqs."
	}
	if w, ok := s.eng.waiting.Last(); ok && w.V >= e.cfg.Queue.MinWaiting {
		return e.gpuCause(s, "Requests queue: add replicas or reduce load.")
	}
	return e.gpuCause(s, "Look at the profiler spans linked here for the slow layer; check for longer prompts or a new model version.")
}

// gpuCause adds what the GPU says to an action: idle GPU means the engine's
// CPU side is the bottleneck; throttled GPU means clocks are the cause.
func (e *engine) gpuCause(s *subject, fallback string) string {
	g := e.engineGPU(s)
	if g == nil {
		return fallback
	}
	if len(g.gpu.throttleNow) > 0 && g.gpu.throttleT >= g.lastSeen {
		return "The GPU is throttled (" + fmt.Sprint(g.gpu.throttleNow) + "): fix cooling/power first. " + fallback
	}
	if u, ok := g.gpu.util.Last(); ok && u.V < 0.3 {
		return "The GPU is mostly idle: the engine's scheduler/CPU side is the bottleneck (CPU limits, tokenization, Python overhead). " + fallback
	}
	return fallback
}

func fmtDur(ns int64) string {
	s := float64(ns) / 1e9
	if s < 120 {
		return fmt.Sprintf("%.0fs", s)
	}
	return fmt.Sprintf("%.0fmin", s/60)
}

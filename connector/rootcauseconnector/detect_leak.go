// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"math"
	"time"

	"github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector/internal/stats"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// leakDetector: steady growth of a process's (or, when no process on it
// explains it, a GPU's) memory — a leak, or KV-cache growth when the linked
// engine's KV utilization rose with it.
type leakDetector struct{ cfg LeakConfig }

func (leakDetector) detect(d *diagnoser, ev *evaluation) {
	for _, s := range d.subjects.procs {
		f, ok := d.leak(s, s.proc.mem, ev.now, &s.proc.fit, false)
		if !ok {
			f, ok = d.slowLeak(s, s.proc.long)
		}
		if ok {
			ev.add(f)
			ev.explainedGPU[s.hwID] = true
		}
	}
	for _, s := range d.subjects.gpus {
		f, ok := d.fitGPU(s, ev.now)
		if !ok && !ev.explainedGPU[s.hwID] {
			f, ok = d.slowLeak(s, s.gpu.long)
		}
		if ok && !ev.explainedGPU[s.hwID] {
			ev.add(f)
		}
	}
}

// fitGPU refreshes a GPU's memory fit, when its window gained a bucket since
// the last one, and the figures derived from it (growth rate, time to
// exhaustion). The pass-through pair calls it as each batch arrives, so the
// derived metrics describe the window including that batch.
func (d *diagnoser) fitGPU(s *subject, now int64) (finding, bool) {
	g := s.gpu
	f, ok := d.leak(s, g.mem, now, &g.fit, true)
	g.slopeOK = g.mem.Len() >= 3
	g.tte = -1
	if last, have := g.mem.Last(); have && g.fit.slope > 0 && g.limit > last.V {
		g.tte = (g.limit - last.V) / g.fit.slope
	}
	return f, ok
}

// leakRefit is how often a memory window is refitted (ns): every 1/20 of
// the window (30 s of a 10 min window). A trend that needs 3/4 of the
// window to show does not need a fresh fit every second, and 500 processes
// × 19 µs would.
func (d *diagnoser) leakRefit() int64 {
	return int64(max(d.cfg.EvaluationInterval, d.cfg.Leak.Window/20))
}

// leak fits the robust slope of a memory window and reports a leak (or
// KV-cache growth) when it is steep and steady enough. The fit is cached
// until the window gains a bucket; a window whose net growth is far below
// the threshold skips the fit (most processes are flat), unless exact is
// set (GPUs: their slope is also a derived metric).
func (d *diagnoser) leak(s *subject, mem stats.Series, now int64, fit *leakFit, exact bool) (finding, bool) {
	newest, have := mem.Last()
	if !have {
		*fit = leakFit{}
		return finding{}, false
	}
	if fit.fitT != 0 && newest.T-fit.fitT < d.leakRefit() {
		return fit.f, fit.ok
	}
	f, ok := d.fitLeak(s, mem, now, fit, exact)
	if ok {
		f.key = incidentKey(&f)
	}
	fit.fitT, fit.f, fit.ok = newest.T, f, ok
	return f, ok
}

func (d *diagnoser) fitLeak(s *subject, mem stats.Series, now int64, fit *leakFit, exact bool) (finding, bool) {
	cfg := d.cfg.Leak
	sc := &d.scratch
	sc.pts = mem.Since(sc.pts[:0], now-int64(cfg.Window))
	fit.slope = 0
	if len(sc.pts) < 4 {
		return finding{}, false
	}
	span := sc.pts[len(sc.pts)-1].T - sc.pts[0].T
	if span <= 0 {
		return finding{}, false
	}
	minSlope := cfg.MinSlopeMiBPerMinute * mib / 60
	net := (sc.pts[len(sc.pts)-1].V - sc.pts[0].V) / (float64(span) / 1e9)
	if !exact && net < minSlope/2 {
		// A steady trend moves the ends of the window by about slope ×
		// span: this one cannot be steep and steady enough.
		fit.slope = net
		return finding{}, false
	}
	// A leak that began (or sped up) inside the window is fitted from that
	// change: the flat or slower stretch before it would understate the
	// slope, and the time to exhaustion, just when the leak starts to
	// matter. A quarter of the window after the change is enough to fit.
	grow := sc.pts
	onset, fasterSince := int64(0), int64(0)
	if c, ok := stats.FindChange(sc.pts, 3, 4); ok && sc.pts[len(sc.pts)-1].T-sc.pts[c.Index].T >= int64(cfg.Window)/4 {
		grow = sc.pts[c.Index:]
		if c.Flat() {
			onset = grow[0].T
		} else {
			fasterSince = grow[0].T
		}
	}
	slope, steady, pairs, ok := stats.TheilSen(grow, sc.pairs)
	sc.pairs = pairs
	if !ok {
		return finding{}, false
	}
	fit.slope = slope
	perMin := slope * 60 / mib
	// A slope over a fraction of the window is not yet a trend.
	if span < int64(cfg.Window)*3/4 || perMin < cfg.MinSlopeMiBPerMinute || steady < cfg.MinSteadiness {
		return finding{}, false
	}
	first, last := grow[0], grow[len(grow)-1]
	usage, limit := last.V, 0.0
	if g := d.subjects.gpus[s.hwID]; g != nil {
		limit = g.gpu.limit
		if gl, ok := g.gpu.mem.Last(); ok {
			usage = gl.V
		}
	}
	tte := math.Inf(1)
	if limit > usage && slope > 0 {
		tte = (limit - usage) / slope
	}
	f := finding{subj: s, quadrant: spec.QuadrantSaturation, severity: spec.SeverityWarning, start: first.T, drill: drillMemory,
		onset: onset, headline: 1}
	metric := spec.HwGpuMemoryUsage
	who := "GPU " + s.hwID
	if s.kind == kindProcess {
		metric = spec.ProcessGpuMemoryUsage
		who = processName(s)
	}
	f.evidence = append(f.evidence,
		evidence{signal: metric, value: last.V, baseline: first.V, hasBaseline: true, unit: "By"},
		evidence{signal: spec.EvidenceMemoryGrowthRate, value: perMin, threshold: cfg.MinSlopeMiBPerMinute, hasThresh: true, unit: "MiBy/min"},
		evidence{signal: spec.EvidenceMemoryGrowthSteadiness, value: steady, threshold: cfg.MinSteadiness, hasThresh: true, unit: "1"})
	if !math.IsInf(tte, 1) {
		f.evidence = append(f.evidence, evidence{signal: spec.HwGpuMemoryTimeToExhaustion, value: tte,
			threshold: d.cfg.Leak.CriticalExhaustion.Seconds(), hasThresh: true, unit: "s"})
	}
	since := ""
	switch {
	case onset != 0:
		since = " since " + time.Unix(0, onset).UTC().Format("15:04:05Z") + " (flat before)"
	case fasterSince != 0:
		since = " since " + time.Unix(0, fasterSince).UTC().Format("15:04:05Z") + " (slower before)"
	}
	// Growth that the KV cache explains is not a leak.
	kvNote := ""
	if target := d.linkedEngine(s); target != nil {
		kpts := target.engine.kvLong.Since(nil, now-int64(cfg.Window))
		if len(kpts) >= 2 {
			rise := kpts[len(kpts)-1].V - kpts[0].V
			f.evidence = append(f.evidence, evidence{signal: spec.EngineKvCacheUtilization, value: kpts[len(kpts)-1].V,
				baseline: kpts[0].V, hasBaseline: true, threshold: cfg.KVExplainedRise, hasThresh: true, unit: "1",
				note: "rise over the window vs kv_explained_rise"})
			if rise >= cfg.KVExplainedRise {
				f.kind = spec.IncidentKindKVCacheGrowth
				f.score = math.Min(1, perMin/(4*cfg.MinSlopeMiBPerMinute))
				f.body = fmt.Sprintf("GPU memory of %s grows %.0f MiB/min%s%s, and its KV cache utilization rose %.0f%% → %.0f%% with it: KV-cache growth, not a leak",
					who, perMin, since, fullIn(tte), 100*kpts[0].V, 100*kpts[len(kpts)-1].V)
				f.action = "Expected while load rises; if memory must stay bounded, lower gpu_memory_utilization / max_num_seqs or the KV pool size."
				return f, true
			}
			kvNote = fmt.Sprintf("KV cache is flat (%.0f%% → %.0f%%), so this is not KV growth", 100*kpts[0].V, 100*kpts[len(kpts)-1].V)
		}
	}
	f.kind = spec.IncidentKindGPUMemoryLeak
	f.score = math.Min(1, perMin/(4*cfg.MinSlopeMiBPerMinute))
	if tte < d.cfg.Leak.CriticalExhaustion.Seconds() {
		f.severity = spec.SeverityCritical
		f.score = math.Max(f.score, 0.8)
	}
	f.body = fmt.Sprintf("GPU memory of %s grows %.0f MiB/min%s%s", who, perMin, since, fullIn(tte))
	if kvNote != "" {
		f.ruleOut(kvNote)
	} else {
		f.body += "; no engine KV-cache metrics for it, so KV growth is not ruled out"
	}
	f.action = "Find what keeps tensors alive across requests (caches, lists of outputs, retained graphs) in the layer named below; restart or drain the instance before it runs out."
	return f, true
}

func fullIn(tte float64) string {
	if math.IsInf(tte, 1) || tte < 0 {
		return ""
	}
	return ", full in " + (time.Duration(tte) * time.Second).Round(time.Minute).String()
}

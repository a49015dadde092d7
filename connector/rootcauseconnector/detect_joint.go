// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"math"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// jointDetector: a latency spike and a cache hit-ratio drop within
// joint.window while the engine's process or GPU memory grows at half the
// leak threshold or more are one cause, not three symptoms: one critical
// incident, scored with joint.weights, replaces them.
type jointDetector struct{ cfg JointConfig }

func (det jointDetector) detect(d *diagnoser, ev *evaluation) {
	minSlope := d.cfg.Leak.MinSlopeMiBPerMinute * mib / 60
	win := int64(det.cfg.Window)
	for _, s := range d.subjects.engines {
		es := s.engine
		lat := ev.finding(s, spec.IncidentKindLatencySpike)
		cache := ev.finding(s, spec.IncidentKindCacheHitDrop)
		if lat != nil {
			es.lastLatency = ev.now
		}
		if cache != nil {
			es.lastCache = ev.now
		}
		if lat == nil && cache == nil {
			continue
		}
		memSlope, memSubj := d.memorySlope(s)
		if es.lastLatency < ev.now-win || es.lastCache < ev.now-win || memSlope < minSlope/2 {
			continue
		}
		w := det.cfg.Weights
		score := (w.Latency*1 + w.Cache*1 + w.Memory*math.Min(1, memSlope/minSlope)) / (w.Latency + w.Cache + w.Memory)
		f := finding{kind: spec.IncidentKindJointDegradation, quadrant: spec.QuadrantLatency, severity: spec.SeverityCritical,
			subj: s, start: ev.now, score: score, drill: drillMemory}
		for _, part := range []*finding{cache, lat} {
			if part != nil {
				f.evidence = append(f.evidence, part.evidence...)
			}
		}
		f.evidence = append(f.evidence, evidence{signal: spec.EvidenceMemoryGrowthRate, value: memSlope * 60 / mib,
			threshold: d.cfg.Leak.MinSlopeMiBPerMinute / 2, hasThresh: true, unit: "MiBy/min"})
		who := ""
		if memSubj != nil {
			who = " of " + processOrGPU(memSubj)
		}
		f.body = fmt.Sprintf("%s degrades on three fronts at once: latency spike, prefix-cache hit ratio drop and GPU memory%s growing %.0f MiB/min",
			engineName(s), who, memSlope*60/mib)
		f.action = "Memory pressure is evicting cache and slowing requests: drain the instance and look at the layer named below."
		f.key = incidentKey(&f)
		ev.supersede(s, spec.IncidentKindLatencySpike, f.key)
		ev.supersede(s, spec.IncidentKindCacheHitDrop, f.key)
		// The joint incident carries the memory slope of its subject.
		ev.supersede(memSubj, spec.IncidentKindGPUMemoryLeak, f.key)
		ev.supersede(memSubj, spec.IncidentKindKVCacheGrowth, f.key)
		ev.add(f)
	}
}

// memorySlope is the steepest memory slope among the engine's process and
// GPU (bytes/s), from the newest fits.
func (d *diagnoser) memorySlope(s *subject) (float64, *subject) {
	best, who := 0.0, (*subject)(nil)
	for k, p := range d.subjects.procs {
		if (s.pid >= 0 && k.pid == s.pid) || (s.hwID != "" && k.hwID == s.hwID && s.pid < 0) {
			if p.proc.fit.slope > best {
				best, who = p.proc.fit.slope, p
			}
		}
	}
	if g := d.engineGPU(s); g != nil && g.gpu.fit.slope > best && who == nil {
		best, who = g.gpu.fit.slope, g
	}
	return best, who
}

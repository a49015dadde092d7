// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector/internal/stats"
)

// detector is one diagnosis, configured by one block of Config. It reads
// the subjects' windows at ev.now and adds what it concludes to ev.
type detector interface {
	detect(d *diagnoser, ev *evaluation)
}

// newDetectors lists the enabled detectors in the order they must run:
// some read what an earlier one found in the same evaluation (a GPU's leak
// defers to the leaks of its processes, queue build-up to KV saturation,
// latency advice to KV saturation; the joint trigger merges the latency and
// cache findings). rules are the rules it runs (Config.effectiveRules,
// computed once by the diagnoser).
func newDetectors(cfg *Config, rules []RuleConfig) []detector {
	var ds []detector
	add := func(on bool, det detector) {
		if on {
			ds = append(ds, det)
		}
	}
	add(cfg.Leak.Enabled, leakDetector{cfg: cfg.Leak})
	add(cfg.Throttle.Enabled, throttleDetector{cfg: cfg.Throttle})
	add(cfg.HardwareErrors.Enabled, hardwareErrorDetector{cfg: cfg.HardwareErrors})
	add(cfg.KVCache.Enabled, kvSaturationDetector{cfg: cfg.KVCache})
	add(cfg.CacheHit.Enabled, cacheHitDetector{cfg: cfg.CacheHit})
	add(cfg.Latency.Enabled, latencyDetector{cfg: cfg.Latency})
	add(cfg.Throughput.Enabled, throughputDetector{cfg: cfg.Throughput})
	add(cfg.Queue.Enabled, queueDetector{cfg: cfg.Queue})
	add(cfg.Joint.Enabled, jointDetector{cfg: cfg.Joint})
	add(len(rules) > 0, ruleDetector{})
	return ds
}

// evaluation is one run of every detector at one instant.
type evaluation struct {
	now int64
	out []finding
	// explainedGPU: GPUs whose growth the leak of a process on them
	// already explains.
	explainedGPU map[string]bool
	// found indexes out by subject and kind, for detectors that consult
	// another's finding of this evaluation.
	found map[findingKey]int
	// superseded findings are dropped at the end: a cause's incident
	// replaces its symptoms (the joint incident its parts, KV saturation a
	// latency spike, throttling a throughput drop). The value is the key of
	// the incident that replaces them; one already sent is resolved as
	// superseded, naming it.
	superseded map[findingKey]string
	// resolveNow: incidents whose end a detector saw (a GPU reset after a
	// hardware error), key -> resolution, resolved at once rather than
	// after resolve_after.
	resolveNow map[string]string
}

type findingKey struct {
	subj *subject
	kind string
}

func (ev *evaluation) add(f finding) {
	ev.found[findingKey{f.subj, f.kind}] = len(ev.out)
	ev.out = append(ev.out, f)
}

// finding returns this evaluation's finding of kind on s, or nil.
func (ev *evaluation) finding(s *subject, kind string) *finding {
	if i, ok := ev.found[findingKey{s, kind}]; ok {
		return &ev.out[i]
	}
	return nil
}

// supersede drops this evaluation's finding of kind on s (if any) in favour
// of the incident causeKey, and marks an incident of that finding already
// sent as superseded by it.
func (ev *evaluation) supersede(s *subject, kind, causeKey string) {
	if s != nil {
		ev.superseded[findingKey{s, kind}] = causeKey
	}
}

// symptomKey is the incident key of a finding of kind on s without a suffix
// (every finding a cause can replace).
func symptomKey(s *subject, kind string) string {
	return incidentKey(&finding{kind: kind, subj: s})
}

// evaluate runs every detector over the state at now and returns what it
// concluded. The caller holds d.mu.
func (d *diagnoser) evaluate(now int64) *evaluation {
	// Drop subjects that stopped reporting: an exited process or a removed
	// engine; their incidents resolve after resolve_after.
	stale := now - int64(d.cfg.StaleAfter)
	for s := d.subjects.tail; s != nil; {
		prev := s.prev
		if s.lastSeen < stale {
			d.subjects.remove(s)
		}
		s = prev
	}
	// GPU fits feed the derived metrics and the joint trigger even with
	// the leak detector off.
	for _, s := range d.subjects.gpus {
		d.fitGPU(s, now)
	}
	// One evaluation's scratch is reused by the next: a node with every
	// process leaking makes hundreds of findings a second, and growing a
	// fresh slice for them was a third of the connector's allocation.
	// track copies what it keeps (the caller holds d.mu throughout).
	ev := &d.ev
	if ev.found == nil {
		ev.explainedGPU, ev.found = map[string]bool{}, map[findingKey]int{}
		ev.superseded, ev.resolveNow = map[findingKey]string{}, map[string]string{}
	}
	clear(ev.out[:cap(ev.out)]) // no stale finding keeps an evicted subject alive
	ev.now, ev.out = now, ev.out[:0]
	clear(ev.explainedGPU)
	clear(ev.found)
	clear(ev.superseded)
	clear(ev.resolveNow)
	for _, det := range d.detectors {
		det.detect(d, ev)
	}
	if len(ev.superseded) == 0 {
		return ev
	}
	kept := ev.out[:0]
	for _, f := range ev.out {
		if _, gone := ev.superseded[findingKey{f.subj, f.kind}]; !gone {
			kept = append(kept, f)
		}
	}
	ev.out = kept
	return ev
}

// minBaseline is how many baseline values a dynamic threshold needs before
// it is trusted.
const minBaseline = 10

const mib = 1 << 20

// warm says whether an engine is past its cold start: younger ones stay out
// of baselines and the latency, cache and throughput detectors.
func (d *diagnoser) warm(s *subject) bool {
	return s.lastSeen-s.firstSeen >= int64(d.cfg.Warmup)
}

// heldFor is how long a condition seen from since to its newest sample at
// last has held at now: like a Prometheus rule's "for", it counts up to the
// evaluation while the newest sample is recent, rather than waiting for the
// next sample to prove it.
func (d *diagnoser) heldFor(since, last, now int64) int64 {
	if now-last <= int64(max(2*d.cfg.EvaluationInterval, 5*time.Second)) && now > last {
		return now - since
	}
	return last - since
}

// heldSince is when the newest unbroken run of points at or above thr
// began (0: the newest point is below it).
func heldSince(pts []stats.Point, thr float64) int64 {
	since := int64(0)
	for i := len(pts) - 1; i >= 0 && pts[i].V >= thr; i-- {
		since = pts[i].T
	}
	return since
}

// tokenRate is the output-token rate over throughput.window.
func (d *diagnoser) tokenRate(s *subject) (float64, bool) {
	return counterRate(s.engine.outTokens, d.cfg.Throughput.Window)
}

// counterRate is a counter's per-second increase over the window ending at
// its newest point; false when the history covers less than 80% of it.
func counterRate(ser stats.Series, window time.Duration) (float64, bool) {
	last, ok := ser.Last()
	if !ok {
		return 0, false
	}
	base, ok := ser.At(last.T - int64(window))
	if !ok {
		base, ok = ser.First()
		if !ok || last.T-base.T < int64(window)*4/5 {
			return 0, false
		}
	}
	dt := float64(last.T-base.T) / 1e9
	if dt <= 0 {
		return 0, false
	}
	return stats.CounterDelta(base.V, last.V) / dt, true
}

// counterDelta is a counter's increase over the window ending at its newest
// point (or over what history there is).
func counterDelta(ser stats.Series, window time.Duration) (float64, bool) {
	last, ok := ser.Last()
	if !ok {
		return 0, false
	}
	base, ok := ser.At(last.T - int64(window))
	if !ok {
		if base, ok = ser.First(); !ok {
			return 0, false
		}
	}
	return stats.CounterDelta(base.V, last.V), true
}

// linkedEngine finds the engine target running as a process or on a GPU:
// by pid, pod, or GPU as the engine target's resource attributes say.
func (d *diagnoser) linkedEngine(s *subject) *subject {
	var byGPU *subject
	for _, target := range d.subjects.engines {
		if s.kind == kindProcess && target.pid >= 0 && target.pid == s.pid && (target.hwID == "" || target.hwID == s.hwID) {
			return target
		}
		if s.kind == kindProcess && s.podUID != "" && target.podUID == s.podUID {
			return target
		}
		if s.kind == kindProcess && s.podName != "" && target.podName == s.podName && target.namespace == s.namespace {
			return target
		}
		if target.hwID != "" && target.hwID == s.hwID && (s.kind == kindGPU || target.pid < 0) {
			byGPU = target
		}
	}
	return byGPU
}

// engineGPU is the GPU an engine runs on, when its resource says.
func (d *diagnoser) engineGPU(s *subject) *subject {
	if s.hwID != "" {
		return d.subjects.gpus[s.hwID]
	}
	if s.pid >= 0 {
		for k, p := range d.subjects.procs {
			if k.pid == s.pid {
				return d.subjects.gpus[p.hwID]
			}
		}
	}
	return nil
}

// gpuCause adds what the GPU says to an action: idle GPU means the engine's
// CPU side is the bottleneck; throttled GPU means clocks are the cause.
func (d *diagnoser) gpuCause(s *subject, fallback string) string {
	g := d.engineGPU(s)
	if g == nil {
		return fallback
	}
	if runs := g.gpu.activeThrottle(g.lastSeen); len(runs) > 0 {
		return "The GPU is throttled (" + throttleReasons(runs) + "): fix cooling/power first. " + fallback
	}
	if u, ok := g.gpu.util.Last(); ok && u.V < 0.3 {
		return "The GPU is mostly idle: the engine's scheduler/CPU side is the bottleneck (CPU limits, tokenization, Python overhead). " + fallback
	}
	return fallback
}

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

func processName(s *subject) string {
	b := strings.Builder{}
	if s.exe != "" {
		b.WriteString(s.exe + " ")
	}
	fmt.Fprintf(&b, "pid %d", s.pid)
	if s.podName != "" {
		b.WriteString(" (pod " + s.podName + ")")
	} else if s.podUID != "" {
		b.WriteString(" (pod uid " + s.podUID + ")")
	}
	fmt.Fprintf(&b, " on %s", s.hwID)
	return b.String()
}

func processOrGPU(s *subject) string {
	if s.kind == kindProcess {
		return processName(s)
	}
	return "GPU " + s.hwID
}

func fmtDur(ns int64) string {
	s := float64(ns) / 1e9
	if s < 120 {
		return fmt.Sprintf("%.0fs", s)
	}
	return fmt.Sprintf("%.0fmin", s/60)
}

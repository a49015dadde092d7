package rootcauseprocessor

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/processor/rootcauseprocessor/internal/stats"
)

// Incident kinds (incident.kind).
const (
	KindGPUMemoryLeak     = "gpu_memory_leak"
	KindKVCacheGrowth     = "kv_cache_growth"
	KindKVCacheSaturation = "kv_cache_saturation"
	KindCacheHitDrop      = "cache_hit_drop"
	KindLatencySpike      = "latency_spike"
	KindThroughputDrop    = "throughput_drop"
	KindQueueBuildup      = "queue_buildup"
	KindGPUThrottling     = "gpu_throttling"
	KindXIDError          = "xid_error"
	KindECCUncorrected    = "ecc_uncorrected"
	KindJoint             = "joint_degradation"
)

const mib = 1 << 20

// evidence is one signal an incident was decided on.
type evidence struct {
	signal      string
	value       float64
	baseline    float64
	hasBaseline bool
	threshold   float64
	hasThresh   bool
	unit        string
	note        string
}

// finding is what a detector concluded about one subject in one evaluation.
type finding struct {
	kind, quadrant, severity string
	subj                     *subject
	score                    float64
	body                     string
	action                   string
	evidence                 []evidence
	start                    int64 // Unix ns the condition began
	// drill says how to drill down: by memory (leaks) or by time (latency).
	drill drillKind
	// suffix tells apart incidents of one kind on one subject (XID codes).
	suffix string
	// key is the incident key, when already computed.
	key string
}

type drillKind uint8

const (
	drillNone drillKind = iota
	drillMemory
	drillTime
)

// evalScratch holds buffers reused by every evaluation.
type evalScratch struct {
	pts   []stats.Point
	pairs []float64
	delta []uint64
}

// evaluate runs every detector over the state at now and returns the
// findings. The caller holds e.mu.
func (e *engine) evaluate(now int64) []finding {
	cfg := e.cfg
	var out []finding
	stale := now - int64(cfg.StaleAfter)
	// Drop subjects that stopped reporting: an exited process or a removed
	// engine; their incidents resolve after resolve_after.
	for s := e.reg.tail; s != nil; {
		prev := s.prev
		if s.lastSeen < stale {
			e.reg.remove(s)
		}
		s = prev
	}

	explainedGPU := map[string]bool{}
	if cfg.Leak.Enabled {
		for _, s := range e.reg.procs {
			if f, ok := e.leak(s, s.proc.mem, now, &s.proc.fit, false); ok {
				out = append(out, f)
				explainedGPU[s.hwID] = true
			}
		}
	}
	for _, s := range e.reg.gpus {
		g := s.gpu
		f, ok := e.leak(s, g.mem, now, &g.fit, true)
		g.slopeOK = g.mem.Len() >= 3
		g.tte = -1
		if last, have := g.mem.Last(); have && g.fit.slope > 0 && g.limit > last.V {
			g.tte = (g.limit - last.V) / g.fit.slope
		}
		if ok && cfg.Leak.Enabled && !explainedGPU[s.hwID] {
			out = append(out, f)
		}
		if cfg.Throttle.Enabled {
			if f, ok := e.throttle(s, now); ok {
				out = append(out, f)
			}
		}
		out = e.hardwareErrors(s, now, out)
	}
	for _, s := range e.reg.engines {
		out = e.engineDetectors(s, now, out)
	}
	out = e.evaluateRules(now, out)
	if len(e.jointSuppressed) > 0 {
		// The joint incident carries the memory slope of these subjects.
		kept := out[:0]
		for _, f := range out {
			if !(e.jointSuppressed[f.subj] && (f.kind == KindGPUMemoryLeak || f.kind == KindKVCacheGrowth)) {
				kept = append(kept, f)
			}
		}
		out = kept
		clear(e.jointSuppressed)
	}
	return out
}

// leak fits the robust slope of a memory window and reports a leak (or
// KV-cache growth) when it is steep and steady enough. The fit is cached
// until the window gains a bucket; a window whose net growth is far below
// the threshold skips the fit (most processes are flat), unless exact is
// set (GPUs: their slope is also a derived metric).
func (e *engine) leak(s *subject, mem stats.Series, now int64, fit *leakFit, exact bool) (finding, bool) {
	newest, have := mem.Last()
	if !have {
		*fit = leakFit{}
		return finding{}, false
	}
	if fit.fitT != 0 && newest.T-fit.fitT < e.leakWidth {
		return fit.f, fit.ok
	}
	f, ok := e.fitLeak(s, mem, now, fit, exact)
	if ok {
		f.key = incidentKey(&f)
	}
	fit.fitT, fit.f, fit.ok = newest.T, f, ok
	return f, ok
}

func (e *engine) fitLeak(s *subject, mem stats.Series, now int64, fit *leakFit, exact bool) (finding, bool) {
	cfg := e.cfg.Leak
	sc := &e.scratch
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
	slope, steady, pairs, ok := stats.TheilSen(sc.pts, sc.pairs)
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
	first, last := sc.pts[0], sc.pts[len(sc.pts)-1]
	usage, limit := last.V, 0.0
	if g := e.reg.gpus[s.hwID]; g != nil {
		limit = g.gpu.limit
		if gl, ok := g.gpu.mem.Last(); ok {
			usage = gl.V
		}
	}
	tte := math.Inf(1)
	if limit > usage && slope > 0 {
		tte = (limit - usage) / slope
	}
	f := finding{subj: s, quadrant: QuadrantSaturation, severity: SeverityWarning, start: first.T, drill: drillMemory}
	metric := spec.HwGpuMemoryUsage
	who := "GPU " + s.hwID
	if s.kind == kindProcess {
		metric = spec.ProcessGpuMemoryUsage
		who = processName(s)
	}
	f.evidence = append(f.evidence,
		evidence{signal: metric, value: last.V, baseline: first.V, hasBaseline: true, unit: "By"},
		evidence{signal: "memory.growth_rate", value: perMin, threshold: cfg.MinSlopeMiBPerMinute, hasThresh: true, unit: "MiBy/min"},
		evidence{signal: "memory.growth_steadiness", value: steady, threshold: cfg.MinSteadiness, hasThresh: true, unit: "1"})
	if !math.IsInf(tte, 1) {
		f.evidence = append(f.evidence, evidence{signal: spec.HwGpuMemoryTimeToExhaustion, value: tte,
			threshold: e.cfg.Leak.CriticalExhaustion.Seconds(), hasThresh: true, unit: "s"})
	}
	// Growth that the KV cache explains is not a leak.
	kvNote := "no engine KV-cache metrics for it"
	if eng := e.linkedEngine(s); eng != nil {
		kpts := eng.eng.kvLong.Since(nil, now-int64(cfg.Window))
		if len(kpts) >= 2 {
			rise := kpts[len(kpts)-1].V - kpts[0].V
			f.evidence = append(f.evidence, evidence{signal: spec.EngineKvCacheUtilization, value: kpts[len(kpts)-1].V,
				baseline: kpts[0].V, hasBaseline: true, threshold: cfg.KVExplainedRise, hasThresh: true, unit: "1",
				note: "rise over the window vs kv_explained_rise"})
			if rise >= cfg.KVExplainedRise {
				f.kind = KindKVCacheGrowth
				f.score = math.Min(1, perMin/(4*cfg.MinSlopeMiBPerMinute))
				f.body = fmt.Sprintf("GPU memory of %s grows %.0f MiB/min%s, and its KV cache utilization rose %.0f%% → %.0f%% with it: KV-cache growth, not a leak",
					who, perMin, fullIn(tte), 100*kpts[0].V, 100*kpts[len(kpts)-1].V)
				f.action = "Expected while load rises; if memory must stay bounded, lower gpu_memory_utilization / max_num_seqs or the KV pool size."
				return f, true
			}
			kvNote = fmt.Sprintf("KV cache is flat (%.0f%% → %.0f%%), so this is not KV growth", 100*kpts[0].V, 100*kpts[len(kpts)-1].V)
		}
	}
	f.kind = KindGPUMemoryLeak
	f.score = math.Min(1, perMin/(4*cfg.MinSlopeMiBPerMinute))
	if tte < e.cfg.Leak.CriticalExhaustion.Seconds() {
		f.severity = SeverityCritical
		f.score = math.Max(f.score, 0.8)
	}
	f.body = fmt.Sprintf("GPU memory of %s grows %.0f MiB/min%s; %s", who, perMin, fullIn(tte), kvNote)
	f.action = "Find what keeps tensors alive across requests (caches, lists of outputs, retained graphs) in the layer named below; restart or drain the instance before it runs out."
	return f, true
}

func fullIn(tte float64) string {
	if math.IsInf(tte, 1) || tte < 0 {
		return ""
	}
	return ", full in " + (time.Duration(tte) * time.Second).Round(time.Minute).String()
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

// linkedEngine finds the engine target running as a process or on a GPU:
// by pid, pod, or GPU as the engine target's resource attributes say.
func (e *engine) linkedEngine(s *subject) *subject {
	var byGPU *subject
	for _, eng := range e.reg.engines {
		if s.kind == kindProcess && eng.pid >= 0 && eng.pid == s.pid && (eng.hwID == "" || eng.hwID == s.hwID) {
			return eng
		}
		if s.kind == kindProcess && s.podUID != "" && eng.podUID == s.podUID {
			return eng
		}
		if s.kind == kindProcess && s.podName != "" && eng.podName == s.podName && eng.namespace == s.namespace {
			return eng
		}
		if eng.hwID != "" && eng.hwID == s.hwID && (s.kind == kindGPU || eng.pid < 0) {
			byGPU = eng
		}
	}
	return byGPU
}

// engineGPU is the GPU an engine runs on, when its resource says.
func (e *engine) engineGPU(s *subject) *subject {
	if s.hwID != "" {
		return e.reg.gpus[s.hwID]
	}
	if s.pid >= 0 {
		for k, p := range e.reg.procs {
			if k.pid == s.pid {
				return e.reg.gpus[p.hwID]
			}
		}
	}
	return nil
}

// throttle: thermal or hardware slowdown held for throttle.for; a power cap
// only when the engine on that GPU is losing throughput.
func (e *engine) throttle(s *subject, now int64) (finding, bool) {
	g := s.gpu
	active := len(g.throttleNow) > 0 && g.throttleT >= s.lastSeen
	if !active {
		g.throttleSince = 0
		return finding{}, false
	}
	if g.throttleSince == 0 {
		g.throttleSince = g.throttleT
	}
	held := e.heldFor(g.throttleSince, g.throttleT, now)
	if held < int64(e.cfg.Throttle.For) {
		return finding{}, false
	}
	reasons := strings.Join(g.throttleNow, ", ")
	powerOnly := true
	for _, r := range g.throttleNow {
		if r != "sw_power_cap" {
			powerOnly = false
		}
	}
	f := finding{kind: KindGPUThrottling, quadrant: QuadrantThroughput, severity: SeverityWarning, subj: s,
		start: g.throttleSince, score: 0.6}
	f.evidence = append(f.evidence, evidence{signal: spec.HwGpuThrottle, value: 1, unit: "1", note: reasons},
		evidence{signal: "throttle.duration", value: float64(held) / 1e9,
			threshold: e.cfg.Throttle.For.Seconds(), hasThresh: true, unit: "s"})
	tputNote := ""
	if eng := e.linkedEngine(s); eng != nil {
		if rate, ok := e.tokenRate(eng, now); ok {
			mean, _ := eng.eng.tputBase.MeanStd()
			f.evidence = append(f.evidence, evidence{signal: "llm.engine.tokens.rate", value: rate, baseline: mean,
				hasBaseline: eng.eng.tputBase.Len() > 0, unit: "{token}/s"})
			if eng.eng.tputBase.Len() > 0 && rate < mean*(1-e.cfg.Throughput.Drop) {
				tputNote = fmt.Sprintf("; output tokens/s down to %.0f from %.0f", rate, mean)
				f.score = 0.8
			} else if powerOnly {
				return finding{}, false
			}
		}
	} else if powerOnly {
		// A power cap alone, with no engine to tell whether it costs
		// throughput, is normal operation under load.
		return finding{}, false
	}
	f.body = fmt.Sprintf("GPU %s clocks held back by %s for %s%s", s.hwID, reasons,
		time.Duration(held).Round(time.Second), tputNote)
	if strings.Contains(reasons, "thermal") {
		f.action = "Check cooling and airflow of the node (fans, inlet temperature, a blocked slot); move the load off this GPU if it persists."
	} else {
		f.action = "Check the power limit (nvidia-smi -q -d POWER) and the node's power budget; lower batch size or move load."
	}
	return f, true
}

// xidMeaning names the XIDs an operator meets most.
var xidMeaning = map[int64]string{
	13:  "graphics engine exception (often an out-of-bounds access in a kernel)",
	31:  "GPU memory page fault (illegal address in a kernel)",
	43:  "GPU stopped processing (a kernel was killed after a fault)",
	45:  "preemptive cleanup after a previous error",
	48:  "double-bit ECC error",
	61:  "internal micro-controller breakpoint/warning",
	62:  "internal micro-controller halt",
	63:  "ECC page retirement or row remap recorded",
	64:  "ECC page retirement or row remap failure",
	74:  "NVLink error",
	79:  "GPU has fallen off the bus",
	92:  "high single-bit ECC error rate",
	94:  "contained ECC error",
	95:  "uncontained ECC error",
	119: "GSP RPC timeout",
}

func (e *engine) hardwareErrors(s *subject, now int64, out []finding) []finding {
	g := s.gpu
	recent := now - int64(e.cfg.ResolveAfter)
	codes := make([]int64, 0, len(g.xidFired))
	for code, t := range g.xidFired {
		if t >= recent {
			codes = append(codes, code)
		}
	}
	sort.Slice(codes, func(i, j int) bool { return codes[i] < codes[j] })
	for _, code := range codes {
		meaning := xidMeaning[code]
		if meaning == "" {
			meaning = "see NVIDIA's XID catalogue"
		}
		f := finding{kind: KindXIDError, quadrant: QuadrantErrors, severity: SeverityCritical, subj: s,
			start: g.xidFired[code], score: 1}
		f.evidence = append(f.evidence, evidence{signal: spec.HwErrors, value: g.xid[code], unit: "{error}",
			note: fmt.Sprintf("error.type=xid hw.gpu.xid=%d", code)})
		f.body = fmt.Sprintf("XID %d on GPU %s: %s", code, s.hwID, meaning)
		switch code {
		case 48, 63, 64, 79, 92, 94, 95, 119:
			f.action = "Drain this GPU (cordon the node or mark the device unhealthy) and reset it; hardware or driver service needed if it repeats."
		default:
			f.action = "Check the application's logs at that moment (a faulting kernel); restart the process on this GPU, and drain the GPU if it repeats."
		}
		f.suffix = fmt.Sprint(code) // one incident per code
		out = append(out, f)
	}
	if g.eccFiredAt >= recent && g.eccFiredAt > 0 {
		f := finding{kind: KindECCUncorrected, quadrant: QuadrantErrors, severity: SeverityCritical, subj: s,
			start: g.eccFiredAt, score: 1}
		f.evidence = append(f.evidence, evidence{signal: spec.HwErrors, value: g.ecc, unit: "{error}", note: "error.type=uncorrected"})
		f.body = fmt.Sprintf("Uncorrected ECC errors on GPU %s (total %.0f): data in GPU memory may be corrupt", s.hwID, g.ecc)
		f.action = "Drain the GPU and reset it to retire the pages; replace the board if errors recur."
		out = append(out, f)
	}
	return out
}

// tokenRate is the output-token rate over throughput.window.
func (e *engine) tokenRate(s *subject, now int64) (float64, bool) {
	return counterRate(s.eng.outTokens, now, e.cfg.Throughput.Window)
}

// heldFor is how long a condition seen from since to its newest sample at
// last has held at now: like a Prometheus rule's "for", it counts up to the
// evaluation while the newest sample is recent, rather than waiting for the
// next sample to prove it.
func (e *engine) heldFor(since, last, now int64) int64 {
	if now-last <= int64(max(2*e.cfg.EvaluationInterval, 5*time.Second)) && now > last {
		return now - since
	}
	return last - since
}

// counterRate is a counter's per-second increase over the window ending at
// its newest point; false when the history covers less than 80% of it.
func counterRate(ser stats.Series, now int64, window time.Duration) (float64, bool) {
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

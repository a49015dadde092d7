// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector/internal/metadata"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

const (
	gpu0 = "GPU-00000000-0000-0000-0000-000000000000"
	gpu1 = "GPU-11111111-1111-1111-1111-111111111111"
	gib  = float64(1 << 30)
)

var nvmlRes = map[string]any{"service.name": "otelcol-llmops"}

// gpuBatch: two 80 GiB GPUs; pid 100 on GPU 0 grows `grow` bytes/s from
// `from` seconds, pid 200 on GPU 1 is flat.
func gpuBatch(s, grow, from float64) pmetric.Metrics {
	leaked := 0.0
	if s > from {
		leaked = grow * (s - from)
	}
	p100 := 20*gib + leaked
	p200 := 10 * gib
	return batch(nvmlRes, sec(s),
		pt{name: spec.HwGpuMemoryUsage, v: p100 + 1*gib, attrs: map[string]any{"hw.id": gpu0}},
		pt{name: spec.HwGpuMemoryLimit, v: 80 * gib, attrs: map[string]any{"hw.id": gpu0}},
		pt{name: spec.HwGpuMemoryUsage, v: p200 + 1*gib, attrs: map[string]any{"hw.id": gpu1}},
		pt{name: spec.HwGpuMemoryLimit, v: 80 * gib, attrs: map[string]any{"hw.id": gpu1}},
		pt{name: spec.HwGpuUtilization, v: 0.8, attrs: map[string]any{"hw.id": gpu0, "hw.gpu.task": "general"}},
		pt{name: spec.ProcessGpuMemoryUsage, v: p100, attrs: map[string]any{"hw.id": gpu0, "process.pid": int64(100), "process.executable.name": "vllm", "k8s.pod.name": "vllm-7b-2"}},
		pt{name: spec.ProcessGpuMemoryUsage, v: p200, attrs: map[string]any{"hw.id": gpu1, "process.pid": int64(200), "process.executable.name": "python"}},
	)
}

const leakBytes = int64(1932735283) // 1.8 GiB

const leakPath = "LlamaForCausalLM/LlamaModel/LlamaDecoderLayer_12/LlamaAttention_12"

// profileOf is what profileimport sends for a profile of pid 100: outstanding
// bytes per module path, and a leak-suspect record with the span ids.
func profileOf(pid int64) (pmetric.Metrics, plog.Logs, pcommon.TraceID) {
	res := map[string]any{"process.pid": pid, "llm.profile.file": "/profiles/rank0.pt.trace.json.gz"}
	md := batch(res, sec(1),
		pt{name: spec.ProfileMemoryOutstanding, v: 1.8 * gib, attrs: map[string]any{"llm.profile.module_path": leakPath, "llm.profile.device": int64(0)}},
		pt{name: spec.ProfileMemoryOutstanding, v: 10 << 20, attrs: map[string]any{"llm.profile.module_path": "LlamaForCausalLM/LlamaModel/LlamaDecoderLayer_3/LlamaMLP_3", "llm.profile.device": int64(0)}})
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	_ = rl.Resource().Attributes().FromRaw(res)
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	tid := pcommon.TraceID{0xab, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	lr.SetTraceID(tid)
	lr.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	lr.Attributes().PutStr(spec.IncidentKind, spec.IncidentKindLeakSuspect)
	lr.Attributes().PutStr(spec.AttrProfileModulePath, leakPath)
	lr.Attributes().PutInt(spec.AttrProfileOutstandingBytes, leakBytes)
	return md, ld, tid
}

func TestLeakNamesTheProcessAndTheLayer(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.Leak.Window = time.Minute })
	md, ld, tid := profileOf(100)
	d.consumeMetrics(md, true)
	d.drill.ingestLogs(ld)
	recs := run(d, 120, func(s float64) []pmetric.Metrics {
		return []pmetric.Metrics{gpuBatch(s, 8<<20, 0)} // 480 MiB/min from the start
	})
	leaks := firing(recs, spec.IncidentKindGPUMemoryLeak)
	if len(leaks) != 1 {
		t.Fatalf("want one leak incident, got %d: %+v", len(leaks), recs)
	}
	l := leaks[0]
	if l.attrs["process.pid"] != int64(100) || l.attrs["hw.id"] != gpu0 || l.attrs["k8s.pod.name"] != "vllm-7b-2" {
		t.Fatalf("wrong subject: %v", l.attrs)
	}
	if l.layer != leakPath || l.traceID != tid {
		t.Fatalf("drill-down: layer %q trace %v", l.layer, l.traceID)
	}
	// The window is 60 s and needs 3/4 of it covered: not before 45 s, and
	// no later than window + 2 evaluations.
	if after := time.Duration(l.ts - sec(0)); after < 44*time.Second || after > 62*time.Second {
		t.Fatalf("fired %s after onset", after)
	}
	for _, want := range []string{"vllm pid 100", "480 MiB/min", "KV", "1.8 GiB", "LlamaAttention_12"} {
		if !strings.Contains(l.body, want) {
			t.Errorf("body lacks %q: %s", want, l.body)
		}
	}
	stack := l.attrs["incident.layer_stack"].([]any)
	if len(stack) != 4 || stack[0].(map[string]any)["module_path"] != "LlamaForCausalLM" {
		t.Fatalf("layer stack %v", stack)
	}
	if b := stack[0].(map[string]any)["bytes"].(int64); b != leakBytes+10<<20 {
		t.Fatalf("root layer bytes %d", b)
	}
	// The GPU-level leak is the same leak: not reported twice.
	for _, r := range recs {
		if r.kind == spec.IncidentKindGPUMemoryLeak && r.attrs["process.pid"] == nil {
			t.Fatalf("GPU-level duplicate: %s", r.body)
		}
		if r.attrs["process.pid"] == int64(200) {
			t.Fatalf("flat process reported: %s", r.body)
		}
	}
	if ev := l.attrs["incident.evidence"].([]any); len(ev) < 3 {
		t.Fatalf("evidence %v", ev)
	}
}

func TestLeakWithoutProfileSaysHowToGetOne(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.Leak.Window = 30 * time.Second })
	recs := run(d, 40, func(s float64) []pmetric.Metrics { return []pmetric.Metrics{gpuBatch(s, 8<<20, 0)} })
	leaks := firing(recs, spec.IncidentKindGPUMemoryLeak)
	if len(leaks) != 1 || leaks[0].layer != "" || !strings.Contains(leaks[0].body, "start_profile") {
		t.Fatalf("%+v", leaks)
	}
}

func TestSlowGrowthSawtoothAndStepAreNotLeaks(t *testing.T) {
	for name, gen := range map[string]func(s float64) float64{
		"slow":     func(s float64) float64 { return s * (1 << 20) },                                   // 60 MiB/min < 80
		"sawtooth": func(s float64) float64 { return float64(int64(s)%10) * 400 * (1 << 20) },          // grows and frees
		"step":     func(s float64) float64 { return map[bool]float64{true: 4 * gib}[s > 30] + 0*gib }, // one allocation
	} {
		t.Run(name, func(t *testing.T) {
			d := newTestDiagnoser(t, func(c *Config) { c.Leak.Window = time.Minute })
			recs := run(d, 150, func(s float64) []pmetric.Metrics {
				return []pmetric.Metrics{batch(nvmlRes, sec(s),
					pt{name: spec.ProcessGpuMemoryUsage, v: 10*gib + gen(s), attrs: map[string]any{"hw.id": gpu0, "process.pid": int64(1)}})}
			})
			if l := firing(recs, spec.IncidentKindGPUMemoryLeak); len(l) != 0 {
				t.Fatalf("false leak: %s", l[0].body)
			}
		})
	}
}

// engineRes is a vLLM target running as pid 100 on GPU 0.
var engineRes = map[string]any{"llm.engine.name": "vllm", "llm.engine.target": "http://127.0.0.1:8000/metrics",
	"gen_ai.request.model": "meta-llama/Llama-3.1-8B-Instruct", "process.pid": "100", "hw.id": gpu0}

func TestGrowthWithRisingKVCacheIsKVGrowth(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.Leak.Window = time.Minute })
	recs := run(d, 90, func(s float64) []pmetric.Metrics {
		return []pmetric.Metrics{gpuBatch(s, 8<<20, 0),
			batch(engineRes, sec(s), pt{name: spec.EngineKvCacheUtilization, v: 0.2 + s/200})}
	})
	if l := firing(recs, spec.IncidentKindGPUMemoryLeak); len(l) != 0 {
		t.Fatalf("reported as a leak: %s", l[0].body)
	}
	g := firing(recs, spec.IncidentKindKVCacheGrowth)
	if len(g) != 1 || g[0].attrs["process.pid"] != int64(100) {
		t.Fatalf("want one kv_cache_growth for pid 100: %+v", recs)
	}
}

func TestKVCacheSaturationWithPreemptions(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.KVCache.For = 10 * time.Second })
	recs := run(d, 40, func(s float64) []pmetric.Metrics {
		kv, pre := 0.5, 0.0
		if s >= 20 {
			kv, pre = 0.95, (s-20)*3
		}
		return []pmetric.Metrics{batch(engineRes, sec(s),
			pt{name: spec.EngineKvCacheUtilization, v: kv},
			pt{name: spec.EnginePreemptions, v: pre, sum: true},
			pt{name: spec.EngineRequestsWaiting, v: 40})}
	})
	f := firing(recs, spec.IncidentKindKVCacheSaturation)
	if len(f) != 1 {
		t.Fatalf("want one saturation incident: %+v", recs)
	}
	if after := time.Duration(f[0].ts - sec(20)); after < 10*time.Second || after > 12*time.Second {
		t.Fatalf("fired %s after onset, want for (10s) + at most 2 evaluations", after)
	}
	if f[0].quadrant != spec.QuadrantSaturation || f[0].attrs["llm.engine.name"] != "vllm" || !strings.Contains(f[0].body, "preemptions") {
		t.Fatalf("%+v", f[0])
	}
	if q := firing(recs, spec.IncidentKindQueueBuildup); len(q) != 0 {
		t.Fatalf("the queue is the saturation's symptom, not a second incident: %s", q[0].body)
	}
}

// The KV incident says what the utilization means: blocks of the pool,
// bytes left, fragmentation (the figures llmnormalize computes from the
// engine's cache configuration), and leaves out figures the engine stopped
// publishing.
func TestKVSaturationNamesBlocksAndBytes(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.KVCache.For = 10 * time.Second })
	const blocks, used = 12672.0, 12288.0
	const bpt = 2 * 32 * 8 * 128 * 2
	recs := run(d, 40, func(s float64) []pmetric.Metrics {
		kv := 0.5
		if s >= 20 {
			kv = used / blocks
		}
		return []pmetric.Metrics{batch(engineRes, sec(s),
			pt{name: spec.EngineKvCacheUtilization, v: kv},
			pt{name: spec.EngineRequestsWaiting, v: 40},
			pt{name: spec.EngineKvCacheBlockLimit, v: blocks},
			pt{name: spec.EngineKvCacheBlockUsage, v: kv * blocks},
			pt{name: spec.EngineKvCacheMemoryLimit, v: blocks * 16 * bpt},
			pt{name: spec.EngineKvCacheMemoryUsage, v: kv * blocks * 16 * bpt},
			pt{name: spec.EngineKvCacheFragmentation, v: 0.18,
				attrs: map[string]any{spec.AttrEngineKvCacheFragmentationMethod: spec.KVFragmentationEstimated}})}
	})
	f := firing(recs, spec.IncidentKindKVCacheSaturation)
	if len(f) != 1 {
		t.Fatalf("want one saturation incident: %+v", recs)
	}
	// 384 blocks of 16 tokens at 128 KiB each are 768 MiB; the pool is
	// 12,672 × 16 × 128 KiB = 24.75 GiB.
	for _, want := range []string{"at 97%: 12,288 of 12,672 blocks", "≈ 768 MiB free of 24.8 GiB", "block fragmentation 18% (estimated"} {
		if !strings.Contains(f[0].body, want) {
			t.Errorf("body %q lacks %q", f[0].body, want)
		}
	}
	ev := f[0].attrs[spec.IncidentEvidence].([]any)
	signals := map[string]bool{}
	for _, e := range ev {
		signals[e.(map[string]any)[spec.EvidenceSignal].(string)] = true
	}
	for _, s := range []string{spec.EngineKvCacheBlockUsage, spec.EngineKvCacheMemoryUsage, spec.EngineKvCacheFragmentation} {
		if !signals[s] {
			t.Errorf("no %s in the evidence: %v", s, ev)
		}
	}

	// An engine without a cache configuration: the incident says the
	// utilization alone.
	d = newTestDiagnoser(t, func(c *Config) { c.KVCache.For = 10 * time.Second })
	recs = run(d, 40, func(s float64) []pmetric.Metrics {
		return []pmetric.Metrics{batch(engineRes, sec(s), pt{name: spec.EngineKvCacheUtilization, v: 0.97})}
	})
	if f := firing(recs, spec.IncidentKindKVCacheSaturation); len(f) != 1 || strings.Contains(f[0].body, "blocks") {
		t.Fatalf("without capacity figures: %+v", f)
	}
}

var latBounds = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20}

// latencyBatch: 10 requests/s, 1% of them in bucket `slow` (index), the
// rest under 0.5 s.
func latencyBatch(s float64, total *[9]uint64, slow int) pmetric.Metrics {
	total[1] += 9
	total[2] += 1
	if slow >= 0 {
		total[1] -= 9
		total[slow] += 9
	}
	md := batch(engineRes, sec(s), pt{name: spec.EngineRequestsWaiting, v: 0})
	addHist(md, spec.GenAIServerRequestDuration, sec(s), latBounds, total[:])
	return md
}

func TestLatencySpikeAboveBaselineAndFloor(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) {
		c.Latency.Window = 10 * time.Second
		c.Latency.Baseline = 2 * time.Minute
	})
	var total [9]uint64
	recs := run(d, 120, func(s float64) []pmetric.Metrics {
		slow := -1
		if s >= 100 {
			slow = 6 // 5..10 s
		}
		return []pmetric.Metrics{latencyBatch(s, &total, slow)}
	})
	f := firing(recs, spec.IncidentKindLatencySpike)
	if len(f) != 1 {
		t.Fatalf("want one latency spike: %+v", recs)
	}
	if after := time.Duration(f[0].ts - sec(100)); after > 12*time.Second {
		t.Fatalf("fired %s after onset", after)
	}
	if f[0].quadrant != spec.QuadrantLatency || !strings.Contains(f[0].body, "request duration") {
		t.Fatalf("%+v", f[0])
	}
	// The graded response to a request-duration spike (p99 above 3σ and
	// 2.5 s) is the quantized-model pipeline.
	if id, _ := f[0].attrs[spec.IncidentActionID].(string); id != spec.ActionStartQuantizedPipeline {
		t.Errorf("incident.action.id %q, want %s", id, spec.ActionStartQuantizedPipeline)
	}
}

func TestColdStartDoesNotFire(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) {
		c.Warmup = time.Minute
		c.Latency.Window = 10 * time.Second
		c.Latency.Baseline = 2 * time.Minute
	})
	var total [9]uint64
	recs := run(d, 150, func(s float64) []pmetric.Metrics {
		slow := -1
		if s < 50 {
			slow = 7 // warm-up: 10..20 s requests
		}
		return []pmetric.Metrics{latencyBatch(s, &total, slow)}
	})
	if len(recs) != 0 {
		t.Fatalf("cold start fired: %+v", recs)
	}
}

// xidRun: XID code counted from 5 s on GPU 0; hook (if set) runs before
// each evaluation and may add points to the batch.
func xidRun(d *diagnoser, code int64, to float64, hook func(s float64, pts []pt) []pt) []record {
	return run(d, to, func(s float64) []pmetric.Metrics {
		n := 0.0
		if s >= 5 {
			n = 1
		}
		pts := []pt{{name: spec.HwGpuMemoryUsage, v: gib, attrs: map[string]any{"hw.id": gpu0}},
			{name: spec.HwErrors, v: n, sum: true, attrs: map[string]any{"hw.id": gpu0, "error.type": "xid", "hw.gpu.xid": code}}}
		if hook != nil {
			pts = hook(s, pts)
		}
		return []pmetric.Metrics{batch(nvmlRes, sec(s), pts...)}
	})
}

// TestApplicationXIDClears: XID 13 is a faulting kernel; the GPU is fine,
// so the incident (a warning) clears like any other once it stops.
func TestApplicationXIDClears(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.ResolveAfter = 10 * time.Second })
	recs := xidRun(d, 13, 40, nil)
	f := firing(recs, spec.IncidentKindXIDError)
	if len(f) != 1 || f[0].severity != spec.SeverityWarning || f[0].ts != sec(5)+int64(100*time.Millisecond) {
		t.Fatalf("%+v", f)
	}
	if !strings.Contains(f[0].body, "XID 13") || !strings.Contains(f[0].body, "recovery: restart_app") ||
		f[0].attrs["hw.gpu.xid"] != int64(13) || f[0].attrs[spec.AttrHwGpuXidRecovery] != "restart_app" {
		t.Fatalf("%s %v", f[0].body, f[0].attrs)
	}
	r := resolved(recs, spec.IncidentKindXIDError)
	if len(r) != 1 || r[0].id != f[0].id || r[0].attrs[spec.IncidentResolution] != spec.ResolutionCleared {
		t.Fatalf("want the same incident resolved once, cleared: %+v", r)
	}
}

// TestResetXIDStaysUntilTheGPUIsReset: XID 48 (double-bit ECC) needs a
// reset. It fires long past resolve_after, and resolves when the GPU
// shows the reset: its volatile ECC counters fall.
func TestResetXIDStaysUntilTheGPUIsReset(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.ResolveAfter = 10 * time.Second })
	recs := xidRun(d, 48, 120, func(s float64, pts []pt) []pt {
		ecc := 2.0
		if s >= 100 {
			ecc = 0
		}
		return append(pts, pt{name: spec.HwErrors, v: ecc, sum: true, attrs: map[string]any{"hw.id": gpu0, "error.type": "corrected"}})
	})
	f := firing(recs, spec.IncidentKindXIDError)
	if len(f) != 1 || f[0].severity != spec.SeverityCritical || f[0].attrs[spec.AttrHwGpuXidRecovery] != "reset_gpu" ||
		!strings.Contains(f[0].attrs[spec.IncidentAction].(string), "stays open until a GPU reset") {
		t.Fatalf("%+v", f)
	}
	r := resolved(recs, spec.IncidentKindXIDError)
	if len(r) != 1 || r[0].ts != sec(100)+int64(100*time.Millisecond) || r[0].attrs[spec.IncidentResolution] != spec.ResolutionGPUReset {
		t.Fatalf("want it resolved by the reset at 100 s and not before: %+v", r)
	}
}

// TestResetXIDAfterFailedGPU: XID 79 (fallen off the bus): hw.status
// failed, then ok again after the reset.
func TestResetXIDAfterFailedGPU(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.ResolveAfter = 10 * time.Second })
	recs := xidRun(d, 79, 60, func(s float64, pts []pt) []pt {
		state := "ok"
		if s >= 5 && s < 50 {
			state = "failed"
		}
		for _, st := range []string{"ok", "failed"} {
			v := 0.0
			if st == state {
				v = 1
			}
			pts = append(pts, pt{name: spec.HwStatus, v: v, attrs: map[string]any{"hw.id": gpu0, "hw.state": st}})
		}
		return pts
	})
	r := resolved(recs, spec.IncidentKindXIDError)
	if len(firing(recs, spec.IncidentKindXIDError)) != 1 || len(r) != 1 || r[0].ts != sec(50)+int64(100*time.Millisecond) ||
		r[0].attrs[spec.IncidentResolution] != spec.ResolutionGPUReset {
		t.Fatalf("want one XID 79 resolved when the GPU answers again at 50 s: %+v", recs)
	}
}

// TestHardwareErrorAcknowledged: an operator's acknowledgment (a log record
// through the logs pipeline) resolves it; a new XID after it fires again.
func TestHardwareErrorAcknowledged(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.ResolveAfter = 10 * time.Second })
	var id string
	recs := xidRun(d, 95, 80, func(s float64, pts []pt) []pt {
		if s == 30 {
			d.now = func() time.Time { return time.Unix(0, sec(30)) } // the acknowledgment's time
			ack := plog.NewLogs()
			lr := ack.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
			lr.Attributes().PutStr(spec.IncidentID, id)
			lr.Attributes().PutStr(spec.IncidentState, spec.StateAcknowledged)
			d.ingestAcknowledgments(ack)
		}
		if s >= 60 {
			pts[1].v = 2 // the same XID again
		}
		if id == "" {
			for _, inc := range d.incidents {
				id = inc.id
			}
		}
		return pts
	})
	f, r := firing(recs, spec.IncidentKindXIDError), resolved(recs, spec.IncidentKindXIDError)
	if len(f) != 2 || f[1].ts != sec(60)+int64(100*time.Millisecond) || f[1].id == f[0].id {
		t.Fatalf("want a new incident for the XID after the acknowledgment: %+v", f)
	}
	if len(r) != 1 || r[0].id != f[0].id || r[0].ts != sec(30)+int64(100*time.Millisecond) || r[0].attrs[spec.IncidentResolution] != spec.ResolutionAcknowledged {
		t.Fatalf("want the first acknowledged at 30 s: %+v", r)
	}
}

// TestHardwareErrorExpires: with nothing handled, hardware_errors.
// resolve_after bounds it.
func TestHardwareErrorExpires(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) {
		c.ResolveAfter = 10 * time.Second
		c.HardwareErrors.ResolveAfter = time.Minute
	})
	recs := xidRun(d, 48, 90, nil)
	r := resolved(recs, spec.IncidentKindXIDError)
	if len(r) != 1 || r[0].ts != sec(65)+int64(100*time.Millisecond) || r[0].attrs[spec.IncidentResolution] != spec.ResolutionExpired {
		t.Fatalf("want it expired a minute after the XID: %+v", r)
	}
}

func TestThermalThrottling(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.Throttle.For = 5 * time.Second })
	recs := run(d, 30, func(s float64) []pmetric.Metrics {
		pts := []pt{{name: spec.HwGpuMemoryUsage, v: gib, attrs: map[string]any{"hw.id": gpu0}}}
		if s >= 10 {
			pts = append(pts, pt{name: spec.HwGpuThrottle, v: 1, attrs: map[string]any{"hw.id": gpu0, "hw.gpu.throttle.reason": "hw_thermal_slowdown"}})
		}
		// A power cap alone on GPU 1 is normal under load.
		pts = append(pts, pt{name: spec.HwGpuMemoryUsage, v: gib, attrs: map[string]any{"hw.id": gpu1}},
			pt{name: spec.HwGpuThrottle, v: 1, attrs: map[string]any{"hw.id": gpu1, "hw.gpu.throttle.reason": "sw_power_cap"}})
		return []pmetric.Metrics{batch(nvmlRes, sec(s), pts...)}
	})
	f := firing(recs, spec.IncidentKindGPUThrottling)
	if len(f) != 1 || f[0].attrs["hw.id"] != gpu0 || !strings.Contains(f[0].body, "thermal") {
		t.Fatalf("%+v", f)
	}
	if after := time.Duration(f[0].ts - sec(10)); after > 7*time.Second {
		t.Fatalf("fired %s after onset", after)
	}
}

func TestQueueOnIdleGPUIsCPUBound(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.Queue.For = 10 * time.Second })
	recs := run(d, 40, func(s float64) []pmetric.Metrics {
		return []pmetric.Metrics{
			batch(nvmlRes, sec(s), pt{name: spec.HwGpuUtilization, v: 0.05, attrs: map[string]any{"hw.id": gpu0, "hw.gpu.task": "general"}}),
			batch(engineRes, sec(s), pt{name: spec.EngineRequestsWaiting, v: s * 2}, pt{name: spec.EngineKvCacheUtilization, v: 0.2}),
		}
	})
	f := firing(recs, spec.IncidentKindQueueBuildup)
	if len(f) != 1 || !strings.Contains(f[0].body, "scheduler/CPU") || !strings.Contains(f[0].attrs["incident.action"].(string), "CPU") {
		t.Fatalf("%+v", f)
	}
	var sawUtil bool
	for _, ev := range f[0].attrs["incident.evidence"].([]any) {
		if ev.(map[string]any)["signal"] == spec.HwGpuUtilization {
			sawUtil = true
		}
	}
	if !sawUtil {
		t.Fatal("GPU utilization missing from the evidence")
	}
}

func TestRules(t *testing.T) {
	above := 0.2
	sigma := 3.0
	d := newTestDiagnoser(t, func(c *Config) {
		c.Rules = []RuleConfig{
			{Name: "hallucination_rate_high", Metric: "app.hallucination.rate", Attributes: map[string]string{"app": "chat"}, Above: &above, For: 5 * time.Second, Severity: spec.SeverityCritical, Quadrant: spec.QuadrantErrors},
			{Name: "embedding_norm_drift", Metric: "app.embedding.norm", Sigma: &sigma, Baseline: 30 * time.Second},
		}
	})
	recs := run(d, 60, func(s float64) []pmetric.Metrics {
		rate, norm := 0.05, 1.0+0.01*float64(int(s)%3)
		if s >= 30 {
			rate = 0.4
		}
		if s >= 50 {
			norm = 2
		}
		return []pmetric.Metrics{batch(map[string]any{"service.name": "chat-api"}, sec(s),
			pt{name: "app.hallucination.rate", v: rate, attrs: map[string]any{"app": "chat"}},
			pt{name: "app.hallucination.rate", v: 0.9, attrs: map[string]any{"app": "other"}}, // not matched
			pt{name: "app.embedding.norm", v: norm})}
	})
	h := firing(recs, "hallucination_rate_high")
	if len(h) != 1 || h[0].severity != spec.SeverityCritical || time.Duration(h[0].ts-sec(30)) > 7*time.Second {
		t.Fatalf("%+v\n%+v", h, recs)
	}
	if d := firing(recs, "embedding_norm_drift"); len(d) != 1 {
		t.Fatalf("%+v", d)
	}
}

func TestSubjectsAreBoundedAndEvictionCounted(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.MaxSubjects = 10 })
	for i := 0; i < 50; i++ {
		d.consumeMetrics(batch(nvmlRes, sec(float64(i)), pt{name: spec.ProcessGpuMemoryUsage, v: gib,
			attrs: map[string]any{"hw.id": gpu0, "process.pid": int64(i)}}), true)
	}
	if d.subjects.count != 10 || len(d.subjects.procs) != 10 {
		t.Fatalf("count %d procs %d", d.subjects.count, len(d.subjects.procs))
	}
	// The newest stay.
	if d.subjects.procs[procKey{gpu0, 49}] == nil || d.subjects.procs[procKey{gpu0, 0}] != nil {
		t.Fatal("evicted the wrong subjects")
	}
	if d.subjects.evicted != 40 {
		t.Fatalf("evicted %d", d.subjects.evicted)
	}
}

func TestDerivedMetricsAndExemplars(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.Leak.Window = 30 * time.Second })
	md, ld, tid := profileOf(100)
	d.consumeMetrics(md, true)
	d.drill.ingestLogs(ld)
	run(d, 40, func(s float64) []pmetric.Metrics { return []pmetric.Metrics{gpuBatch(s, 8<<20, 0)} })
	out := gpuBatch(41, 8<<20, 0)
	d.consumeMetrics(out, true)
	var growth, tte float64
	var exemplar pcommon.TraceID
	ms := out.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		switch m.Name() {
		case spec.HwGpuMemoryGrowthRate:
			for j := 0; j < m.Gauge().DataPoints().Len(); j++ {
				if v, _ := m.Gauge().DataPoints().At(j).Attributes().Get("hw.id"); v.Str() == gpu0 {
					growth = m.Gauge().DataPoints().At(j).DoubleValue()
				}
			}
		case spec.HwGpuMemoryTimeToExhaustion:
			tte = m.Gauge().DataPoints().At(0).DoubleValue()
		case spec.ProcessGpuMemoryUsage:
			dp := m.Gauge().DataPoints().At(0)
			if dp.Exemplars().Len() > 0 {
				exemplar = dp.Exemplars().At(0).TraceID()
			}
		}
	}
	if growth < 7.9*(1<<20) || growth > 8.1*(1<<20) {
		t.Fatalf("growth %g B/s", growth)
	}
	// 80 GiB limit, ~21+0.33 GiB used: ~7,500 s.
	if tte < 7000 || tte > 8000 {
		t.Fatalf("time to exhaustion %g s", tte)
	}
	if exemplar != tid {
		t.Fatalf("exemplar %v, want the leak's trace %v", exemplar, tid)
	}
}

// jointRun: a latency spike and a cache hit-ratio drop from 100 s while
// the engine's process grows 240 MiB/min from memFrom.
func jointRun(t *testing.T, hold time.Duration, memFrom float64) []record {
	d := newTestDiagnoser(t, func(c *Config) {
		c.CorrelationHold = hold
		c.Leak.Window = 30 * time.Second
		c.Latency.Window = 10 * time.Second
		c.Latency.Baseline = 2 * time.Minute
		c.CacheHit.Window = 10 * time.Second
		c.CacheHit.MinQueries = 10
		c.CacheHit.Baseline = time.Minute
	})
	var total [9]uint64
	var q, h float64
	recs := run(d, 130, func(s float64) []pmetric.Metrics {
		slow := -1
		q += 100
		h += 80
		if s >= 100 {
			slow = 6
			h -= 60 // hit ratio 0.8 -> 0.2
		}
		md := latencyBatch(s, &total, slow)
		md2 := batch(engineRes, sec(s), pt{name: spec.EnginePrefixCacheQueries, v: q, sum: true}, pt{name: spec.EnginePrefixCacheHits, v: h, sum: true})
		return []pmetric.Metrics{md, md2, gpuBatch(s, 4<<20, memFrom)}
	})
	return recs
}

// TestJointTrigger: memory pressure builds from 80 s, the cache and latency
// give way at 100 s. With the default correlation hold the joint incident
// is the only one sent: its parts waited for it.
func TestJointTrigger(t *testing.T) {
	recs := jointRun(t, testConfig(nil).CorrelationHold, 80)
	j := firing(recs, spec.IncidentKindJointDegradation)
	if len(j) != 1 || j[0].severity != spec.SeverityCritical {
		t.Fatalf("want one joint incident: %+v", recs)
	}
	for _, kind := range []string{spec.IncidentKindLatencySpike, spec.IncidentKindCacheHitDrop} {
		if p := firing(recs, kind); len(p) > 0 {
			t.Errorf("%s sent beside the joint incident that replaces it: %+v", kind, p)
		}
	}
	// The growth alone was a leak before the symptoms came: it was right to
	// say so, and the joint incident, which carries its slope, replaces it.
	l, r := firing(recs, spec.IncidentKindGPUMemoryLeak), resolved(recs, spec.IncidentKindGPUMemoryLeak)
	if len(l) != 1 || l[0].ts >= j[0].ts || len(r) != 1 || r[0].attrs[spec.IncidentSupersededBy] != j[0].id {
		t.Fatalf("want the leak superseded by the joint incident: %+v %+v", l, r)
	}
}

// TestJointSupersedesPartsSentBeforeIt: with no hold, and the memory growth
// only starting with the symptoms (it takes seconds to show in a fit), the
// parts are sent first; when the joint incident forms, each is resolved as
// superseded and names it.
func TestJointSupersedesPartsSentBeforeIt(t *testing.T) {
	recs := jointRun(t, 0, 100)
	j := firing(recs, spec.IncidentKindJointDegradation)
	if len(j) != 1 {
		t.Fatalf("want one joint incident: %+v", recs)
	}
	for _, kind := range []string{spec.IncidentKindLatencySpike, spec.IncidentKindCacheHitDrop} {
		p, r := firing(recs, kind), resolved(recs, kind)
		if len(p) != 1 || p[0].ts >= j[0].ts {
			t.Fatalf("%s: want it sent before the joint incident: %+v", kind, p)
		}
		if len(r) != 1 || r[0].id != p[0].id || r[0].ts != j[0].ts || r[0].attrs[spec.IncidentResolution] != spec.ResolutionSuperseded ||
			r[0].attrs[spec.IncidentSupersededBy] != j[0].id || !strings.Contains(r[0].body, "superseded") {
			t.Fatalf("%s: want it superseded by %s when the joint incident fires: %+v", kind, j[0].id, r)
		}
	}
}

// TestPairsShareOneStateAndEmitOnTick: the connector's metrics→metrics,
// metrics→logs, traces→logs and logs→logs pairs share one state; metrics
// are ingested once (by the pass-through pair) and the ticker emits
// incidents once, into the logs pipelines.
func TestPairsShareOneStateAndEmitOnTick(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.EvaluationInterval = 20 * time.Millisecond
	set := connectortest.NewNopSettings(metadata.Type)
	ctx := context.Background()
	sinkM, sinkL := new(consumertest.MetricsSink), new(consumertest.LogsSink)
	mm, err := f.CreateMetricsToMetrics(ctx, set, cfg, sinkM)
	if err != nil {
		t.Fatal(err)
	}
	ml, err := f.CreateMetricsToLogs(ctx, set, cfg, sinkL)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := f.CreateTracesToLogs(ctx, set, cfg, sinkL)
	if err != nil {
		t.Fatal(err)
	}
	ll, err := f.CreateLogsToLogs(ctx, set, cfg, sinkL)
	if err != nil {
		t.Fatal(err)
	}
	host := componenttest.NewNopHost()
	all := []component.Component{mm, ml, tl, ll}
	for _, c := range all {
		if err := c.Start(ctx, host); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for _, c := range all {
			_ = c.Shutdown(ctx)
		}
		if n := diagnosers.Len(); n != 0 {
			t.Errorf("%d shared states left after every pair shut down", n)
		}
	}()
	if mm.(*metricsToMetrics).d != ml.(*metricsToLogs).d || ml.(*metricsToLogs).d != tl.(*tracesToLogs).d ||
		tl.(*tracesToLogs).d != ll.(*logsToLogs).d {
		t.Fatal("the pairs of one connector do not share their state")
	}
	now := time.Now().UnixNano()
	md := batch(nvmlRes, now, pt{name: spec.HwGpuMemoryUsage, v: gib, attrs: map[string]any{"hw.id": gpu0}},
		pt{name: spec.HwErrors, v: 1, sum: true, attrs: map[string]any{"hw.id": gpu0, "error.type": "xid", "hw.gpu.xid": int64(79)}})
	// The collector's fan-out hands the batch to both metrics pairs.
	if err := ml.ConsumeMetrics(ctx, md); err != nil {
		t.Fatal(err)
	}
	if err := mm.ConsumeMetrics(ctx, md); err != nil {
		t.Fatal(err)
	}
	// The ticker sends the incident metrics into the same pipeline, so the
	// pass-through batch is found by its content.
	passed := 0
	for _, m := range sinkM.AllMetrics() {
		if m.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Name() == spec.HwGpuMemoryUsage {
			passed++
		}
	}
	if passed != 1 {
		t.Fatalf("the batch passed through %d times, want once", passed)
	}
	deadline := time.Now().Add(10 * time.Second)
	for sinkL.LogRecordCount() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// The incident's active series reaches the metrics pipeline from the
	// ticker: the evaluation that fired it sends it at once.
	activeXID := func() bool {
		for _, m := range sinkM.AllMetrics() {
			ms := m.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
			for i := 0; i < ms.Len(); i++ {
				if ms.At(i).Name() != spec.IncidentActive {
					continue
				}
				for j := 0; j < ms.At(i).Gauge().DataPoints().Len(); j++ {
					p := ms.At(i).Gauge().DataPoints().At(j)
					if k, _ := p.Attributes().Get(spec.IncidentKind); k.Str() == spec.IncidentKindXIDError && p.IntValue() == 1 {
						return true
					}
				}
			}
		}
		return false
	}
	for !activeXID() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !activeXID() {
		t.Fatal("no llm.incident.active point of the XID reached the metrics pipeline")
	}
	recs := records(sinkL.AllLogs()[0])
	if len(recs) != 1 || recs[0].kind != spec.IncidentKindXIDError || !strings.Contains(recs[0].body, "fallen off the bus") {
		t.Fatalf("%+v", recs)
	}
	if n := sinkL.LogRecordCount(); n != 1 {
		t.Fatalf("the incident reached the logs pipelines %d times, want once", n)
	}
}

// TestMetricsToLogsAloneIngests: without a pass-through pair the
// metrics→logs pair feeds the detectors itself.
func TestMetricsToLogsAloneIngests(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	ctx := context.Background()
	ml, err := f.CreateMetricsToLogs(ctx, connectortest.NewNopSettings(metadata.Type), cfg, new(consumertest.LogsSink))
	if err != nil {
		t.Fatal(err)
	}
	d := ml.(*metricsToLogs).d
	defer func() { _ = ml.Shutdown(ctx) }()
	md := batch(nvmlRes, sec(1), pt{name: spec.HwErrors, v: 1, sum: true,
		attrs: map[string]any{"hw.id": gpu0, "error.type": "xid", "hw.gpu.xid": int64(79)}})
	if err := ml.ConsumeMetrics(ctx, md); err != nil {
		t.Fatal(err)
	}
	ld, fired, _ := d.evaluateAt(sec(1.1))
	if fired != 1 || len(firing(records(ld), spec.IncidentKindXIDError)) != 1 {
		t.Fatalf("metrics→logs alone did not feed the detectors: %+v", records(ld))
	}
}

// TestOneSlowRequestIsNotASpike: with few requests per window the p99 is
// the slowest request; one slow request must not fire.
func TestOneSlowRequestIsNotASpike(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) {
		c.Latency.Window = 10 * time.Second
		c.Latency.Baseline = 2 * time.Minute
	})
	var total [9]uint64
	recs := run(d, 150, func(s float64) []pmetric.Metrics {
		total[2] += 6 // 6 requests/s under 0.5 s
		if int(s)%60 == 30 {
			total[7]++ // one 10..20 s request a minute
		}
		md := batch(engineRes, sec(s), pt{name: spec.EngineRequestsWaiting, v: 0})
		addHist(md, spec.GenAIServerRequestDuration, sec(s), latBounds, total[:])
		return []pmetric.Metrics{md}
	})
	if len(recs) != 0 {
		t.Fatalf("fired on single slow requests: %+v", recs)
	}
}

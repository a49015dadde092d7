// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// Incidents as a fault unfolds: updates, onsets, supersession, the
// correlation hold and what each incident rules out.

// leakRun: pid 100 on GPU 0 flat at 20 GiB, then growing rate1 (bytes/s)
// from onset, rate2 from change on; the window is ten minutes.
func leakRun(t *testing.T, onset, change, rate1, rate2, to float64) []record {
	d := newTestDiagnoser(t, nil)
	return run(d, to, func(s float64) []pmetric.Metrics {
		leaked := 0.0
		if s > onset {
			leaked = rate1 * (math.Min(s, change) - onset)
		}
		if s > change {
			leaked += rate2 * (s - change)
		}
		// A little allocator noise, the same every run.
		noise := float64(int64(s*7919)%9-4) * (1 << 20)
		return []pmetric.Metrics{batch(nvmlRes, sec(s),
			pt{name: spec.HwGpuMemoryUsage, v: 21*gib + leaked + noise, attrs: map[string]any{"hw.id": gpu0}},
			pt{name: spec.HwGpuMemoryLimit, v: 80 * gib, attrs: map[string]any{"hw.id": gpu0}},
			pt{name: spec.ProcessGpuMemoryUsage, v: 20*gib + leaked + noise,
				attrs: map[string]any{"hw.id": gpu0, "process.pid": int64(100), "process.executable.name": "vllm"}})}
	})
}

func evidenceValue(r record, signal string) (float64, bool) {
	for _, e := range r.attrs[spec.IncidentEvidence].([]any) {
		if m := e.(map[string]any); m["signal"] == signal {
			return m["value"].(float64), true
		}
	}
	return 0, false
}

// TestLeakIsFittedFromItsOnset: flat for 6 minutes, then 400 MiB/min. The
// incident reports the rate of the leak, not the rate averaged with the
// flat stretch, and when it began.
func TestLeakIsFittedFromItsOnset(t *testing.T) {
	const onset = 360.0
	recs := leakRun(t, onset, 1e9, 400.0/60*(1<<20), 0, 720)
	l := firing(recs, spec.IncidentKindGPUMemoryLeak)
	if len(l) != 1 || l[0].attrs["process.pid"] != int64(100) {
		t.Fatalf("want one leak of pid 100: %+v", recs)
	}
	rate, _ := evidenceValue(l[0], spec.EvidenceMemoryGrowthRate)
	if math.Abs(rate-400)/400 > 0.1 {
		t.Errorf("growth rate %.0f MiB/min, want 400 ± 10%%: %s", rate, l[0].body)
	}
	at, err := time.Parse(time.RFC3339Nano, l[0].attrs[spec.IncidentOnsetTime].(string))
	if err != nil {
		t.Fatalf("onset: %v (%v)", err, l[0].attrs)
	}
	if d := time.Duration(at.UnixNano() - sec(onset)); d < -15*time.Second || d > 15*time.Second {
		t.Errorf("onset %s off the true onset by %s", at, d)
	}
	if l[0].attrs[spec.IncidentStartTime] != l[0].attrs[spec.IncidentOnsetTime] || !strings.Contains(l[0].body, "(flat before)") {
		t.Errorf("the start is the onset: %v / %s", l[0].attrs, l[0].body)
	}
}

// TestAcceleratingLeakIsUpdated: 200 MiB/min, then 500 MiB/min. The same
// incident is sent again with the new rate and time to exhaustion.
func TestAcceleratingLeakIsUpdated(t *testing.T) {
	recs := leakRun(t, 0, 900, 200.0/60*(1<<20), 500.0/60*(1<<20), 1500)
	l, u := firing(recs, spec.IncidentKindGPUMemoryLeak), updated(recs, spec.IncidentKindGPUMemoryLeak)
	if len(l) != 1 || len(u) == 0 {
		t.Fatalf("want one leak and updates of it: %+v", recs)
	}
	rate0, _ := evidenceValue(l[0], spec.EvidenceMemoryGrowthRate)
	var sawFast bool
	prev := l[0].ts
	for i, r := range u {
		if r.id != l[0].id || r.attrs[spec.IncidentUpdate] != int64(i+1) || r.attrs[spec.IncidentChange] == nil {
			t.Fatalf("update %d: %+v", i+1, r)
		}
		if r.ts-prev < int64(30*time.Second) {
			t.Fatalf("updates %s apart, updates.min_interval is 30s", time.Duration(r.ts-prev))
		}
		prev = r.ts
		rate, _ := evidenceValue(r, spec.EvidenceMemoryGrowthRate)
		if math.Abs(rate-500)/500 < 0.1 && strings.Contains(r.attrs[spec.IncidentChange].(string), "memory.growth_rate") {
			sawFast = true
			if r.ts-sec(900) > int64(6*time.Minute) {
				t.Errorf("the faster rate took %s to be reported", time.Duration(r.ts-sec(900)))
			}
		}
	}
	if math.Abs(rate0-200)/200 > 0.1 || !sawFast {
		t.Fatalf("want 200 MiB/min first (got %.0f), then an update at 500: %+v", rate0, u)
	}
}

// powerCapRun: GPU 0 at its power cap all along, a thermal blip at 60-62 s,
// and the engine on it at 1,000 tokens/s (dropping to 500 from 100 s when
// drop is set), 4 requests waiting.
func powerCapRun(t *testing.T, drop bool) []record {
	d := newTestDiagnoser(t, func(c *Config) {
		c.Throttle.For = 5 * time.Second
		c.Throughput.Window = 10 * time.Second
		c.Throughput.Baseline = 60 * time.Second
	})
	tokens := 0.0
	return run(d, 150, func(s float64) []pmetric.Metrics {
		rate := 1000.0
		if drop && s >= 100 {
			rate = 500
		}
		tokens += rate
		pts := []pt{{name: spec.HwGpuMemoryUsage, v: gib, attrs: map[string]any{"hw.id": gpu0}},
			{name: spec.HwGpuUtilization, v: 0.97, attrs: map[string]any{"hw.id": gpu0, "hw.gpu.task": "general"}},
			{name: spec.HwGpuThrottle, v: 1, attrs: map[string]any{"hw.id": gpu0, "hw.gpu.throttle.reason": "sw_power_cap"}}}
		if s >= 60 && s <= 62 {
			pts = append(pts, pt{name: spec.HwGpuThrottle, v: 1, attrs: map[string]any{"hw.id": gpu0, "hw.gpu.throttle.reason": "sw_thermal_slowdown"}})
		}
		return []pmetric.Metrics{batch(nvmlRes, sec(s), pts...), tokenBatch(s, tokens, 4)}
	})
}

// TestThrottlingIsJudgedPerReason: a power cap alone, with a 2 s thermal
// blip, is normal operation while throughput holds.
func TestThrottlingIsJudgedPerReason(t *testing.T) {
	if f := firing(powerCapRun(t, false), spec.IncidentKindGPUThrottling); len(f) != 0 {
		t.Fatalf("a power cap with a thermal blip and steady throughput fired: %+v", f)
	}
}

// TestPowerCapCostingThroughputIsTheCause: the same GPU, and the engine
// loses half its throughput: throttling fires, naming the power cap only
// (the thermal blip held 2 s, not the minutes the cap did), and the
// throughput drop is its evidence, not an incident of its own.
func TestPowerCapCostingThroughputIsTheCause(t *testing.T) {
	recs := powerCapRun(t, true)
	f := firing(recs, spec.IncidentKindGPUThrottling)
	if len(f) != 1 || !strings.Contains(f[0].body, "sw_power_cap for ") || strings.Contains(f[0].body, "thermal") ||
		!strings.Contains(f[0].body, "down to") {
		t.Fatalf("want one throttling incident naming the power cap and the lost throughput: %+v", recs)
	}
	if d := firing(recs, spec.IncidentKindThroughputDrop); len(d) != 0 {
		t.Fatalf("the throughput drop is the throttling's evidence: %+v", d)
	}
	var sawWaiting bool
	for _, e := range f[0].attrs[spec.IncidentEvidence].([]any) {
		sawWaiting = sawWaiting || e.(map[string]any)["signal"] == spec.EngineRequestsWaiting
	}
	if !sawWaiting {
		t.Fatalf("the drop's evidence is not in the throttling incident: %v", f[0].attrs[spec.IncidentEvidence])
	}
}

// kvLatencyRun: latency spikes from 100 s; the KV cache fills to 95% from
// kvFrom (kv_cache.for 10 s).
func kvLatencyRun(t *testing.T, kvFrom float64) []record {
	d := newTestDiagnoser(t, func(c *Config) {
		c.Latency.Window = 10 * time.Second
		c.Latency.Baseline = 2 * time.Minute
		c.KVCache.For = 10 * time.Second
	})
	var total [9]uint64
	return run(d, 140, func(s float64) []pmetric.Metrics {
		slow, kv := -1, 0.3
		if s >= 100 {
			slow = 6
		}
		if s >= kvFrom {
			kv = 0.95
		}
		return []pmetric.Metrics{latencyBatch(s, &total, slow), batch(engineRes, sec(s), pt{name: spec.EngineKvCacheUtilization, v: kv})}
	})
}

// TestLatencyDuringKVSaturationIsItsEvidence: the KV cache is saturated
// when latency spikes: one incident, the KV one, with the latency in it.
func TestLatencyDuringKVSaturationIsItsEvidence(t *testing.T) {
	recs := kvLatencyRun(t, 80)
	if l := firing(recs, spec.IncidentKindLatencySpike); len(l) != 0 {
		t.Fatalf("a latency incident beside the KV saturation that explains it: %+v", l)
	}
	kv := firing(recs, spec.IncidentKindKVCacheSaturation)
	u := updated(recs, spec.IncidentKindKVCacheSaturation)
	if len(kv) != 1 {
		t.Fatalf("want one KV incident: %+v", recs)
	}
	// The KV incident fired at 90 s, before the spike; the spike is new
	// evidence of it, sent as an update of the same incident.
	if len(u) != 1 || u[0].id != kv[0].id || !strings.Contains(u[0].body, "request duration") ||
		!strings.Contains(u[0].attrs[spec.IncidentChange].(string), "new evidence: "+spec.GenAIServerRequestDuration) {
		t.Fatalf("want one update of the KV incident carrying the latency: %+v", u)
	}
	if _, ok := evidenceValue(u[0], spec.GenAIServerRequestDuration); !ok {
		t.Fatalf("the latency is not in the KV incident's evidence: %v", u[0].attrs[spec.IncidentEvidence])
	}
}

// TestLatencyBeforeKVSaturationIsSuperseded: latency spikes at 100 s, the
// KV cache saturates from 105 s (its incident after kv_cache.for): the
// latency incident sent meanwhile is resolved as superseded by it.
func TestLatencyBeforeKVSaturationIsSuperseded(t *testing.T) {
	recs := kvLatencyRun(t, 105)
	l, r := firing(recs, spec.IncidentKindLatencySpike), resolved(recs, spec.IncidentKindLatencySpike)
	kv := firing(recs, spec.IncidentKindKVCacheSaturation)
	if len(l) != 1 || len(kv) != 1 || l[0].ts >= kv[0].ts {
		t.Fatalf("want the latency first, then the KV incident: %+v", recs)
	}
	if len(r) != 1 || r[0].id != l[0].id || r[0].attrs[spec.IncidentResolution] != spec.ResolutionSuperseded ||
		r[0].attrs[spec.IncidentSupersededBy] != kv[0].id || r[0].ts != kv[0].ts {
		t.Fatalf("want the latency incident superseded by %s: %+v", kv[0].id, r)
	}
	if !strings.Contains(kv[0].body, "request duration") {
		t.Fatalf("the KV incident does not carry the latency: %s", kv[0].body)
	}
}

// TestIncidentsSayWhatTheyRuledOut: a latency spike with the KV cache low,
// the GPU not saturated and nobody waiting.
func TestIncidentsSayWhatTheyRuledOut(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) {
		c.Latency.Window = 10 * time.Second
		c.Latency.Baseline = 2 * time.Minute
	})
	var total [9]uint64
	recs := run(d, 120, func(s float64) []pmetric.Metrics {
		slow := -1
		if s >= 100 {
			slow = 6
		}
		return []pmetric.Metrics{latencyBatch(s, &total, slow),
			batch(engineRes, sec(s), pt{name: spec.EngineKvCacheUtilization, v: 0.3}),
			batch(nvmlRes, sec(s), pt{name: spec.HwGpuUtilization, v: 0.6, attrs: map[string]any{"hw.id": gpu0, "hw.gpu.task": "general"}})}
	})
	l := firing(recs, spec.IncidentKindLatencySpike)
	if len(l) != 1 {
		t.Fatalf("want one latency spike: %+v", recs)
	}
	var got []string
	for _, v := range l[0].attrs[spec.IncidentRuledOut].([]any) {
		got = append(got, v.(string))
	}
	want := []string{"not KV-cache pressure: KV cache at 30%", "not GPU saturation: the GPU is 60% busy", "not queueing: 0 requests wait"}
	if !slices.Equal(got, want) || !strings.Contains(l[0].body, "ruled out: "+strings.Join(want, "; ")) {
		t.Fatalf("ruled out %q, want %q; body %s", got, want, l[0].body)
	}
}

// TestCorrelationHoldCost: what the hold costs in onset time. A latency
// spike with nothing that could explain it is sent at once; one whose
// engine's memory grows (a joint incident may follow) waits exactly the
// hold, and is sent then when nothing joined it.
func TestCorrelationHoldCost(t *testing.T) {
	onsetOf := func(hold time.Duration, grow float64) int64 {
		d := newTestDiagnoser(t, func(c *Config) {
			c.CorrelationHold = hold
			c.Leak.Window = 30 * time.Second
			c.Latency.Window = 10 * time.Second
			c.Latency.Baseline = 2 * time.Minute
		})
		var total [9]uint64
		recs := run(d, 130, func(s float64) []pmetric.Metrics {
			slow := -1
			if s >= 100 {
				slow = 6
			}
			return []pmetric.Metrics{latencyBatch(s, &total, slow), gpuBatch(s, grow, 60)}
		})
		l := firing(recs, spec.IncidentKindLatencySpike)
		if len(l) != 1 {
			t.Fatalf("hold %s, growth %g: want one latency spike: %+v", hold, grow, recs)
		}
		return l[0].ts
	}
	const slowGrowth = 0.5 * (1 << 20) // 30 MiB/min: not a leak, but memory pressure may build
	hold := testConfig(nil).CorrelationHold
	if a, b := onsetOf(0, 0), onsetOf(hold, 0); a != b {
		t.Errorf("with no plausible cause the hold cost %s", time.Duration(b-a))
	}
	a, b := onsetOf(0, slowGrowth), onsetOf(hold, slowGrowth)
	if cost := time.Duration(b - a); cost != hold {
		t.Errorf("with memory growing, the hold cost %s, want exactly correlation_hold (%s)", cost, hold)
	}
	t.Logf("correlation hold %s: onset delay 0 with no plausible cause, %s with one", hold, time.Duration(b-a))
}

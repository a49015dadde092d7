// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// tokenBatch: the engine's output-token counter at `tokens` with `waiting`
// requests queued.
func tokenBatch(s, tokens, waiting float64) pmetric.Metrics {
	return batch(engineRes, sec(s),
		pt{name: spec.EngineTokens, v: tokens, sum: true, attrs: map[string]any{"gen_ai.token.type": "output"}},
		pt{name: spec.EngineRequestsWaiting, v: waiting})
}

// throughputRun: 1,000 output tokens/s with 4 requests waiting, then from
// 150 s 300 tokens/s with waitingAfter requests waiting.
func throughputRun(t *testing.T, waitingAfter float64) []record {
	d := newTestDiagnoser(t, func(c *Config) {
		c.Throughput.Window = 10 * time.Second
		c.Throughput.Baseline = 60 * time.Second
	})
	tokens := 0.0
	return run(d, 200, func(s float64) []pmetric.Metrics {
		waiting := 4.0
		if s < 150 {
			tokens += 1000
		} else {
			tokens += 300
			waiting = waitingAfter
		}
		return []pmetric.Metrics{tokenBatch(s, tokens, waiting)}
	})
}

func TestThroughputDropWhileRequestsWait(t *testing.T) {
	recs := throughputRun(t, 4)
	f := firing(recs, spec.IncidentKindThroughputDrop)
	if len(f) != 1 {
		t.Fatalf("want one throughput drop: %+v", recs)
	}
	// Over a 10 s window the rate crosses 70% of 1,000/s 4.3 s after the
	// drop.
	if after := time.Duration(f[0].ts - sec(150)); after < 4*time.Second || after > 7*time.Second {
		t.Fatalf("fired %s after the drop", after)
	}
	if f[0].quadrant != spec.QuadrantThroughput || f[0].severity != spec.SeverityWarning ||
		!strings.Contains(f[0].body, "down to 650") || !strings.Contains(f[0].body, "while 4 requests wait") {
		t.Fatalf("%+v", f[0])
	}
	// The rate goes on falling to 300/s: the incident says so, once, as an
	// update of the same incident, not as a new one.
	u := updated(recs, spec.IncidentKindThroughputDrop)
	if len(u) != 1 || u[0].id != f[0].id || u[0].attrs[spec.IncidentUpdate] != int64(1) ||
		!strings.Contains(u[0].body, "down to 300") || u[0].attrs[spec.IncidentChange] != "llm.engine.tokens.rate 650 {token}/s → 300 {token}/s" {
		t.Fatalf("want one update to 300/s: %+v", u)
	}
}

func TestThroughputFallingWithLoadIsNoDrop(t *testing.T) {
	if recs := throughputRun(t, 0); len(firing(recs, spec.IncidentKindThroughputDrop)) != 0 {
		t.Fatalf("fewer tokens with nobody waiting is less load, not a drop: %+v", recs)
	}
}

// cacheBatch: the prefix-cache counters.
func cacheBatch(s, queries, hits float64) pmetric.Metrics {
	return batch(engineRes, sec(s),
		pt{name: spec.EnginePrefixCacheQueries, v: queries, sum: true},
		pt{name: spec.EnginePrefixCacheHits, v: hits, sum: true})
}

func cacheConfig(c *Config) {
	c.CacheHit.Window = 10 * time.Second
	c.CacheHit.Baseline = 60 * time.Second
}

func TestCacheHitDropAfterAHealthyBaseline(t *testing.T) {
	d := newTestDiagnoser(t, cacheConfig)
	var q, h float64
	recs := run(d, 160, func(s float64) []pmetric.Metrics {
		q += 1000
		if s < 120 {
			h += 900
		} else {
			h += 200
		}
		return []pmetric.Metrics{cacheBatch(s, q, h)}
	})
	f := firing(recs, spec.IncidentKindCacheHitDrop)
	if len(f) != 1 {
		t.Fatalf("want one cache-hit drop: %+v", recs)
	}
	// 3σ below a steady 90% baseline (σ floored at 2 points) is crossed
	// within the first seconds; the 65% floor 3.6 s after the change.
	if after := time.Duration(f[0].ts - sec(120)); after < 0 || after > 5*time.Second {
		t.Fatalf("fired %s after the change", after)
	}
	if f[0].quadrant != spec.QuadrantLatency || !strings.Contains(f[0].body, "(baseline 90%)") {
		t.Fatalf("%+v", f[0])
	}
}

func TestCacheThatNeverHitDoesNotFire(t *testing.T) {
	d := newTestDiagnoser(t, cacheConfig)
	var q, h float64
	recs := run(d, 160, func(s float64) []pmetric.Metrics {
		q, h = q+1000, h+100
		return []pmetric.Metrics{cacheBatch(s, q, h)}
	})
	if len(recs) != 0 {
		t.Fatalf("a workload with a low hit ratio throughout fired: %+v", recs)
	}
}

// TestHitRatioIsThatOfItsOwnBatch: the derived hit ratio added to a batch
// includes that batch's counters (not the previous evaluation's ratio).
func TestHitRatioIsThatOfItsOwnBatch(t *testing.T) {
	d := newTestDiagnoser(t, cacheConfig)
	var q, h float64
	run(d, 60, func(s float64) []pmetric.Metrics {
		q, h = q+1000, h+900
		return []pmetric.Metrics{cacheBatch(s, q, h)}
	})
	// One second with no hits at all: over the 10 s window the ratio
	// falls from 90% to 81%.
	md := cacheBatch(61, q+1000, h)
	d.consumeMetrics(md, true)
	got, found := 0.0, false
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Name() == spec.EnginePrefixCacheHitRatio {
			got, found = ms.At(i).Gauge().DataPoints().At(0).DoubleValue(), true
		}
	}
	if !found || got < 0.78 || got > 0.84 {
		t.Fatalf("derived hit ratio %g (found %v), want ≈ 0.81 from this batch's counters", got, found)
	}
}

func TestUncorrectedECCFiresOnAnIncrease(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.ResolveAfter = 10 * time.Second })
	recs := run(d, 40, func(s float64) []pmetric.Metrics {
		n := 3.0 // counted before the collector started: not news
		if s >= 20 {
			n = 4
		}
		if s >= 30 {
			n = 0 // a reset clears the volatile counters
		}
		return []pmetric.Metrics{batch(nvmlRes, sec(s), pt{name: spec.HwErrors, v: n, sum: true,
			attrs: map[string]any{"hw.id": gpu0, "hw.type": "gpu", "error.type": "uncorrected"}})}
	})
	f := firing(recs, spec.IncidentKindECCUncorrected)
	if len(f) != 1 {
		t.Fatalf("want one ECC incident: %+v", recs)
	}
	if after := time.Duration(f[0].ts - sec(20)); after < 0 || after > 1200*time.Millisecond {
		t.Fatalf("fired %s after the error", after)
	}
	if f[0].severity != spec.SeverityCritical || f[0].quadrant != spec.QuadrantErrors ||
		!strings.Contains(f[0].body, "Uncorrected ECC errors on GPU "+gpu0+" (total 4)") {
		t.Fatalf("%+v", f[0])
	}
	// resolve_after (10 s) passes with nothing handled: still firing. The
	// GPU is reset at 30 s (the volatile counters read 0): resolved then.
	r := resolved(recs, spec.IncidentKindECCUncorrected)
	if len(r) != 1 || r[0].id != f[0].id || r[0].attrs[spec.IncidentResolution] != spec.ResolutionGPUReset ||
		r[0].ts != sec(30)+int64(100*time.Millisecond) || !strings.Contains(r[0].body, "by a GPU reset") {
		t.Fatalf("want it resolved by the reset at 30 s, not before: %+v", r)
	}
}

// TestDisabledDetectorIsNotRun: each detector's block switches it off.
func TestDisabledDetectorIsNotRun(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.HardwareErrors.Enabled = false })
	recs := run(d, 5, func(s float64) []pmetric.Metrics {
		return []pmetric.Metrics{batch(nvmlRes, sec(s), pt{name: spec.HwErrors, v: s, sum: true,
			attrs: map[string]any{"hw.id": gpu0, "error.type": "xid", "hw.gpu.xid": int64(79)}})}
	})
	if len(recs) != 0 {
		t.Fatalf("hardware_errors.enabled=false still fired: %+v", recs)
	}
}

// TestInterTokenLatencySpike: per-gap inter-token latency is watched with
// its own floor, apart from the per-request time per output token.
func TestInterTokenLatencySpike(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) {
		c.Latency.Window = 10 * time.Second
		c.Latency.Baseline = 2 * time.Minute
	})
	var total [9]uint64
	recs := run(d, 120, func(s float64) []pmetric.Metrics {
		total[0] += 90 // gaps under 100 ms
		total[1] += 10
		if s >= 100 {
			total[1] -= 10
			total[5] += 10 // 2.5..5 s stalls
		}
		md := batch(engineRes, sec(s), pt{name: spec.EngineRequestsWaiting, v: 0})
		addHist(md, spec.EngineInterTokenLatency, sec(s), latBounds, total[:])
		return []pmetric.Metrics{md}
	})
	f := firing(recs, spec.IncidentKindLatencySpike)
	if len(f) != 1 || !strings.Contains(f[0].body, "inter-token latency") {
		t.Fatalf("want one inter-token latency spike: %+v", recs)
	}
	if after := time.Duration(f[0].ts - sec(100)); after > 12*time.Second {
		t.Fatalf("fired %s after onset", after)
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// slowTrace is one process on one GPU, sampled once a simulated minute:
// base + leak + a daily load cycle (a sinusoid with a second harmonic, so
// the cycle is not one pure shape) + Gaussian noise.
type slowTrace struct {
	baseGiB     float64
	leakGiBDay  float64 // growth per day (0: none)
	cycleGiB    float64 // amplitude of the daily cycle (0: none)
	phase       float64 // radians
	harmonic    float64 // share of a 12h harmonic in the cycle
	noiseMiB    float64 // σ of the noise
	leakFromDay float64 // the leak starts this many days in
	fastFrom    float64 // minutes: from then on, 120 MiB/min more (0: never)
	seed        uint64
}

const (
	slowLimit = 80 * gib
	slowOther = 2 * gib // the GPU's memory besides the process
)

func (tr slowTrace) at(minute int, rng *rand.Rand) float64 {
	days := float64(minute) / 1440
	x := 2*math.Pi*days + tr.phase
	v := tr.baseGiB*gib + tr.cycleGiB*gib*(math.Sin(x)+tr.harmonic*math.Sin(2*x+1))/(1+tr.harmonic)
	if days > tr.leakFromDay {
		v += tr.leakGiBDay * gib * (days - tr.leakFromDay)
	}
	if tr.fastFrom > 0 && float64(minute) > tr.fastFrom {
		v += 120 * mib * (float64(minute) - tr.fastFrom)
	}
	return v + rng.NormFloat64()*tr.noiseMiB*mib
}

// slowRun is what a simulated run produced.
type slowRun struct {
	recs    []record
	firedAt int     // minute of the first firing gpu_memory_leak of the process (-1: none)
	gpuLast float64 // the GPU's usage at firedAt
}

// runSlow feeds minutes of tr (one sample a minute, with explicit
// timestamps) and evaluates after each sample.
func runSlow(t *testing.T, tr slowTrace, minutes int, mutate func(*Config)) slowRun {
	t.Helper()
	d := newTestDiagnoser(t, func(c *Config) {
		// One sample a minute leaves a 10-minute window 10 points, where
		// noise alone makes steep slopes; a real scrape (1–15 s) gives it
		// 40–600. 30 minutes gives it 30, as a 20 s scrape would.
		c.Leak.Window = 30 * time.Minute
		if mutate != nil {
			mutate(c)
		}
	})
	rng := rand.New(rand.NewPCG(tr.seed, 7))
	out := slowRun{firedAt: -1}
	for m := 0; m <= minutes; m++ {
		ts := t0 + int64(m)*int64(time.Minute)
		p := tr.at(m, rng)
		md := batch(map[string]any{"hw.id": gpu0}, ts,
			pt{name: spec.HwGpuMemoryUsage, v: p + slowOther, attrs: nil},
			pt{name: spec.HwGpuMemoryLimit, v: slowLimit},
			pt{name: spec.ProcessGpuMemoryUsage, v: p, attrs: map[string]any{"process.pid": int64(42), "process.executable.name": "python"}})
		d.consumeMetrics(md, false)
		ld, _, _ := d.evaluateAt(ts + int64(100*time.Millisecond))
		recs := records(ld)
		for _, r := range recs {
			if r.kind == spec.IncidentKindGPUMemoryLeak && r.state == "firing" && r.attrs[spec.AttrProcessPid] == int64(42) && out.firedAt < 0 {
				out.firedAt, out.gpuLast = m, p+slowOther
			}
		}
		out.recs = append(out.recs, recs...)
	}
	return out
}

func slowEvidence(t *testing.T, r record, signal string) float64 {
	t.Helper()
	ev, _ := r.attrs[spec.IncidentEvidence].([]any)
	for _, e := range ev {
		m := e.(map[string]any)
		if m["signal"] == signal {
			return m["value"].(float64)
		}
	}
	t.Fatalf("no %s evidence in %v", signal, r.attrs[spec.IncidentEvidence])
	return 0
}

// checkSlowFiring asserts the first firing record of the process: the
// horizon attribute, the rate within ±20% and the forecast within ±20% of
// (limit − usage) / true rate.
func checkSlowFiring(t *testing.T, tr slowTrace, run slowRun, withinMin int) {
	t.Helper()
	if run.firedAt < 0 {
		t.Fatalf("no gpu_memory_leak in %d simulated hours", withinMin/60)
	}
	if run.firedAt > withinMin {
		t.Fatalf("fired at %.1fh, want within %.1fh", float64(run.firedAt)/60, float64(withinMin)/60)
	}
	fired := firing(run.recs, spec.IncidentKindGPUMemoryLeak)
	var r record
	for _, f := range fired {
		if f.attrs[spec.AttrProcessPid] == int64(42) {
			r = f
			break
		}
	}
	h, _ := r.attrs[spec.IncidentHorizon].(string)
	if h == "" {
		t.Fatalf("no %s on %v", spec.IncidentHorizon, r.attrs)
	}
	trueRate := tr.leakGiBDay * gib / 86400 // bytes/s
	perHour := slowEvidence(t, r, spec.EvidenceMemoryFloorGrowthRate)
	if want := trueRate * 3600 / mib; math.Abs(perHour-want) > 0.2*want {
		t.Errorf("rate %.1f MiB/h, true %.1f", perHour, want)
	}
	tte := slowEvidence(t, r, spec.HwGpuMemoryTimeToExhaustion)
	if truth := (slowLimit - run.gpuLast) / trueRate; math.Abs(tte-truth) > 0.2*truth {
		t.Errorf("forecast %.1fh, true %.1fh", tte/3600, truth/3600)
	}
	if !strings.Contains(r.body, "MiB/day") || !strings.Contains(r.body, "full in ") {
		t.Errorf("body lacks the daily rate or the forecast: %s", r.body)
	}
	t.Logf("fired at %.1fh by the %s horizon: %s", float64(run.firedAt)/60, h, r.body)
}

const threeDays = 3 * 24 * 60

// TestSlowLeakFires: leaks of 1.5–4 GiB/day, too slow for the 10-minute
// window, fire within 24h (the 24h tier judges from 85% of its span, once
// a day of floors shows no cycle) with the rate and forecast within 20%.
func TestSlowLeakFires(t *testing.T) {
	for i, tc := range []slowTrace{
		{baseGiB: 60, leakGiBDay: 2, noiseMiB: 50},
		{baseGiB: 60, leakGiBDay: 2, noiseMiB: 300},
		{baseGiB: 40, leakGiBDay: 1.5, noiseMiB: 100},
		{baseGiB: 30, leakGiBDay: 4, noiseMiB: 400},
		{baseGiB: 50, leakGiBDay: 2, noiseMiB: 200, cycleGiB: 0.2, phase: 1}, // a faint cycle
	} {
		tc.seed = uint64(i + 1)
		t.Run(fmt.Sprintf("%gGiB/day noise %gMiB", tc.leakGiBDay, tc.noiseMiB), func(t *testing.T) {
			run := runSlow(t, tc, 26*60, nil)
			checkSlowFiring(t, tc, run, 26*60)
		})
	}
}

// TestSlowLeakDailyCycleSilent: a strong daily load cycle (±4–8 GiB, any
// phase, with a harmonic) and noise, no leak: nothing for 3 days. The
// rising half of a cycle is a steady climb of GiBs over hours; the floors
// a day apart and the falls of the last day say it is not a leak.
func TestSlowLeakDailyCycleSilent(t *testing.T) {
	i := 0
	for _, amp := range []float64{4, 8} {
		for _, phase := range []float64{0, math.Pi / 2, math.Pi, 3 * math.Pi / 2} {
			i++
			tc := slowTrace{baseGiB: 40, cycleGiB: amp, phase: phase, harmonic: float64(i%3) * 0.25, noiseMiB: float64(100 + 100*(i%3)), seed: uint64(100 + i)}
			t.Run(fmt.Sprintf("±%gGiB phase %.2f", amp, phase), func(t *testing.T) {
				run := runSlow(t, tc, threeDays, nil)
				if f := firing(run.recs, spec.IncidentKindGPUMemoryLeak); len(f) > 0 {
					t.Fatalf("a daily cycle fired: %s %v", f[0].body, f[0].attrs[spec.IncidentEvidence])
				}
			})
		}
	}
}

// TestSlowLeakFlatNoisySilent: flat processes, noisy up to σ 1 GiB: nothing
// for 3 days.
func TestSlowLeakFlatNoisySilent(t *testing.T) {
	for i, noise := range []float64{20, 300, 1024} {
		tc := slowTrace{baseGiB: 40, noiseMiB: noise, seed: uint64(200 + i)}
		t.Run(fmt.Sprintf("noise %gMiB", noise), func(t *testing.T) {
			run := runSlow(t, tc, threeDays, nil)
			if f := firing(run.recs, spec.IncidentKindGPUMemoryLeak); len(f) > 0 {
				t.Fatalf("a flat process fired: %s", f[0].body)
			}
		})
	}
}

// TestSlowLeakUnderDailyCycle: a 2–3 GiB/day leak under a ±8 GiB daily
// cycle fires from the 1-hour floors a day apart, within 33h (30h of
// floors, plus a 1-hour bucket to complete), rate and forecast within 20%.
func TestSlowLeakUnderDailyCycle(t *testing.T) {
	for i, tc := range []slowTrace{
		{baseGiB: 30, leakGiBDay: 2, cycleGiB: 8, phase: 0, noiseMiB: 200},
		{baseGiB: 30, leakGiBDay: 2, cycleGiB: 8, phase: 2.5, harmonic: 0.3, noiseMiB: 100},
		{baseGiB: 30, leakGiBDay: 3, cycleGiB: 6, phase: 4.2, noiseMiB: 400},
		{baseGiB: 30, leakGiBDay: 2, cycleGiB: 8, phase: 5.5, harmonic: 0.5, noiseMiB: 300},
	} {
		tc.seed = uint64(300 + i)
		t.Run(fmt.Sprintf("%gGiB/day under ±%gGiB phase %.1f", tc.leakGiBDay, tc.cycleGiB, tc.phase), func(t *testing.T) {
			run := runSlow(t, tc, 40*60, nil)
			checkSlowFiring(t, tc, run, 33*60)
			r := firing(run.recs, spec.IncidentKindGPUMemoryLeak)[0]
			if h := r.attrs[spec.IncidentHorizon]; h != "72h" {
				t.Errorf("horizon %v, want the daily (72h) tier", h)
			}
		})
	}
}

// TestSlowLeakNeedsLongHorizon: without the long horizon the 10-minute
// window never sees a 2 GiB/day leak (this fails if the long-horizon
// detection is removed).
func TestSlowLeakNeedsLongHorizon(t *testing.T) {
	tc := slowTrace{baseGiB: 60, leakGiBDay: 2, noiseMiB: 100, seed: 9}
	off := runSlow(t, tc, 30*60, func(c *Config) { c.Leak.LongHorizon.Enabled = false })
	if off.firedAt >= 0 {
		t.Fatal("the short window found a 2 GiB/day leak: the long horizon would not be needed")
	}
	on := runSlow(t, tc, 30*60, nil)
	if on.firedAt < 0 {
		t.Fatal("the long horizon missed a 2 GiB/day leak")
	}
}

// TestSlowLeakOneIncident: a slow leak that becomes fast (120 MiB/min) is
// one incident: the short window takes over the same incident, no second
// one, and the GPU it explains has none.
func TestSlowLeakOneIncident(t *testing.T) {
	tc := slowTrace{baseGiB: 20, leakGiBDay: 2, noiseMiB: 50, fastFrom: 25 * 60, seed: 11}
	run := runSlow(t, tc, 26*60, nil)
	if run.firedAt < 0 || run.firedAt >= 25*60 {
		t.Fatalf("the slow leak fired at minute %d", run.firedAt)
	}
	fired := firing(run.recs, spec.IncidentKindGPUMemoryLeak)
	if len(fired) != 1 {
		for _, f := range fired {
			t.Logf("%v: %s", f.attrs[spec.AttrProcessPid], f.body)
		}
		t.Fatalf("%d gpu_memory_leak incidents, want 1", len(fired))
	}
	var fast bool
	for _, r := range run.recs {
		if r.id == fired[0].id && r.state == "firing" && r.attrs[spec.IncidentHorizon] == nil && strings.Contains(r.body, "MiB/min") {
			fast = true
		}
	}
	if !fast {
		t.Fatal("the short window did not take the incident over")
	}
}

// TestSlowLeakOnsetAfterFlatDay: a process flat for a day, then leaking 6
// GiB/day, fires within hours from the 2h tier (a day of flat floors rules
// a cycle out), not a day later.
func TestSlowLeakOnsetAfterFlatDay(t *testing.T) {
	tc := slowTrace{baseGiB: 40, leakGiBDay: 6, leakFromDay: 1, noiseMiB: 30, seed: 13}
	run := runSlow(t, tc, 30*60, nil)
	if run.firedAt < 0 || run.firedAt > 24*60+4*60 {
		t.Fatalf("fired at minute %d, want within 4h of the onset", run.firedAt)
	}
	r := firing(run.recs, spec.IncidentKindGPUMemoryLeak)[0]
	if h := r.attrs[spec.IncidentHorizon]; h != "2h" {
		t.Errorf("horizon %v, want 2h", h)
	}
}

func TestFullInDays(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		want string
	}{
		{(2*24 + 20) * 3600, ", full in 2d 20h"},
		{5 * 3600, ", full in 5h"},
		{30 * 60, ", full in 30m0s"},
		{math.Inf(1), ""},
	} {
		if got := fullInDays(tc.s); got != tc.want {
			t.Errorf("fullInDays(%v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

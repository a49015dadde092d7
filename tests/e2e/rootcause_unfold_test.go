// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// Incidents that stay true as a fault unfolds, through the built binary:
// updates of a firing incident, a leak's onset, hardware errors that wait
// for a reset or an acknowledgment, throttling judged per reason, and one
// cause's incident replacing its symptoms'.

// GPUs of the scenarios below (tests/fakenvml/scenarios).
const (
	rcPowerCapGPU  = "GPU-7c1e4a2b-5d3f-4e6a-9b8c-000000100000"
	rcResetGPU     = "GPU-7c1e4a2b-5d3f-4e6a-9b8c-000000110000"
	rcAckGPU       = "GPU-7c1e4a2b-5d3f-4e6a-9b8c-000000110001"
	rcPressureGPU  = "GPU-7c1e4a2b-5d3f-4e6a-9b8c-000000120000"
	rcLeakOnsetGPU = "GPU-7c1e4a2b-5d3f-4e6a-9b8c-000000130000"
)

// evidenceNumber is the value of the first evidence entry whose signal
// contains fragment.
func evidenceNumber(i incident, fragment string) (float64, bool) {
	ev, ok := i.evidenceFor(fragment)
	if !ok {
		return 0, false
	}
	v, ok := ev["value"].(float64)
	return v, ok
}

func (i incident) update() int64 {
	v, _ := i.attrs.Get(spec.IncidentUpdate)
	return v.Int()
}

// resolutionOf waits for the resolved record of incident id and returns it.
func resolutionOf(t *testing.T, r *rcRun, timeout time.Duration, id string) incident {
	t.Helper()
	var got incident
	harness.Eventually(t, timeout, func() (bool, string) {
		all := incidents(t, r.backend)
		for _, i := range all {
			if i.str(spec.IncidentID) == id && i.state() == "resolved" {
				got = i
				return true, ""
			}
		}
		return false, "incident " + id + " not resolved; " + describe(all)
	})
	return got
}

// A leak that begins late and then speeds up: the incident gives the onset
// and the leak's own rate, and is sent again (same id, update 1+) when the
// rate quadruples.
func TestRootcauseLeakOnsetAndUpdate(t *testing.T) {
	rcParallel(t)
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-leak-onset.scenario", nvmlScale: 1})
	// rootcause-leak-onset.scenario: flat until 20 s, 240 MiB/min, 960
	// MiB/min from 50 s.
	leak := waitIncident(t, r, 60*time.Second, "gpu_memory_leak of pid 41001", func(i incident) bool {
		return i.kind() == "gpu_memory_leak" && i.pid() == rcEnginePid
	})
	all := incidents(t, r.backend)
	if rate, ok := evidenceNumber(leak, spec.EvidenceMemoryGrowthRate); !ok || math.Abs(rate-240)/240 > 0.15 {
		t.Errorf("first rate %v MiB/min, want the leak's 240 ± 15%%; %s", rate, describe(all))
	}
	onset, err := time.Parse(time.RFC3339Nano, leak.str(spec.IncidentOnsetTime))
	if err != nil {
		t.Fatalf("no incident.onset_time: %v; %s", err, describe(all))
	}
	if d := onset.Sub(r.nvmlAt(20)); d < -3*time.Second || d > 3*time.Second {
		t.Errorf("onset %s is %s off the scenario's (20 s)", onset.Format("15:04:05.000"), d)
	}
	upd := waitIncident(t, r, 60*time.Second, "an update of the leak at about 960 MiB/min", func(i incident) bool {
		rate, _ := evidenceNumber(i, spec.EvidenceMemoryGrowthRate)
		return i.str(spec.IncidentID) == leak.str(spec.IncidentID) && i.update() >= 1 && math.Abs(rate-960)/960 < 0.15
	})
	if !strings.Contains(upd.str(spec.IncidentChange), "memory.growth_rate") || !strings.Contains(upd.body, "update ") {
		t.Errorf("the update does not say what changed: %s", upd)
	}
	checkOnset(t, upd, r.nvmlAt(50), rcLeakWindow/4+30*time.Second+rcSlack, incidents(t, r.backend))
	checkContract(t, incidents(t, r.backend))
}

// Hardware errors that need a reset stay open past resolve_after (10 s
// here): XID 48 until the GPU is reset (30 s), XID 95 until an operator
// acknowledges it through the OTLP logs endpoint.
func TestRootcauseHardwareErrorsWaitForHandling(t *testing.T) {
	rcParallel(t)
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-hwreset.scenario", nvmlScale: 1, otlpLogs: true})
	reset := waitIncident(t, r, 30*time.Second, "xid_error 48", func(i incident) bool {
		return i.kind() == "xid_error" && i.str("hw.id") == rcResetGPU
	})
	acked := waitIncident(t, r, 30*time.Second, "xid_error 95", func(i incident) bool {
		return i.kind() == "xid_error" && i.str("hw.id") == rcAckGPU
	})
	for _, i := range []incident{reset, acked} {
		if i.str(spec.AttrHwGpuXidRecovery) != "reset_gpu" || i.str(spec.IncidentSeverity) != "critical" {
			t.Errorf("want a critical incident that needs a reset: %s", i)
		}
	}
	// Long past resolve_after (10 s), neither is resolved.
	never(t, r, time.Until(r.nvmlAt(25)), func(all []incident) string {
		for _, i := range all {
			if i.state() == "resolved" && i.kind() == "xid_error" {
				return "a hardware error resolved with nothing handled"
			}
		}
		return ""
	})
	body := fmt.Sprintf(`{"resourceLogs":[{"resource":{},"scopeLogs":[{"logRecords":[{"body":{"stringValue":"GPU drained and replaced"},`+
		`"attributes":[{"key":"incident.id","value":{"stringValue":%q}},{"key":"incident.state","value":{"stringValue":"acknowledged"}}]}]}]}]}`,
		acked.str(spec.IncidentID))
	ackAt := time.Now()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, r.otlpLogs, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close() // only the status matters
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("acknowledgment refused: %s", resp.Status)
	}
	a := resolutionOf(t, r, 10*time.Second, acked.str(spec.IncidentID))
	if a.str(spec.IncidentResolution) != spec.ResolutionAcknowledged || a.ts.Sub(ackAt) > rcSlack {
		t.Errorf("want XID 95 acknowledged within %s: %s", rcSlack, a)
	}
	g := resolutionOf(t, r, time.Until(r.nvmlAt(30))+10*time.Second, reset.str(spec.IncidentID))
	if g.str(spec.IncidentResolution) != spec.ResolutionGPUReset {
		t.Errorf("want XID 48 resolved by the GPU reset: %s", g)
	}
	checkOnset(t, g, r.nvmlAt(30), rcSlack, incidents(t, r.backend))
	checkContract(t, incidents(t, r.backend))
}

// A GPU held at its power cap from the start, with a 2 s thermal blip at
// 20 s, is silent while its engine's throughput holds; when the engine's
// output falls (35 s), the throttling incident names the power cap (not the
// blip) and the throughput drop is its evidence, not a second incident.
func TestRootcausePowerCapCostingThroughput(t *testing.T) {
	rcParallel(t)
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-powercap.scenario", nvmlScale: 1,
		engineScenario: "vllm-throughput-drop.scenario", engineSpeed: 1, engineGPU: rcPowerCapGPU})
	inc := waitIncident(t, r, 75*time.Second, "gpu_throttling on the power-capped GPU", func(i incident) bool {
		return i.kind() == "gpu_throttling" && i.str("hw.id") == rcPowerCapGPU
	})
	all := incidents(t, r.backend)
	if !strings.Contains(inc.body, "sw_power_cap for") || strings.Contains(inc.body, "thermal") {
		t.Errorf("want the power cap named and not the 2 s thermal blip: %s", inc)
	}
	if _, ok := inc.evidenceFor(spec.EvidenceTokensRate); !ok {
		t.Errorf("no token rate in the evidence: %s", inc)
	}
	// The output falls from 35 s; the power cap is no incident before.
	notBefore(t, inc, r.engineAt(35), "the engine's throughput fell", all)
	never(t, r, rcThroughputWin, func(all []incident) string {
		for _, i := range all {
			if i.firing() && i.kind() == "throughput_drop" {
				return "a throughput_drop beside the throttling that explains it"
			}
		}
		return ""
	})
	checkContract(t, incidents(t, r.backend))
}

// The KV cache fills while latency climbs; the latency rises first. One
// incident names the cause: the KV saturation, carrying the latency as its
// evidence. A latency incident sent before the cache crossed its threshold
// is resolved as superseded, naming it.
func TestRootcauseLatencyWhileKVFills(t *testing.T) {
	rcParallel(t)
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-healthy.scenario", nvmlScale: 1,
		engineScenario: "vllm-kv-fills.scenario", engineSpeed: 1, engineGPU: rcHealthyGPU0})
	kv := waitIncident(t, r, 90*time.Second, "kv_cache_saturation", func(i incident) bool {
		return i.kind() == "kv_cache_saturation"
	})
	kvID := kv.str(spec.IncidentID)
	harness.Eventually(t, rcLatencyWindow+rcSlack, func() (bool, string) {
		all := incidents(t, r.backend)
		var withLatency bool
		open := map[string]bool{}
		for _, i := range all {
			switch {
			case i.str(spec.IncidentID) == kvID:
				_, ok := i.evidenceFor("time_to_first_token", "request.duration")
				withLatency = withLatency || ok
			case i.kind() == "latency_spike" && i.firing():
				open[i.str(spec.IncidentID)] = true
			case i.kind() == "latency_spike" && i.state() == "resolved":
				if i.str(spec.IncidentResolution) != spec.ResolutionSuperseded || i.str(spec.IncidentSupersededBy) != kvID {
					t.Fatalf("latency resolved other than as superseded by %s: %s", kvID, i)
				}
				delete(open, i.str(spec.IncidentID))
			}
		}
		if len(open) > 0 || !withLatency {
			return false, fmt.Sprintf("latency incidents not superseded %v, KV incident with the latency as evidence %v; %s", open, withLatency, describe(all))
		}
		return true, ""
	})
	if q := incidents(t, r.backend); len(q) > 0 {
		for _, i := range q {
			if i.kind() == "queue_buildup" {
				t.Errorf("the queue is the KV saturation's symptom: %s", i)
			}
		}
	}
	checkContract(t, incidents(t, r.backend))
}

// Memory pressure: the process grows from 25 s, the cache and latency give
// way at 40 s. The joint degradation replaces its parts: the latency and
// cache incidents are never sent (the correlation hold), and the leak
// incident that came before them is superseded by it.
func TestRootcauseJointReplacesItsParts(t *testing.T) {
	rcParallel(t)
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-pressure.scenario", nvmlScale: 1,
		engineScenario: "vllm-memory-pressure.scenario", engineSpeed: 1, engineGPU: rcPressureGPU})
	j := waitIncident(t, r, 90*time.Second, "joint_degradation", func(i incident) bool {
		return i.kind() == "joint_degradation"
	})
	all := incidents(t, r.backend)
	checkOnset(t, j, r.engineAt(40), max(rcLatencyWindow, rcCacheHitWin)+rcSlack, all)
	for _, fragment := range []string{"hit_ratio", "time_to_first_token", spec.EvidenceMemoryGrowthRate} {
		if _, ok := j.evidenceFor(fragment); !ok {
			t.Errorf("joint incident without %s evidence: %s", fragment, j)
		}
	}
	never(t, r, 2*rcSlack, func(all []incident) string {
		for _, i := range all {
			if i.firing() && (i.kind() == "latency_spike" || i.kind() == "cache_hit_drop") {
				return "a " + i.kind() + " sent beside the joint incident that replaces it"
			}
		}
		return ""
	})
	for _, i := range incidents(t, r.backend) {
		if i.kind() == "gpu_memory_leak" && i.firing() && i.update() == 0 {
			res := resolutionOf(t, r, rcSlack, i.str(spec.IncidentID))
			if res.str(spec.IncidentSupersededBy) != j.str(spec.IncidentID) {
				t.Errorf("the leak is not superseded by the joint incident: %s", res)
			}
		}
	}
	checkContract(t, incidents(t, r.backend))
}

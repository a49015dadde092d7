// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/tests/harness"
	"github.com/llmops-otel/otelcol-llmops/tests/tracegen"
)

// The root-cause scenarios: the fake NVML library, the engine replay server
// and a generated profiler trace each play one story, the built binary runs
// nvml, llmengine and profileimport into llmnormalize and rootcause, and the
// incidents that reach a real OTLP backend (as log records) are checked for
// their kind, subject, drill-down and how long after the condition began in
// the simulators they were raised.

// GPUs of the tests/fakenvml/scenarios/rootcause-*.scenario files.
const (
	rcLeakGPU0     = "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000a0000"
	rcLeakGPU1     = "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000a0001"
	rcHealthyGPU0  = "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000b0000"
	rcHealthyGPU1  = "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000b0001"
	rcIdleGPU      = "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000c0000"
	rcThrottledGPU = "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000d0000"
	rcXIDGPU       = "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000e0000"

	rcEnginePid = 41001 // the vLLM process every scenario scrapes or profiles
	rcOtherPid  = 41002

	// rcTick is the evaluation interval of rootcause and the collection
	// interval of nvml and llmengine in rcConfig.
	rcTick = time.Second
	// rcSlack is what every onset-to-incident bound allows on top of the
	// detector's own window or `for`: two evaluations and one collection.
	rcSlack = 2*rcTick + rcTick
)

// Detector windows of rcConfig, for the onset-to-incident bounds.
const (
	rcLeakWindow    = 30 * time.Second
	rcKVFor         = 5 * time.Second
	rcLatencyWindow = 10 * time.Second
	rcThroughputWin = 10 * time.Second
	rcQueueFor      = 10 * time.Second
	rcQueueMin      = 10.0
	rcThrottleFor   = 5 * time.Second
	rcWarmup        = 20 * time.Second
)

// rcScenarioEngine is the llm.engine.name of the replayed engine.
const rcScenarioEngine = "vllm"

// rcSlots bounds the scenarios running at once: each runs two collectors
// and maybe a replay server, and the timing assertions need CPU to spare
// (the machine this is written for has 2 cores).
var rcSlots = make(chan struct{}, 2)

func rcParallel(t *testing.T) {
	t.Parallel()
	rcSlots <- struct{}{}
	// Registered first, so it runs last: after the processes are stopped.
	t.Cleanup(func() { <-rcSlots })
}

// rcSetup is one scenario's simulators.
type rcSetup struct {
	nvmlScenario string  // file in tests/fakenvml/scenarios
	nvmlScale    float64 // FAKE_NVML_TIME_SCALE (scenario seconds per second)
	// engineScenario (in tests/enginereplay/scenarios), when set, is played
	// by a vLLM replay server at engineSpeed; engineGPU is the hw.id of the
	// GPU its process (rcEnginePid) runs on.
	engineScenario string
	engineSpeed    float64
	engineGPU      string
	// otlpLogs adds an OTLP/HTTP receiver to the logs pipeline that feeds
	// rootcause (operators' acknowledgments arrive that way); its URL is
	// rcRun.otlpLogs.
	otlpLogs bool
}

// rcRun is a running scenario.
type rcRun struct {
	backend *harness.Backend
	// nvmlZero and engineZero are when the simulators' scenario clocks read
	// 0, as late as they can be: the fake NVML clock starts in nvmlInit,
	// during the collector's start, so before the collector reports ready;
	// the replay clock starts before the server prints its listening line.
	// Onsets computed from them are therefore never early, and an incident
	// is only reported late when it surely was.
	nvmlZero, engineZero time.Time
	setup                rcSetup
	watch                string // the profile directory
	otlpLogs             string // http://127.0.0.1:port/v1/logs, with rcSetup.otlpLogs
}

// nvmlAt is the wall time of fake NVML scenario time s.
func (r *rcRun) nvmlAt(s float64) time.Time {
	return r.nvmlZero.Add(time.Duration(s / r.setup.nvmlScale * float64(time.Second)))
}

// engineAt is the wall time of replay scenario time s.
func (r *rcRun) engineAt(s float64) time.Time {
	return r.engineZero.Add(time.Duration(s / r.setup.engineSpeed * float64(time.Second)))
}

// rcFakeProc builds the /proc entries of the scenarios' GPU processes: two
// vLLM workers in two pods.
func rcFakeProc(t *testing.T) string {
	root := t.TempDir()
	for pid, pod := range map[int]string{
		rcEnginePid: "3b2a1c0d_4e5f_4a6b_8c7d_0e1f2a3b4c5d",
		rcOtherPid:  "9c8b7a6d_5e4f_4a3b_8c2d_1e0f9a8b7c6d",
	} {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		ctr := fmt.Sprintf("%064x", pid)
		files := map[string]string{
			"comm":   "vllm\n",
			"cgroup": "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + pod + ".slice/cri-containerd-" + ctr + ".scope\n",
			"stat":   fmt.Sprintf("%d (vllm) S 1 %d %d 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 4711 0 0\n", pid, pid, pid),
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// startRootcause starts the backend, the replay server (if any) and the
// collector under test with the rootcause pipeline of the issue.
func startRootcause(t *testing.T, s rcSetup) *rcRun {
	t.Helper()
	root := harness.RepoRoot(t)
	r := &rcRun{setup: s, watch: t.TempDir()}
	r.backend = harness.StartBackend(t)

	receivers := fmt.Sprintf(`  nvml:
    collection_interval: %s
    library_path: %s
    proc_root: %s
  profileimport:
    include: [%s/*.json*]
    poll_interval: 200ms
    settle_time: 300ms
`, rcTick, harness.FakeNVML(t), rcFakeProc(t), r.watch)
	metrics := "nvml"
	if s.engineScenario != "" {
		url := harness.StartEngineReplay(t, "-engine", "vllm",
			"-scenario", filepath.Join(root, "tests", "enginereplay", "scenarios", s.engineScenario),
			"-speed", strconv.FormatFloat(s.engineSpeed, 'f', -1, 64))
		r.engineZero = time.Now()
		receivers += fmt.Sprintf(`  llmengine:
    collection_interval: %s
    targets:
      - endpoint: %s/metrics
        engine: vllm
        resource_attributes: {hw.id: %s, process.pid: "%d"}
`, rcTick, url, s.engineGPU, rcEnginePid)
		metrics = "nvml, llmengine"
	}
	logs := "profileimport"
	if s.otlpLogs {
		port := harness.FreePort(t)
		receivers += fmt.Sprintf(`  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
`, port)
		logs += ", otlp"
		r.otlpLogs = fmt.Sprintf("http://127.0.0.1:%d/v1/logs", port)
	}
	health := harness.FreePort(t)
	cfg := fmt.Sprintf(`
receivers:
%sprocessors:
  llmnormalize: {}
connectors:
  rootcause:
    evaluation_interval: %s
    warmup: %s
    resolve_after: 10s
    stale_after: 30s
    leak: {window: %s, min_slope_mib_per_minute: 80}
    kv_cache: {for: %s}
    cache_hit: {window: 15s, baseline: 60s}
    latency: {window: %s, baseline: 60s}
    throughput: {window: %s, baseline: 60s}
    queue: {for: %s, min_waiting: %g}
    throttle: {for: %s}
exporters:
  otlp:
    endpoint: %s
    tls:
      insecure: true
extensions:
  health_check:
    endpoint: 127.0.0.1:%d
service:
  extensions: [health_check]
  telemetry:
    metrics:
      level: none
  pipelines:
    metrics/in:
      receivers: [%s]
      processors: [llmnormalize]
      exporters: [rootcause]
    metrics:
      receivers: [rootcause]
      exporters: [otlp]
    traces:
      receivers: [profileimport]
      exporters: [rootcause, otlp]
    logs:
      receivers: [%s]
      exporters: [rootcause, otlp]
    logs/incidents:
      receivers: [rootcause]
      exporters: [otlp]
`, receivers, rcTick, rcWarmup, rcLeakWindow, rcKVFor, rcLatencyWindow, rcThroughputWin, rcQueueFor, rcQueueMin,
		rcThrottleFor, r.backend.GRPCEndpoint, health, metrics, logs)
	harness.StartCollector(t, harness.Options{
		Name: "agent", Config: cfg, HealthPort: health,
		Env: []string{
			"FAKE_NVML_SCENARIO=" + filepath.Join(root, "tests", "fakenvml", "scenarios", s.nvmlScenario),
			"FAKE_NVML_TIME_SCALE=" + strconv.FormatFloat(s.nvmlScale, 'f', -1, 64),
		},
	})
	r.nvmlZero = time.Now()
	return r
}

// incident is one incident log record as the backend received it.
type incident struct {
	ts       time.Time
	severity plog.SeverityNumber
	body     string
	traceID  pcommon.TraceID
	spanID   pcommon.SpanID
	attrs    pcommon.Map
	resource pcommon.Map
}

func (i incident) str(k string) string { return str(i.attrs, k) }

func (i incident) kind() string  { return i.str(spec.IncidentKind) }
func (i incident) state() string { return i.str(spec.IncidentState) }
func (i incident) firing() bool  { return i.state() == "firing" }

// pid is the incident's process.pid, -1 without one.
func (i incident) pid() int64 {
	v, ok := i.attrs.Get(spec.AttrProcessPid)
	if !ok {
		return -1
	}
	if v.Type() == pcommon.ValueTypeStr {
		n, err := strconv.ParseInt(v.Str(), 10, 64)
		if err != nil {
			return -1
		}
		return n
	}
	return v.Int()
}

// evidence returns the incident's evidence entries.
func (i incident) evidence() []map[string]any {
	v, ok := i.attrs.Get(spec.IncidentEvidence)
	if !ok || v.Type() != pcommon.ValueTypeSlice {
		return nil
	}
	var out []map[string]any
	for _, e := range v.Slice().AsRaw() {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// evidenceFor returns the first evidence entry whose signal contains any of
// the fragments.
func (i incident) evidenceFor(fragments ...string) (map[string]any, bool) {
	for _, e := range i.evidence() {
		sig, _ := e["signal"].(string)
		for _, f := range fragments {
			if strings.Contains(sig, f) {
				return e, true
			}
		}
	}
	return nil, false
}

// ruledOut is the incident's incident.ruled_out.
func (i incident) ruledOut() []string {
	var out []string
	if v, ok := i.attrs.Get(spec.IncidentRuledOut); ok && v.Type() == pcommon.ValueTypeSlice {
		for k := 0; k < v.Slice().Len(); k++ {
			out = append(out, v.Slice().At(k).Str())
		}
	}
	return out
}

func containsPrefix(list []string, prefix string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.HasPrefix(s, prefix) })
}

func (i incident) String() string {
	var ev []string
	for _, e := range i.evidence() {
		ev = append(ev, fmt.Sprintf("%v=%v(baseline %v, threshold %v %v)", e["signal"], e["value"], e["baseline"], e["threshold"], e["unit"]))
	}
	var subj []string
	for _, k := range []string{"hw.id", "process.pid", "llm.engine.name", "llm.engine.target", "gen_ai.request.model"} {
		if v, ok := i.attrs.Get(k); ok {
			subj = append(subj, k+"="+v.AsString())
		}
	}
	return fmt.Sprintf("%s %s %s severity=%s/%s quadrant=%s start=%s id=%s [%s] layer=%q trace=%s span=%s evidence=[%s] body=%q",
		i.ts.Format("15:04:05.000"), i.kind(), i.state(), i.str(spec.IncidentSeverity), i.severity,
		i.str(spec.IncidentQuadrant), i.str(spec.IncidentStartTime), i.str(spec.IncidentID), strings.Join(subj, " "),
		i.str("incident.layer"), i.traceID, i.spanID, strings.Join(ev, "; "), i.body)
}

// incidents returns the incident log records the backend has received, in
// arrival order. profileimport's own leak-suspect records (kind
// leak_suspect) describe a profile, not the node, and are left out.
func incidents(t *testing.T, b *harness.Backend) []incident {
	t.Helper()
	var out []incident
	ld := b.Logs(t)
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			lrs := rl.ScopeLogs().At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				kind, ok := lr.Attributes().Get(spec.IncidentKind)
				if !ok || kind.AsString() == "leak_suspect" {
					continue
				}
				out = append(out, incident{
					ts: lr.Timestamp().AsTime(), severity: lr.SeverityNumber(), body: lr.Body().AsString(),
					traceID: lr.TraceID(), spanID: lr.SpanID(), attrs: lr.Attributes(), resource: rl.Resource().Attributes(),
				})
			}
		}
	}
	return out
}

func describe(incs []incident) string {
	if len(incs) == 0 {
		return "no incident received"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d incident records received:", len(incs))
	for _, i := range incs {
		b.WriteString("\n  ")
		b.WriteString(i.String())
	}
	return b.String()
}

// waitIncident waits until a firing incident matching match has arrived and
// returns the first one (by its timestamp). On timeout the test fails with
// every incident received.
func waitIncident(t *testing.T, r *rcRun, timeout time.Duration, what string, match func(incident) bool) incident {
	t.Helper()
	var found incident
	harness.Eventually(t, timeout, func() (bool, string) {
		var hits []incident
		all := incidents(t, r.backend)
		for _, i := range all {
			if i.firing() && match(i) {
				hits = append(hits, i)
			}
		}
		if len(hits) == 0 {
			return false, "no " + what + "; " + describe(all)
		}
		found = slices.MinFunc(hits, func(a, b incident) int { return a.ts.Compare(b.ts) })
		return true, ""
	})
	t.Logf("incident: %s", found)
	return found
}

// never fails the test as soon as bad reports a problem during d (it polls
// every 100ms), and at the end of d if it still does.
func never(t *testing.T, r *rcRun, d time.Duration, bad func([]incident) string) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		all := incidents(t, r.backend)
		if msg := bad(all); msg != "" {
			t.Fatalf("%s; %s", msg, describe(all))
		}
		if time.Now().After(deadline) {
			return
		}
		<-tick.C
	}
}

// checkOnset asserts the incident came at most bound after onset (the wall
// time the condition began in the simulators), and not before it.
func checkOnset(t *testing.T, i incident, onset time.Time, bound time.Duration, all []incident) {
	t.Helper()
	delay := i.ts.Sub(onset)
	switch {
	case i.ts.IsZero():
		t.Errorf("%s has no timestamp", i.kind())
	case delay > bound:
		t.Errorf("%s raised %.1fs after its condition began at %s (want <= %s = window/for + 2 evaluations + 1 collection); %s",
			i.kind(), delay.Seconds(), onset.Format("15:04:05.000"), bound, describe(all))
	case delay < -rcTick:
		t.Errorf("%s raised %.1fs before its condition began at %s; %s", i.kind(), -delay.Seconds(), onset.Format("15:04:05.000"), describe(all))
	default:
		t.Logf("%s raised %.1fs after onset (bound %s)", i.kind(), delay.Seconds(), bound)
	}
}

var (
	// The kinds rootcause's detectors raise (not profileimport's
	// leak_suspect and gpu_oom records).
	rcKinds = []string{spec.IncidentKindGPUMemoryLeak, spec.IncidentKindKVCacheGrowth, spec.IncidentKindKVCacheSaturation,
		spec.IncidentKindCacheHitDrop, spec.IncidentKindLatencySpike, spec.IncidentKindThroughputDrop,
		spec.IncidentKindQueueBuildup, spec.IncidentKindGPUThrottling, spec.IncidentKindXIDError,
		spec.IncidentKindECCUncorrected, spec.IncidentKindJointDegradation}
	rcQuadrants = []string{spec.QuadrantLatency, spec.QuadrantErrors, spec.QuadrantThroughput, spec.QuadrantSaturation}
)

// checkContract checks the attributes every incident record carries.
func checkContract(t *testing.T, incs []incident) {
	t.Helper()
	for _, i := range incs {
		var problems []string
		bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
		if i.str(spec.IncidentID) == "" {
			bad("no incident.id")
		}
		if !slices.Contains(rcKinds, i.kind()) {
			bad("incident.kind %q is not a built-in kind (no rules are configured)", i.kind())
		}
		if !slices.Contains(rcQuadrants, i.str(spec.IncidentQuadrant)) {
			bad("incident.quadrant %q", i.str(spec.IncidentQuadrant))
		}
		switch sev := i.str(spec.IncidentSeverity); {
		case sev == "warning" && i.severity == plog.SeverityNumberWarn, sev == "critical" && i.severity == plog.SeverityNumberError:
		case (sev == "warning" || sev == "critical") && i.state() == "resolved" && i.severity == plog.SeverityNumberInfo:
		default:
			bad("incident.severity %q with severity number %s (want warning/WARN or critical/ERROR, INFO once resolved)", sev, i.severity)
		}
		if s := i.state(); s != "firing" && s != "resolved" {
			bad("incident.state %q", s)
		}
		if v, ok := i.attrs.Get(spec.IncidentUpdate); !ok || v.Type() != pcommon.ValueTypeInt || v.Int() < 0 {
			bad("incident.update missing or not a count")
		}
		if i.state() == "resolved" {
			switch r := i.str(spec.IncidentResolution); r {
			case spec.ResolutionCleared, spec.ResolutionGPUReset, spec.ResolutionAcknowledged, spec.ResolutionExpired:
			case spec.ResolutionSuperseded:
				if i.str(spec.IncidentSupersededBy) == "" {
					bad("superseded without incident.superseded_by")
				}
			default:
				bad("incident.resolution %q", r)
			}
		}
		if v, ok := i.attrs.Get(spec.IncidentScore); !ok || v.Type() != pcommon.ValueTypeDouble {
			bad("incident.score missing or not a double")
		}
		if _, err := time.Parse(time.RFC3339Nano, i.str(spec.IncidentStartTime)); err != nil {
			bad("incident.start_time: %v", err)
		}
		if i.str(spec.IncidentAction) == "" {
			bad("no incident.action")
		}
		if v, ok := i.attrs.Get(spec.IncidentEvidence); !ok || v.Type() != pcommon.ValueTypeSlice || v.Slice().Len() == 0 {
			bad("incident.evidence missing or empty")
		}
		for _, e := range i.evidence() {
			if s, _ := e["signal"].(string); s == "" {
				bad("evidence entry without a signal: %v", e)
			}
		}
		if v, ok := i.attrs.Get("incident.layer"); !ok || v.Type() != pcommon.ValueTypeStr {
			bad("incident.layer missing or not a string")
		}
		if v, ok := i.attrs.Get(spec.IncidentLayerStack); !ok || v.Type() != pcommon.ValueTypeSlice {
			bad("incident.layer_stack missing or not a slice")
		}
		if i.str("incident.subject") == "" {
			bad("no incident.subject")
		}
		if v, ok := i.attrs.Get(spec.AttrProcessPid); ok && v.Type() != pcommon.ValueTypeInt {
			bad("process.pid is a %s, want an int", v.Type())
		}
		if i.body == "" || strings.ContainsAny(i.body, "\r\n") {
			bad("body is not one line: %q", i.body)
		}
		if i.ts.IsZero() {
			bad("no timestamp")
		}
		if len(problems) > 0 {
			t.Errorf("incident breaks the contract: %s\n  %s", strings.Join(problems, "; "), i)
		}
	}
}

// (a) A process leaks GPU memory; its profile shows which layer allocates.
func TestRootcauseGPUMemoryLeak(t *testing.T) {
	rcParallel(t)
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-leak.scenario", nvmlScale: 1})
	// A profile of the leaking process taken just now (its window ends
	// before the file appears, as with Kineto), inside the leak's lifetime.
	info, err := tracegen.WriteFile(filepath.Join(r.watch, "vllm-41001.pt.trace.json.gz"), tracegen.Options{
		Pid: rcEnginePid, ProcessName: "vllm", Start: time.Now().Add(-200 * time.Millisecond), Layers: 16, Steps: 6,
		Leak: &tracegen.Leak{Module: "LlamaAttention_12", BytesPerStep: 64 << 20},
	})
	if err != nil {
		t.Fatal(err)
	}

	inc := waitIncident(t, r, 60*time.Second, "gpu_memory_leak of pid 41001 on GPU 0", func(i incident) bool {
		return i.kind() == "gpu_memory_leak" && i.pid() == rcEnginePid && i.str("hw.id") == rcLeakGPU0
	})
	// The process leaks from scenario time 0.
	checkOnset(t, inc, r.nvmlAt(0), rcLeakWindow+rcSlack, incidents(t, r.backend))

	all := incidents(t, r.backend)
	if layer := inc.str("incident.layer"); !strings.Contains(layer, "LlamaAttention_12") {
		t.Errorf("incident.layer %q does not name the leaking module %s; %s", layer, info.LeakModulePath, describe(all))
	}
	stack, _ := inc.attrs.Get(spec.IncidentLayerStack)
	if !strings.Contains(stack.AsString(), "LlamaAttention_12") {
		t.Errorf("incident.layer_stack %s does not include %s", stack.AsString(), info.LeakModulePath)
	}
	// Drill-down: the record points at the allocating span of the profile.
	if inc.traceID.String() != info.TraceID {
		t.Errorf("TraceID %s, want the profile's trace %s; %s", inc.traceID, info.TraceID, describe(all))
	}
	if inc.spanID.IsEmpty() {
		t.Errorf("no SpanID: the incident does not point at the allocating span")
	} else if path, ok := spanModulePath(t, r.backend, inc.traceID, inc.spanID); !ok {
		t.Errorf("span %s of trace %s never reached the backend", inc.spanID, inc.traceID)
	} else if !strings.HasPrefix(path, info.LeakModulePath) {
		t.Errorf("the incident's span runs in %q, want the leaking module %s", path, info.LeakModulePath)
	}

	// The flat process on GPU 1 is no leak, and the growth is not blamed on
	// a KV cache (no engine reports one here). Give a wrong incident the
	// same evaluations the right one had.
	never(t, r, rcSlack, func(all []incident) string {
		for _, i := range all {
			if i.firing() && (i.kind() == "gpu_memory_leak" || i.kind() == "kv_cache_growth") &&
				(i.pid() == rcOtherPid || i.str("hw.id") == rcLeakGPU1) {
				return "a leak incident for the flat process 41002 / GPU 1"
			}
			if i.firing() && i.kind() == "kv_cache_growth" {
				return "the leak was reported as KV-cache growth"
			}
		}
		return ""
	})
	checkContract(t, incidents(t, r.backend))
}

// spanModulePath finds a span at the backend and returns its
// llm.profile.module_path.
func spanModulePath(t *testing.T, b *harness.Backend, tid pcommon.TraceID, sid pcommon.SpanID) (string, bool) {
	td := b.Traces(t)
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			for k := 0; k < sss.At(j).Spans().Len(); k++ {
				if sp := sss.At(j).Spans().At(k); sp.TraceID() == tid && sp.SpanID() == sid {
					return str(sp.Attributes(), spec.AttrProfileModulePath), true
				}
			}
		}
	}
	return "", false
}

// (b) vLLM's KV cache fills up; the scheduler queues and preempts.
func TestRootcauseKVCacheSaturation(t *testing.T) {
	rcParallel(t)
	// At speed 2 the cache climbs from 0.30 to 0.97 in 30 s: past the
	// warm-up, well inside the test's time.
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-healthy.scenario", nvmlScale: 1,
		engineScenario: "vllm-kv-saturation.scenario", engineSpeed: 2, engineGPU: rcHealthyGPU0})
	inc := waitIncident(t, r, 60*time.Second, "kv_cache_saturation", func(i incident) bool {
		return i.kind() == "kv_cache_saturation"
	})
	all := incidents(t, r.backend)
	if q := inc.str(spec.IncidentQuadrant); q != "saturation" {
		t.Errorf("quadrant %q, want saturation", q)
	}
	if e := inc.str("llm.engine.name"); e != rcScenarioEngine {
		t.Errorf("llm.engine.name %q, want vllm", e)
	}
	if _, ok := inc.evidenceFor("preemption", "requests.waiting"); !ok {
		t.Errorf("the evidence names neither preemptions nor waiting requests; %s", describe(all))
	}
	// The fixture's cache configuration (7,281 blocks of 16 tokens) and
	// opt-125m's KV geometry (12 layers × 12 heads × 64 × fp16: 36 KiB a
	// token) make a 4.0 GiB pool, which the incident tells in blocks and
	// bytes.
	for _, want := range []string{" of 7,281 blocks", " free of 4.0 GiB"} {
		if !strings.Contains(inc.body, want) {
			t.Errorf("the incident does not say %q: %q", want, inc.body)
		}
	}
	// Onset: the scenario ramps the cache linearly from 0.30 at 0 s to 0.97
	// at 60 s; the condition begins where it crosses the detector's
	// threshold, which the evidence states.
	ev, ok := inc.evidenceFor("kv_cache")
	thr, isNum := ev["threshold"].(float64)
	switch {
	case !ok || !isNum:
		t.Errorf("no KV-cache evidence with a numeric threshold, cannot place the onset; %s", describe(all))
	case thr > 0.97:
		t.Errorf("threshold %v is above anything the scenario reaches (0.97), yet it fired; %s", thr, describe(all))
	default:
		crossing := math.Max(0, (thr-0.30)/0.67*60)
		checkOnset(t, inc, r.engineAt(crossing), rcKVFor+rcSlack, all)
	}
	checkContract(t, all)
}

// (c) The engine's scheduler is the bottleneck: the queue grows and latency
// rises while the GPU idles.
func TestRootcauseCPUBoundEngine(t *testing.T) {
	rcParallel(t)
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-idle.scenario", nvmlScale: 1,
		engineScenario: "vllm-cpu-bound.scenario", engineSpeed: 1, engineGPU: rcIdleGPU})
	// The scheduler falls behind at 35 s (vllm-cpu-bound.scenario).
	const degrade = 35.0
	inc := waitIncident(t, r, 90*time.Second, "queue_buildup or latency_spike with the GPU's utilization as evidence", func(i incident) bool {
		if i.kind() != "queue_buildup" && i.kind() != "latency_spike" {
			return false
		}
		_, ok := i.evidenceFor(spec.HwGpuUtilization)
		return ok
	})
	all := incidents(t, r.backend)
	if inc.kind() == "queue_buildup" && inc.str(spec.IncidentQuadrant) != "latency" {
		t.Errorf("queue_buildup in quadrant %q, want latency", inc.str(spec.IncidentQuadrant))
	}
	if ro := inc.ruledOut(); inc.kind() == "queue_buildup" && (!containsPrefix(ro, "not the GPU") || !containsPrefix(ro, "not KV-cache pressure")) {
		t.Errorf("a CPU-bound queue rules out the GPU and the KV cache, got %q", ro)
	}
	if ro := inc.ruledOut(); inc.kind() == "latency_spike" && !containsPrefix(ro, "not GPU saturation") {
		t.Errorf("latency on an idle GPU rules out GPU saturation, got %q", ro)
	}
	// Every latency/throughput incident of the story is timed from its own
	// condition.
	seen := map[string]bool{}
	for _, i := range all {
		if !i.firing() || seen[i.kind()] {
			continue
		}
		seen[i.kind()] = true
		switch i.kind() {
		case "queue_buildup":
			// Waiting requests ramp 0 -> 60 over 35..75 s (rounded); the
			// condition begins once more than min_waiting wait.
			thr := rcQueueMin
			if ev, ok := i.evidenceFor("requests.waiting"); ok {
				if v, ok := ev["threshold"].(float64); ok {
					thr = v
				}
			}
			checkOnset(t, i, r.engineAt(degrade+(thr+0.5)*40/60), rcQueueFor+rcSlack, all)
		case "latency_spike":
			// TTFT jumps ~9x within 3 s of 35 s.
			checkOnset(t, i, r.engineAt(degrade), rcLatencyWindow+rcSlack, all)
		case "throughput_drop":
			// Output tokens fall linearly 1100 -> 450 tokens/s over 35..75 s;
			// the condition begins where they cross the detector's threshold.
			if ev, ok := i.evidenceFor("tokens"); ok {
				if thr, ok := ev["threshold"].(float64); ok && thr < 1100 && thr > 450 {
					checkOnset(t, i, r.engineAt(degrade+(1100-thr)*40/650), rcThroughputWin+rcSlack, all)
					continue
				}
			}
			t.Logf("throughput_drop without a token-rate threshold in (450, 1100); not timed: %s", i)
		}
	}
	never(t, r, 0, func(all []incident) string {
		for _, i := range all {
			if i.firing() && (i.kind() == "gpu_throttling" || i.kind() == "gpu_memory_leak" || i.kind() == "kv_cache_saturation") {
				return "a " + i.kind() + " incident on a GPU that only waits for its engine"
			}
		}
		return ""
	})
	checkContract(t, all)
}

// (d) A GPU held in thermal slowdown.
func TestRootcauseGPUThrottling(t *testing.T) {
	rcParallel(t)
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-throttle.scenario", nvmlScale: 1,
		engineScenario: "vllm-healthy.scenario", engineSpeed: 1, engineGPU: rcThrottledGPU})
	inc := waitIncident(t, r, 45*time.Second, "gpu_throttling on the GPU", func(i incident) bool {
		return i.kind() == "gpu_throttling" && i.str("hw.id") == rcThrottledGPU
	})
	// Held from scenario time 10 s.
	all := incidents(t, r.backend)
	checkOnset(t, inc, r.nvmlAt(10), rcThrottleFor+rcSlack, all)
	checkContract(t, all)
}

// (e) An XID on a GPU.
func TestRootcauseXIDError(t *testing.T) {
	rcParallel(t)
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-xid.scenario", nvmlScale: 1})
	inc := waitIncident(t, r, 40*time.Second, "xid_error on the GPU", func(i incident) bool {
		return i.kind() == "xid_error" && i.str("hw.id") == rcXIDGPU
	})
	all := incidents(t, r.backend)
	if s := inc.str(spec.IncidentSeverity); s != "critical" {
		t.Errorf("XID 48 (double-bit ECC) incident severity %q, want critical; %s", s, describe(all))
	}
	// Reported at scenario time 8 s; an event has no window.
	checkOnset(t, inc, r.nvmlAt(8), rcSlack, all)
	checkContract(t, all)
}

// (f) A healthy node and a healthy engine: nothing to report.
func TestRootcauseHealthyNoIncident(t *testing.T) {
	rcParallel(t)
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-healthy.scenario", nvmlScale: 1,
		engineScenario: "vllm-healthy.scenario", engineSpeed: 1, engineGPU: rcHealthyGPU0})
	never(t, r, 45*time.Second, noFiring)
	checkFed(t, r, rcHealthyGPU0, rcHealthyGPU1)
}

// (g) An engine's cold start (warm-up, CUDA graph capture) is no incident.
func TestRootcauseColdStartNoIncident(t *testing.T) {
	rcParallel(t)
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-healthy.scenario", nvmlScale: 1,
		engineScenario: "vllm-cold-start.scenario", engineSpeed: 1, engineGPU: rcHealthyGPU0})
	// 15 s of warm-up, then 35 s of normal serving in which the latency
	// and throughput baselines form and the warm-up leaves their windows.
	never(t, r, 50*time.Second, noFiring)
	checkFed(t, r, rcHealthyGPU0, rcHealthyGPU1)
}

func noFiring(all []incident) string {
	for _, i := range all {
		if i.firing() {
			return "a firing " + i.kind() + " incident"
		}
	}
	return ""
}

// checkFed makes sure a quiet run was quiet with data flowing: the GPUs'
// and the engine's unified metrics went through the pipeline.
func checkFed(t *testing.T, r *rcRun, gpus ...string) {
	t.Helper()
	m := r.backend.Metrics(t)
	seen := map[string]bool{}
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		id := str(rm.Resource().Attributes(), "hw.id")
		engine := str(rm.Resource().Attributes(), "llm.engine.name")
		sms := rm.ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			for k := 0; k < sms.At(j).Metrics().Len(); k++ {
				switch name := sms.At(j).Metrics().At(k).Name(); {
				case name == spec.HwGpuUtilization:
					seen[id] = true
				case engine == rcScenarioEngine && strings.HasPrefix(name, "gen_ai.server."):
					seen["engine"] = true
				}
			}
		}
	}
	for _, want := range append(gpus, "engine") {
		if !seen[want] {
			t.Errorf("no unified metrics of %s reached the backend: the quiet run proves nothing", want)
		}
	}
}

// The scenarios below (h)–(j): a throughput drop, a prefix-cache hit-rate
// drop and uncorrected ECC errors, each timed from its own condition.
const (
	rcCacheHitWin = 15 * time.Second // cache_hit.window of rcConfig
	rcECCGPU      = "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000f0000"
)

// notBefore fails the test when the incident came more than one tick
// before at, the earliest its detector can see the condition; otherwise it
// logs how long after at it came.
func notBefore(t *testing.T, i incident, at time.Time, what string, all []incident) {
	t.Helper()
	if d := i.ts.Sub(at); d < -rcTick {
		t.Errorf("%s raised %.1fs before %s (%s); %s", i.kind(), -d.Seconds(), what, at.Format("15:04:05.000"), describe(all))
	} else {
		t.Logf("%s raised %.1fs after %s", i.kind(), d.Seconds(), what)
	}
}

// (h) vLLM's output throughput collapses while a few requests wait: fewer
// tokens for the same demand, not less load.
func TestRootcauseThroughputDrop(t *testing.T) {
	rcParallel(t)
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-healthy.scenario", nvmlScale: 1,
		engineScenario: "vllm-throughput-drop.scenario", engineSpeed: 1, engineGPU: rcHealthyGPU0})
	// vllm-throughput-drop.scenario: generated tokens/s fall linearly from
	// 1100 to 400 over 35..38 s and stay there; 1-7 requests wait.
	const from, to, t0, t1 = 1100.0, 400.0, 35.0, 38.0
	inc := waitIncident(t, r, 75*time.Second, "throughput_drop", func(i incident) bool {
		return i.kind() == "throughput_drop"
	})
	all := incidents(t, r.backend)
	if q := inc.str(spec.IncidentQuadrant); q != "throughput" {
		t.Errorf("quadrant %q, want throughput", q)
	}
	if e := inc.str("llm.engine.name"); e != rcScenarioEngine {
		t.Errorf("llm.engine.name %q, want vllm", e)
	}
	if ro := inc.ruledOut(); !containsPrefix(ro, "not throttling") || !containsPrefix(ro, "not less load") || !containsPrefix(ro, "not KV-cache pressure") {
		t.Errorf("a throughput drop says what it ruled out (throttling, less load, KV pressure), got %q", ro)
	}
	if ev, ok := inc.evidenceFor(spec.EngineRequestsWaiting); !ok {
		t.Errorf("no waiting requests in the evidence: a drop is only one while requests wait; %s", describe(all))
	} else if w, _ := ev["value"].(float64); w <= 0 || w >= rcQueueMin {
		t.Errorf("%v requests waiting in the evidence, want the scenario's 1..7; %s", ev["value"], describe(all))
	}
	ev, ok := inc.evidenceFor(spec.EvidenceTokensRate)
	thr, isNum := ev["threshold"].(float64)
	switch {
	case !ok || !isNum:
		t.Errorf("no %s evidence with a numeric threshold, cannot place the onset; %s", spec.EvidenceTokensRate, describe(all))
	case thr <= to || thr >= from:
		t.Errorf("threshold %v tokens/s outside (%v, %v), where the scenario crosses it; %s", thr, to, from, describe(all))
	default:
		// The condition begins where the rate itself falls below the
		// threshold; the detector sees it through its window, which the
		// bound allows for.
		checkOnset(t, inc, r.engineAt(t0+(from-thr)/(from-to)*(t1-t0)), rcThroughputWin+rcSlack, all)
		// The rate over the window cannot be below the threshold before
		// the tokens missing from the window add up to (from-thr)·window.
		deficit := func(s float64) float64 { // tokens short of `from` since t0
			switch {
			case s <= t0:
				return 0
			case s <= t1:
				return (from - to) * (s - t0) * (s - t0) / (2 * (t1 - t0))
			}
			return (from-to)*(t1-t0)/2 + (from-to)*(s-t1)
		}
		w := rcThroughputWin.Seconds()
		lo, hi := t0, t1+w
		for hi-lo > 0.01 {
			if mid := (lo + hi) / 2; deficit(mid)-deficit(mid-w) < (from-thr)*w {
				lo = mid
			} else {
				hi = mid
			}
		}
		notBefore(t, inc, r.engineAt(hi), fmt.Sprintf("the %s rate over the window crossed %.0f tokens/s", rcThroughputWin, thr), all)
	}
	// A handful of waiting requests is no queue build-up, and latency
	// barely moved: give a wrong incident the queue detector's `for`.
	never(t, r, rcQueueFor+rcSlack, func(all []incident) string {
		for _, i := range all {
			switch i.kind() {
			case "queue_buildup", "latency_spike", "kv_cache_saturation", "cache_hit_drop":
				if i.firing() {
					return "a " + i.kind() + " incident in a throughput story"
				}
			}
		}
		return ""
	})
	checkContract(t, incidents(t, r.backend))
}

// (i) vLLM's prefix cache stops hitting (a routing change at 40 s) while
// load and latency hold.
func TestRootcauseCacheHitDrop(t *testing.T) {
	rcParallel(t)
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-healthy.scenario", nvmlScale: 1,
		engineScenario: "vllm-cache-hit-drop.scenario", engineSpeed: 1, engineGPU: rcHealthyGPU0})
	// vllm-cache-hit-drop.scenario: hits/queries 0.9 until 40 s, 0.3 after,
	// 3000 queries/s throughout. The detector needs 10 baseline ratios, kept
	// one per baseline/60: with rcConfig's 60 s baseline, one a second after
	// the 20 s warm-up (the default 15m would need 150 s of them).
	const change, before, after = 40.0, 0.9, 0.3
	inc := waitIncident(t, r, 75*time.Second, "cache_hit_drop", func(i incident) bool {
		return i.kind() == "cache_hit_drop"
	})
	all := incidents(t, r.backend)
	if q := inc.str(spec.IncidentQuadrant); q != "latency" {
		t.Errorf("quadrant %q, want latency", q)
	}
	if e := inc.str("llm.engine.name"); e != rcScenarioEngine {
		t.Errorf("llm.engine.name %q, want vllm", e)
	}
	if !strings.Contains(inc.body, "fell") {
		t.Errorf("body %q does not say the hit ratio fell", inc.body)
	}
	checkOnset(t, inc, r.engineAt(change), rcCacheHitWin+rcSlack, all)
	ev, ok := inc.evidenceFor(spec.EnginePrefixCacheHitRatio)
	thr, isNum := ev["threshold"].(float64)
	switch {
	case !ok || !isNum:
		t.Errorf("no %s evidence with a numeric threshold; %s", spec.EnginePrefixCacheHitRatio, describe(all))
	case thr <= after || thr >= before:
		t.Errorf("threshold %v outside (%v, %v), where the scenario crosses it; %s", thr, after, before, describe(all))
	default:
		if base, _ := ev["baseline"].(float64); math.Abs(base-before) > 0.02 {
			t.Errorf("baseline hit ratio %v, want the scenario's %v; %s", ev["baseline"], before, describe(all))
		}
		if v, _ := ev["value"].(float64); v >= thr {
			t.Errorf("hit ratio %v in the evidence is not below its threshold %v", ev["value"], thr)
		}
		// Over the window the ratio falls linearly from 0.9 at 40 s to 0.3
		// a window later: it cannot be below thr before this.
		cross := change + (before-thr)/(before-after)*rcCacheHitWin.Seconds()
		notBefore(t, inc, r.engineAt(cross), fmt.Sprintf("the hit ratio over the window crossed %.2f", thr), all)
	}
	// Latency held: no latency spike, and so no joint degradation either;
	// the load did not change, so no throughput drop.
	never(t, r, rcLatencyWindow+rcSlack, func(all []incident) string {
		for _, i := range all {
			switch i.kind() {
			case "latency_spike", "joint_degradation", "throughput_drop", "queue_buildup":
				if i.firing() {
					return "a " + i.kind() + " incident in a cache story with steady latency and load"
				}
			}
		}
		return ""
	})
	checkContract(t, incidents(t, r.backend))
}

// (j) Uncorrected ECC errors on a GPU whose counters were not zero to begin
// with: only the increase is news.
func TestRootcauseECCUncorrected(t *testing.T) {
	rcParallel(t)
	r := startRootcause(t, rcSetup{nvmlScenario: "rootcause-ecc.scenario", nvmlScale: 1})
	inc := waitIncident(t, r, 40*time.Second, "ecc_uncorrected on the GPU", func(i incident) bool {
		return i.kind() == "ecc_uncorrected" && i.str("hw.id") == rcECCGPU
	})
	all := incidents(t, r.backend)
	if s := inc.str(spec.IncidentSeverity); s != "critical" {
		t.Errorf("uncorrected ECC incident severity %q, want critical; %s", s, describe(all))
	}
	if q := inc.str(spec.IncidentQuadrant); q != "errors" {
		t.Errorf("quadrant %q, want errors", q)
	}
	// 3 uncorrected errors from the start, 2 more at 8 s: the evidence is
	// the volatile total the GPU reports.
	if ev, ok := inc.evidenceFor(spec.HwErrors); !ok {
		t.Errorf("no %s evidence; %s", spec.HwErrors, describe(all))
	} else if v, _ := ev["value"].(float64); v != 5 {
		t.Errorf("uncorrected ECC total %v in the evidence, want 5; %s", ev["value"], describe(all))
	}
	// The counters step at scenario time 8 s; a step has no window. The 3
	// errors read at start are not reported: checkOnset fails an incident
	// before 8 s.
	checkOnset(t, inc, r.nvmlAt(8), rcSlack, all)
	// The double-bit ECC event is not an XID, and one increase is one
	// incident.
	never(t, r, rcSlack, func(all []incident) string {
		ids := map[string]bool{}
		for _, i := range all {
			if !i.firing() {
				continue
			}
			if i.kind() != "ecc_uncorrected" {
				return "a " + i.kind() + " incident in an ECC story"
			}
			ids[i.str(spec.IncidentID)] = true
		}
		if len(ids) > 1 {
			return fmt.Sprintf("%d ecc_uncorrected incidents for one increase", len(ids))
		}
		return ""
	})
	checkContract(t, incidents(t, r.backend))
}

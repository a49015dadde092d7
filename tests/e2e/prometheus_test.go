// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// The unified metrics in a real Prometheus (Debian's 2.42): the built binary
// on distro/config.yaml plus one of the shipped Prometheus overlays
// (distro/examples/prometheus-*.yaml), fed by three replayed engines and the
// fake NVML library, and the questions an operator asks answered by one
// PromQL expression each, for every engine. The remote-write run also loads
// the shipped alerting and recording rules and runs every Grafana panel's
// query.

// The GPUs of tests/fakenvml/scenarios/rootcause-leak.scenario: pid 41001
// leaks on GPU 0; pid 41002 on GPU 1 is flat and is the saturating vLLM.
const (
	promLeakGPU  = rcLeakGPU0
	promFlatGPU  = rcLeakGPU1
	promLeakPid  = rcEnginePid
	promVLLMPid  = rcOtherPid
	promKVSpeed  = 2 // vllm-kv-saturation: the cache crosses 0.9 after ~27 s
	promJob      = "otelcol-llmops"
	promDeadline = 120 * time.Second
)

// promEngines are the replayed engines, by llm.engine.name.
var promEngines = []string{"vllm", "tgi", "sglang"}

// promTTFTEngines export a time-to-first-token histogram. TGI has none:
// docs/engine-mappings.md maps no TGI metric to
// gen_ai.server.time_to_first_token (internal/spec/mappings_tgi.go).
var promTTFTEngines = []string{"vllm", "sglang"}

// The shipped TGI fixture is the first 15 kB of a recording and stops
// before two families every TGI router exports: the end-to-end request
// duration (gen_ai.server.request.duration) and the batch token capacity
// (the denominator of TGI's derived llm.engine.kv_cache.utilization). The
// test serves the recording with them appended, empty, and lets the
// scenario advance them.
const promTGIFamilies = `# HELP tgi_batch_max_total_tokens Maximum amount of tokens in the current batch
# TYPE tgi_batch_max_total_tokens gauge
tgi_batch_max_total_tokens 65536
# HELP tgi_request_duration End-to-end request latency
# TYPE tgi_request_duration histogram
tgi_request_duration_bucket{le="0.1"} 0
tgi_request_duration_bucket{le="0.25"} 0
tgi_request_duration_bucket{le="0.5"} 0
tgi_request_duration_bucket{le="1"} 0
tgi_request_duration_bucket{le="2.5"} 0
tgi_request_duration_bucket{le="5"} 0
tgi_request_duration_bucket{le="10"} 0
tgi_request_duration_bucket{le="+Inf"} 0
tgi_request_duration_sum 0
tgi_request_duration_count 0
`

// promTGIScenario is added to tgi-steady.scenario: requests finish in about
// 2.5 s.
const promTGIScenario = `
histogram tgi_request_duration rate=12 median=2.5 factor=1.5
`

// promSGLangScenario moves SGLang's fixture (no scenario ships for it): the
// latency histograms must advance for a rate() to have a value.
const promSGLangScenario = `# SGLang under a steady load (tests/e2e/prometheus_test.go).
counter sglang:num_requests_total       rate=10
counter sglang:prompt_tokens_total      rate=2000
counter sglang:generation_tokens_total  rate=900
histogram sglang:time_to_first_token_seconds rate=10 median=0.15 factor=1.5
histogram sglang:e2e_request_latency_seconds rate=10 median=2 factor=1.5
histogram sglang:queue_time_seconds          rate=10 median=0.02 factor=2
gauge sglang:token_usage sine mean=0.6 amplitude=0.05 period=20
`

// promRun is one scenario: the simulators, the agent and the Prometheus it
// feeds.
type promRun struct {
	prom  *harness.Prometheus
	agent *harness.Collector
	// fixtureNames are the metric names the replayed engines expose
	// themselves and the agent passes through unmapped (the Python client's
	// process_* family, for one).
	fixtureNames map[string]bool
}

// startPromEngines starts the three replay servers and returns their base
// URLs by engine.
func startPromEngines(t *testing.T) map[string]string {
	t.Helper()
	root := harness.RepoRoot(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	read := func(parts ...string) string {
		b, err := os.ReadFile(filepath.Join(append([]string{root, "tests", "enginereplay"}, parts...)...))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tgiFixture := write("tgi.prom", strings.TrimRight(read("fixtures", "tgi.prom"), "\n")+"\n"+promTGIFamilies)
	tgiScenario := write("tgi.scenario", read("scenarios", "tgi-steady.scenario")+promTGIScenario)
	sglangScenario := write("sglang.scenario", promSGLangScenario)
	return map[string]string{
		"vllm": harness.StartEngineReplay(t, "-engine", "vllm", "-speed", fmt.Sprint(promKVSpeed),
			"-scenario", filepath.Join(root, "tests", "enginereplay", "scenarios", "vllm-kv-saturation.scenario")),
		"tgi":    harness.StartEngineReplay(t, "-engine", "tgi", "-fixture", tgiFixture, "-scenario", tgiScenario),
		"sglang": harness.StartEngineReplay(t, "-engine", "sglang", "-scenario", sglangScenario),
	}
}

// fixtureMetricNames returns the sample names of the engines' fixtures.
func fixtureMetricNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, e := range promEngines {
		b, err := os.ReadFile(filepath.Join(harness.RepoRoot(t), "tests", "enginereplay", "fixtures", e+".prom"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if i := strings.IndexAny(line, "{ "); i > 0 {
				names[line[:i]] = true
			}
		}
	}
	return names
}

// startPromAgent runs the built binary on distro/config.yaml, then overlay
// (one of distro/examples/prometheus-*.yaml), then a test overlay pointing
// the receivers at the simulators with intervals of a second and the
// detectors' windows shortened as in the rootcause tests. env adds the
// overlay's own variables.
func startPromAgent(t *testing.T, overlay string, engines map[string]string, env ...string) *harness.Collector {
	t.Helper()
	root := harness.RepoRoot(t)
	testOverlay := filepath.Join(t.TempDir(), "test-overlay.yaml")
	cfg := fmt.Sprintf(`# The simulators of tests/e2e/prometheus_test.go, and seconds instead of
# minutes: everything else comes from distro/config.yaml and the overlay.
receivers:
  nvml:
    collection_interval: 1s
  llmengine:
    collection_interval: 1s
    targets:
      # The saturating vLLM runs as the flat process on GPU 1: its KV cache
      # grows, its memory does not, so the leak on GPU 0 is no KV growth.
      - endpoint: %s/metrics
        engine: vllm
        resource_attributes: {hw.id: %s, process.pid: "%d"}
      - endpoint: %s/metrics
        engine: tgi
      - endpoint: %s/metrics
        engine: sglang
connectors:
  rootcause:
    evaluation_interval: 1s
    warmup: %s
    resolve_after: 10s
    leak: {window: %s, min_slope_mib_per_minute: 80}
    kv_cache: {for: %s}
`, engines["vllm"], promFlatGPU, promVLLMPid, engines["tgi"], engines["sglang"], rcWarmup, rcLeakWindow, rcKVFor)
	if err := os.WriteFile(testOverlay, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	health := harness.FreePort(t)
	return harness.StartCollector(t, harness.Options{
		Name:       "agent",
		ConfigPath: filepath.Join(root, "distro", "config.yaml"),
		Args:       []string{"--config", overlay, "--config", testOverlay},
		HealthPort: health,
		Env: append([]string{
			fmt.Sprintf("LLMOPS_OTLP_GRPC_ENDPOINT=127.0.0.1:%d", harness.FreePort(t)),
			fmt.Sprintf("LLMOPS_OTLP_HTTP_ENDPOINT=127.0.0.1:%d", harness.FreePort(t)),
			fmt.Sprintf("LLMOPS_HEALTH_ENDPOINT=127.0.0.1:%d", health),
			fmt.Sprintf("LLMOPS_TELEMETRY_PORT=%d", harness.FreePort(t)),
			"LLMOPS_STATE_DIR=" + t.TempDir(),
			"LLMOPS_PROFILE_DIR=" + t.TempDir(),
			"LLMOPS_NVML_LIBRARY=" + harness.FakeNVML(t),
			"LLMOPS_PROC_ROOT=" + rcFakeProc(t),
			"FAKE_NVML_SCENARIO=" + filepath.Join(root, "tests", "fakenvml", "scenarios", "rootcause-leak.scenario"),
			"FAKE_NVML_TIME_SCALE=1",
		}, env...),
	})
}

// TestPrometheusOverlaysValidate: each overlay, merged after the shipped
// configuration as its comment says, is a configuration the binary accepts.
func TestPrometheusOverlaysValidate(t *testing.T) {
	root := harness.RepoRoot(t)
	for _, name := range []string{"prometheus-remote-write.yaml", "prometheus-scrape.yaml"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("LLMOPS_PROMETHEUS_REMOTE_WRITE_URL", "http://127.0.0.1:9090/api/v1/write")
			harness.Run(t, "validate", "--config", filepath.Join(root, "distro", "config.yaml"),
				"--config", filepath.Join(root, "distro", "examples", name))
		})
	}
}

// TestPrometheus runs the scenario twice, side by side: once pushed by
// remote write (with the shipped rules and dashboards), once scraped.
func TestPrometheus(t *testing.T) {
	t.Run("remote_write", func(t *testing.T) {
		t.Parallel()
		root := harness.RepoRoot(t)
		engines := startPromEngines(t)
		prom := harness.StartPrometheus(t, harness.PrometheusOptions{RuleFiles: shippedRuleFiles(t)})
		agent := startPromAgent(t, filepath.Join(root, "distro", "examples", "prometheus-remote-write.yaml"), engines,
			"LLMOPS_PROMETHEUS_REMOTE_WRITE_URL="+prom.RemoteWriteURL())
		r := &promRun{prom: prom, agent: agent, fixtureNames: fixtureMetricNames(t)}
		checkPromScenario(t, r)
		checkShippedRules(t, r)
		checkShippedDashboards(t, r)
	})
	t.Run("scrape", func(t *testing.T) {
		t.Parallel()
		root := harness.RepoRoot(t)
		engines := startPromEngines(t)
		endpoint := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
		prom := harness.StartPrometheus(t, harness.PrometheusOptions{JobName: promJob, ScrapeTargets: []string{endpoint}})
		agent := startPromAgent(t, filepath.Join(root, "distro", "examples", "prometheus-scrape.yaml"), engines,
			"LLMOPS_PROMETHEUS_ENDPOINT="+endpoint)
		r := &promRun{prom: prom, agent: agent, fixtureNames: fixtureMetricNames(t)}
		// Scraping gives `up` for free: the reason to pick it.
		waitPromQuery(t, r, fmt.Sprintf(`up{job=%q} == 1`, promJob), func(s []harness.PromSample) string {
			if len(s) != 1 {
				return "the agent's scrape target is not up"
			}
			return ""
		})
		checkPromScenario(t, r)
	})
}

// waitPromQuery polls an instant query until bad reports nothing about its
// result (or the query stops failing), failing the test with the last
// complaint at promDeadline.
func waitPromQuery(t *testing.T, r *promRun, promql string, bad func([]harness.PromSample) string) {
	t.Helper()
	harness.Eventually(t, promDeadline, func() (bool, string) {
		s, err := r.prom.QueryE(promql)
		if err != nil {
			return false, err.Error()
		}
		if msg := bad(s); msg != "" {
			return false, fmt.Sprintf("%s\n  query: %s\n  result: %s", msg, promql, describeSamples(s))
		}
		return true, ""
	})
}

func describeSamples(s []harness.PromSample) string {
	if len(s) == 0 {
		return "(empty)"
	}
	var lines []string
	for _, x := range s {
		lines = append(lines, x.String())
	}
	sort.Strings(lines)
	return "\n    " + strings.Join(lines, "\n    ")
}

// perEngine checks a result has one finite, in-range sample for each of
// want, grouped by llm_engine_name, and none for the engines of absent.
func perEngine(want, absent []string, lo, hi float64) func([]harness.PromSample) string {
	engineLabel := spec.PrometheusLabel(spec.AttrEngineName)
	return func(s []harness.PromSample) string {
		got := map[string]float64{}
		for _, x := range s {
			got[x.Labels[engineLabel]] = x.Value
		}
		var problems []string
		for _, e := range want {
			v, ok := got[e]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("no series for engine %s", e))
			case math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi:
				problems = append(problems, fmt.Sprintf("engine %s: %g, want a number in [%g, %g]", e, v, lo, hi))
			}
		}
		for _, e := range absent {
			if _, ok := got[e]; ok {
				problems = append(problems, fmt.Sprintf("a series for engine %s, which exports no such metric", e))
			}
		}
		return strings.Join(problems, "; ")
	}
}

// checkPromScenario asks the questions of issue 17 and checks every name
// Prometheus holds against the registry.
func checkPromScenario(t *testing.T, r *promRun) {
	t.Helper()
	engine := spec.PrometheusLabel(spec.AttrEngineName)
	duration := spec.PrometheusName(spec.GenAIServerRequestDuration)
	ttft := spec.PrometheusName(spec.GenAIServerTimeToFirstToken)
	kv := spec.PrometheusName(spec.EngineKvCacheUtilization)

	// One expression per question, a series for every engine.
	waitPromQuery(t, r, fmt.Sprintf(`histogram_quantile(0.99, sum by (%s, le) (rate(%s_bucket[1m])))`, engine, duration),
		perEngine(promEngines, nil, 0.001, 60))
	waitPromQuery(t, r, fmt.Sprintf(`max by (%s) (%s)`, engine, kv),
		perEngine(promEngines, nil, 0, 1))
	waitPromQuery(t, r, fmt.Sprintf(`histogram_quantile(0.99, sum by (%s, le) (rate(%s_bucket[1m])))`, engine, ttft),
		perEngine(promTTFTEngines, []string{"tgi"}, 0.001, 60))

	// The series carry the labels the queries and panels select by.
	hwID := spec.PrometheusLabel(spec.AttrHwID)
	pid := spec.PrometheusLabel(spec.AttrProcessPid)
	for _, sel := range []string{
		fmt.Sprintf(`%s{%s=%q}`, spec.PrometheusName(spec.HwGpuMemoryUsage), hwID, promLeakGPU),
		fmt.Sprintf(`%s{%s=%q}`, spec.PrometheusName(spec.HwGpuMemoryUsage), hwID, promFlatGPU),
		fmt.Sprintf(`%s{%s=%q, %s="%d"}`, spec.PrometheusName(spec.ProcessGpuMemoryUsage), hwID, promLeakGPU, pid, promLeakPid),
		fmt.Sprintf(`%s_bucket{le!="", %s="vllm"}`, ttft, engine),
		fmt.Sprintf(`%s_bucket{le!="", %s="sglang"}`, ttft, engine),
		fmt.Sprintf(`%s{%s="vllm"}`, kv, engine),
		fmt.Sprintf(`%s{%s="tgi"}`, kv, engine),
		fmt.Sprintf(`%s{%s="sglang"}`, kv, engine),
	} {
		if len(r.prom.Series(t, sel)) == 0 {
			t.Errorf("no series %s in Prometheus", sel)
		}
	}

	// Incidents without a log backend: llm.incident.active is 1 while one
	// fires, with its kind and subject as labels.
	active := spec.PrometheusName(spec.IncidentActive)
	kind := spec.PrometheusLabel(spec.IncidentKind)
	waitPromQuery(t, r, fmt.Sprintf(`%s{%s=%q, %s="vllm"} == 1`, active, kind, spec.IncidentKindKVCacheSaturation, engine),
		func(s []harness.PromSample) string {
			if len(s) == 0 {
				return "no active kv_cache_saturation incident of the vLLM engine"
			}
			return ""
		})
	waitPromQuery(t, r, fmt.Sprintf(`%s{%s=%q, %s=%q} == 1`, active, kind, spec.IncidentKindGPUMemoryLeak, hwID, promLeakGPU),
		func(s []harness.PromSample) string {
			if len(s) == 0 {
				return "no active gpu_memory_leak incident on GPU 0"
			}
			return ""
		})
	// The flat GPU has had the leak's evaluations by now: no leak there.
	if s := r.prom.Query(t, fmt.Sprintf(`%s{%s=%q, %s=%q} == 1`, active, kind, spec.IncidentKindGPUMemoryLeak, hwID, promFlatGPU)); len(s) > 0 {
		t.Errorf("a gpu_memory_leak incident on the flat GPU 1: %s", describeSamples(s))
	}
	// One series per kind and severity: the incident may have escalated.
	waitPromQuery(t, r, fmt.Sprintf(`sum(%s{%s=%q})`, spec.PrometheusName(spec.IncidentFired), kind, spec.IncidentKindKVCacheSaturation),
		func(s []harness.PromSample) string {
			if len(s) == 0 || s[0].Value < 1 {
				return "kv_cache_saturation is not counted as fired"
			}
			return ""
		})

	checkNamesPredicted(t, r)
}

// checkNamesPredicted fails on any name of ours that Prometheus holds and the
// registry (docs/prometheus-names.md) does not predict: the document must
// describe what the exporters really write.
func checkNamesPredicted(t *testing.T, r *promRun) {
	t.Helper()
	predicted := map[string]bool{}
	for _, m := range spec.Metrics() {
		for _, s := range spec.Prometheus(m).Series {
			predicted[s] = true
		}
	}
	var ours, unexpected []string
	for _, name := range r.prom.SeriesNames(t) {
		if !slices.ContainsFunc([]string{"hw_", "process_", "gen_ai_", "llm_"}, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		// level:metric:operations is a recording rule's output
		// (distro/prometheus), not an exporter's name.
		if strings.Contains(name, ":") {
			continue
		}
		ours = append(ours, name)
		// The engines' own process_* (Python client) pass through unmapped.
		if !predicted[name] && !r.fixtureNames[name] {
			unexpected = append(unexpected, name)
		}
	}
	if len(unexpected) > 0 {
		t.Errorf("Prometheus holds names internal/spec does not predict (docs/prometheus-names.md is wrong, or the exporter's translation changed): %s\n  all names of ours: %s",
			strings.Join(unexpected, ", "), strings.Join(ours, ", "))
	}
	t.Logf("%d names of ours in Prometheus, all predicted by the registry", len(ours))
}

// shippedRuleFiles returns distro/prometheus/*.rules.yml. While that
// directory does not exist there are no rules to load; once it does, it must
// hold at least one rule file.
func shippedRuleFiles(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join(harness.RepoRoot(t), "distro", "prometheus")
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		t.Logf("no %s: no rules loaded", dir)
		return nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("%s exists but holds no *.rules.yml: name the rule files so (promtool's unit tests under tests/ are not loaded)", dir)
	}
	return files
}

// The alerts the scenario must raise from the shipped rules, and the
// subject that must not have them.
const (
	promKVAlert   = "LLMEngineKVCacheSaturated"
	promLeakAlert = "GPUMemoryLeak"
)

// checkShippedRules checks every loaded rule group evaluates without error
// and the KV-cache and leak alerts reach pending or firing on the scenario.
func checkShippedRules(t *testing.T, r *promRun) {
	t.Helper()
	groups := r.prom.RuleGroups(t)
	if len(groups) == 0 {
		if len(shippedRuleFiles(t)) > 0 {
			t.Fatalf("rule files were given but Prometheus loaded no rule group")
		}
		return
	}
	// Every rule has been evaluated at least once, and none failed.
	harness.Eventually(t, 30*time.Second, func() (bool, string) {
		var problems []string
		for _, g := range r.prom.RuleGroups(t) {
			for _, rule := range g.Rules {
				if rule.Health != "ok" {
					problems = append(problems, fmt.Sprintf("%s: group %s, rule %s: health %q %s\n    %s",
						filepath.Base(g.File), g.Name, rule.Name, rule.Health, rule.LastError, rule.Query))
				}
			}
		}
		return len(problems) == 0, "unhealthy rules:\n  " + strings.Join(problems, "\n  ")
	})

	defined := map[string]bool{}
	for _, g := range groups {
		for _, rule := range g.Rules {
			if rule.Type == "alerting" {
				defined[rule.Name] = true
			}
		}
	}
	engine := spec.PrometheusLabel(spec.AttrEngineName)
	hwID := spec.PrometheusLabel(spec.AttrHwID)
	pid := spec.PrometheusLabel(spec.AttrProcessPid)
	for _, want := range []struct {
		alert, what string
		match       func(map[string]string) bool
	}{
		{promKVAlert, "vLLM's KV cache", func(l map[string]string) bool { return l[engine] == "vllm" }},
		{promLeakAlert, "the leak on GPU 0", func(l map[string]string) bool {
			return l[hwID] == promLeakGPU || l[pid] == fmt.Sprint(promLeakPid)
		}},
	} {
		if !defined[want.alert] {
			t.Errorf("no alerting rule %s in distro/prometheus/*.rules.yml (alerting rules: %v)", want.alert, sortedKeys(defined))
			continue
		}
		harness.Eventually(t, promDeadline, func() (bool, string) {
			alerts := r.prom.Alerts(t)
			for _, a := range alerts {
				if a.Labels["alertname"] == want.alert && (a.State == "pending" || a.State == "firing") && want.match(a.Labels) {
					t.Logf("%s %s: %s", want.alert, a.State, harness.FormatLabels(a.Labels))
					return true, ""
				}
			}
			return false, fmt.Sprintf("%s is not pending or firing for %s; alerts: %s", want.alert, want.what, describeAlerts(alerts))
		})
	}
	// The flat process is no leak.
	for _, a := range r.prom.Alerts(t) {
		if a.Labels["alertname"] == promLeakAlert && (a.Labels[hwID] == promFlatGPU || a.Labels[pid] == fmt.Sprint(promVLLMPid)) {
			t.Errorf("%s for the flat GPU 1 / pid %d: %s", promLeakAlert, promVLLMPid, harness.FormatLabels(a.Labels))
		}
	}
}

func describeAlerts(alerts []harness.PromAlert) string {
	if len(alerts) == 0 {
		return "(none)"
	}
	var lines []string
	for _, a := range alerts {
		lines = append(lines, a.State+" "+harness.FormatLabels(a.Labels))
	}
	sort.Strings(lines)
	return "\n  " + strings.Join(lines, "\n  ")
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// grafanaPanelQuery is one query of a dashboard panel.
type grafanaPanelQuery struct {
	dashboard, panel, expr string
}

// grafanaQueries collects the expr of every target of every panel of a
// dashboard, rows and their nested panels included (the old "rows" layout
// too).
func grafanaQueries(t *testing.T, path string) []grafanaPanelQuery {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string            `json:"title"`
		Targets []json.RawMessage `json:"targets"`
		Panels  []json.RawMessage `json:"panels"`
	}
	var dash struct {
		Title  string            `json:"title"`
		Panels []json.RawMessage `json:"panels"`
		Rows   []struct {
			Panels []json.RawMessage `json:"panels"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: not a dashboard: %v", path, err)
	}
	name := filepath.Base(path)
	var out []grafanaPanelQuery
	var walk func(raw []json.RawMessage)
	walk = func(raw []json.RawMessage) {
		for _, r := range raw {
			var p panel
			if err := json.Unmarshal(r, &p); err != nil {
				t.Errorf("%s: a panel that does not parse: %v", name, err)
				continue
			}
			for _, tr := range p.Targets {
				var target struct {
					Expr string `json:"expr"`
				}
				if err := json.Unmarshal(tr, &target); err != nil {
					t.Errorf("%s: panel %q: a target that does not parse: %v", name, p.Title, err)
					continue
				}
				if target.Expr != "" {
					out = append(out, grafanaPanelQuery{dashboard: name, panel: p.Title, expr: target.Expr})
				}
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	for _, row := range dash.Rows {
		walk(row.Panels)
	}
	return out
}

// grafanaBuiltins are the interval variables Grafana fills in, at values a
// dashboard over the last few minutes gets.
var grafanaBuiltins = map[string]string{
	"__rate_interval": "1m",
	"__interval":      "15s",
	"__interval_ms":   "15000",
	"__range":         "5m",
	"__range_s":       "300",
	"__range_ms":      "300000",
}

// grafanaVariable matches $var, ${var}, ${var:format} and [[var]].
var grafanaVariable = regexp.MustCompile(`\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)\]\]`)

// expandGrafana substitutes a panel query's variables: the interval
// builtins by their values, every template variable ($cluster, $node,
// $engine, $model, ...) by .*, "All" of a regex matcher.
func expandGrafana(expr string) string {
	return grafanaVariable.ReplaceAllStringFunc(expr, func(m string) string {
		sub := grafanaVariable.FindStringSubmatch(m)
		name := sub[1] + sub[2] + sub[3]
		if v, ok := grafanaBuiltins[name]; ok {
			return v
		}
		return ".*"
	})
}

// checkShippedDashboards runs every panel query of distro/grafana/*.json
// against the scenario's data: each must parse and return something.
func checkShippedDashboards(t *testing.T, r *promRun) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(harness.RepoRoot(t), "distro", "grafana", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Logf("no distro/grafana/*.json: no dashboards checked")
		return
	}
	n := 0
	for _, f := range files {
		for _, q := range grafanaQueries(t, f) {
			n++
			expr := expandGrafana(q.expr)
			s, err := r.prom.QueryE(expr)
			switch {
			case err != nil:
				t.Errorf("dashboard %s, panel %q: the query fails: %v\n  expr: %s\n  as run: %s", q.dashboard, q.panel, err, q.expr, expr)
			case len(s) == 0:
				t.Errorf("dashboard %s, panel %q: no data on a scenario with three engines, a leak and a saturated KV cache\n  expr: %s\n  as run: %s", q.dashboard, q.panel, q.expr, expr)
			}
		}
	}
	t.Logf("%d panel queries of %d dashboards answered", n, len(files))
}

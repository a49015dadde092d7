// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package promrules

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// What the rules may assume beyond the registry: resource attributes as
// labels (docs/prometheus-names.md: with resource_to_telemetry_conversion,
// as the chart and distro/examples/prometheus-*.yaml set it), job and
// instance from service.*, and le on a histogram's buckets.
var resourceLabels = []string{
	"k8s_node_name", "k8s_cluster_name", "hw_id", "llm_engine_name", "llm_engine_target", "job", "instance", "le",
}

// templateResourceLabels may also be named in annotations: the pod of an
// engine, a resource attribute receiver_creator or the target's
// resource_attributes set. An annotation naming a label the series lacks
// prints nothing, so these are not required.
var templateResourceLabels = []string{"k8s_pod_name", "k8s_namespace_name"}

// requiredAlerts are the alerts issue 17 names (the end-to-end test looks
// for the first two).
var requiredAlerts = []string{
	"LLMEngineKVCacheSaturated", "GPUMemoryLeak", "LLMEngineLatencyAboveBaseline", "GPUXIDError",
	"GPUUncorrectedECCError", "LLMEngineDown", "OtelcolLLMOpsAgentSilent", "LLMOpsIncident",
}

// metricPrefixes are the prefixes of the registry's Prometheus names: an
// identifier with one of them and no colon must be a registry series.
var metricPrefixes = []string{"hw_", "process_", "gen_ai_", "llm_"}

type ruleFile struct {
	Groups []struct {
		Name     string `yaml:"name"`
		Interval string `yaml:"interval"`
		Rules    []rule `yaml:"rules"`
	} `yaml:"groups"`
}

type rule struct {
	Record      string            `yaml:"record"`
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`

	file, group string
}

func (r rule) name() string {
	if r.Alert != "" {
		return r.Alert
	}
	return r.Record
}

type testFile struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		Name           string `yaml:"name"`
		PromQLExprTest []struct {
			Expr       string `yaml:"expr"`
			EvalTime   string `yaml:"eval_time"`
			ExpSamples []any  `yaml:"exp_samples"`
		} `yaml:"promql_expr_test"`
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			EvalTime  string `yaml:"eval_time"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("%s is not the repository root: %v", root, err)
	}
	return root
}

func ruleDir(t *testing.T) string { return filepath.Join(repoRoot(t), "distro", "prometheus") }

func glob(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no file matches %s", pattern)
	}
	sort.Strings(files)
	return files
}

// loadRules reads every distro/prometheus/*.rules.yml.
func loadRules(t *testing.T) []rule {
	t.Helper()
	var rules []rule
	for _, path := range glob(t, filepath.Join(ruleDir(t), "*.rules.yml")) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f ruleFile
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				r.file, r.group = filepath.Base(path), g.Name
				rules = append(rules, r)
			}
		}
	}
	return rules
}

// registry is the registry as Prometheus spells it.
type registry struct {
	series map[string]spec.PrometheusMetric // by series name (_bucket, _sum, _count for histograms)
	labels map[string]bool                  // every label of every metric
	values map[string][]string              // enumerated values, by label
}

func loadRegistry() registry {
	r := registry{series: map[string]spec.PrometheusMetric{}, labels: map[string]bool{}, values: map[string][]string{}}
	for _, m := range spec.Metrics() {
		pm := spec.Prometheus(m)
		for _, s := range pm.Series {
			r.series[s] = pm
		}
		for _, l := range pm.Labels {
			r.labels[l] = true
		}
	}
	for _, a := range spec.Attributes() {
		if len(a.Values) > 0 {
			r.values[spec.PrometheusLabel(a.Name)] = a.Values
		}
	}
	return r
}

// seriesLabels are the labels a registry series may carry.
func (r registry) seriesLabels(name string) []string {
	pm := r.series[name]
	ls := append([]string(nil), pm.Labels...)
	if strings.HasSuffix(name, "_bucket") && pm.Type == "histogram" {
		ls = append(ls, "le")
	}
	return ls
}

// looksLikeRegistryLabel reports whether a label name starts as a registry
// or resource label does (hw_, llm_, k8s_, incident_, ...): a label of
// ours, possibly misspelt.
func (r registry) looksLikeRegistryLabel(l string) bool {
	if r.labels[l] || slices.Contains(resourceLabels, l) {
		return true
	}
	head, _, _ := strings.Cut(l, "_")
	for known := range r.labels {
		if h, _, _ := strings.Cut(known, "_"); h == head {
			return true
		}
	}
	for _, known := range resourceLabels {
		if h, _, _ := strings.Cut(known, "_"); h == head && strings.Contains(known, "_") {
			return true
		}
	}
	return false
}

func isOurMetric(name string) bool {
	if strings.Contains(name, ":") {
		return false
	}
	return slices.ContainsFunc(metricPrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}

// universes computes, for every recording rule, the labels its series may
// carry: those of the registry series it is computed from, through other
// recording rules (to a fixed point: the latency baseline refers to itself
// across evaluations), plus the resource labels.
func universes(t *testing.T, reg registry, rules []rule, parsed map[string]analysis) map[string]map[string]bool {
	t.Helper()
	u := map[string]map[string]bool{}
	for _, r := range rules {
		if r.Record != "" {
			u[r.Record] = map[string]bool{}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, r := range rules {
			if r.Record == "" {
				continue
			}
			for l := range exprUniverse(reg, parsed[r.file+"/"+r.name()+"/"+r.Expr], u) {
				if !u[r.Record][l] {
					u[r.Record][l] = true
					changed = true
				}
			}
		}
	}
	return u
}

// exprUniverse is the set of labels an expression's series may carry.
func exprUniverse(reg registry, a analysis, recorded map[string]map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, l := range resourceLabels {
		out[l] = true
	}
	for _, s := range a.selectors {
		if _, ok := reg.series[s.name]; ok {
			for _, l := range reg.seriesLabels(s.name) {
				out[l] = true
			}
		}
		for l := range recorded[s.name] {
			out[l] = true
		}
	}
	return out
}

func parseAll(t *testing.T, rules []rule) map[string]analysis {
	t.Helper()
	parsed := map[string]analysis{}
	for _, r := range rules {
		a, err := analyze(r.Expr)
		if err != nil {
			t.Fatalf("%s: %s: cannot tokenize the expression: %v\n%s", r.file, r.name(), err, r.Expr)
		}
		parsed[r.file+"/"+r.name()+"/"+r.Expr] = a
	}
	return parsed
}

// TestTokenizer pins the walker on the constructs the rules use.
func TestTokenizer(t *testing.T) {
	a, err := analyze(`histogram_quantile(0.99, sum by (llm_engine_name, le) (rate(x_bucket{le!="", a=~'b|c'}[1m] offset 5m)))
	  / on (hw_id) group_right () (deriv(y[2m:15s]) > 1e-3) and ignoring(job) lvl:z:op # a comment naming not_a_metric
	  or {__name__="w", k="v"} unless count without (rank) (v) >= bool 10`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range a.selectors {
		names = append(names, s.name)
	}
	if want := []string{"x_bucket", "y", "lvl:z:op", "w", "v"}; !slices.Equal(names, want) {
		t.Errorf("selectors %v, want %v", names, want)
	}
	if want := []string{"llm_engine_name", "le", "hw_id", "job", "rank"}; !slices.Equal(a.grouping, want) {
		t.Errorf("grouping labels %v, want %v", a.grouping, want)
	}
	if want := []matcher{{"le", "!=", ""}, {"a", "=~", "b|c"}}; !slices.Equal(a.selectors[0].matchers, want) {
		t.Errorf("matchers %v, want %v", a.selectors[0].matchers, want)
	}
}

// TestRulesUseRegistryNames: every series a rule selects exists (in the
// registry, or as a recording rule of recording.rules.yml), and every label
// it matches or groups by is one that series can carry.
func TestRulesUseRegistryNames(t *testing.T) {
	reg := loadRegistry()
	rules := loadRules(t)
	parsed := parseAll(t, rules)

	defined := map[string]string{}
	for _, r := range rules {
		if r.Record == "" {
			continue
		}
		if r.file != "recording.rules.yml" {
			t.Errorf("%s: recording rule %s: recording rules belong in recording.rules.yml", r.file, r.Record)
		}
		if prev, dup := defined[r.Record]; dup {
			t.Errorf("%s is recorded twice (%s and %s)", r.Record, prev, r.group)
		}
		defined[r.Record] = r.group
		if parts := strings.Split(r.Record, ":"); len(parts) != 3 || slices.Contains(parts, "") {
			t.Errorf("recording rule %s: not named level:metric:operation", r.Record)
		}
	}
	u := universes(t, reg, rules, parsed)

	for _, r := range rules {
		a := parsed[r.file+"/"+r.name()+"/"+r.Expr]
		where := r.file + ": " + r.name()
		if len(a.selectors) == 0 {
			t.Errorf("%s selects no series", where)
		}
		for _, s := range a.selectors {
			var allowed []string
			switch {
			case s.name == "":
				t.Errorf("%s: a selector without a metric name: %v", where, s.matchers)
				continue
			case strings.Contains(s.name, ":"):
				if _, ok := defined[s.name]; !ok {
					t.Errorf("%s uses %s, which recording.rules.yml does not record", where, s.name)
					continue
				}
				for l := range u[s.name] {
					allowed = append(allowed, l)
				}
			case isOurMetric(s.name):
				if _, ok := reg.series[s.name]; !ok {
					t.Errorf("%s selects %s, which is no series of the registry (docs/prometheus-names.md)", where, s.name)
					continue
				}
				allowed = append(reg.seriesLabels(s.name), resourceLabels...)
			default:
				t.Errorf("%s selects %s, which is neither a series of the registry nor a recorded one", where, s.name)
				continue
			}
			for _, m := range s.matchers {
				if m.label == "__name__" {
					continue
				}
				if !slices.Contains(allowed, m.label) {
					t.Errorf("%s: %s{%s%s%q}: %s has no label %s (it has %s)", where, s.name, m.label, m.op, m.value, s.name, m.label, strings.Join(sorted(allowed), ", "))
				}
				if vals, ok := reg.values[m.label]; ok && m.op == "=" && m.value != "" && !slices.Contains(vals, m.value) {
					t.Errorf("%s: %s{%s=%q}: the registry's values of %s are %v", where, s.name, m.label, m.value, m.label, vals)
				}
			}
		}
		universe := exprUniverse(reg, a, u)
		for _, l := range a.grouping {
			if reg.looksLikeRegistryLabel(l) && !universe[l] {
				t.Errorf("%s groups or matches by %s, which none of its series carries (it selects %s)", where, l, selectorNames(a))
			}
		}
		if r.Alert != "" {
			checkTemplates(t, where, r, universe)
		}
	}
}

// checkTemplates: the annotations and labels of an alert name only labels
// its series can carry.
func checkTemplates(t *testing.T, where string, r rule, universe map[string]bool) {
	t.Helper()
	ref := regexp.MustCompile(`\$labels\.([A-Za-z_][A-Za-z0-9_]*)`)
	texts := map[string]string{}
	for k, v := range r.Annotations {
		texts["annotation "+k] = v
	}
	for k, v := range r.Labels {
		texts["label "+k] = v
	}
	for what, text := range texts {
		for _, m := range ref.FindAllStringSubmatch(text, -1) {
			if !universe[m[1]] && !slices.Contains(templateResourceLabels, m[1]) {
				t.Errorf("%s: %s names $labels.%s, which its series do not carry", where, what, m[1])
			}
		}
	}
}

// TestAlertsAreActionable: every alert has a severity Alertmanager can route
// on, says what and where, and what to do.
func TestAlertsAreActionable(t *testing.T) {
	rules := loadRules(t)
	// The connector's severities, for the alert that carries them over.
	sevTemplate := "{{ $labels." + spec.PrometheusLabel(spec.IncidentSeverity) + " }}"
	sev, _ := spec.LookupAttribute(spec.IncidentSeverity)
	kinds := spec.IncidentKinds()
	defined := map[string]bool{}
	for _, r := range rules {
		if r.Alert == "" {
			continue
		}
		defined[r.Alert] = true
		where := r.file + ": " + r.Alert
		switch s := r.Labels["severity"]; s {
		case "warning", "critical":
		case sevTemplate:
			for _, v := range sev.Values {
				if v != "warning" && v != "critical" {
					t.Errorf("%s takes its severity from %s, whose value %q Alertmanager's routes do not know", where, spec.IncidentSeverity, v)
				}
			}
		default:
			t.Errorf("%s: labels.severity %q, want warning or critical", where, s)
		}
		if k, ok := r.Labels["incident_kind"]; ok && !slices.Contains(kinds, k) {
			t.Errorf("%s: labels.incident_kind %q is no incident kind of the registry (%v)", where, k, kinds)
		}
		for _, a := range []string{"summary", "description", "action"} {
			if strings.TrimSpace(r.Annotations[a]) == "" {
				t.Errorf("%s has no annotations.%s", where, a)
			}
		}
		if !strings.Contains(r.Annotations["summary"], "$labels.") {
			t.Errorf("%s: the summary names no subject ($labels.…): %q", where, r.Annotations["summary"])
		}
	}
	for _, a := range requiredAlerts {
		if !defined[a] {
			t.Errorf("no alert %s in distro/prometheus/*.rules.yml", a)
		}
	}
	// The chart's PrometheusRule has alerts of its own: no name twice.
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "helm", "otelcol-llmops", "templates", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^\s*-\s*alert:\s*(\S+)`).FindAllStringSubmatch(string(b), -1) {
		if defined[m[1]] {
			t.Errorf("alert %s is defined by the chart's prometheusrule.yaml too", m[1])
		}
	}
}

// TestEveryRuleIsUnitTested: each recording rule has a promtool test where
// it produces a sample and one where it does not; each alert one where it
// fires and one where it does not.
func TestEveryRuleIsUnitTested(t *testing.T) {
	rules := loadRules(t)
	produces, silent := map[string]bool{}, map[string]bool{}
	for _, path := range glob(t, filepath.Join(ruleDir(t), "tests", "*.test.yml")) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f testFile
		if err := yaml.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, rf := range f.RuleFiles {
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), rf)); err != nil {
				t.Errorf("%s: rule file %s: %v", filepath.Base(path), rf, err)
			}
		}
		for _, g := range f.Tests {
			for _, e := range g.PromQLExprTest {
				a, err := analyze(e.Expr)
				if err != nil || len(a.selectors) != 1 {
					continue // a test of a query, not of one rule
				}
				name := a.selectors[0].name
				if len(e.ExpSamples) > 0 {
					produces[name] = true
				} else {
					silent[name] = true
				}
			}
			for _, e := range g.AlertRuleTest {
				if len(e.ExpAlerts) > 0 {
					produces[e.Alertname] = true
				} else {
					silent[e.Alertname] = true
				}
			}
		}
	}
	seen := map[string]bool{}
	for _, r := range rules {
		n := r.name()
		if seen[n] {
			continue
		}
		seen[n] = true
		if !produces[n] {
			t.Errorf("%s: %s has no unit test in which it %s", r.file, n, map[bool]string{true: "fires", false: "produces a sample"}[r.Alert != ""])
		}
		if !silent[n] {
			t.Errorf("%s: %s has no unit test in which it %s", r.file, n, map[bool]string{true: "does not fire", false: "produces nothing"}[r.Alert != ""])
		}
	}
}

// TestPromtool runs promtool's own checks and the unit tests.
func TestPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not on PATH (Debian: apt-get install prometheus)")
		}
		t.Skip("promtool is not on PATH (Debian: apt-get install prometheus)")
	}
	dir := ruleDir(t)
	ruleFiles := glob(t, filepath.Join(dir, "*.rules.yml"))
	testFiles := glob(t, filepath.Join(dir, "tests", "*.test.yml"))
	for _, args := range [][]string{
		append([]string{"check", "rules"}, ruleFiles...),
		append([]string{"test", "rules"}, testFiles...),
	} {
		cmd := exec.CommandContext(t.Context(), promtool, args...)
		cmd.Dir = repoRoot(t)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s %s: %v\n%s", args[0], args[1], err, out)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return slices.Compact(s)
}

func selectorNames(a analysis) string {
	var names []string
	for _, s := range a.selectors {
		names = append(names, s.name)
	}
	return strings.Join(sorted(names), ", ")
}

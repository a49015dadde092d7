// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// The queries are checked as text, the way a reader (or the end-to-end
// test) sees them: every metric is a series of the registry, every label
// one its points or resources carry, every selector filtered by the
// dashboard's variables, every rate over $__rate_interval.

type located struct {
	where, expr string
}

// exprs are all the PromQL expressions of a dashboard: every "expr" key
// (panel targets and annotations), wherever it is.
func exprs(t *testing.T, d Dashboard) []located {
	t.Helper()
	var v any
	if err := json.Unmarshal(d.JSON, &v); err != nil {
		t.Fatal(err)
	}
	var out []located
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if s, ok := x[k].(string); ok && k == "expr" {
					out = append(out, located{d.UID + path, s})
					continue
				}
				walk(path+"."+k, x[k])
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	walk("", v)
	return out
}

// registry maps each Prometheus series name of the registry to its labels
// (the metric's point labels; le on a _bucket).
func registry() map[string][]string {
	out := map[string][]string{}
	for _, m := range spec.Metrics() {
		pm := spec.Prometheus(m)
		for _, s := range pm.Series {
			labels := slices.Clone(pm.Labels)
			if strings.HasSuffix(s, "_bucket") && pm.Type == "histogram" {
				labels = append(labels, "le")
			}
			out[s] = labels
		}
	}
	return out
}

func registrySeries() map[string]bool {
	out := map[string]bool{}
	for s := range registry() {
		out[s] = true
	}
	return out
}

// resourceLabels are labels any series may carry: resource attributes
// (resource_to_telemetry_conversion), the node and cluster, job and
// instance.
func resourceLabels() map[string]bool {
	out := map[string]bool{
		spec.PrometheusLabel(attrK8sClusterName): true,
		spec.PrometheusLabel(attrK8sNodeName):    true,
		"job":                                    true,
		"instance":                               true,
	}
	for _, tb := range spec.AttributeTables() {
		if tb.Place != spec.PlaceResource {
			continue
		}
		for _, a := range tb.Attributes {
			out[spec.PrometheusLabel(a.Name)] = true
		}
	}
	// Engine resources carry what the receiver's targets set: the process
	// and GPU links and the pod (docs/prometheus-names.md).
	for _, a := range []string{spec.AttrProcessPid, spec.AttrHwID, spec.AttrK8sPodName, spec.AttrK8sNamespaceName, spec.AttrEngineTarget} {
		out[spec.PrometheusLabel(a)] = true
	}
	return out
}

// knownLabels is every label a query may group or match by.
func knownLabels() map[string]bool {
	out := resourceLabels()
	for _, ls := range registry() {
		for _, l := range ls {
			out[l] = true
		}
	}
	return out
}

type selectorText struct {
	metric   string
	matchers []matcher
	text     string
}

type matcher struct{ label, op, value string }

var (
	selectorRe = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}`)
	matcherRe  = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*$`)
	groupingRe = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	stringRe   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	rangeRe    = regexp.MustCompile(`\[[^\]]*\]`)
	identRe    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	windowRe   = regexp.MustCompile(`\b(rate|irate|increase|delta|idelta)\((?:[^\[]*)\[([^\]]+)\]\)`)
	varUse     = regexp.MustCompile(`\$\{([^}:]+)(?::[a-z]+)?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)
)

// selectors finds the selectors with braces of an expression.
func selectors(e string) []selectorText {
	var out []selectorText
	for _, m := range selectorRe.FindAllStringSubmatch(e, -1) {
		s := selectorText{metric: m[1], text: m[0]}
		for _, part := range splitMatchers(m[2]) {
			mm := matcherRe.FindStringSubmatch(part)
			if mm == nil {
				s.matchers = append(s.matchers, matcher{label: "?" + part})
				continue
			}
			s.matchers = append(s.matchers, matcher{mm[1], mm[2], mm[3]})
		}
		out = append(out, s)
	}
	return out
}

// splitMatchers splits on commas outside quotes.
func splitMatchers(s string) []string {
	var out []string
	var cur strings.Builder
	inQuote, escaped := false, false
	for _, r := range s {
		switch {
		case escaped:
			escaped = false
		case r == '\\' && inQuote:
			escaped = true
		case r == '"':
			inQuote = !inQuote
		case r == ',' && !inQuote:
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	if strings.TrimSpace(cur.String()) != "" {
		out = append(out, cur.String())
	}
	return out
}

// checkSelector: the metric is the registry's, its labels known, and the
// variables filter it: cluster and node always, engine and model where the
// metric has those labels.
func checkSelector(t *testing.T, where string, s selectorText) {
	t.Helper()
	reg := registry()
	labels, ok := reg[s.metric]
	if !ok {
		t.Errorf("%s: %s is no series of the registry (docs/prometheus-names.md)", where, s.metric)
		return
	}
	known := resourceLabels()
	for _, l := range labels {
		known[l] = true
	}
	got := map[string]matcher{}
	for _, m := range s.matchers {
		if strings.HasPrefix(m.label, "?") {
			t.Errorf("%s: %s: cannot read matcher %q", where, s.text, m.label[1:])
			continue
		}
		if !known[m.label] {
			t.Errorf("%s: %s: label %s is on no %s series", where, s.text, m.label, s.metric)
		}
		got[m.label] = m
	}
	need := []variable{varCluster, varNode}
	if slices.Contains(labels, lEngine) {
		need = append(need, varEngine)
	}
	if slices.Contains(labels, lModel) {
		need = append(need, varModel)
	}
	// llm.incident.active has the engine and model of engine incidents
	// only: the matcher also matches their absence.
	orAbsent := s.metric == prom(spec.IncidentActive).Name
	for _, v := range need {
		m, ok := got[v.label]
		want := "$" + v.name
		if !ok || m.op != "=~" || (m.value != want && (!orAbsent || m.value != want+"|")) {
			t.Errorf("%s: %s: want %s=~%q", where, s.text, v.label, want)
		}
	}
	for _, m := range s.matchers {
		if strings.Contains(m.value, "$") {
			var v variable
			for _, x := range []variable{varCluster, varNode, varEngine, varModel} {
				if strings.HasPrefix(m.value, "$"+x.name) {
					v = x
				}
			}
			if v.label != m.label || m.op != "=~" {
				t.Errorf("%s: %s: variable matcher %s%s%q on the wrong label or not a regex match", where, s.text, m.label, m.op, m.value)
			}
		}
	}
}

// promqlWords are the functions, aggregations and keywords the dashboards
// may use: anything else left in an expression is a metric name without a
// selector (or a recording rule).
var promqlWords = map[string]bool{
	"sum": true, "max": true, "min": true, "avg": true, "count": true, "topk": true, "bottomk": true,
	"rate": true, "irate": true, "increase": true, "deriv": true, "delta": true,
	"histogram_quantile": true, "max_over_time": true, "min_over_time": true, "avg_over_time": true,
	"sort_desc": true, "sort": true, "clamp_min": true, "clamp_max": true, "label_values": true,
	"or": true, "and": true, "unless": true, "bool": true,
}

func TestExpressionsUseRegistry(t *testing.T) {
	known := knownLabels()
	var n int
	for _, d := range all(t) {
		for _, e := range exprs(t, d) {
			n++
			sels := selectors(e.expr)
			if len(sels) == 0 {
				t.Errorf("%s: %q selects nothing", e.where, e.expr)
			}
			for _, s := range sels {
				checkSelector(t, e.where, s)
			}
			rest := selectorRe.ReplaceAllString(e.expr, " SELECTOR ")
			for _, g := range groupingRe.FindAllStringSubmatch(rest, -1) {
				for _, l := range strings.Split(g[2], ",") {
					if l = strings.TrimSpace(l); l != "" && !known[l] {
						t.Errorf("%s: %s (%s) is a label no series carries", e.where, l, g[0])
					}
				}
			}
			for _, w := range windowRe.FindAllStringSubmatch(rest, -1) {
				if w[2] != "$__rate_interval" && w[2] != "$__range" {
					t.Errorf("%s: %s over [%s], want [$__rate_interval] (or [$__range] for a total)", e.where, w[1], w[2])
				}
			}
			rest = groupingRe.ReplaceAllString(rest, " ")
			rest = stringRe.ReplaceAllString(rest, " ")
			rest = rangeRe.ReplaceAllString(rest, " ")
			for _, id := range identRe.FindAllString(rest, -1) {
				if id != "SELECTOR" && !promqlWords[id] {
					t.Errorf("%s: %q in %q is neither a PromQL function nor a selector with the variables' matchers", e.where, id, e.expr)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no expressions")
	}
}

// The queries run on the end-to-end Prometheus with the variables replaced
// as it replaces them: nothing of Grafana's is left.
func TestExpressionsSubstitute(t *testing.T) {
	for _, d := range all(t) {
		for _, e := range exprs(t, d) {
			if s := substitute(e.expr); strings.Contains(s, "$") {
				t.Errorf("%s: %q still has a variable after substitution: %q", e.where, e.expr, s)
			}
		}
	}
}

// substitute replaces the variables as tests/e2e does.
func substitute(e string) string {
	return strings.NewReplacer(
		"$__rate_interval", "1m",
		"$__interval", "15s",
		"$__range", "5m",
		"$cluster", allValue,
		"$node", allValue,
		"$engine", allValue,
		"$model", allValue,
	).Replace(e)
}

func lookPath(name string) (string, error) { return exec.LookPath(name) }

func runCmd(name string, args ...string) (string, error) {
	out, err := exec.CommandContext(context.Background(), name, args...).CombinedOutput()
	return string(out), err
}

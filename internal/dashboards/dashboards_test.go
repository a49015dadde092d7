// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// distroDir is where cmd/dashgen writes the dashboards (make generate).
var distroDir = filepath.Join("..", "..", "distro", "grafana")

// wantUIDs are the dashboards' UIDs: links and bookmarks use them, so a
// change is a breaking one.
var wantUIDs = []string{UIDDrilldown, UIDGPUMemory, UIDKVCache, UIDNode, UIDQuadrants}

func all(t *testing.T) []Dashboard {
	t.Helper()
	ds, err := All()
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// model is a dashboard as Grafana reads it: plain JSON.
type model = map[string]any

func decode(t *testing.T, d Dashboard) model {
	t.Helper()
	var m model
	if err := json.Unmarshal(d.JSON, &m); err != nil {
		t.Fatalf("%s: %v", d.UID, err)
	}
	return m
}

func TestCommittedDashboardsAreGenerated(t *testing.T) {
	want := map[string]bool{}
	for _, d := range all(t) {
		want[d.FileName()] = true
		got, err := os.ReadFile(filepath.Join(distroDir, d.FileName()))
		if err != nil {
			t.Errorf("%v: run make generate", err)
			continue
		}
		if !bytes.Equal(got, d.JSON) {
			t.Errorf("distro/grafana/%s differs from what internal/dashboards generates: run make generate", d.FileName())
		}
	}
	entries, err := os.ReadDir(distroDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") && !want[e.Name()] {
			t.Errorf("distro/grafana/%s is no generated dashboard: remove it or generate it", e.Name())
		}
	}
}

func TestGenerationIsStable(t *testing.T) {
	a, b := all(t), all(t)
	for i := range a {
		if !bytes.Equal(a[i].JSON, b[i].JSON) {
			t.Errorf("%s: two generations differ", a[i].UID)
		}
		if !bytes.HasSuffix(a[i].JSON, []byte("}\n")) || bytes.HasSuffix(a[i].JSON, []byte("\n\n")) {
			t.Errorf("%s: not one trailing newline", a[i].UID)
		}
	}
}

func TestUIDsAndTitles(t *testing.T) {
	var uids []string
	titles := map[string]bool{}
	for _, d := range all(t) {
		uids = append(uids, d.UID)
		m := decode(t, d)
		if m["uid"] != d.UID || d.UID == "" || len(d.UID) > 40 {
			t.Errorf("%s: uid %v (at most 40 characters)", d.UID, m["uid"])
		}
		title, _ := m["title"].(string)
		if title == "" || titles[title] {
			t.Errorf("%s: title %q empty or not unique", d.UID, title)
		}
		titles[title] = true
	}
	sort.Strings(uids)
	if !slices.Equal(uids, wantUIDs) {
		t.Errorf("uids %v, want %v", uids, wantUIDs)
	}
}

// The SDK's strict reader accepts each file: every field is one the
// dashboard schema knows, of the right type.
func TestSchemaStrict(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	for _, d := range all(t) {
		var db dashboard.Dashboard
		// The reader returns its (possibly empty) list of errors.
		err := db.UnmarshalJSONStrict(d.JSON)
		if errs := (cog.BuildErrors)(nil); errors.As(err, &errs) && len(errs) == 0 {
			err = nil
		}
		if err != nil {
			t.Errorf("%s: %v", d.UID, err)
		}
	}
}

// panels returns every panel, those nested in rows too.
func panels(m model) []model {
	var out []model
	var walk func(v any)
	walk = func(v any) {
		list, _ := v.([]any)
		for _, p := range list {
			pm, _ := p.(model)
			out = append(out, pm)
			walk(pm["panels"])
		}
	}
	walk(m["panels"])
	return out
}

func variables(m model) []model {
	tm, _ := m["templating"].(model)
	list, _ := tm["list"].([]any)
	out := make([]model, len(list))
	for i, v := range list {
		out[i], _ = v.(model)
	}
	return out
}

func variableNamed(m model, name string) model {
	for _, v := range variables(m) {
		if v["name"] == name {
			return v
		}
	}
	return nil
}

// datasource variables a query may use, by the plugin they choose.
var dsVars = map[string]string{
	"${" + dsPrometheusVar + "}": pluginPrometheus,
	"${" + dsTempoVar + "}":      pluginTempo,
	"${" + dsLokiVar + "}":       pluginLoki,
}

func checkDS(t *testing.T, where string, v any, m model) {
	t.Helper()
	ds, ok := v.(model)
	if !ok {
		t.Errorf("%s: datasource %v, want a reference to a datasource variable", where, v)
		return
	}
	uid, _ := ds["uid"].(string)
	plugin, ok := dsVars[uid]
	if !ok || ds["type"] != plugin {
		t.Errorf("%s: datasource %v, want {type: prometheus, uid: ${datasource}} (or tempo, loki)", where, ds)
		return
	}
	name := strings.TrimSuffix(strings.TrimPrefix(uid, "${"), "}")
	if v := variableNamed(m, name); v == nil || v["type"] != "datasource" || v["query"] != plugin {
		t.Errorf("%s: %s is no datasource variable of type %s", where, uid, plugin)
	}
}

func TestGrafanaImportable(t *testing.T) {
	for _, d := range all(t) {
		m := decode(t, d)
		if v, _ := m["schemaVersion"].(float64); v < 39 {
			t.Errorf("%s: schemaVersion %v, want >= 39 (Grafana 11)", d.UID, m["schemaVersion"])
		}
		ds := variableNamed(m, dsPrometheusVar)
		if ds == nil || ds["type"] != "datasource" || ds["query"] != pluginPrometheus {
			t.Errorf("%s: no datasource variable %q of type datasource, query prometheus: %v", d.UID, dsPrometheusVar, ds)
		}
		ids := map[float64]string{}
		type rect struct{ x, y, w, h float64 }
		var rects []rect
		for _, p := range panels(m) {
			title, _ := p["title"].(string)
			where := fmt.Sprintf("%s: panel %q", d.UID, title)
			if title == "" {
				t.Errorf("%s: a panel without a title", d.UID)
			}
			id, ok := p["id"].(float64)
			if !ok || id <= 0 {
				t.Errorf("%s: id %v", where, p["id"])
			} else if other, dup := ids[id]; dup {
				t.Errorf("%s: id %v already used by %q", where, id, other)
			}
			ids[id] = title
			gp, _ := p["gridPos"].(model)
			x, _ := gp["x"].(float64)
			y, _ := gp["y"].(float64)
			w, _ := gp["w"].(float64)
			h, _ := gp["h"].(float64)
			if gp == nil || w <= 0 || h <= 0 || x+w > gridWidth {
				t.Errorf("%s: gridPos %v", where, gp)
			}
			r := rect{x, y, w, h}
			for _, o := range rects {
				if r.x < o.x+o.w && o.x < r.x+r.w && r.y < o.y+o.h && o.y < r.y+r.h {
					t.Errorf("%s: gridPos %v overlaps another panel", where, gp)
				}
			}
			rects = append(rects, r)
			if p["type"] == "row" {
				continue
			}
			checkDS(t, where, p["datasource"], m)
			targets, _ := p["targets"].([]any)
			if len(targets) == 0 {
				t.Errorf("%s: no targets", where)
			}
			refs := map[string]bool{}
			for _, tg := range targets {
				tm, _ := tg.(model)
				checkDS(t, where+" target", tm["datasource"], m)
				ref, _ := tm["refId"].(string)
				if ref == "" || refs[ref] {
					t.Errorf("%s: refId %q missing or repeated", where, ref)
				}
				refs[ref] = true
				if e, _ := tm["expr"].(string); e == "" {
					t.Errorf("%s: a target without expr", where)
				}
			}
		}
		ann, _ := m["annotations"].(model)
		list, _ := ann["list"].([]any)
		for _, a := range list {
			am, _ := a.(model)
			if am["builtIn"] == 1.0 {
				continue
			}
			checkDS(t, fmt.Sprintf("%s: annotation %v", d.UID, am["name"]), am["datasource"], m)
		}
	}
}

// Every $variable a dashboard uses is one of its own or a Grafana global.
func TestVariablesDefined(t *testing.T) {
	globals := []string{"__rate_interval", "__interval", "__range", "__all"}
	for _, d := range all(t) {
		m := decode(t, d)
		defined := map[string]bool{}
		for _, v := range variables(m) {
			defined[v["name"].(string)] = true
		}
		for _, use := range varUse.FindAllStringSubmatch(string(d.JSON), -1) {
			name := use[1]
			if name == "" {
				name = use[2]
			}
			if strings.HasPrefix(name, "__") {
				if !slices.Contains(globals, name) && !strings.HasPrefix(name, "__data") && !strings.HasPrefix(name, "__url") &&
					!slices.Contains([]string{"__from", "__to", "__org", "__all_variables"}, name) {
					t.Errorf("%s: unknown Grafana variable $%s", d.UID, name)
				}
				continue
			}
			if !defined[name] {
				t.Errorf("%s: $%s is not a variable of the dashboard", d.UID, name)
			}
		}
	}
}

func TestLabelVariables(t *testing.T) {
	for _, d := range all(t) {
		m := decode(t, d)
		order := []variable{varCluster, varNode, varEngine, varModel}
		for i, v := range order {
			vm := variableNamed(m, v.name)
			where := fmt.Sprintf("%s: variable %s", d.UID, v.name)
			if vm == nil {
				t.Errorf("%s: missing", where)
				continue
			}
			if vm["type"] != "query" || vm["multi"] != true || vm["includeAll"] != true || vm["allValue"] != allValue {
				t.Errorf("%s: type %v multi %v includeAll %v allValue %v, want query, true, true, %q",
					where, vm["type"], vm["multi"], vm["includeAll"], vm["allValue"], allValue)
			}
			checkDS(t, where, vm["datasource"], m)
			q, _ := vm["query"].(string)
			metric, label, ok := parseLabelValues(q)
			if !ok || label != v.label {
				t.Errorf("%s: query %q, want label_values(<registry metric>, %s)", where, q, v.label)
				continue
			}
			if !registrySeries()[metric] {
				t.Errorf("%s: %s is no series of the registry", where, metric)
			}
			// Filtered by the variables before it, each as a regex.
			var want []string
			for _, before := range order[:i] {
				want = append(want, before.match())
			}
			var got []string
			for _, s := range selectors(q) {
				for _, m := range s.matchers {
					got = append(got, m.label+m.op+`"`+m.value+`"`)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: query %q filters by %v, want %v", where, q, got, want)
			}
		}
	}
}

// parseLabelValues splits label_values(selector, label).
func parseLabelValues(q string) (metric, label string, ok bool) {
	if !strings.HasPrefix(q, "label_values(") || !strings.HasSuffix(q, ")") {
		return "", "", false
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(q, "label_values("), ")")
	i := strings.LastIndex(inner, ",")
	if i < 0 {
		return "", "", false
	}
	sel, label := strings.TrimSpace(inner[:i]), strings.TrimSpace(inner[i+1:])
	if j := strings.IndexByte(sel, '{'); j >= 0 {
		sel = sel[:j]
	}
	return sel, label, true
}

// The thresholds shared with the alerting rules are drawn where they
// belong, with their exact values.
func TestThresholdsDrawn(t *testing.T) {
	want := []struct {
		uid, title string
		value      float64
	}{
		{UIDQuadrants, "KV-cache utilization", KVCacheSaturation},
		{UIDKVCache, "KV-cache utilization", KVCacheSaturation},
		{UIDQuadrants, "GPU memory used ratio", GPUMemoryUsedRatio},
		{UIDGPUMemory, "GPU memory used ratio", GPUMemoryUsedRatio},
		{UIDGPUMemory, "Time to exhaustion", TimeToExhaustionSeconds},
		{UIDQuadrants, "Time to first token p99", TTFTP99Seconds},
		{UIDQuadrants, "Time per output token p99", TPOTP99Seconds},
	}
	byUID := map[string]model{}
	for _, d := range all(t) {
		byUID[d.UID] = decode(t, d)
	}
	for _, w := range want {
		var found bool
		for _, p := range panels(byUID[w.uid]) {
			if p["title"] != w.title {
				continue
			}
			fc, _ := p["fieldConfig"].(model)
			def, _ := fc["defaults"].(model)
			th, _ := def["thresholds"].(model)
			steps, _ := th["steps"].([]any)
			for _, s := range steps {
				if sm, _ := s.(model); sm["value"] == w.value {
					found = true
				}
			}
			custom, _ := def["custom"].(model)
			style, _ := custom["thresholdsStyle"].(model)
			if mode, _ := style["mode"].(string); mode == "" || mode == "off" {
				t.Errorf("%s: %q does not draw its thresholds", w.uid, w.title)
			}
		}
		if !found {
			t.Errorf("%s: %q has no threshold step at %v", w.uid, w.title, w.value)
		}
	}
	// The throughput drop is a line computed by a query.
	var drop bool
	for _, p := range panels(byUID[UIDQuadrants]) {
		for _, e := range panelExprs(p) {
			if strings.HasPrefix(e, fmt.Sprintf("%g * max_over_time(", ThroughputDropFraction)) &&
				strings.HasSuffix(e, "["+ThroughputPeakWindow+":])") {
				drop = true
			}
		}
	}
	if !drop {
		t.Errorf("%s: no %g × peak over %s line", UIDQuadrants, ThroughputDropFraction, ThroughputPeakWindow)
	}
}

func panelExprs(p model) []string {
	var out []string
	targets, _ := p["targets"].([]any)
	for _, tg := range targets {
		tm, _ := tg.(model)
		if e, ok := tm["expr"].(string); ok {
			out = append(out, e)
		}
	}
	return out
}

// The drill-down's latency and memory panels ask for exemplars, and its
// incident table links to the logs (by incident.id) and to Tempo.
func TestDrilldown(t *testing.T) {
	var m model
	for _, d := range all(t) {
		if d.UID == UIDDrilldown {
			m = decode(t, d)
		}
	}
	var withExemplars int
	var links []string
	for _, p := range panels(m) {
		targets, _ := p["targets"].([]any)
		for _, tg := range targets {
			if tm, _ := tg.(model); tm["exemplar"] == true {
				withExemplars++
			}
		}
		if p["type"] != "table" {
			continue
		}
		fc, _ := p["fieldConfig"].(model)
		def, _ := fc["defaults"].(model)
		ls, _ := def["links"].([]any)
		for _, l := range ls {
			lm, _ := l.(model)
			links = append(links, lm["url"].(string))
		}
	}
	if withExemplars < 4 {
		t.Errorf("%d targets with exemplars, want the latency and memory panels' (4)", withExemplars)
	}
	var toLogs, toTempo bool
	for _, l := range links {
		toLogs = toLogs || strings.Contains(l, "${"+dsLokiVar+"}") && strings.Contains(l, "${__data.fields."+lIncidentID)
		toTempo = toTempo || strings.Contains(l, "${"+dsTempoVar+"}")
	}
	if !toLogs || !toTempo {
		t.Errorf("incident table links %v: want one to ${loki} by incident id and one to ${tempo}", links)
	}
}

// Every query, as the end-to-end test runs it (variables replaced), parses:
// promtool checks them as recording rules. Skipped without promtool.
func TestExpressionsParse(t *testing.T) {
	promtool, err := lookPath("promtool")
	if err != nil {
		t.Skip("promtool not on PATH")
	}
	var b strings.Builder
	b.WriteString("groups:\n- name: dashboards\n  rules:\n")
	n := 0
	for _, d := range all(t) {
		for _, e := range exprs(t, d) {
			n++
			js, _ := json.Marshal(substitute(e.expr))
			fmt.Fprintf(&b, "  - record: dashboard_expr_%d\n    expr: %s\n", n, js)
		}
	}
	path := filepath.Join(t.TempDir(), "exprs.rules.yml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runCmd(promtool, "check", "rules", path); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}

// The thresholds are the alerting rules' own: each constant is compared
// with in the rule about the same signal (distro/prometheus).
func TestThresholdsShared(t *testing.T) {
	dir := filepath.Join("..", "..", "distro", "prometheus")
	read := func(name string) []string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%v (the rules the dashboards' thresholds are shared with)", err)
		}
		return strings.Split(string(b), "\n      - ")
	}
	alerts, recording := read("alerts.rules.yml"), read("recording.rules.yml")
	for _, c := range []struct {
		signal, cmp string
		value       float64
	}{
		{"kv_cache_utilization", ">", KVCacheSaturation},
		{"hw_gpu_memory_usage", ">", GPUMemoryUsedRatio},
		{"process_gpu_memory_usage_bytes", "<", TimeToExhaustionSeconds},
		{"time_to_first_token", ">", TTFTP99Seconds},
		{"time_per_output_token", ">", TPOTP99Seconds},
		{"output_tokens", "<", ThroughputDropFraction},
	} {
		re := regexp.MustCompile(regexp.QuoteMeta(c.cmp) + `=?\s*` + regexp.QuoteMeta(fmt.Sprintf("%g", c.value)) + `(\s|$|\))`)
		var found bool
		for _, rule := range alerts {
			if strings.HasPrefix(rule, "alert:") && strings.Contains(rule, c.signal) && re.MatchString(exprOf(rule)) {
				found = true
			}
		}
		if !found {
			t.Errorf("no alert on %s compares %s %g: the dashboards' threshold and distro/prometheus/alerts.rules.yml disagree", c.signal, c.cmp, c.value)
		}
	}
	var peak bool
	for _, rule := range recording {
		peak = peak || strings.Contains(rule, "output_tokens") && strings.Contains(exprOf(rule), "max_over_time(") &&
			strings.Contains(exprOf(rule), "["+ThroughputPeakWindow+"]")
	}
	if !peak {
		t.Errorf("no recording rule takes the output-token peak over %s: distro/prometheus/recording.rules.yml and ThroughputPeakWindow disagree", ThroughputPeakWindow)
	}
}

// exprOf is the text of a rule from its expr: to its next key.
func exprOf(rule string) string {
	i := strings.Index(rule, "expr:")
	if i < 0 {
		return ""
	}
	rest := rule[i+len("expr:"):]
	for _, key := range []string{"\n        for:", "\n        labels:", "\n        annotations:"} {
		if j := strings.Index(rest, key); j >= 0 {
			rest = rest[:j]
		}
	}
	return rest
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package report renders what the demo's collector exported as one
// self-contained HTML file: charts of GPU memory, KV cache, latency and
// token rate with the incidents marked on them, then one card per incident
// with its evidence and its drill-down to the profiler span and model layer.
//
// The file fetches nothing (inline CSS, hand-written inline SVG, a few lines
// of inline script, and a Content-Security-Policy that forbids any request),
// so it can be mailed, attached to a ticket or opened offline.
package report

import (
	"bufio"
	"cmp"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmops-otel/otelcol-llmops/demo/internal/exported"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// Options are the report's page-level texts.
type Options struct {
	Title     string
	Generated time.Time
	Note      string
}

// Chart keys, the data-chart attribute of each chart's <svg>.
const (
	ChartGPUMemory = "gpu-memory"
	ChartKVCache   = "kv-cache"
	ChartLatency   = "latency-p99"
	ChartTokenRate = "token-rate"
)

// ChartKeys lists the charts in page order.
var ChartKeys = []string{ChartGPUMemory, ChartKVCache, ChartLatency, ChartTokenRate}

// chartOfKind says which chart an incident kind is drawn on: the one showing
// the signal it fired on. Kinds not listed (cache_hit_drop, ecc, rules) only
// get a card.
var chartOfKind = map[string]string{
	"gpu_memory_leak":     ChartGPUMemory,
	"kv_cache_growth":     ChartGPUMemory,
	"xid_error":           ChartGPUMemory,
	"gpu_throttling":      ChartGPUMemory,
	"kv_cache_saturation": ChartKVCache,
	"latency_spike":       ChartLatency,
	"queue_buildup":       ChartLatency,
	"joint_degradation":   ChartLatency,
	"throughput_drop":     ChartTokenRate,
}

// WriteFile writes the report to path (replacing it).
func WriteFile(path string, d *exported.Data, opt Options) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create report %s: %w (check that its directory exists and is writable)", path, err)
	}
	w := bufio.NewWriter(f)
	err = Write(w, d, opt)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return nil
}

// Write writes the report. A nil or empty d gives a valid page saying there
// is no data yet.
func Write(w io.Writer, d *exported.Data, opt Options) error {
	if d == nil {
		d = &exported.Data{}
	}
	if opt.Title == "" {
		opt.Title = "otelcol-llmops demo report"
	}
	incs := mergeIncidents(d.Incidents)
	var b strings.Builder
	b.Grow(256 << 10)
	writeHead(&b, opt)
	writeHeader(&b, d, incs, opt)

	t0, t1 := d.Start, d.End
	b.WriteString(`<section id="charts"><h2>Signals</h2>`)
	for _, c := range buildCharts(d, incs) {
		fmt.Fprintf(&b, `<figure><figcaption>%s</figcaption>`, html.EscapeString(c.title))
		c.render(&b, t0, t1)
		b.WriteString(`</figure>`)
	}
	b.WriteString(`</section>`)

	writeIncidents(&b, incs)
	writeLeakSuspects(&b, d.LeakSuspects)
	b.WriteString(footScript)
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// incident is the records of one incident.id merged: it fired first at
// Fired, was resolved at Resolved (zero while firing), and Last is its
// newest firing/renotify record (the most recent body, evidence and drill-down).
type incident struct {
	ID       string
	Last     exported.Incident
	Fired    time.Time
	Resolved time.Time
	Notified int
	Severity string // the worst it reached
	// Updates: the records re-sent because the figures moved, oldest
	// first; End: the resolved record (its resolution, who superseded it).
	Updates []exported.Incident
	End     exported.Incident
}

func mergeIncidents(recs []exported.Incident) []*incident {
	byID := map[string]*incident{}
	var out []*incident
	for _, r := range recs {
		id := r.ID
		if id == "" {
			// Not from rootcause (a rule from elsewhere): one card per record
			// kind and subject.
			id = r.Kind + "/" + r.Subject
		}
		inc := byID[id]
		if inc == nil {
			inc = &incident{ID: id, Last: r, Fired: r.Time, Severity: r.Severity}
			byID[id] = inc
			out = append(out, inc)
		}
		if r.State == spec.StateResolved {
			inc.Resolved, inc.End = r.Time, r
			if inc.Last.State == "" {
				inc.Last = r
			}
			continue
		}
		if r.Time.Before(inc.Fired) || inc.Fired.IsZero() {
			inc.Fired = r.Time
		}
		if inc.Last.State == spec.StateResolved || !r.Time.Before(inc.Last.Time) {
			inc.Last = r
		}
		// A later firing after a resolution reopens the incident.
		if !inc.Resolved.IsZero() && r.Time.After(inc.Resolved) {
			inc.Resolved = time.Time{}
		}
		inc.Notified++
		if r.Change != "" {
			inc.Updates = append(inc.Updates, r)
		}
		if r.Severity == spec.SeverityCritical {
			inc.Severity = spec.SeverityCritical
		} else if inc.Severity == "" {
			inc.Severity = r.Severity
		}
	}
	slices.SortStableFunc(out, func(a, b *incident) int { return a.Fired.Compare(b.Fired) })
	return out
}

func sevColor(inc *incident) string {
	if !inc.Resolved.IsZero() {
		return colorResolved
	}
	if inc.Severity == spec.SeverityCritical {
		return colorCritical
	}
	return colorWarning
}

func shortID(id string) string {
	if r := []rune(id); len(r) > 14 {
		return string(r[:12]) + "…"
	}
	return id
}

func engineLabel(e *exported.Engine) string {
	var parts []string
	for _, s := range []string{e.Name, e.Model} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	parts = append(parts, "("+e.Target+")")
	return strings.Join(parts, " ")
}

func buildCharts(d *exported.Data, incs []*incident) []*chart {
	charts := map[string]*chart{
		ChartGPUMemory: {key: ChartGPUMemory, title: "GPU memory per process and per GPU (GiB)", yTitle: "GiB"},
		ChartKVCache:   {key: ChartKVCache, title: "KV-cache utilization per engine (%)", yTitle: "%", yMax: 100},
		ChartLatency:   {key: ChartLatency, title: "p99 request latency per engine (s, over 10 s)", yTitle: "seconds"},
		ChartTokenRate: {key: ChartTokenRate, title: "Output token rate per engine (tokens/s)", yTitle: "tokens/s"},
	}
	color := 0
	next := func() string {
		c := palette[color%len(palette)]
		color++
		return c
	}
	gm := charts[ChartGPUMemory]
	for _, id := range sortedKeys(d.GPUs) {
		g := d.GPUs[id]
		label := "GPU " + shortID(g.ID) + " total"
		if l, ok := g.Limit.Last(); ok && l.V > 0 {
			label += fmt.Sprintf(" (limit %s)", fmtBytes(l.V))
		}
		gm.lines = append(gm.lines, line{label: label, color: next(), dashed: true, pts: g.Memory, scale: 1.0 / (1 << 30)})
		for _, pid := range sortedKeys(g.Processes) {
			p := g.Processes[pid]
			label := "pid " + strconv.FormatInt(p.PID, 10)
			if p.Name != "" {
				label += " " + p.Name
			}
			label += " on " + shortID(g.ID)
			gm.lines = append(gm.lines, line{label: label, color: next(), pts: p.Memory, scale: 1.0 / (1 << 30)})
		}
	}
	color = 0
	for _, t := range sortedKeys(d.Engines) {
		e := d.Engines[t]
		c := next()
		label := engineLabel(e)
		charts[ChartKVCache].lines = append(charts[ChartKVCache].lines, line{label: label, color: c, pts: e.KV, scale: 100})
		charts[ChartLatency].lines = append(charts[ChartLatency].lines, line{label: label, color: c, pts: e.P99, scale: 1})
		charts[ChartTokenRate].lines = append(charts[ChartTokenRate].lines, line{label: label, color: c, pts: e.TokenRate, scale: 1})
	}
	for _, inc := range incs {
		c := charts[chartOfKind[inc.Last.Kind]]
		if c == nil {
			continue
		}
		m := marker{id: inc.ID, color: sevColor(inc), from: inc.Fired, to: inc.Resolved}
		if m.to.IsZero() {
			m.to, m.open = d.End, true
		}
		m.label = inc.Last.Kind
		if s := markerSubject(&inc.Last); s != "" {
			m.label += " · " + s
		}
		c.markers = append(c.markers, m)
	}
	out := make([]*chart, 0, len(ChartKeys))
	for _, k := range ChartKeys {
		out = append(out, charts[k])
	}
	return out
}

// markerSubject is a short subject for a marker label: the full subject is
// on the card.
func markerSubject(i *exported.Incident) string {
	switch {
	case i.PID != 0:
		return "pid " + strconv.FormatInt(i.PID, 10)
	case i.Engine != "" && i.Model != "":
		return i.Engine + " " + i.Model
	case i.Target != "":
		return i.Target
	case i.HwID != "":
		return shortID(i.HwID)
	}
	return ""
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func fmtClock(t time.Time) string { return t.UTC().Format("15:04:05") }

func fmtBytes(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1<<40:
		return fmt.Sprintf("%.2f TiB", v/(1<<40))
	case a >= 1<<30:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	case a >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case a >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}

func fmtSeconds(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0 s"
	case a < 1e-3:
		return fmt.Sprintf("%.0f µs", v*1e6)
	case a < 1:
		return fmt.Sprintf("%.1f ms", v*1e3)
	case a < 120:
		return fmt.Sprintf("%.2f s", v)
	case a < 7200:
		return fmt.Sprintf("%.1f min", v/60)
	}
	return fmt.Sprintf("%.1f h", v/3600)
}

func fmtNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// fmtValue formats an evidence value by its unit, so a person reads "1.80 GiB"
// rather than 1932735283.
func fmtValue(raw any, unit string) string {
	var v float64
	switch x := raw.(type) {
	case nil:
		return ""
	case float64:
		v = x
	case int64:
		v = float64(x)
	case int:
		v = float64(x)
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
	switch unit {
	case "By":
		return fmtBytes(v)
	case "By/s":
		return fmtBytes(v) + "/s"
	case "MiBy/min":
		return strconv.FormatFloat(v, 'f', 1, 64) + " MiB/min"
	case "s":
		return fmtSeconds(v)
	}
	return fmtNum(v)
}

func fmtDuration(d time.Duration) string { return d.Round(time.Second).String() }

func writeHead(b *strings.Builder, opt Options) {
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	// No request of any kind: the report must open offline and leak nothing.
	b.WriteString(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">` + "\n")
	b.WriteString(`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n")
	fmt.Fprintf(b, "<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n", html.EscapeString(opt.Title), css)
}

const css = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:20px auto;max-width:1000px;padding:0 12px;color:#1d2329;background:#f4f6f8}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 10px;border-bottom:1px solid #d5dbe1;padding-bottom:4px}
.meta{color:#56606a;margin:2px 0}.note{background:#fff8e1;border-left:4px solid #ef8f00;padding:6px 10px}
.counts{display:flex;flex-wrap:wrap;gap:8px;margin:10px 0;padding:0}.counts li{list-style:none;background:#fff;border:1px solid #d5dbe1;border-radius:6px;padding:6px 10px}
.counts b{font-size:18px;display:block}
figure{margin:0 0 18px;background:#fff;border:1px solid #d5dbe1;border-radius:6px;padding:8px 10px}
figcaption{font-weight:600;margin-bottom:4px}
svg.chart{display:block;max-width:100%;height:auto}
.card{background:#fff;border:1px solid #d5dbe1;border-left:6px solid #ef8f00;border-radius:6px;padding:10px 14px;margin:0 0 14px}
.card.critical{border-left-color:#c62828}.card.resolved{border-left-color:#5f7d8c}
.badge{display:inline-block;color:#fff;border-radius:4px;padding:1px 7px;font-size:12px;font-weight:700;text-transform:uppercase;margin-right:6px}
.badge.critical{background:#c62828}.badge.warning{background:#ef8f00}.badge.resolved{background:#5f7d8c}
.kind{font-family:ui-monospace,Menlo,Consolas,monospace;font-weight:700}
.body{margin:8px 0;font-size:15px}.action{margin:6px 0}.superseded,.ruled-out{margin:6px 0;font-size:13px}ol.updates{margin:6px 0;padding-left:20px;font-size:13px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:8px 0;font-size:13px}dl.facts dt{color:#56606a}dl.facts dd{margin:0;overflow-wrap:anywhere}
table{border-collapse:collapse;font-size:13px;margin:6px 0;width:100%}th,td{border:1px solid #e0e5ea;padding:3px 7px;text-align:left;vertical-align:top}th{background:#f0f3f6}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.drill{background:#f6f8fa;border-radius:4px;padding:6px 10px;margin-top:8px;font-size:13px}
.chain{font-family:ui-monospace,Menlo,Consolas,monospace;overflow-wrap:anywhere}
ul.stack{margin:4px 0 0;padding-left:18px;font-family:ui-monospace,Menlo,Consolas,monospace}ul.stack ul{padding-left:18px}
.none{color:#7a848e;font-style:italic}code{overflow-wrap:anywhere}
`

// footScript records each chart's rendered size in data-rendered="WxH", so a
// headless browser's --dump-dom shows whether the charts laid out. It runs
// at once (layout is available at the end of <body>) and again on load.
const footScript = `<script>
(function(){
  function measure(){
    var c=document.querySelectorAll('svg.chart');
    for(var i=0;i<c.length;i++){var r=c[i].getBoundingClientRect();c[i].setAttribute('data-rendered',Math.round(r.width)+'x'+Math.round(r.height));}
  }
  measure();
  window.addEventListener('load',measure);
})();
</script>
`

func writeHeader(b *strings.Builder, d *exported.Data, incs []*incident, opt Options) {
	fmt.Fprintf(b, "<header><h1>%s</h1>\n", html.EscapeString(opt.Title))
	if d.Start.IsZero() {
		b.WriteString(`<p class="meta">No data yet: the collector has not exported anything.</p>`)
	} else {
		fmt.Fprintf(b, `<p class="meta">Data from %s to %s (%s)</p>`, html.EscapeString(fmtTime(d.Start)),
			html.EscapeString(fmtTime(d.End)), html.EscapeString(fmtDuration(d.End.Sub(d.Start))))
	}
	if !opt.Generated.IsZero() {
		fmt.Fprintf(b, `<p class="meta">Generated %s</p>`, html.EscapeString(fmtTime(opt.Generated)))
	}
	if opt.Note != "" {
		fmt.Fprintf(b, `<p class="note">%s</p>`, html.EscapeString(opt.Note))
	}
	procs := 0
	for _, g := range d.GPUs {
		procs += len(g.Processes)
	}
	firing := 0
	for _, i := range incs {
		if i.Resolved.IsZero() {
			firing++
		}
	}
	b.WriteString(`<ul class="counts">`)
	for _, c := range []struct {
		n     int
		label string
	}{
		{len(d.GPUs), "GPUs"}, {procs, "GPU processes"}, {len(d.Engines), "engines"},
		{len(incs), "incidents"}, {firing, "still firing"}, {len(incs) - firing, "resolved"},
		{len(d.LeakSuspects), "leak suspects"}, {d.Spans, "spans"},
	} {
		fmt.Fprintf(b, `<li><b>%d</b>%s</li>`, c.n, c.label)
	}
	b.WriteString("</ul></header>\n")
}

func writeIncidents(b *strings.Builder, incs []*incident) {
	b.WriteString(`<section id="incidents"><h2>Incidents</h2>`)
	if len(incs) == 0 {
		b.WriteString(`<p class="none">No incidents.</p>`)
	}
	for _, inc := range incs {
		writeCard(b, inc)
	}
	b.WriteString("</section>\n")
}

func writeCard(b *strings.Builder, inc *incident) {
	r := &inc.Last
	cls, badge := inc.Severity, inc.Severity
	if cls != spec.SeverityCritical {
		cls, badge = spec.SeverityWarning, spec.SeverityWarning
	}
	if !inc.Resolved.IsZero() {
		cls = "resolved"
	}
	fmt.Fprintf(b, `<article class="card %s" id="incident-%s" data-incident="%s">`, cls, html.EscapeString(inc.ID), html.EscapeString(inc.ID))
	fmt.Fprintf(b, `<div><span class="badge %s">%s</span>`, badge, html.EscapeString(badge))
	if !inc.Resolved.IsZero() {
		b.WriteString(`<span class="badge resolved">resolved</span>`)
	}
	fmt.Fprintf(b, `<span class="kind">%s</span>`, html.EscapeString(r.Kind))
	if r.Subject != "" {
		fmt.Fprintf(b, ` · %s`, html.EscapeString(r.Subject))
	}
	b.WriteString(`</div>`)
	fmt.Fprintf(b, `<p class="body">%s</p>`, html.EscapeString(r.Body))
	if r.Action != "" {
		fmt.Fprintf(b, `<p class="action"><b>Action:</b> %s</p>`, html.EscapeString(r.Action))
	}

	b.WriteString(`<dl class="facts">`)
	fact := func(k, v string) {
		if v != "" {
			fmt.Fprintf(b, `<dt>%s</dt><dd>%s</dd>`, html.EscapeString(k), html.EscapeString(v))
		}
	}
	fact("fired", fmtTime(inc.Fired))
	if !r.Start.IsZero() && r.Start.Before(inc.Fired) {
		fact("condition since", fmtTime(r.Start))
	}
	if !r.Onset.IsZero() {
		fact("fault began", fmtTime(r.Onset))
	}
	if inc.Resolved.IsZero() {
		fact("resolved", "still firing")
	} else {
		how := inc.End.Resolution
		if how == "" {
			how = "resolved"
		}
		fact("resolved", fmt.Sprintf("%s (%s after %s)", fmtTime(inc.Resolved), how, fmtDuration(inc.Resolved.Sub(inc.Fired))))
	}
	if inc.Notified > 1 {
		fact("notifications", strconv.Itoa(inc.Notified))
	}
	fact("quadrant", r.Quadrant)
	fact("score", strconv.FormatFloat(r.Score, 'f', 3, 64))
	fact("GPU", r.HwID)
	if r.PID != 0 {
		fact("process", strconv.FormatInt(r.PID, 10))
	}
	fact("pod", r.Pod)
	fact("engine", strings.TrimSpace(r.Engine+" "+r.Model))
	fact("target", r.Target)
	fact("incident id", inc.ID)
	b.WriteString(`</dl>`)
	if id := inc.End.SupersededBy; id != "" {
		fmt.Fprintf(b, `<p class="superseded" data-superseded-by="%s">Superseded by incident %s, which names the cause.</p>`,
			html.EscapeString(id), html.EscapeString(id))
	}
	if len(inc.Updates) > 0 {
		b.WriteString(`<ol class="updates">`)
		for _, u := range inc.Updates {
			fmt.Fprintf(b, `<li data-update="%d">%s: %s</li>`, u.Update, html.EscapeString(fmtTime(u.Time)), html.EscapeString(u.Change))
		}
		b.WriteString(`</ol>`)
	}
	if len(r.RuledOut) > 0 {
		b.WriteString(`<p class="ruled-out"><b>Ruled out:</b> `)
		for i, why := range r.RuledOut {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(html.EscapeString(why))
		}
		b.WriteString(`</p>`)
	}

	writeEvidence(b, r.Evidence)
	writeDrilldown(b, r)
	b.WriteString("</article>\n")
}

func writeEvidence(b *strings.Builder, ev []map[string]any) {
	if len(ev) == 0 {
		return
	}
	hasNote := false
	for _, e := range ev {
		if _, ok := e["note"]; ok {
			hasNote = true
		}
	}
	b.WriteString(`<table class="evidence"><thead><tr><th>signal</th><th>value</th><th>baseline</th><th>threshold</th><th>unit</th>`)
	if hasNote {
		b.WriteString(`<th>note</th>`)
	}
	b.WriteString(`</tr></thead><tbody>`)
	for _, e := range ev {
		unit, _ := e[spec.EvidenceUnit].(string)
		fmt.Fprintf(b, `<tr><td><code>%s</code></td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td>%s</td>`,
			html.EscapeString(fmt.Sprint(nz(e[spec.EvidenceSignal]))),
			html.EscapeString(fmtValue(e[spec.EvidenceValue], unit)),
			html.EscapeString(fmtValue(e[spec.EvidenceBaseline], unit)),
			html.EscapeString(fmtValue(e[spec.EvidenceThreshold], unit)),
			html.EscapeString(unit))
		if hasNote {
			fmt.Fprintf(b, `<td>%s</td>`, html.EscapeString(fmt.Sprint(nz(e["note"]))))
		}
		b.WriteString(`</tr>`)
	}
	b.WriteString(`</tbody></table>`)
}

func nz(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// writeDrilldown shows the chain a person follows from the alert: the GPU,
// then the profiler span the incident points at, then the model layer, with
// the layer stack as nested levels.
func writeDrilldown(b *strings.Builder, r *exported.Incident) {
	if r.HwID == "" && r.TraceID == "" && r.Layer == "" && len(r.LayerStack) == 0 && r.Drilldown == "" {
		return
	}
	b.WriteString(`<div class="drill"><b>Drill-down:</b> <span class="chain">`)
	var steps []string
	gpu := r.HwID
	if gpu == "" {
		gpu = "no GPU"
	}
	steps = append(steps, "GPU "+html.EscapeString(gpu))
	if r.TraceID != "" {
		steps = append(steps, "span "+html.EscapeString(r.SpanID)+" of trace "+html.EscapeString(r.TraceID))
	} else {
		steps = append(steps, `<span class="none">no profiler span</span>`)
	}
	if r.Layer != "" {
		steps = append(steps, "layer "+html.EscapeString(r.Layer))
	} else {
		steps = append(steps, `<span class="none">no layer</span>`)
	}
	b.WriteString(strings.Join(steps, " → "))
	b.WriteString(`</span>`)
	if r.Drilldown != "" {
		fmt.Fprintf(b, `<div>%s</div>`, html.EscapeString(r.Drilldown))
	}
	writeStack(b, r.LayerStack)
	b.WriteString(`</div>`)
}

func writeStack(b *strings.Builder, stack []exported.Layer) {
	if len(stack) == 0 {
		return
	}
	prev := ""
	for _, l := range stack {
		// Each level's path repeats its parent's; show the new part and keep
		// the full path in the tooltip.
		name := l.Path
		if prev != "" && strings.HasPrefix(name, prev+"/") {
			name = strings.TrimPrefix(name, prev+"/")
		}
		prev = l.Path
		var amount string
		switch {
		case l.Bytes > 0:
			amount = fmtBytes(float64(l.Bytes))
		case l.TimeNs > 0:
			amount = fmtSeconds(float64(l.TimeNs) / 1e9)
		}
		fmt.Fprintf(b, `<ul class="stack"><li title="%s">%s`, html.EscapeString(l.Path), html.EscapeString(name))
		if amount != "" {
			fmt.Fprintf(b, ` — <b>%s</b>`, html.EscapeString(amount))
		}
	}
	b.WriteString(strings.Repeat("</li></ul>", len(stack)))
}

func writeLeakSuspects(b *strings.Builder, sus []exported.Incident) {
	b.WriteString(`<section id="leak-suspects"><h2>Leak suspects in imported profiles</h2>`)
	if len(sus) == 0 {
		b.WriteString(`<p class="none">No imported profile left memory outstanding.</p></section>` + "\n")
		return
	}
	b.WriteString(`<table><thead><tr><th>time</th><th>layer</th><th>outstanding</th><th>span</th><th>finding</th></tr></thead><tbody>`)
	for _, s := range sus {
		out := ""
		for _, e := range s.Evidence {
			if u, _ := e[spec.EvidenceUnit].(string); u == "By" {
				out = fmtValue(e[spec.EvidenceValue], u)
				break
			}
		}
		span := "—"
		if s.TraceID != "" {
			span = s.SpanID + " of trace " + s.TraceID
		}
		fmt.Fprintf(b, `<tr><td>%s</td><td><code>%s</code></td><td class="num">%s</td><td><code>%s</code></td><td>%s`,
			html.EscapeString(fmtClock(s.Time)), html.EscapeString(s.Layer), html.EscapeString(out), html.EscapeString(span), html.EscapeString(s.Body))
		if s.Drilldown != "" {
			fmt.Fprintf(b, `<br><small>%s</small>`, html.EscapeString(s.Drilldown))
		}
		b.WriteString(`</td></tr>`)
	}
	b.WriteString("</tbody></table></section>\n")
}

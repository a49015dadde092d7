// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmops-otel/otelcol-llmops/demo/internal/exported"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func series(n int, f func(i int) float64) exported.Series {
	s := make(exported.Series, 0, n)
	for i := 0; i < n; i++ {
		s = append(s, exported.Point{T: at(i), V: f(i)})
	}
	return s
}

// synthetic is a 4-GPU node, 10 minutes, one leaking process, two engines,
// and incidents of every charted kind.
func synthetic() *exported.Data {
	const n = 600
	d := &exported.Data{
		Start:   at(0),
		End:     at(n - 1),
		GPUs:    map[string]*exported.GPU{},
		Engines: map[string]*exported.Engine{},
		Spans:   1234,
	}
	for g := 0; g < 4; g++ {
		id := "GPU-" + string(rune('a'+g)) + "3f2c0000-1111-2222-3333-444455556666"
		leak := g == 1
		proc := series(n, func(i int) float64 {
			v := 30.0 * (1 << 30)
			if leak && i > 120 {
				v += float64(i-120) * 8 * (1 << 20)
			}
			return v
		})
		gpu := &exported.GPU{
			ID: id, Name: "Fake H100",
			Memory:    series(n, func(i int) float64 { return proc[i].V + 2*(1<<30) }),
			Limit:     series(n, func(int) float64 { return 80 * (1 << 30) }),
			Processes: map[int64]*exported.Process{int64(31337 + g): {PID: int64(31337 + g), Name: "vllm", Memory: proc}},
		}
		d.GPUs[id] = gpu
	}
	for e, name := range []string{"vllm", "tgi"} {
		target := "http://127.0.0.1:800" + string(rune('0'+e)) + "/metrics"
		d.Engines[target] = &exported.Engine{
			Target: target, Name: name, Model: "llama-3-8b",
			KV:        series(n, func(i int) float64 { return math.Min(0.98, 0.3+float64(i)*0.0015*float64(e+1)) }),
			P99:       series(n, func(i int) float64 { return 0.8 + 0.3*math.Sin(float64(i)/30) + float64(e) }),
			TokenRate: series(n, func(i int) float64 { return 2500 - float64(i*e) }),
			Waiting:   series(n, func(int) float64 { return 2 }),
		}
	}
	inc := func(sec int, id, kind, sev string) exported.Incident {
		return exported.Incident{
			Time: at(sec), ID: id, Kind: kind, State: "firing", Severity: sev, Quadrant: "saturation",
			Body:    kind + " body for " + id,
			Action:  "do something about " + id,
			Subject: "subject of " + id,
			HwID:    "GPU-b3f2c0000-1111-2222-3333-444455556666", PID: 31338,
			Start: at(sec - 5), Score: 0.9,
		}
	}
	leak := inc(200, "leak1", "gpu_memory_leak", "warning")
	leak.Body = `GPU memory grows <script>alert("x")</script> & more`
	leak.TraceID, leak.SpanID = "0102030405060708090a0b0c0d0e0f10", "0a0b0c0d0e0f0001"
	leak.Layer = "LlamaForCausalLM/LlamaModel/LlamaDecoderLayer_12/LlamaAttention_12"
	leak.LayerStack = []exported.Layer{
		{Path: "LlamaForCausalLM", Bytes: 2 << 30},
		{Path: "LlamaForCausalLM/LlamaModel", Bytes: 1900 << 20},
		{Path: "LlamaForCausalLM/LlamaModel/LlamaDecoderLayer_12", Bytes: 1850 << 20},
		{Path: "LlamaForCausalLM/LlamaModel/LlamaDecoderLayer_12/LlamaAttention_12", Bytes: 1800 << 20},
	}
	leak.Evidence = []map[string]any{
		{"signal": "process.gpu.memory.usage", "value": float64(31 << 30), "baseline": float64(30 << 30), "unit": "By"},
		{"signal": "memory.growth_rate", "value": 480.0, "threshold": 80.0, "unit": "MiBy/min"},
		{"signal": "hw.gpu.memory.time_to_exhaustion", "value": 2460.0, "threshold": 3600.0, "unit": "s"},
	}
	leak.Drilldown = "profile /profiles/trace.json"
	leakCrit := leak
	leakCrit.Time, leakCrit.Severity = at(260), "critical"
	leakCrit.Update, leakCrit.Change = 1, "memory.growth_rate 480 MiBy/min → 960 MiBy/min"
	leakCrit.RuledOut = []string{"KV cache is flat (31% → 31%), so this is not KV growth"}
	kv := inc(300, "kv1", "kv_cache_saturation", "warning")
	kv.PID, kv.HwID, kv.Engine, kv.Model, kv.Target = 0, "", "vllm", "llama-3-8b", "http://127.0.0.1:8000/metrics"
	kv.LayerStack = []exported.Layer{{Path: "LlamaForCausalLM", TimeNs: 12_500_000}}
	kvRes := kv
	kvRes.Time, kvRes.State, kvRes.Body = at(420), "resolved", "resolved after 2m: kv"
	lat := inc(350, "lat1", "latency_spike", "critical")
	lat.PID = 0
	latRes := lat
	latRes.Time, latRes.State, latRes.Resolution, latRes.SupersededBy = at(360), "resolved", "superseded", "kv1"
	tput := inc(500, "tp1", "throughput_drop", "warning")
	d.Incidents = []exported.Incident{leak, leakCrit, kv, lat, latRes, kvRes, tput}
	d.LeakSuspects = []exported.Incident{{
		Time: at(100), Kind: exported.KindLeakSuspect, Layer: "LlamaForCausalLM/LlamaModel/LlamaDecoderLayer_12",
		Body: "1.8 GiB allocated in … is still outstanding", TraceID: "aa", SpanID: "bb",
		Evidence:  []map[string]any{{"signal": "llm.profile.memory.outstanding", "value": int64(1800 << 20), "unit": "By"}},
		Drilldown: "profile /profiles/trace.json",
	}}
	return d
}

func render(t *testing.T, d *exported.Data) string {
	t.Helper()
	var b strings.Builder
	if err := Write(&b, d, Options{Title: "Demo <report>", Generated: at(700), Note: "simulated node"}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var svgRE = regexp.MustCompile(`<svg class="chart" data-chart="([a-z0-9-]+)"[^>]*width="(\d+)" height="(\d+)"`)

func chartSVG(t *testing.T, page, key string) string {
	t.Helper()
	i := strings.Index(page, `data-chart="`+key+`"`)
	if i < 0 {
		t.Fatalf("chart %s missing", key)
	}
	j := strings.Index(page[i:], "</svg>")
	return page[i : i+j]
}

func TestReportContent(t *testing.T) {
	page := render(t, synthetic())
	for _, want := range []string{
		"<!DOCTYPE html>",
		`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">`,
		"<title>Demo &lt;report&gt;</title>",
		"simulated node",
		"<b>4</b>GPUs", "<b>2</b>engines", "<b>4</b>incidents", "<b>2</b>resolved", "<b>1234</b>spans", "<b>1</b>leak suspects",
		"data-rendered",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	ms := svgRE.FindAllStringSubmatch(page, -1)
	if len(ms) != 4 {
		t.Fatalf("want 4 charts, got %d", len(ms))
	}
	for i, m := range ms {
		if m[1] != ChartKeys[i] || m[2] != "960" || m[3] == "0" {
			t.Errorf("chart %d: %v", i, m[1:])
		}
	}
	pathRE := regexp.MustCompile(`<path class="series" d="M[0-9.]+,[0-9.]+L`)
	wantLines := map[string]int{ChartGPUMemory: 8, ChartKVCache: 2, ChartLatency: 2, ChartTokenRate: 2}
	wantMarkers := map[string][]string{
		ChartGPUMemory: {"leak1"}, ChartKVCache: {"kv1"}, ChartLatency: {"lat1"}, ChartTokenRate: {"tp1"},
	}
	for key, n := range wantLines {
		svg := chartSVG(t, page, key)
		if got := len(pathRE.FindAllString(svg, -1)); got != n {
			t.Errorf("%s: %d non-empty series paths, want %d", key, got, n)
		}
		if strings.Contains(svg, "no data yet") {
			t.Errorf("%s says no data", key)
		}
		got := regexp.MustCompile(`class="incident-marker" data-incident="([^"]+)"`).FindAllStringSubmatch(svg, -1)
		if len(got) != len(wantMarkers[key]) || got[0][1] != wantMarkers[key][0] {
			t.Errorf("%s markers %v, want %v", key, got, wantMarkers[key])
		}
		// Every marker has its shaded span.
		if !strings.Contains(svg, `class="incident-span" data-incident="`+wantMarkers[key][0]+`"`) {
			t.Errorf("%s: no shaded span", key)
		}
		for _, tick := range []string{">12:00:00<", ">12:05:00<", "time (UTC)"} {
			if !strings.Contains(svg, tick) {
				t.Errorf("%s: no x tick %s", key, tick)
			}
		}
	}
	// The KV marker spans firing → resolution; the leak's stays open and is
	// critical (escalated), the resolved one is drawn in the resolved colour.
	if !strings.Contains(chartSVG(t, page, ChartKVCache), `fill="`+colorResolved+`" fill-opacity="0.13"`) {
		t.Error("resolved KV incident span not shaded in the resolved colour")
	}
	if !strings.Contains(chartSVG(t, page, ChartGPUMemory), `fill="`+colorCritical+`" fill-opacity="0.07"`) {
		t.Error("open leak span not shaded as critical and open")
	}
	if !strings.Contains(chartSVG(t, page, ChartKVCache), ">100<") {
		t.Error("KV axis does not reach 100%")
	}

	// Incident cards: one per id, merged.
	if got := strings.Count(page, `<article class="card`); got != 4 {
		t.Fatalf("%d cards, want 4", got)
	}
	card := from(t, page, `id="incident-leak1"`)
	card = upTo(t, card, "</article>")
	for _, want := range []string{
		`<span class="badge critical">critical</span>`, `<span class="kind">gpu_memory_leak</span>`, "subject of leak1",
		"2025-03-01 12:03:20 UTC", "still firing", "<dt>notifications</dt><dd>2</dd>",
		"do something about leak1",
		"31.00 GiB", "30.00 GiB", "480.0 MiB/min", "41.0 min", "60.0 min",
		"GPU GPU-b3f2c0000-1111-2222-3333-444455556666 → span 0a0b0c0d0e0f0001 of trace 0102030405060708090a0b0c0d0e0f10 → layer LlamaForCausalLM/LlamaModel/LlamaDecoderLayer_12/LlamaAttention_12",
		`<li title="LlamaForCausalLM/LlamaModel/LlamaDecoderLayer_12/LlamaAttention_12">LlamaAttention_12 — <b>1.76 GiB</b>`,
		"profile /profiles/trace.json",
		`<li data-update="1">2025-03-01 12:04:20 UTC: memory.growth_rate 480 MiBy/min → 960 MiBy/min</li>`,
		"<b>Ruled out:</b> KV cache is flat (31% → 31%), so this is not KV growth",
	} {
		if !strings.Contains(card, want) {
			t.Errorf("leak card lacks %q", want)
		}
	}
	lat := upTo(t, from(t, page, `id="incident-lat1"`), "</article>")
	for _, want := range []string{"(superseded after 10s)", `<p class="superseded" data-superseded-by="kv1">Superseded by incident kv1`} {
		if !strings.Contains(lat, want) {
			t.Errorf("latency card lacks %q", want)
		}
	}
	if strings.Count(card, `<ul class="stack">`) != 4 || strings.Count(card, "</li></ul>") != 4 {
		t.Error("layer stack is not 4 nested levels")
	}
	kv := from(t, page, `<article class="card resolved" id="incident-kv1"`)
	kv = upTo(t, kv, "</article>")
	for _, want := range []string{"2025-03-01 12:07:00 UTC (resolved after 2m0s)", "kv_cache_saturation body for kv1", "12.5 ms"} {
		if !strings.Contains(kv, want) {
			t.Errorf("kv card lacks %q", want)
		}
	}
	// Escaping: the body's markup is text, and the only script is ours.
	if strings.Contains(page, `<script>alert`) {
		t.Fatal("body markup reached the page unescaped")
	}
	if !strings.Contains(page, `GPU memory grows &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; more`) {
		t.Error("escaped body missing")
	}
	if strings.Count(page, "<script>") != 1 {
		t.Errorf("%d scripts, want only the measuring one", strings.Count(page, "<script>"))
	}
	// Leak suspects.
	ls := from(t, page, `id="leak-suspects"`)
	if !strings.Contains(ls, "1.76 GiB") || !strings.Contains(ls, "LlamaForCausalLM/LlamaModel/LlamaDecoderLayer_12") {
		t.Error("leak suspect row incomplete")
	}
	// Nothing is fetched: no URL-bearing attributes other than the SVG namespace.
	for _, bad := range []string{"src=", "href=", "@import", "url(http"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
}

func TestReportEmpty(t *testing.T) {
	for _, d := range []*exported.Data{nil, {}} {
		page := render(t, d)
		ms := svgRE.FindAllStringSubmatch(page, -1)
		if len(ms) != 4 {
			t.Fatalf("want 4 charts, got %d", len(ms))
		}
		if got := strings.Count(page, "no data yet"); got != 4 {
			t.Errorf("%d charts say no data yet, want 4", got)
		}
		if !strings.Contains(page, "No incidents.") || !strings.HasSuffix(page, "</html>\n") {
			t.Error("empty page incomplete")
		}
	}
}

func TestPathBreaksAtGapsAndReduces(t *testing.T) {
	xOf := func(t time.Time) float64 { return float64(t.Sub(t0)) / float64(time.Second) }
	yOf := func(v float64) float64 { return v }
	s := exported.Series{{T: at(0), V: 1}, {T: at(1), V: 2}, {T: at(2), V: 3}, {T: at(300), V: 4}, {T: at(301), V: 5}}
	d := pathD(s, 1, xOf, yOf, 800, 301*time.Second)
	if strings.Count(d, "M") != 2 {
		t.Fatalf("want two subpaths across the gap: %s", d)
	}
	long := series(10000, func(i int) float64 { return float64(i % 7) })
	d = pathD(long, 1, func(t time.Time) float64 { return xOf(t) / 100 }, yOf, 100, 10000*time.Second)
	if n := strings.Count(d, "L") + 1; n > 4*101 {
		t.Fatalf("%d points drawn for a 100 px plot", n)
	}
	if !strings.Contains(d, ",6.0") || !strings.Contains(d, ",0.0") {
		t.Fatal("reduction lost the extremes")
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		v    any
		unit string
		want string
	}{
		{float64(1 << 30), "By", "1.00 GiB"}, {int64(5 << 20), "By", "5.0 MiB"}, {0.25, "s", "250.0 ms"},
		{3.5, "s", "3.50 s"}, {0.93, "1", "0.93"}, {float64(12), "{request}", "12"}, {nil, "By", ""},
		{float64(2 << 20), "By/s", "2.0 MiB/s"},
	} {
		if got := fmtValue(c.v, c.unit); got != c.want {
			t.Errorf("fmtValue(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
	if got := fmtTick(25000, 5000); got != "25,000" {
		t.Errorf("tick %q", got)
	}
}

// from returns s from the first sub on; the test fails when s has none.
func from(t *testing.T, s, sub string) string {
	t.Helper()
	i := strings.Index(s, sub)
	if i < 0 {
		t.Fatalf("no %q in the report", sub)
	}
	return s[i:]
}

// upTo returns s up to the first sub; the test fails when s has none.
func upTo(t *testing.T, s, sub string) string {
	t.Helper()
	i := strings.Index(s, sub)
	if i < 0 {
		t.Fatalf("no %q in the report", sub)
	}
	return s[:i]
}

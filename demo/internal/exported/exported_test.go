// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package exported

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func ts(sec float64) pcommon.Timestamp {
	return pcommon.NewTimestampFromTime(t0.Add(time.Duration(sec * float64(time.Second))))
}

func metricsLine(t *testing.T, md pmetric.Metrics) string {
	t.Helper()
	var m pmetric.JSONMarshaler
	b, err := m.MarshalMetrics(md)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func logsLine(t *testing.T, ld plog.Logs) string {
	t.Helper()
	var m plog.JSONMarshaler
	b, err := m.MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// gpuScrape is one nvml scrape of one GPU with one process.
func gpuScrape(sec float64, used, procBytes int64, reasons ...string) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(spec.AttrHwID, "GPU-0")
	rm.Resource().Attributes().PutStr(spec.AttrHwModel, "Fake H100")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	sum := func(name string, v int64) pmetric.NumberDataPoint {
		m := ms.AppendEmpty()
		m.SetName(name)
		s := m.SetEmptySum()
		s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		dp := s.DataPoints().AppendEmpty()
		dp.SetTimestamp(ts(sec))
		dp.SetIntValue(v)
		dp.Attributes().PutStr(spec.AttrHwID, "GPU-0")
		return dp
	}
	sum(spec.HwGpuMemoryUsage, used)
	sum(spec.HwGpuMemoryLimit, 80<<30)
	p := sum(spec.ProcessGpuMemoryUsage, procBytes)
	p.Attributes().PutInt(spec.AttrProcessPid, 31337)
	p.Attributes().PutStr(spec.AttrProcessExecutableName, "vllm")
	u := ms.AppendEmpty()
	u.SetName(spec.HwGpuUtilization)
	ug := u.SetEmptyGauge()
	for _, task := range []string{"general", "encoder"} {
		dp := ug.DataPoints().AppendEmpty()
		dp.SetTimestamp(ts(sec))
		dp.SetDoubleValue(0.5)
		if task == "encoder" {
			dp.SetDoubleValue(0.9)
		}
		dp.Attributes().PutStr(spec.AttrHwID, "GPU-0")
		dp.Attributes().PutStr(spec.AttrHwGpuTask, task)
	}
	if len(reasons) > 0 {
		th := ms.AppendEmpty()
		th.SetName(spec.HwGpuThrottle)
		g := th.SetEmptyGauge()
		for _, r := range reasons {
			dp := g.DataPoints().AppendEmpty()
			dp.SetTimestamp(ts(sec))
			dp.SetIntValue(1)
			dp.Attributes().PutStr(spec.AttrHwID, "GPU-0")
			dp.Attributes().PutStr(spec.AttrHwGpuThrottleKind, r)
		}
	}
	return md
}

func TestIncrementalPartialLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, MetricsFile)
	r := NewReader(dir)
	// Nothing there yet: the collector has not exported.
	if err := r.Update(); err != nil {
		t.Fatalf("missing files: %v", err)
	}
	l1 := metricsLine(t, gpuScrape(0, 10<<30, 8<<30))
	l2 := metricsLine(t, gpuScrape(1, 11<<30, 9<<30, "hw_slowdown", "sw_thermal"))
	appendFile(t, path, l1+l2[:len(l2)/2])
	if err := r.Update(); err != nil {
		t.Fatal(err)
	}
	g := r.Data().GPUs["GPU-0"]
	if g == nil || len(g.Memory) != 1 || g.Name != "Fake H100" {
		t.Fatalf("after the first line: %+v", g)
	}
	appendFile(t, path, l2[len(l2)/2:])
	if err := r.Update(); err != nil {
		t.Fatal(err)
	}
	if len(g.Memory) != 2 || g.Memory[1].V != 11<<30 || !g.Memory[1].T.Equal(t0.Add(time.Second)) {
		t.Fatalf("memory after completing the line: %+v", g.Memory)
	}
	if len(g.Limit) != 2 || len(g.Utilization) != 2 || g.Utilization[1].V != 0.5 {
		t.Fatalf("limit %v utilization %v (want general task only)", g.Limit, g.Utilization)
	}
	p := g.Processes[31337]
	if p == nil || p.Name != "vllm" || len(p.Memory) != 2 || p.Memory[1].V != 9<<30 {
		t.Fatalf("process: %+v", p)
	}
	if strings.Join(g.Throttle, ",") != "hw_slowdown,sw_thermal" || !g.ThrottleSeen.Equal(t0.Add(time.Second)) {
		t.Fatalf("throttle %v at %v", g.Throttle, g.ThrottleSeen)
	}
	d := r.Data()
	if !d.Start.Equal(t0) || !d.End.Equal(t0.Add(time.Second)) {
		t.Fatalf("range %v..%v", d.Start, d.End)
	}
	// Nothing new: nothing changes, and a re-read does not duplicate.
	if err := r.Update(); err != nil || len(g.Memory) != 2 {
		t.Fatalf("idle update: %v, %d points", err, len(g.Memory))
	}
	// Load reads the same from scratch.
	d2, err := Load(dir)
	if err != nil || len(d2.GPUs["GPU-0"].Memory) != 2 {
		t.Fatalf("Load: %v %+v", err, d2.GPUs)
	}
}

func TestBadLineReportedOthersKept(t *testing.T) {
	dir := t.TempDir()
	appendFile(t, filepath.Join(dir, MetricsFile), "not json\n"+metricsLine(t, gpuScrape(0, 1, 1)))
	d, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "format: json") {
		t.Fatalf("want an error saying how to fix the exporter, got %v", err)
	}
	if len(d.GPUs["GPU-0"].Memory) != 1 {
		t.Fatal("the good line was not applied")
	}
}

// engineScrape is one llmengine scrape: two ranks of the same target, each
// with a request-duration histogram, KV utilization and output tokens.
func engineScrape(sec float64, kv [2]float64, tokens [2]float64, hist [2][]uint64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	ra := rm.Resource().Attributes()
	ra.PutStr(spec.AttrEngineTarget, "http://127.0.0.1:8000/metrics")
	ra.PutStr(spec.AttrEngineName, spec.EngineVLLM)
	ra.PutStr(spec.AttrGenAIRequestModel, "llama-3-8b")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	kvm := ms.AppendEmpty()
	kvm.SetName(spec.EngineKvCacheUtilization)
	kvg := kvm.SetEmptyGauge()
	tok := ms.AppendEmpty()
	tok.SetName(spec.EngineTokens)
	toks := tok.SetEmptySum()
	toks.SetIsMonotonic(true)
	toks.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	hm := ms.AppendEmpty()
	hm.SetName(spec.GenAIServerRequestDuration)
	h := hm.SetEmptyHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	w := ms.AppendEmpty()
	w.SetName(spec.EngineRequestsWaiting)
	wg := w.SetEmptyGauge()
	for rank := 0; rank < 2; rank++ {
		dp := kvg.DataPoints().AppendEmpty()
		dp.SetTimestamp(ts(sec))
		dp.SetDoubleValue(kv[rank])
		dp.Attributes().PutInt(spec.AttrEngineRank, int64(rank))
		for _, typ := range []string{"input", "output"} {
			tp := toks.DataPoints().AppendEmpty()
			tp.SetTimestamp(ts(sec))
			tp.SetDoubleValue(tokens[rank])
			if typ == "input" {
				tp.SetDoubleValue(tokens[rank] * 7)
			}
			tp.Attributes().PutStr(spec.AttrGenAITokenType, typ)
			tp.Attributes().PutInt(spec.AttrEngineRank, int64(rank))
		}
		hp := h.DataPoints().AppendEmpty()
		hp.SetTimestamp(ts(sec))
		hp.ExplicitBounds().FromRaw([]float64{1, 2, 4})
		hp.BucketCounts().FromRaw(hist[rank])
		hp.Attributes().PutInt(spec.AttrEngineRank, int64(rank))
		wp := wg.DataPoints().AppendEmpty()
		wp.SetTimestamp(ts(sec))
		wp.SetIntValue(int64(3 + rank))
	}
	return md
}

func TestEngineSeries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, MetricsFile)
	var lines string
	// t=0: baseline. t=5: 100 requests all in (0,1]. t=10: 100 more, all in
	// (2,4]. t=20: 200 more in (1,2]. Counts are split over the two ranks.
	lines += metricsLine(t, engineScrape(0, [2]float64{0.2, 0.4}, [2]float64{100, 100}, [2][]uint64{{0, 0, 0, 0}, {0, 0, 0, 0}}))
	lines += metricsLine(t, engineScrape(5, [2]float64{0.3, 0.5}, [2]float64{600, 600}, [2][]uint64{{60, 0, 0, 0}, {40, 0, 0, 0}}))
	lines += metricsLine(t, engineScrape(10, [2]float64{0.9, 0.5}, [2]float64{1100, 1100}, [2][]uint64{{60, 0, 50, 0}, {40, 0, 50, 0}}))
	// Engine restarted: the counter went back to a small value.
	lines += metricsLine(t, engineScrape(20, [2]float64{0.1, 0.1}, [2]float64{50, 50}, [2][]uint64{{60, 100, 50, 0}, {40, 100, 50, 0}}))
	lines += metricsLine(t, engineScrape(22, [2]float64{0.1, 0.1}, [2]float64{250, 250}, [2][]uint64{{60, 100, 50, 0}, {40, 100, 50, 0}}))
	appendFile(t, path, lines)
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := d.Engines["http://127.0.0.1:8000/metrics"]
	if e == nil || e.Name != "vllm" || e.Model != "llama-3-8b" {
		t.Fatalf("engine: %+v", e)
	}
	if got := values(e.KV); !equalF(got, []float64{0.4, 0.5, 0.9, 0.1, 0.1}) {
		t.Fatalf("KV (max per scrape) = %v", got)
	}
	if got := values(e.Waiting); !equalF(got, []float64{7, 7, 7, 7, 7}) {
		t.Fatalf("waiting (sum per scrape) = %v", got)
	}
	// Output only, summed over ranks: 200 → 1200 → 2200 → reset → 100 → 500.
	// Rates: 1000/5, 1000/5, (reset: none), 400/2.
	if got := values(e.TokenRate); !equalF(got, []float64{200, 200, 200}) {
		t.Fatalf("token rate = %v", got)
	}
	if !e.TokenRate[2].T.Equal(t0.Add(22 * time.Second)) {
		t.Fatalf("rate after the reset at %v, want t=22s", e.TokenRate[2].T)
	}
	// p99 over the last 10 s from deltas:
	// t=5: base t=0 (oldest): 100 in (0,1] → rank 99 → 0.99.
	// t=10: base t=0: 100 in (0,1], 100 in (2,4] → rank 198 of 200 → in
	//       (2,4]: 2 + 2*(198-100)/100 = 3.96.
	// t=20: base t=10: 200 in (1,2] → rank 198 → 1 + 198/200 = 1.99.
	// t=22: base t=10 (newest ≤ 12s): the same 200 → 1.99.
	if got := values(e.P99); !equalF(got, []float64{0.99, 3.96, 1.99, 1.99}) {
		t.Fatalf("p99 = %v", got)
	}
	if len(e.TTFTP99) != 0 {
		t.Fatalf("no TTFT histogram, got %v", e.TTFTP99)
	}
}

func TestQuantileEdges(t *testing.T) {
	if _, ok := quantile(0.99, []float64{1}, []uint64{0, 0}); ok {
		t.Fatal("no observations must give no point")
	}
	if q, _ := quantile(0.99, []float64{1, 2}, []uint64{0, 0, 10}); q != 2 {
		t.Fatalf("+Inf bucket: %v, want the highest finite bound", q)
	}
}

func TestSeriesBounded(t *testing.T) {
	var s Series
	for i := 0; i < 3*MaxPoints; i++ {
		s.add(Point{T: t0.Add(time.Duration(i) * time.Second), V: float64(i)})
	}
	if len(s) > MaxPoints || len(s) < MaxPoints/4 {
		t.Fatalf("len %d", len(s))
	}
	if s[0].V != 0 || s[len(s)-1].V != 3*MaxPoints-1 {
		t.Fatalf("range lost: %v .. %v", s[0], s[len(s)-1])
	}
	for i := 1; i < len(s); i++ {
		if !s[i].T.After(s[i-1].T) {
			t.Fatalf("out of order at %d", i)
		}
	}
}

func incidentLogs(sec float64, id, state string) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "otelcol-llmops")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	// A record without incident.kind is not an incident.
	lrs.AppendEmpty().Body().SetStr("collector log")
	lr := lrs.AppendEmpty()
	lr.SetTimestamp(ts(sec))
	lr.SetSeverityNumber(plog.SeverityNumberError)
	lr.Body().SetStr("GPU memory of vllm pid 31337 grows 96 MiB/min")
	lr.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	lr.SetSpanID(pcommon.SpanID{0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 0, 1})
	a := lr.Attributes()
	a.PutStr(spec.IncidentID, id)
	a.PutStr(spec.IncidentKind, "gpu_memory_leak")
	a.PutStr(spec.IncidentQuadrant, "saturation")
	a.PutStr(spec.IncidentSeverity, "critical")
	a.PutStr(spec.IncidentState, state)
	a.PutDouble(spec.IncidentScore, 0.875)
	a.PutStr(spec.IncidentStartTime, t0.Add(3*time.Second).Format(time.RFC3339Nano))
	a.PutStr(spec.IncidentAction, "restart the pod")
	a.PutStr(spec.IncidentSubject, "process vllm pid 31337")
	ev := a.PutEmptySlice(spec.IncidentEvidence).AppendEmpty().SetEmptyMap()
	ev.PutStr("signal", spec.ProcessGpuMemoryUsage)
	ev.PutDouble("value", 9e9)
	ev.PutDouble("baseline", 8e9)
	ev.PutStr("unit", "By")
	a.PutStr(spec.IncidentLayer, "Llama/Decoder_12")
	ls := a.PutEmptySlice(spec.IncidentLayerStack)
	for i, p := range []string{"Llama", "Llama/Decoder_12"} {
		m := ls.AppendEmpty().SetEmptyMap()
		m.PutStr("module_path", p)
		m.PutInt("bytes", int64(2-i)<<30)
	}
	a.PutStr(spec.IncidentDrilldown, "profile /prof/trace.json")
	a.PutStr(spec.AttrHwID, "GPU-0")
	a.PutInt(spec.AttrProcessPid, 31337)
	a.PutStr(spec.AttrK8sPodName, "vllm-0")
	a.PutStr(spec.AttrEngineName, "vllm")
	a.PutStr(spec.AttrEngineTarget, "http://127.0.0.1:8000/metrics")
	a.PutStr(spec.AttrGenAIRequestModel, "llama-3-8b")

	sus := lrs.AppendEmpty()
	sus.SetTimestamp(ts(sec))
	sus.Body().SetStr("1.8 GiB allocated in Llama/Decoder_12 is still outstanding")
	sa := sus.Attributes()
	sa.PutStr(spec.IncidentID, "s-"+id)
	sa.PutStr(spec.IncidentKind, KindLeakSuspect)
	sa.PutStr(spec.AttrProfileModulePath, "Llama/Decoder_12")
	sa.PutStr(spec.AttrProfileFile, "/prof/trace.json")
	return ld
}

func TestIncidents(t *testing.T) {
	dir := t.TempDir()
	appendFile(t, filepath.Join(dir, LogsFile),
		logsLine(t, incidentLogs(4, "inc1", "firing"))+logsLine(t, incidentLogs(9, "inc1", "resolved")))
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	ss.Spans().AppendEmpty()
	ss.Spans().AppendEmpty()
	var tm ptrace.JSONMarshaler
	b, err := tm.MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, filepath.Join(dir, TracesFile), string(b)+"\n"+string(b)+"\n")

	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Spans != 4 {
		t.Fatalf("spans %d", d.Spans)
	}
	if len(d.Incidents) != 2 || len(d.LeakSuspects) != 2 {
		t.Fatalf("incidents %d, leak suspects %d", len(d.Incidents), len(d.LeakSuspects))
	}
	inc := d.Incidents[0]
	if inc.ID != "inc1" || inc.Kind != "gpu_memory_leak" || inc.State != "firing" || inc.Severity != "critical" ||
		inc.Quadrant != "saturation" || inc.Action != "restart the pod" || inc.Subject != "process vllm pid 31337" ||
		inc.HwID != "GPU-0" || inc.PID != 31337 || inc.Pod != "vllm-0" || inc.Engine != "vllm" ||
		inc.Model != "llama-3-8b" || inc.Target != "http://127.0.0.1:8000/metrics" || inc.Score != 0.875 ||
		inc.Layer != "Llama/Decoder_12" || inc.Drilldown != "profile /prof/trace.json" {
		t.Fatalf("incident fields: %+v", inc)
	}
	if !inc.Time.Equal(t0.Add(4*time.Second)) || !inc.Start.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("times: %v %v", inc.Time, inc.Start)
	}
	if inc.TraceID != "0102030405060708090a0b0c0d0e0f10" || inc.SpanID != "0a0b0c0d0e0f0001" {
		t.Fatalf("ids %q %q", inc.TraceID, inc.SpanID)
	}
	if len(inc.Evidence) != 1 || inc.Evidence[0]["signal"] != spec.ProcessGpuMemoryUsage || inc.Evidence[0]["baseline"] != 8e9 {
		t.Fatalf("evidence %v", inc.Evidence)
	}
	if len(inc.LayerStack) != 2 || inc.LayerStack[1] != (Layer{Path: "Llama/Decoder_12", Bytes: 1 << 30}) {
		t.Fatalf("layer stack %+v", inc.LayerStack)
	}
	if d.Incidents[1].State != "resolved" {
		t.Fatalf("second record %+v", d.Incidents[1])
	}
	s := d.LeakSuspects[0]
	if s.Layer != "Llama/Decoder_12" || s.Drilldown != "profile /prof/trace.json" || s.TraceID != "" || s.PID != 0 {
		t.Fatalf("leak suspect %+v", s)
	}
	if !d.End.Equal(t0.Add(9 * time.Second)) {
		t.Fatalf("end %v", d.End)
	}
}

func values(s Series) []float64 {
	out := make([]float64, len(s))
	for i, p := range s {
		out[i] = p.V
	}
	return out
}

func equalF(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kinetobuild

import (
	"bytes"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kineto"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

const (
	us  = int64(1000) // ns per µs
	MiB = int64(1 << 20)
	cpu = int64(100) // pid and tid of the constructed CPU thread
)

// evb builds constructed events.
type evb struct{ evs []kineto.Event }

func newEvent(ph byte, cat, name string, pid, tid, ts, dur int64) kineto.Event {
	e := kineto.Event{Phase: ph, Cat: cat, Name: name, Pid: pid, Tid: tid, TsNs: ts * us, DurNs: dur * us, HasDur: ph == 'X'}
	e.Args.Reset()
	return e
}

func (b *evb) x(cat, name string, pid, tid, ts, dur int64, f func(a *kineto.Args)) {
	e := newEvent('X', cat, name, pid, tid, ts, dur)
	if f != nil {
		f(&e.Args)
	}
	b.evs = append(b.evs, e)
}

func (b *evb) py(name string, ts, dur, id, parent int64) {
	b.x("python_function", name, cpu, cpu, ts, dur, func(a *kineto.Args) { a.PythonID, a.PythonParentID = id, parent })
}

func (b *evb) op(name string, ts, dur int64) { b.x("cpu_op", name, cpu, cpu, ts, dur, nil) }

func (b *evb) launch(ts, dur, corr int64) {
	b.x("cuda_runtime", "cudaLaunchKernel", cpu, cpu, ts, dur, func(a *kineto.Args) { a.Correlation = corr; a.ExternalID = corr })
}

func (b *evb) kernel(name string, ts, dur, corr int64) {
	b.x("kernel", name, 0, 7, ts, dur, func(a *kineto.Args) {
		a.Correlation, a.Device, a.Stream = corr, 0, 7
		a.Grid, a.Block = "[24, 1, 1]", "[128, 1, 1]"
	})
}

func (b *evb) flow(ph byte, id string, pid, tid, ts int64) {
	e := newEvent(ph, "ac2g", "ac2g", pid, tid, ts, 0)
	e.ID = id
	if ph == 'f' {
		e.BindPoint = "e"
	}
	b.evs = append(b.evs, e)
}

func (b *evb) mem(tid, ts, addr, bytes, devType int64) {
	e := newEvent('i', "cpu_instant_event", "[memory]", cpu, tid, ts, 0)
	e.Args.Addr, e.Args.Bytes, e.Args.DeviceType, e.Args.DeviceID = addr, bytes, devType, 0
	e.Args.TotalAllocated, e.Args.TotalReserved = 1<<30, 2<<30
	b.evs = append(b.evs, e)
}

// build feeds the events through a reused Event, as the parser does.
func build(t testing.TB, opts Options, evs []kineto.Event, md kineto.Metadata, file string) Result {
	t.Helper()
	b := NewBuilder(opts)
	var scratch kineto.Event
	for i := range evs {
		scratch = evs[i]
		if err := b.Event(&scratch); err != nil {
			t.Fatal(err)
		}
		scratch.Name = "clobbered" // the builder must have copied what it keeps
	}
	res, err := b.Finish(md, file)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func noMeta() kineto.Metadata { return kineto.Metadata{Rank: -1, WorldSize: -1} }

// spanIndex finds spans by name (first match wins) and by id.
type spanIndex struct {
	byName map[string]ptrace.Span
	byID   map[pcommon.SpanID]ptrace.Span
	all    []ptrace.Span
}

func indexSpans(td ptrace.Traces) spanIndex {
	ix := spanIndex{byName: map[string]ptrace.Span{}, byID: map[pcommon.SpanID]ptrace.Span{}}
	ss := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < ss.Len(); i++ {
		s := ss.At(i)
		if _, ok := ix.byName[s.Name()]; !ok {
			ix.byName[s.Name()] = s
		}
		ix.byID[s.SpanID()] = s
		ix.all = append(ix.all, s)
	}
	return ix
}

// chain is the names from s up to the root (root excluded).
func (ix spanIndex) chain(s ptrace.Span) []string {
	var out []string
	for {
		out = append(out, s.Name())
		p, ok := ix.byID[s.ParentSpanID()]
		if !ok || p.ParentSpanID().IsEmpty() {
			return out
		}
		s = p
	}
}

func strAttr(s ptrace.Span, k string) string {
	v, ok := s.Attributes().Get(k)
	if !ok {
		return ""
	}
	return v.AsString()
}

// toyModel: ProfilerStep#1 > Toy_0 > (bare frame) > Linear_0 > aten::linear >
// aten::addmm > cudaLaunchKernel ~ gemm (by correlation); Linear_1 > aten::mm >
// cudaLaunchKernel ~ gemm2 (by ac2g flow only); an orphan kernel.
func toyModel() []kineto.Event {
	var b evb
	b.x("user_annotation", "ProfilerStep#1", cpu, cpu, 0, 1000, func(a *kineto.Args) { a.ExternalID = 1 })
	b.py("nn.Module: Toy_0", 10, 900, 1, -1)
	b.py("torch/nn/modules/module.py(1773): _call_impl", 20, 800, 2, 1)
	b.py("nn.Module: Linear_0", 30, 400, 3, 2)
	b.op("aten::linear", 40, 300)
	b.op("aten::addmm", 50, 200)
	b.launch(60, 20, 500)
	b.flow('s', "500", cpu, cpu, 60)
	b.kernel("gemm", 100, 50, 500)
	b.flow('f', "500", 0, 7, 100)
	b.py("nn.Module: Linear_1", 500, 300, 4, 2)
	b.op("aten::mm", 510, 200)
	b.launch(520, 10, 501)
	b.flow('s', "501", cpu, cpu, 520)
	b.flow('f', "501", 0, 7, 600)
	b.kernel("gemm2", 600, 40, -1)
	b.kernel("orphan", 950, 10, 999)
	return b.evs
}

func TestParentChainsAndModulePaths(t *testing.T) {
	res := build(t, DefaultOptions(), toyModel(), noMeta(), "/tmp/toy.json")
	ix := indexSpans(res.Traces)
	want := map[string]string{
		"gemm":   "gemm<cudaLaunchKernel<aten::addmm<aten::linear<nn.Module: Linear_0<nn.Module: Toy_0<ProfilerStep#1",
		"gemm2":  "gemm2<cudaLaunchKernel<aten::mm<nn.Module: Linear_1<nn.Module: Toy_0<ProfilerStep#1",
		"orphan": "orphan<ProfilerStep#1",
	}
	for k, w := range want {
		if got := strings.Join(ix.chain(ix.byName[k]), "<"); got != w {
			t.Errorf("%s chain = %s, want %s", k, got, w)
		}
	}
	paths := map[string]string{"gemm": "Toy_0/Linear_0", "gemm2": "Toy_0/Linear_1", "aten::addmm": "Toy_0/Linear_0",
		"Linear_0": "", "nn.Module: Toy_0": "Toy_0", "ProfilerStep#1": "", "orphan": ""}
	paths["nn.Module: Linear_0"] = "Toy_0/Linear_0"
	delete(paths, "Linear_0")
	for k, w := range paths {
		if got := strAttr(ix.byName[k], spec.AttrProfileModulePath); got != w {
			t.Errorf("%s module path = %q, want %q", k, got, w)
		}
	}
	if _, ok := ix.byName["torch/nn/modules/module.py(1773): _call_impl"]; ok {
		t.Error("bare Python frame should be folded")
	}
	g := ix.byName["gemm"]
	if d, _ := g.Attributes().Get(spec.AttrProfileDevice); d.Int() != 0 || strAttr(g, spec.AttrProfileGrid) != "[24, 1, 1]" || strAttr(g, spec.AttrProfileCategory) != "kernel" {
		t.Errorf("kernel attributes: %v", g.Attributes().AsRaw())
	}
	if g.Kind() != ptrace.SpanKindInternal || g.StartTimestamp() != pcommon.Timestamp(100*us) || g.EndTimestamp() != pcommon.Timestamp(150*us) {
		t.Errorf("kernel span kind/time: %v %v %v", g.Kind(), g.StartTimestamp(), g.EndTimestamp())
	}
	st := res.Stats
	if st.KernelsWithoutLauncher != 1 || st.KernelsLinkedByFlow != 1 || st.SpansFolded != 1 {
		t.Errorf("stats: %+v", st)
	}
	// root + 12 spans (13 X events minus the folded frame).
	if st.Spans != 13 || len(ix.all) != 13 || st.SpansDropped != 0 {
		t.Errorf("spans = %d (%d), dropped %d", st.Spans, len(ix.all), st.SpansDropped)
	}
	if st.SpansByKind["kernel"] != 3 || st.SpansByKind["python_function"] != 3 || st.SpansByKind["cpu_op"] != 3 {
		t.Errorf("spans by kind: %v", st.SpansByKind)
	}
	if st.EventsByCategory["ac2g"] != 4 || st.Events != int64(len(toyModel())) {
		t.Errorf("events by category: %v", st.EventsByCategory)
	}
	for _, s := range ix.all {
		if s.TraceID() != res.TraceID || s.TraceID().IsEmpty() {
			t.Fatalf("span %s trace id %v", s.Name(), s.TraceID())
		}
	}

	// Without folding the bare frame is a span between Toy_0 and Linear_0,
	// and the module path is unchanged.
	opts := DefaultOptions()
	opts.FoldPythonFrames = false
	ix = indexSpans(build(t, opts, toyModel(), noMeta(), "/tmp/toy.json").Traces)
	if got := strings.Join(ix.chain(ix.byName["nn.Module: Linear_0"]), "<"); got != "nn.Module: Linear_0<torch/nn/modules/module.py(1773): _call_impl<nn.Module: Toy_0<ProfilerStep#1" {
		t.Errorf("unfolded chain = %s", got)
	}
	// MinDuration folds the short runtime call: the kernel hangs off the op.
	opts = DefaultOptions()
	opts.MinDuration = 25 * 1000
	ix = indexSpans(build(t, opts, toyModel(), noMeta(), "/tmp/toy.json").Traces)
	if got := strings.Join(ix.chain(ix.byName["gemm"]), "<"); got != "gemm<aten::addmm<aten::linear<nn.Module: Linear_0<nn.Module: Toy_0<ProfilerStep#1" {
		t.Errorf("MinDuration chain = %s", got)
	}
}

func TestTimeContainmentWithoutPythonIDs(t *testing.T) {
	// Same start, longest first; a second thread is independent.
	var b evb
	b.op("outer", 0, 100)
	b.op("inner", 0, 50)
	b.op("inner2", 50, 50)
	b.op("leaf", 60, 10)
	b.x("cpu_op", "other_thread", cpu, 200, 10, 10, nil)
	ix := indexSpans(build(t, DefaultOptions(), b.evs, noMeta(), "x.json").Traces)
	for k, w := range map[string]string{"leaf": "leaf<inner2<outer", "inner": "inner<outer", "other_thread": "other_thread"} {
		if got := strings.Join(ix.chain(ix.byName[k]), "<"); got != w {
			t.Errorf("%s chain = %s, want %s", k, got, w)
		}
	}
}

func TestDeterministicIDs(t *testing.T) {
	marshal := func(r Result) []byte {
		var m ptrace.ProtoMarshaler
		b, err := m.MarshalTraces(r.Traces)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a := build(t, DefaultOptions(), toyModel(), noMeta(), "/data/toy.json")
	b := build(t, DefaultOptions(), toyModel(), noMeta(), "/other/dir/toy.json")
	if a.TraceID != b.TraceID {
		t.Fatalf("trace ids differ: %v %v", a.TraceID, b.TraceID)
	}
	if !bytes.Equal(marshal(a), marshal(build(t, DefaultOptions(), toyModel(), noMeta(), "/data/toy.json"))) {
		t.Error("two builds of the same input differ")
	}
	c := build(t, DefaultOptions(), toyModel(), noMeta(), "/data/toy2.json")
	if c.TraceID == a.TraceID {
		t.Error("different file name should give a different trace id")
	}
	seen := map[pcommon.SpanID]bool{}
	for _, s := range indexSpans(a.Traces).all {
		if seen[s.SpanID()] || s.SpanID().IsEmpty() {
			t.Fatalf("duplicate or empty span id %v", s.SpanID())
		}
		seen[s.SpanID()] = true
	}
	md := noMeta()
	md.TraceID = "C3AB6FAA-14D6-4629-9C1D-8365B14308AD"
	if got := build(t, DefaultOptions(), toyModel(), md, "t.json").TraceID.String(); got != "c3ab6faa14d646299c1d8365b14308ad" {
		t.Errorf("trace id from metadata = %s", got)
	}
	md = noMeta()
	md.TraceID = "not-an-id"
	md.Extra = []kineto.KV{{Key: "otel.trace_id", Value: "0af7651916cd43dd8448eb211c80319c"}}
	if got := build(t, DefaultOptions(), toyModel(), md, "t.json").TraceID.String(); got != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("trace id from otel.trace_id = %s", got)
	}
}

func TestFinishTwice(t *testing.T) {
	b := NewBuilder(DefaultOptions())
	if _, err := b.Finish(noMeta(), "a.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Finish(noMeta(), "a.json"); err == nil {
		t.Error("second Finish should fail")
	}
}

func TestSpanBudget(t *testing.T) {
	opts := DefaultOptions()
	opts.SpanBudget = 6
	res := build(t, opts, toyModel(), noMeta(), "toy.json")
	ix := indexSpans(res.Traces)
	if res.Stats.Spans != 6 || len(ix.all) != 6 || res.Stats.SpansDropped != 12-5 {
		t.Fatalf("spans %d (%d) dropped %d", res.Stats.Spans, len(ix.all), res.Stats.SpansDropped)
	}
	// root, step, 3 module frames, then the op with the most GPU time below
	// it (aten::linear and aten::addmm both have 50 µs; the longer wins).
	for _, n := range []string{"toy.json", "ProfilerStep#1", "nn.Module: Toy_0", "nn.Module: Linear_0", "nn.Module: Linear_1", "aten::linear"} {
		if _, ok := ix.byName[n]; !ok {
			t.Errorf("%s not kept", n)
		}
	}
	// Launch + kernel come as a pair after the ops with GPU time.
	opts.SpanBudget = 11
	ix = indexSpans(build(t, opts, toyModel(), noMeta(), "toy.json").Traces)
	if got := strings.Join(ix.chain(ix.byName["gemm"]), "<"); got != "gemm<cudaLaunchKernel<aten::addmm<aten::linear<nn.Module: Linear_0<nn.Module: Toy_0<ProfilerStep#1" {
		t.Errorf("gemm chain under budget = %s", got)
	}
	if _, ok := ix.byName["orphan"]; ok {
		t.Error("orphan kernel should be dropped first")
	}
	// A kept span whose parent is dropped hangs off its nearest kept ancestor.
	opts.SpanBudget = 4
	ix = indexSpans(build(t, opts, toyModel(), noMeta(), "toy.json").Traces)
	if got := strings.Join(ix.chain(ix.byName["nn.Module: Linear_0"]), "<"); got != "nn.Module: Linear_0<nn.Module: Toy_0<ProfilerStep#1" {
		t.Errorf("chain = %s", got)
	}
}

func TestLegacyCategories(t *testing.T) {
	var b evb
	b.x("Operator", "aten::mm", cpu, cpu, 0, 100, func(a *kineto.Args) { a.ExternalID = 1; a.CallStack = "model.py(3): forward;train.py(9): step" })
	b.x("Runtime", "cudaLaunchKernel", cpu, cpu, 10, 5, func(a *kineto.Args) { a.ExternalID, a.Correlation = 1, 7 })
	b.x("Runtime", "cudaMemcpyAsync", cpu, cpu, 20, 5, func(a *kineto.Args) { a.ExternalID, a.Correlation = 1, 8 })
	b.x("Runtime", "cudaMemsetAsync", cpu, cpu, 30, 5, func(a *kineto.Args) { a.ExternalID, a.Correlation = 1, 9 })
	b.x("Kernel", "volta_sgemm", 0, 7, 40, 20, func(a *kineto.Args) { a.ExternalID, a.Correlation, a.Device, a.Stream = 1, 7, 0, 7 })
	b.x("Memcpy", "Memcpy HtoD", 0, 7, 60, 20, func(a *kineto.Args) { a.ExternalID, a.Correlation, a.Device = 1, 8, 0 })
	b.x("Memset", "Memset", 0, 7, 80, 20, func(a *kineto.Args) { a.ExternalID, a.Correlation, a.Device = 1, 9, 0 })
	res := build(t, DefaultOptions(), b.evs, noMeta(), "legacy.json")
	ix := indexSpans(res.Traces)
	for k, w := range map[string]string{
		"volta_sgemm": "volta_sgemm<cudaLaunchKernel<aten::mm",
		"Memcpy HtoD": "Memcpy HtoD<cudaMemcpyAsync<aten::mm",
		"Memset":      "Memset<cudaMemsetAsync<aten::mm",
	} {
		if got := strings.Join(ix.chain(ix.byName[k]), "<"); got != w {
			t.Errorf("%s chain = %s, want %s", k, got, w)
		}
	}
	if c := strAttr(ix.byName["volta_sgemm"], spec.AttrProfileCategory); c != "Kernel" {
		t.Errorf("category = %q", c)
	}
	if c := strAttr(ix.byName["aten::mm"], spec.AttrProfileCallStack); !strings.Contains(c, "model.py(3)") {
		t.Errorf("call stack = %q", c)
	}
	if res.Stats.KernelsWithoutLauncher != 0 || res.Stats.Spans != 8 {
		t.Errorf("stats %+v", res.Stats)
	}
}

// leakModel: Toy/Leaky_0 allocates 10 × 100 MiB and frees nothing;
// Toy/Fine_0 allocates 5 × 200 MiB and frees each.
func leakModel() []kineto.Event {
	var b evb
	b.x("user_annotation", "ProfilerStep#7", cpu, cpu, 0, 10000, nil)
	b.py("nn.Module: Toy", 10, 9000, 1, -1)
	b.py("nn.Module: Leaky_0", 100, 2000, 2, 1)
	for i := int64(0); i < 10; i++ {
		ts := 110 + i*100
		b.op("aten::empty", ts, 50)
		b.mem(cpu, ts+10, 0x7f0000000000+i*0x10000000, 100*MiB, 1)
	}
	b.py("nn.Module: Fine_0", 3000, 3000, 3, 1)
	for i := int64(0); i < 5; i++ {
		ts := 3010 + i*200
		b.op("aten::empty", ts, 50)
		b.mem(cpu, ts+10, 0x7e0000000000, 200*MiB, 1)
		b.op("aten::add", ts+100, 50)
		b.mem(cpu, ts+110, 0x7e0000000000, -200*MiB, 1) // freed inside another op: still Fine_0's
	}
	b.mem(cpu, 8000, 0x1234, -4096, 1)            // free of an unknown address
	b.mem(cpu, 8001, 0x99, 1<<30, 0)              // CPU memory: skipped
	b.mem(300, 8002, 0x7d0000000000, 512*1024, 1) // thread without spans
	return b.evs
}

func TestKnownLeak(t *testing.T) {
	res := build(t, DefaultOptions(), leakModel(), noMeta(), "/profiles/leak.json")
	mods := map[string]ModuleMemory{}
	for _, m := range res.Modules {
		mods[m.ModulePath] = m
	}
	if m := mods["Toy/Leaky_0"]; m.OutstandingBytes != 1000*MiB || m.AllocatedBytes != 1000*MiB || m.Allocations != 10 || m.OutstandingAllocations != 10 || m.PeakOutstandingBytes != 1000*MiB {
		t.Errorf("Leaky_0 = %+v", m)
	}
	if m := mods["Toy/Fine_0"]; m.OutstandingBytes != 0 || m.AllocatedBytes != 1000*MiB || m.Allocations != 5 || m.PeakOutstandingBytes != 200*MiB {
		t.Errorf("Fine_0 = %+v", m)
	}
	if m := mods[signals.UnattributedPath]; m.AllocatedBytes != 512*1024 || len(res.Modules) != 3 {
		t.Errorf("modules = %+v", res.Modules)
	}
	st := res.Stats
	if st.UnmatchedFrees != 1 || st.UnmatchedFreeBytes != 4096 || st.CPUMemoryEvents != 1 || st.GPUMemoryEvents != 22 || st.MemoryEvents != 23 || st.UnattributedAllocs != 1 {
		t.Errorf("stats %+v", st)
	}

	// Metrics.
	got := map[string]map[string]int64{}
	ms := res.Metrics.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		if m.Type() != pmetric.MetricTypeSum {
			continue
		}
		if m.Unit() != "By" || m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
			t.Errorf("%s unit/temporality", m.Name())
		}
		if m.Sum().IsMonotonic() != (m.Name() == spec.ProfileMemoryAllocated) {
			t.Errorf("%s monotonic = %v", m.Name(), m.Sum().IsMonotonic())
		}
		got[m.Name()] = map[string]int64{}
		for j := 0; j < m.Sum().DataPoints().Len(); j++ {
			dp := m.Sum().DataPoints().At(j)
			p, _ := dp.Attributes().Get(spec.AttrProfileModulePath)
			f, _ := dp.Attributes().Get(spec.AttrProfileFile)
			d, ok := dp.Attributes().Get(spec.AttrProfileDevice)
			if f.Str() != "/profiles/leak.json" || !ok || d.Int() != 0 {
				t.Errorf("attributes %v", dp.Attributes().AsRaw())
			}
			got[m.Name()][p.Str()] = dp.IntValue()
		}
	}
	if o := got[spec.ProfileMemoryOutstanding]; o["Toy/Leaky_0"] != 1000*MiB || o["Toy/Fine_0"] != 0 {
		t.Errorf("outstanding = %v", o)
	}
	if a := got[spec.ProfileMemoryAllocated]; a["Toy/Leaky_0"] != 1000*MiB || a["Toy/Fine_0"] != 1000*MiB {
		t.Errorf("allocated = %v", a)
	}
	gauges := 0
	for i := 0; i < ms.Len(); i++ {
		if m := ms.At(i); m.Type() == pmetric.MetricTypeGauge {
			gauges++
			if n := m.Gauge().DataPoints().Len(); n != 22 {
				t.Errorf("%s points = %d", m.Name(), n)
			}
		}
	}
	if gauges != 2 {
		t.Errorf("gauges = %d", gauges)
	}

	// Leak suspects: Toy/Leaky_0 only, pointing at the first aten::empty
	// of Leaky_0 (equal sizes: the earliest wins).
	lrs := res.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	if lrs.Len() != 1 {
		t.Fatalf("leak records = %d", lrs.Len())
	}
	lr := lrs.At(0)
	attrs := lr.Attributes().AsRaw()
	if attrs[spec.IncidentKind] != "leak_suspect" || attrs[spec.AttrProfileModulePath] != "Toy/Leaky_0" || attrs[spec.AttrProfileOutstandingBytes] != 1000*MiB || attrs[spec.AttrProfileOutstandingAllocations] != int64(10) || attrs[spec.AttrProfileDevice] != int64(0) || attrs[spec.AttrProfileFile] != "/profiles/leak.json" {
		t.Errorf("attributes %v", attrs)
	}
	if lr.SeverityNumber() != plog.SeverityNumberWarn || lr.SeverityText() != "WARN" {
		t.Errorf("severity %v %q", lr.SeverityNumber(), lr.SeverityText())
	}
	if b := lr.Body().Str(); !strings.HasPrefix(b, "1000 MiB allocated in Toy/Leaky_0 on GPU 0 during the profile is still outstanding at its end (10 allocations") {
		t.Errorf("body %q", b)
	}
	ix := indexSpans(res.Traces)
	var first ptrace.Span
	for _, s := range ix.all {
		if s.Name() == "aten::empty" && s.StartTimestamp() == pcommon.Timestamp(110*us) {
			first = s
		}
	}
	if lr.TraceID() != res.TraceID || lr.SpanID() != first.SpanID() || first.SpanID().IsEmpty() {
		t.Errorf("leak ids %v/%v, want %v/%v", lr.TraceID(), lr.SpanID(), res.TraceID, first.SpanID())
	}
	if p := strAttr(first, spec.AttrProfileModulePath); p != "Toy/Leaky_0" {
		t.Errorf("span path %q", p)
	}

	// The largest outstanding allocation wins over the earliest.
	evs := leakModel()
	for i := range evs {
		if evs[i].Name == "[memory]" && evs[i].TsNs == 520*us {
			evs[i].Args.Bytes = 150 * MiB
		}
	}
	res = build(t, DefaultOptions(), evs, noMeta(), "/profiles/leak.json")
	lr = res.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	if s := indexSpans(res.Traces).byID[lr.SpanID()]; s.StartTimestamp() != pcommon.Timestamp(510*us) {
		t.Errorf("leak span starts at %v, want the 150 MiB allocation's op", s.StartTimestamp())
	}

	// Under a tiny span budget the leak points at the nearest kept span.
	opts := DefaultOptions()
	opts.SpanBudget = 3
	res = build(t, opts, leakModel(), noMeta(), "/profiles/leak.json")
	lr = res.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	if s, ok := indexSpans(res.Traces).byID[lr.SpanID()]; !ok || s.Name() != "nn.Module: Toy" {
		t.Errorf("leak span under budget = %q (%v)", s.Name(), ok)
	}
	if m := res.Modules; len(m) != 3 {
		t.Errorf("memory attribution must not depend on the budget: %+v", m)
	}
	opts = DefaultOptions()
	opts.MinLeakBytes = 2000 * MiB
	if n := build(t, opts, leakModel(), noMeta(), "x").Logs.LogRecordCount(); n != 0 {
		t.Errorf("MinLeakBytes: %d records", n)
	}
}

func TestResourceAttributes(t *testing.T) {
	md := kineto.Metadata{Rank: 1, WorldSize: 2,
		Devices: []kineto.DeviceProperty{{ID: 0, Name: "Tesla V100"}, {ID: 1, Name: "Tesla V100"}},
		Extra:   []kineto.KV{{Key: "host_name", Value: "node-1"}}, HasBaseTime: true, BaseTimeNs: 1_700_000_000_000_000_000}
	res := build(t, DefaultOptions(), leakModel(), md, "/p/leak.json")
	for _, r := range []pcommon.Resource{res.Traces.ResourceSpans().At(0).Resource(), res.Metrics.ResourceMetrics().At(0).Resource(), res.Logs.ResourceLogs().At(0).Resource()} {
		a := r.Attributes().AsRaw()
		if a["host.name"] != "node-1" || a[spec.AttrProcessPid] != cpu || a[spec.AttrProfileFile] != "/p/leak.json" || a[spec.AttrProfileRank] != int64(1) || a[spec.AttrProfileWorldSize] != int64(2) || a["service.name"] != "pytorch-profiler" {
			t.Errorf("resource %v", a)
		}
		if n, _ := r.Attributes().Get(spec.AttrProfileGPUNames); n.Slice().Len() != 2 {
			t.Errorf("gpu names %v", a)
		}
	}
	s := indexSpans(res.Traces).byName["ProfilerStep#7"]
	if s.StartTimestamp() != pcommon.Timestamp(md.BaseTimeNs) || s.EndTimestamp() != pcommon.Timestamp(md.BaseTimeNs+10000*us) {
		t.Errorf("base time not applied: %v", s.StartTimestamp())
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kinetobuild

import (
	"testing"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kineto"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
)

const fixtureDir = "../../../../shared/fixtures/traces"

func fixture(t testing.TB, name string) string {
	return testutil.SharedFixture(t, fixtureDir, name)
}

// buildFile parses a fixture straight into a builder.
func buildFile(t testing.TB, name string, opts Options) Result {
	t.Helper()
	p := fixture(t, name)
	b := NewBuilder(opts)
	md, err := kineto.ParseFile(p, kineto.Options{}, b)
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Finish(md, p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestFixtures(t *testing.T) {
	// Span-eligible events per kind, counted with python3 on the gunzipped
	// JSON ('X' events by cat; python_function only "nn.Module: " frames;
	// cuda_runtime and cuda_driver both count as runtime), plus the root.
	want := map[string]map[string]int64{
		"hta-df_index_resolver.json.gz":            {"annotation": 2035, "cpu_op": 56680, "kernel": 19370, "memcpy": 2040, "memset": 880, "runtime": 42373},
		"hta-ns_resolution-rank0.pt.trace.json.gz": {"annotation": 70, "cpu_op": 23910, "gpu_annotation": 15, "kernel": 4350, "memcpy": 1600, "memset": 145, "runtime": 15329},
		"hta-rank_non_gpu-legacy.json.gz":          {"annotation": 43, "cpu_op": 2424},
		"hta-simple_add.json.gz":                   {"annotation": 8, "cpu_op": 359, "kernel": 79, "memcpy": 16, "memset": 3, "runtime": 331, "sync": 41},
		"tracelens-b200_eager.json.gz":             {"annotation": 3, "cpu_op": 4809, "gpu_annotation": 3, "kernel": 768, "memcpy": 161, "python_function": 436, "runtime": 1372},
		"tracelens-sglang_qwen3_decode.json.gz":    {"annotation": 2, "cpu_op": 61, "kernel": 555, "memcpy": 3, "python_function": 1, "runtime": 29},
	}
	for name, kinds := range want {
		t.Run(name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.SpanBudget = 1 << 30
			res := buildFile(t, name, opts)
			total := int64(1)
			for k, n := range kinds {
				total += n
				if got := res.Stats.SpansByKind[k]; got != n {
					t.Errorf("%s spans = %d, want %d", k, got, n)
				}
			}
			if res.Stats.Spans != total || int64(res.Traces.SpanCount()) != total || res.Stats.SpansDropped != 0 {
				t.Errorf("spans = %d (%d), want %d", res.Stats.Spans, res.Traces.SpanCount(), total)
			}
			if len(res.Stats.SpansByKind) != len(kinds) {
				t.Errorf("spans by kind %v", res.Stats.SpansByKind)
			}
			t.Logf("stats: %+v", res.Stats)
		})
	}
}

func TestFixtureDFIndexResolverMemory(t *testing.T) {
	res := buildFile(t, "hta-df_index_resolver.json.gz", DefaultOptions())
	// python3 -c "import gzip,json,collections; s=collections.Counter();
	//   [s.update({e['args']['Device Id']: e['args']['Bytes']}) for e in
	//    json.load(gzip.open('/work/shared/fixtures/traces/hta-df_index_resolver.json.gz'))['traceEvents']
	//    if e.get('name')=='[memory]' and e['args'].get('Device Type')==1 and e['args']['Bytes']>0];
	//   print(dict(s))"
	// -> {1: 52469120000}
	want := map[int64]int64{1: 52469120000}
	got := map[int64]int64{}
	for _, m := range res.Modules {
		got[m.Device] += m.AllocatedBytes
	}
	if len(got) != len(want) || got[1] != want[1] {
		t.Errorf("allocated per device = %v, want %v", got, want)
	}
	// The same through the emitted metric.
	sum := int64(0)
	ms := res.Metrics.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		if m := ms.At(i); m.Name() == spec.ProfileMemoryAllocated {
			for j := 0; j < m.Sum().DataPoints().Len(); j++ {
				sum += m.Sum().DataPoints().At(j).IntValue()
			}
		}
	}
	if sum != want[1] {
		t.Errorf("metric sum = %d", sum)
	}
	// The caching allocator's totals: 26,770 CUDA memory events, thinned
	// to MaxMemoryPoints buckets of the window that keep their highest
	// point, so the peaks a reader looks for survive.
	// python3 -c "import gzip,json; ev=[e['args'] for e in
	//   json.load(gzip.open('/work/shared/fixtures/traces/hta-df_index_resolver.json.gz'))['traceEvents']
	//   if e.get('name')=='[memory]' and e['args'].get('Device Type')==1];
	//   print(len(ev), max(a['Total Allocated'] for a in ev), min(a['Total Allocated'] for a in ev),
	//   max(a['Total Reserved'] for a in ev))"
	// -> 26770 6629508096 4096614400 12782141440
	peaks := map[string][2]int64{}
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		if m.Name() != MetricMemoryTotalAllocated && m.Name() != MetricMemoryTotalReserved {
			continue
		}
		dps := m.Gauge().DataPoints()
		// 8,034 of the 10,000 buckets hold an event.
		if dps.Len() != 8034 {
			t.Errorf("%s: %d points, want 8034 (thinned to at most %d)", m.Name(), dps.Len(), signals.MaxMemoryPoints)
		}
		lo, hi := int64(1<<62), int64(0)
		for j := 0; j < dps.Len(); j++ {
			dp := dps.At(j)
			if d, _ := dp.Attributes().Get(spec.AttrProfileDevice); d.Int() != 1 {
				t.Fatalf("%s point %d on device %d", m.Name(), j, d.Int())
			}
			lo, hi = min(lo, dp.IntValue()), max(hi, dp.IntValue())
		}
		peaks[m.Name()] = [2]int64{lo, hi}
	}
	if got := peaks[MetricMemoryTotalAllocated]; got[1] != 6629508096 || got[0] < 4096614400 {
		t.Errorf("Total Allocated points range %v, want highest 6629508096 and none under 4096614400", got)
	}
	if got := peaks[MetricMemoryTotalReserved]; got[1] != 12782141440 {
		t.Errorf("Total Reserved points peak at %d, want 12782141440", got[1])
	}
	// 123378 span-eligible events + root over the default budget.
	if res.Stats.Spans != DefaultSpanBudget || res.Stats.SpansDropped != 123379-DefaultSpanBudget {
		t.Errorf("spans %d dropped %d", res.Stats.Spans, res.Stats.SpansDropped)
	}
	if res.Stats.KernelsWithoutLauncher != 0 {
		t.Errorf("kernels without launcher: %d", res.Stats.KernelsWithoutLauncher)
	}
	t.Logf("stats: %+v; %d module paths; %d leak records", res.Stats, len(res.Modules), res.Logs.LogRecordCount())
}

func TestFixtureB200ModulePaths(t *testing.T) {
	res := buildFile(t, "tracelens-b200_eager.json.gz", DefaultOptions())
	ss := res.Traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	kernels, withPath := 0, 0
	example := ""
	for i := 0; i < ss.Len(); i++ {
		s := ss.At(i)
		if c, _ := s.Attributes().Get(spec.AttrProfileCategory); c.Str() != "kernel" {
			continue
		}
		kernels++
		if p, ok := s.Attributes().Get(spec.AttrProfileModulePath); ok && p.Str() != "" {
			withPath++
			if example == "" {
				example = p.Str()
			}
		}
	}
	if withPath == 0 {
		t.Fatalf("no kernel with a module path among %d", kernels)
	}
	t.Logf("%d/%d kernels have a module path, e.g. %s", withPath, kernels, example)
}

// BenchmarkBuildDFIndexResolver times the builder alone: the events are
// parsed once into a slice beforehand.
func BenchmarkBuildDFIndexResolver(b *testing.B) {
	p := fixture(b, "hta-df_index_resolver.json.gz")
	var evs []kineto.Event
	md, err := kineto.ParseFile(p, kineto.Options{}, kineto.HandlerFunc(func(e *kineto.Event) error {
		c := *e
		c.Args.Other = nil
		evs = append(evs, c)
		return nil
	}))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bl := NewBuilder(DefaultOptions())
		for j := range evs {
			if err := bl.Event(&evs[j]); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := bl.Finish(md, p); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	n := float64(b.N) * float64(len(evs))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
	// allocs/event: reported from a separate measured run.
	allocs := testing.AllocsPerRun(1, func() {
		bl := NewBuilder(DefaultOptions())
		for j := range evs {
			_ = bl.Event(&evs[j])
		}
		_, _ = bl.Finish(md, p)
	})
	b.ReportMetric(allocs/float64(len(evs)), "allocs/event")
}

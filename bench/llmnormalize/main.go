// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command llmnormalize compares, in one run, the time and allocations per
// data point of the llmnormalize processor and of contrib's transform
// processor (v0.161.0) configured with OTTL statements that make the same
// unified metrics out of one scrape of the vLLM fixture: the same renames,
// unit and description, gauge-to-sum conversions, label renames and fixed
// attributes. Contrib's transform cannot remove a metric, so the deprecated
// aliases vLLM still serves next to their current names are dropped by
// contrib's filter processor placed after it; both transform alone and
// transform+filter are measured. It also measures the allocations per data
// point llmnormalize spends on points it leaves unchanged (GPU gauges). The
// targets: llmnormalize at least 20× faster than transform, and no
// allocation per unchanged data point; and it reports llmnormalize's time
// over the floor, a pass-through processor on the same batches.
//
//	go run ./llmnormalize [-duration 10s] [-batch 64] [-dump]   (from bench/)
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/filterprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/transformprocessor"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/llmops-otel/otelcol-llmops/internal/pdatautil"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor"
	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver"
	"github.com/llmops-otel/otelcol-llmops/tests/enginereplay"
)

func main() {
	duration := flag.Duration("duration", 10*time.Second, "wall-clock budget of the comparison (rounds alternate between the processors)")
	batch := flag.Int("batch", 64, "fresh copies of the scrape prepared, untimed, before each timed round")
	dump := flag.Bool("dump", false, "print the OTTL used and every output metric of both sides")
	flag.Parse()
	if err := run(*duration, *batch, *dump); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// vllmMapping is one line of the transform configuration: what
// llmnormalize's vLLM table does to one source metric.
type vllmMapping struct {
	source, target string
	set            [2]string // a fixed attribute, e.g. gen_ai.token.type=input
	renames        [][2]string
}

// The vLLM metrics llmnormalize maps (internal/spec/mappings_vllm.go), less
// the deprecated aliases whose current name the fixture also serves: those
// are dropped (see droppedAliases). The label renames are the ones the
// vLLM exposition needs: model_name on every series, finished_reason on
// request_success_total.
var vllmMappings = []vllmMapping{
	{source: "vllm:num_requests_running", target: "llm.engine.requests.running"},
	{source: "vllm:num_requests_waiting", target: "llm.engine.requests.waiting"},
	{source: "vllm:kv_cache_usage_perc", target: "llm.engine.kv_cache.utilization"},
	{source: "vllm:prefix_cache_queries_total", target: "llm.engine.prefix_cache.queries"},
	{source: "vllm:prefix_cache_hits_total", target: "llm.engine.prefix_cache.hits"},
	// Older names of the two above, absent from the fixture: mapped as a
	// configuration for all vLLM versions would.
	{source: "vllm:gpu_prefix_cache_queries_total", target: "llm.engine.prefix_cache.queries"},
	{source: "vllm:gpu_prefix_cache_hits_total", target: "llm.engine.prefix_cache.hits"},
	{source: "vllm:prompt_tokens_total", target: "llm.engine.tokens", set: [2]string{"gen_ai.token.type", "input"}},
	{source: "vllm:generation_tokens_total", target: "llm.engine.tokens", set: [2]string{"gen_ai.token.type", "output"}},
	{source: "vllm:time_to_first_token_seconds", target: "gen_ai.server.time_to_first_token"},
	{source: "vllm:request_time_per_output_token_seconds", target: "gen_ai.server.time_per_output_token"},
	{source: "vllm:inter_token_latency_seconds", target: "llm.engine.inter_token_latency"},
	{source: "vllm:e2e_request_latency_seconds", target: "gen_ai.server.request.duration"},
	{source: "vllm:request_queue_time_seconds", target: "llm.engine.request.queue.duration"},
	{source: "vllm:request_success_total", target: "llm.engine.requests.finished", renames: [][2]string{{"finished_reason", "llm.finish_reason"}}},
	{source: "vllm:num_preemptions_total", target: "llm.engine.preemptions"},
}

// droppedAliases are deprecated names served next to their current names
// in the fixture; llmnormalize drops them, the filter processor does here.
var droppedAliases = []string{"vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds"}

// transformConfig returns the transform processor's metric_statements.
// Every vLLM source name has its seconds-to-seconds (factor 1) unit, so
// there is no scale_metric: vLLM needs no unit conversion. The datapoint
// group runs first, while the metrics still have their engine names.
func transformConfig() ([]any, error) {
	sources := make([]string, 0, len(vllmMappings))
	for _, m := range vllmMappings {
		sources = append(sources, strings.ReplaceAll(m.source, ".", `\\.`))
	}
	mapped := fmt.Sprintf(`IsMatch(metric.name, "^(%s)$")`, strings.Join(sources, "|"))
	dp := []any{
		// Common renames, then the point names its engine.
		`set(datapoint.attributes["gen_ai.request.model"], datapoint.attributes["model_name"]) where ` + mapped + ` and datapoint.attributes["model_name"] != nil and datapoint.attributes["gen_ai.request.model"] == nil`,
		`delete_key(datapoint.attributes, "model_name") where ` + mapped,
		`set(datapoint.attributes["llm.engine.name"], resource.attributes["llm.engine.name"]) where ` + mapped + ` and datapoint.attributes["llm.engine.name"] == nil and resource.attributes["llm.engine.name"] != nil`,
		`set(datapoint.attributes["gen_ai.request.model"], resource.attributes["gen_ai.request.model"]) where ` + mapped + ` and datapoint.attributes["gen_ai.request.model"] == nil and resource.attributes["gen_ai.request.model"] != nil`,
	}
	var metric, convert []any
	for _, m := range vllmMappings {
		t, ok := spec.LookupMetric(m.target)
		if !ok {
			return nil, fmt.Errorf("%s is not a unified metric", m.target)
		}
		is := fmt.Sprintf(`metric.name == %q`, m.source)
		for _, rn := range m.renames {
			dp = append(dp,
				fmt.Sprintf(`set(datapoint.attributes[%q], datapoint.attributes[%q]) where %s and datapoint.attributes[%q] != nil`, rn[1], rn[0], is, rn[0]),
				fmt.Sprintf(`delete_key(datapoint.attributes, %q) where %s`, rn[0], is))
		}
		if m.set[0] != "" {
			dp = append(dp, fmt.Sprintf(`set(datapoint.attributes[%q], %q) where %s`, m.set[0], m.set[1], is))
		}
		if strings.HasPrefix(m.target, "gen_ai.server.") {
			// What semconv asks of a gen_ai.server.* point, as llmnormalize
			// sets it: the operation, the provider (the engine) and the
			// server, read from the scrape target's URL.
			// (OTTL's URL() gives the port as a Go int, which set refuses.)
			target := `resource.attributes["llm.engine.target"]`
			for _, set := range [][2]string{
				{spec.AttrGenAIOperationName, strconv.Quote(spec.GenAIOperationEngine)},
				{spec.AttrGenAIProviderName, `resource.attributes["llm.engine.name"]`},
				{spec.AttrServerAddress, `ExtractPatterns(` + target + `, "^[a-z]+://(?P<host>[^:/]+)")["host"]`},
				{spec.AttrServerPort, `Int(ExtractPatterns(` + target + `, "^[a-z]+://[^:/]+:(?P<port>[0-9]+)")["port"])`},
			} {
				dp = append(dp, fmt.Sprintf(`set(datapoint.attributes[%q], %s) where %s and datapoint.attributes[%q] == nil`, set[0], set[1], is, set[0]))
			}
		}
		if t.Instrument == spec.UpDownCounter {
			convert = append(convert, fmt.Sprintf(`convert_gauge_to_sum("cumulative", false) where %s and metric.type == METRIC_DATA_TYPE_GAUGE`, is))
		}
		metric = append(metric,
			fmt.Sprintf(`set(metric.unit, %q) where %s`, t.Unit, is),
			fmt.Sprintf(`set(metric.description, %q) where %s`, t.Description, is),
			fmt.Sprintf(`set(metric.name, %q) where %s`, m.target, is))
	}
	return []any{
		map[string]any{"context": "datapoint", "statements": dp},
		map[string]any{"context": "metric", "statements": append(convert, metric...)},
	}, nil
}

type sides struct {
	norm, transform, transformFilter consumer.Metrics
	// floor is a processor that passes the batch on untouched, built with
	// the same processorhelper: what any processor in this place costs
	// before doing anything (the pipeline's own cost).
	floor consumer.Metrics
}

// newPassThrough builds the floor: processorhelper around a function that
// returns the batch as it came.
func newPassThrough(next consumer.Metrics) (processor.Metrics, error) {
	set := processortest.NewNopSettings(component.MustNewType("passthrough"))
	p, err := processorhelper.NewMetrics(context.Background(), set, &struct{}{}, next,
		func(_ context.Context, md pmetric.Metrics) (pmetric.Metrics, error) { return md, nil },
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
	if err != nil {
		return nil, err
	}
	return p, p.Start(context.Background(), componenttest.NewNopHost())
}

func newProcessor(f processor.Factory, conf map[string]any, next consumer.Metrics) (processor.Metrics, error) {
	cfg := f.CreateDefaultConfig()
	if err := confmap.NewFromStringMap(conf).Unmarshal(cfg); err != nil {
		return nil, err
	}
	p, err := f.CreateMetrics(context.Background(), processortest.NewNopSettings(f.Type()), cfg, next)
	if err != nil {
		return nil, err
	}
	return p, p.Start(context.Background(), componenttest.NewNopHost())
}

// build creates the three pipelines, each ending in next.
func build(next consumer.Metrics) (sides, error) {
	var s sides
	statements, err := transformConfig()
	if err != nil {
		return s, err
	}
	tconf := map[string]any{"error_mode": "propagate", "metric_statements": statements}
	var conds []any
	for _, a := range droppedAliases {
		conds = append(conds, fmt.Sprintf(`metric.name == %q`, a))
	}
	fconf := map[string]any{"error_mode": "propagate", "metric_conditions": []any{map[string]any{"context": "metric", "conditions": conds}}}

	if s.norm, err = newProcessor(llmnormalizeprocessor.NewFactory(), map[string]any{}, next); err != nil {
		return s, fmt.Errorf("llmnormalize: %w", err)
	}
	if s.transform, err = newProcessor(transformprocessor.NewFactory(), tconf, next); err != nil {
		return s, fmt.Errorf("transform: %w", err)
	}
	filter, err := newProcessor(filterprocessor.NewFactory(), fconf, next)
	if err != nil {
		return s, fmt.Errorf("filter: %w", err)
	}
	if s.transformFilter, err = newProcessor(transformprocessor.NewFactory(), tconf, filter); err != nil {
		return s, fmt.Errorf("transform: %w", err)
	}
	if s.floor, err = newPassThrough(next); err != nil {
		return s, fmt.Errorf("pass-through: %w", err)
	}
	return s, nil
}

func run(duration time.Duration, batch int, dump bool) error {
	src, err := scrapeVLLM()
	if err != nil {
		return err
	}
	points := src.DataPointCount()

	// Validation: one pass of each side into a sink, then compare shapes.
	sink := new(consumertest.MetricsSink)
	check, err := build(sink)
	if err != nil {
		return err
	}
	outNorm, err := once(check.norm, src, sink)
	if err != nil {
		return fmt.Errorf("llmnormalize: %w", err)
	}
	outTransform, err := once(check.transformFilter, src, sink)
	if err != nil {
		return fmt.Errorf("transform+filter: %w", err)
	}
	if dump {
		statements, _ := transformConfig()
		fmt.Println("transform metric_statements:")
		for _, g := range statements {
			g := g.(map[string]any)
			fmt.Printf("  - context: %s\n    statements:\n", g["context"])
			for _, s := range g["statements"].([]any) {
				fmt.Printf("      - '%s'\n", s)
			}
		}
		fmt.Printf("filter metric_conditions (context metric): %q\n\n", droppedAliases)
		fmt.Println("input (llmengine receiver, vLLM fixture):")
		printShapes(shapes(src))
		fmt.Println("\nllmnormalize output:")
		printShapes(outNorm)
		fmt.Println("\ntransform+filter output:")
		printShapes(outTransform)
		fmt.Println()
	}
	if diffs := diffShapes(outNorm, outTransform); len(diffs) > 0 {
		fmt.Println("WARNING: transform+filter output differs from llmnormalize's:")
		for _, d := range diffs {
			fmt.Println("  " + d)
		}
		fmt.Println()
	} else {
		fmt.Printf("outputs agree: %d metric names, same types, units, point counts and point attribute keys\n", len(outNorm))
	}
	for _, n := range sortedNames(outNorm) {
		if a, b := outNorm[n].metrics, outTransform[n].metrics; a != b {
			fmt.Printf("note: %s is %d metric(s) in llmnormalize's output, %d in transform's (OTTL cannot merge metrics)\n", n, a, b)
		}
	}
	fmt.Println()

	nop := consumertest.NewNop()
	s, err := build(nop)
	if err != nil {
		return err
	}
	rs := measureAlternating(src, batch, duration, []consumer.Metrics{s.norm, s.transform, s.transformFilter, s.floor})
	fmt.Printf("vLLM fixture: %d data points per scrape (%d metrics), input copied untimed, %d copies per round\n",
		points, src.MetricCount(), batch)
	fmt.Printf("%-20s %8s %12s %12s %14s %12s\n", "processor", "rounds", "ns/point", "(fastest)", "allocs/point", "B/point")
	for i, name := range []string{"llmnormalize", "transform", "transform+filter", "pass-through (floor)"} {
		r := rs[i]
		fmt.Printf("%-20s %8d %12.1f %12.1f %14.2f %12.1f\n", name, r.rounds, r.nsPerPoint, r.minNsPerPoint, r.allocsPerPoint, r.bytesPerPoint)
	}
	speedup := rs[1].nsPerPoint / rs[0].nsPerPoint
	speedupF := rs[2].nsPerPoint / rs[0].nsPerPoint
	fmt.Printf("ratio transform/llmnormalize: %.1f× time, %.1f× allocations (transform+filter: %.1f× time, %.1f× allocations)\n\n",
		speedup, rs[1].allocsPerPoint/rs[0].allocsPerPoint, speedupF, rs[2].allocsPerPoint/rs[0].allocsPerPoint)

	// Unchanged points: GPU gauges llmnormalize has no rule for, in a
	// resource without llm.engine.name (as the nvml receiver sends them).
	// The batch is not modified, so it is reused; a per-batch cost is told
	// apart from a per-point one by measuring two batch sizes.
	small, large := gpuBatch(100), gpuBatch(1000)
	before, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(small)
	us := measureUnchanged(s.norm, small, duration/10)
	ul := measureUnchanged(s.norm, large, duration/10)
	after, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(small)
	if !bytes.Equal(before, after) {
		fmt.Println("WARNING: llmnormalize modified the unchanged batch")
	}
	perPoint := (ul.allocsPerCall - us.allocsPerCall) / float64(large.DataPointCount()-small.DataPointCount())
	fmt.Printf("unchanged points (hw.gpu.memory.usage gauges), llmnormalize:\n")
	fmt.Printf("%-20s %12s %14s %14s %12s\n", "batch", "ns/point", "allocs/batch", "allocs/point", "B/point")
	for _, u := range []struct {
		md pmetric.Metrics
		r  unchangedResult
	}{{small, us}, {large, ul}} {
		n := float64(u.md.DataPointCount())
		fmt.Printf("%-20s %12.1f %14.2f %14.4f %12.2f\n", fmt.Sprintf("%d points", u.md.DataPointCount()),
			u.r.nsPerCall/n, u.r.allocsPerCall, u.r.allocsPerCall/n, u.r.bytesPerCall/n)
	}
	fmt.Printf("marginal allocations per unchanged point (slope between the two batches): %.4f\n\n", perPoint)

	overFloor := rs[0].nsPerPoint / rs[3].nsPerPoint
	fmt.Printf("llmnormalize ÷ floor (a pass-through processor on the same batches): %.1f× time (%.1f vs %.1f ns/point)\n",
		overFloor, rs[0].nsPerPoint, rs[3].nsPerPoint)
	fmt.Printf("verdict: llmnormalize ≥20× faster than transform: %s (%.1f×; %.1f× against transform+filter)\n", verdict(speedup >= 20), speedup, speedupF)
	fmt.Printf("verdict: zero allocations per unchanged data point: %s (%.4f per point marginal, %.2f per batch)\n",
		verdict(perPoint < 0.0005), perPoint, us.allocsPerCall)
	return nil
}

func verdict(ok bool) string {
	if ok {
		return "MET"
	}
	return "NOT MET"
}

// once runs one fresh copy through c and returns the shapes it produced.
func once(c consumer.Metrics, src pmetric.Metrics, sink *consumertest.MetricsSink) (map[string]shape, error) {
	sink.Reset()
	md := pmetric.NewMetrics()
	src.CopyTo(md)
	if err := c.ConsumeMetrics(context.Background(), md); err != nil {
		return nil, err
	}
	all := sink.AllMetrics()
	if len(all) != 1 {
		return nil, fmt.Errorf("%d batches out", len(all))
	}
	return shapes(all[0]), nil
}

type result struct {
	rounds                                                   int
	nsPerPoint, minNsPerPoint, allocsPerPoint, bytesPerPoint float64
	totalAllocs, totalBytes, totalPts                        float64
	perRound                                                 []float64
}

// measureAlternating times the consumers in alternating rounds, so drift
// in the machine's speed reaches them alike. Before each round, batch
// fresh copies of src are made and the heap collected, both untimed; the
// round then hands the copies to the consumer one after another. Time per
// point is the median over rounds; allocations are totals over all rounds.
// Rounds go on until duration has passed (at least 5 each).
func measureAlternating(src pmetric.Metrics, batch int, duration time.Duration, cs []consumer.Metrics) []result {
	points := float64(src.DataPointCount())
	ctx := context.Background()
	rs := make([]result, len(cs))
	copies := make([]pmetric.Metrics, batch)
	round := func(i int) {
		for k := range copies {
			copies[k] = pmetric.NewMetrics()
			src.CopyTo(copies[k])
		}
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		t0 := time.Now()
		for k := range copies {
			if err := cs[i].ConsumeMetrics(ctx, copies[k]); err != nil {
				panic(err)
			}
		}
		el := time.Since(t0)
		runtime.ReadMemStats(&m1)
		r := &rs[i]
		r.rounds++
		r.totalAllocs += float64(m1.Mallocs - m0.Mallocs)
		r.totalBytes += float64(m1.TotalAlloc - m0.TotalAlloc)
		r.totalPts += points * float64(batch)
		r.perRound = append(r.perRound, float64(el.Nanoseconds())/(points*float64(batch)))
	}
	// Warm-up.
	for i := range cs {
		round(i)
	}
	rs = make([]result, len(cs))
	for start := time.Now(); time.Since(start) < duration || rs[0].rounds < 5; {
		for i := range cs {
			round(i)
		}
	}
	for i := range rs {
		r := &rs[i]
		sort.Float64s(r.perRound)
		r.nsPerPoint = r.perRound[len(r.perRound)/2]
		r.minNsPerPoint = r.perRound[0]
		r.allocsPerPoint = r.totalAllocs / r.totalPts
		r.bytesPerPoint = r.totalBytes / r.totalPts
	}
	return rs
}

type unchangedResult struct{ nsPerCall, allocsPerCall, bytesPerCall float64 }

func measureUnchanged(c consumer.Metrics, md pmetric.Metrics, duration time.Duration) unchangedResult {
	ctx := context.Background()
	for range 100 {
		_ = c.ConsumeMetrics(ctx, md)
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	t0 := time.Now()
	n := 0
	for time.Since(t0) < duration {
		for range 100 {
			_ = c.ConsumeMetrics(ctx, md)
		}
		n += 100
	}
	el := time.Since(t0)
	runtime.ReadMemStats(&m1)
	return unchangedResult{
		nsPerCall:     float64(el.Nanoseconds()) / float64(n),
		allocsPerCall: float64(m1.Mallocs-m0.Mallocs) / float64(n),
		bytesPerCall:  float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n),
	}
}

// gpuBatch is n/10 hw.gpu.memory.usage gauges of 10 points each, as the
// nvml receiver reports them: no llm.engine.name on the resource.
func gpuBatch(n int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("host.name", "gpu-node-1")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	ts := pcommon.NewTimestampFromTime(time.Unix(1_718_140_558, 0))
	for i := 0; i < n/10; i++ {
		m := ms.AppendEmpty()
		m.SetName("hw.gpu.memory.usage")
		m.SetUnit("By")
		dps := m.SetEmptyGauge().DataPoints()
		for j := 0; j < 10; j++ {
			dp := dps.AppendEmpty()
			dp.SetTimestamp(ts)
			dp.SetIntValue(int64(1<<30 + j))
			dp.Attributes().PutStr("hw.id", fmt.Sprintf("GPU-%d", i))
			dp.Attributes().PutStr("hw.gpu.memory.state", []string{"used", "free"}[j%2])
		}
	}
	return md
}

// shape is what the comparison looks at in a metric name: its type(s),
// unit, point attribute keys and point count.
type shape struct {
	types, units, keys []string
	points, metrics    int
}

func shapes(md pmetric.Metrics) map[string]shape {
	out := map[string]shape{}
	pdatautil.EachMetric(md, func(m pmetric.Metric) {
		s := out[m.Name()]
		s.metrics++
		s.types = addUnique(s.types, m.Type().String())
		if m.Type() == pmetric.MetricTypeSum {
			s.types = addUnique(s.types, fmt.Sprintf("monotonic=%v", m.Sum().IsMonotonic()))
		}
		s.units = addUnique(s.units, m.Unit())
		pdatautil.EachAttributes(m, func(a pcommon.Map) bool {
			s.points++
			for k := range a.All() {
				s.keys = addUnique(s.keys, k)
			}
			return true
		})
		out[m.Name()] = s
	})
	return out
}

func addUnique(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	xs = append(xs, x)
	slices.Sort(xs)
	return xs
}

func (s shape) String() string {
	return fmt.Sprintf("%s unit=%q points=%d keys=[%s]", strings.Join(s.types, ","), strings.Join(s.units, ","), s.points, strings.Join(s.keys, " "))
}

func sortedNames(ss map[string]shape) []string {
	names := make([]string, 0, len(ss))
	for n := range ss {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func printShapes(ss map[string]shape) {
	for _, n := range sortedNames(ss) {
		fmt.Printf("  %-48s %s\n", n, ss[n])
	}
}

// diffShapes lists the differences between the two outputs. The number of
// metrics per name is not compared: llmnormalize merges the two token
// counters into one llm.engine.tokens metric, transform cannot.
func diffShapes(a, b map[string]shape) []string {
	var out []string
	for n, sa := range a {
		sb, ok := b[n]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("only llmnormalize: %s %s", n, sa))
		case !slices.Equal(sa.types, sb.types) || !slices.Equal(sa.units, sb.units) || !slices.Equal(sa.keys, sb.keys) || sa.points != sb.points:
			out = append(out, fmt.Sprintf("%s: llmnormalize %s; transform %s", n, sa, sb))
		}
	}
	for n, sb := range b {
		if _, ok := a[n]; !ok {
			out = append(out, fmt.Sprintf("only transform: %s %s", n, sb))
		}
	}
	sort.Strings(out)
	return out
}

// scrapeVLLM returns one scrape of the vLLM fixture as the llmengine
// receiver emits it (the pipeline's input), from an in-process replay
// server.
func scrapeVLLM() (pmetric.Metrics, error) {
	srv, err := enginereplay.New(enginereplay.Options{Engine: "vllm"})
	if err != nil {
		return pmetric.Metrics{}, err
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	f := llmenginereceiver.NewFactory()
	cfg := f.CreateDefaultConfig()
	if err := confmap.NewFromStringMap(map[string]any{
		"collection_interval": "1h", "initial_delay": "0s",
		"targets": []any{map[string]any{"endpoint": hs.URL + "/metrics"}},
	}).Unmarshal(cfg); err != nil {
		return pmetric.Metrics{}, err
	}
	sink := new(consumertest.MetricsSink)
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		return pmetric.Metrics{}, err
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		return pmetric.Metrics{}, err
	}
	defer func() { _ = r.Shutdown(context.Background()) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(sink.AllMetrics()) == 0 {
		if time.Now().After(deadline) {
			return pmetric.Metrics{}, fmt.Errorf("no scrape of the replay server within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	md := pmetric.NewMetrics()
	sink.AllMetrics()[0].CopyTo(md)
	// The cache configuration is left out of the comparison: from it
	// llmnormalize computes the KV capacity figures (blocks, tokens, bytes,
	// fragmentation) across several metrics of the scrape, work OTTL
	// statements cannot do. What it costs is measured on its own by
	// BenchmarkVLLMFixture in the processor's package.
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			sms.At(j).Metrics().RemoveIf(func(m pmetric.Metric) bool { return m.Name() == "vllm:cache_config_info" })
		}
	}
	return md, nil
}

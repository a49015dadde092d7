// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package registry checks that what the distribution's own components emit
// is all in the unified spec (internal/spec): every metric name, data-point
// attribute key, resource attribute key, span attribute key and log-record
// attribute key. Each component runs in process, through its factory, on
// real inputs (go-nvml's DGX A100 mock, the engine expositions of
// tests/enginereplay, PyTorch profiler traces from ../shared/fixtures, CUDA
// memory snapshots and an Nsight Systems export), and everything it
// produces goes through the checks below; one failure lists every offender.
//
// Not ours, and so excluded: the engine-native metrics llmnormalize passes
// through under unmapped_metrics: keep (with their engine labels), and the
// attributes of application spans llmnormalize was given.
package registry

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/llmops-otel/otelcol-llmops/internal/pdatautil"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
	"github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor"
	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver"
	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver"
	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver"
	"github.com/llmops-otel/otelcol-llmops/tests/enginereplay"
)

// offenders collects unregistered names: kind ("metric", "span attribute",
// ...) and name → the producers that emitted it.
type offenders struct {
	mu sync.Mutex
	m  map[string]map[string]bool
	// seen counts what was checked, per kind, so a run that checked
	// nothing cannot pass.
	seen map[string]map[string]bool
}

func newOffenders() *offenders {
	return &offenders{m: map[string]map[string]bool{}, seen: map[string]map[string]bool{}}
}

func (o *offenders) check(producer, kind, name string, known bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen[kind] == nil {
		o.seen[kind] = map[string]bool{}
	}
	o.seen[kind][name] = true
	if known {
		return
	}
	k := kind + " " + name
	if o.m[k] == nil {
		o.m[k] = map[string]bool{}
	}
	o.m[k][producer] = true
}

func (o *offenders) report(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	kinds := make([]string, 0, len(o.seen))
	for k := range o.seen {
		kinds = append(kinds, fmt.Sprintf("%s: %d", k, len(o.seen[k])))
	}
	sort.Strings(kinds)
	t.Logf("checked (distinct names): %s", strings.Join(kinds, ", "))
	if len(o.m) == 0 {
		return
	}
	lines := make([]string, 0, len(o.m))
	for k, ps := range o.m {
		var prod []string
		for p := range ps {
			prod = append(prod, p)
		}
		sort.Strings(prod)
		lines = append(lines, fmt.Sprintf("  %s (from %s)", k, strings.Join(prod, ", ")))
	}
	sort.Strings(lines)
	t.Errorf("%d names emitted by our components are not in internal/spec (register them with a description, or use the registered constant):\n%s",
		len(lines), strings.Join(lines, "\n"))
}

func keys(m pcommon.Map, f func(string)) {
	m.Range(func(k string, _ pcommon.Value) bool { f(k); return true })
}

// checkMetrics checks every metric name, data-point attribute and resource
// attribute. native holds the engine-native names the producer was given
// (passed through by design): they and their labels are skipped.
func (o *offenders) checkMetrics(producer string, batches []pmetric.Metrics, native map[string]bool) (passedThrough int) {
	for _, md := range batches {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			rm := rms.At(i)
			keys(rm.Resource().Attributes(), func(k string) { o.check(producer, "resource attribute", k, spec.IsKnownAttribute(k)) })
			engine := ""
			if v, ok := rm.Resource().Attributes().Get(spec.AttrEngineName); ok {
				engine = v.Str()
			}
			sms := rm.ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					m := ms.At(k)
					if native[m.Name()] && !spec.IsKnownMetric(m.Name()) {
						passedThrough++
						continue
					}
					o.check(producer, "metric", m.Name(), spec.IsKnownMetric(m.Name()))
					pdatautil.EachAttributes(m, func(a pcommon.Map) bool {
						keys(a, func(k string) {
							if spec.IsKeptEngineLabel(engine, k) {
								// The engine's own label, kept on the mapped
								// metric by design (spec.KeptEngineLabels).
								return
							}
							o.check(producer, "data-point attribute", k+" (on "+m.Name()+")", spec.IsKnownAttribute(k))
						})
						return true
					})
				}
			}
		}
	}
	return passedThrough
}

// checkTraces checks resource and span attribute keys; given holds keys
// that were on the input spans (application attributes, not ours).
func (o *offenders) checkTraces(producer string, batches []ptrace.Traces, given map[string]bool) {
	for _, td := range batches {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			keys(rss.At(i).Resource().Attributes(), func(k string) {
				if !given[k] {
					o.check(producer, "resource attribute", k, spec.IsKnownAttribute(k))
				}
			})
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					keys(spans.At(k).Attributes(), func(key string) {
						if !given[key] {
							o.check(producer, "span attribute", key, spec.IsKnownAttribute(key))
						}
					})
				}
			}
		}
	}
}

func (o *offenders) checkLogs(producer string, batches []plog.Logs) {
	for _, ld := range batches {
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			keys(rls.At(i).Resource().Attributes(), func(k string) { o.check(producer, "resource attribute", k, spec.IsKnownAttribute(k)) })
			sls := rls.At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					keys(lrs.At(k).Attributes(), func(key string) { o.check(producer, "log-record attribute", key, spec.IsKnownAttribute(key)) })
				}
			}
		}
	}
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func startAll(t *testing.T, cs ...component.Component) {
	t.Helper()
	ctx := context.Background()
	for _, c := range cs {
		if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := c.Shutdown(ctx); err != nil {
				t.Error(err)
			}
		})
	}
}

// outputs is everything the receivers produced, for the components
// downstream of them.
type outputs struct {
	gpu        []pmetric.Metrics
	engineRaw  []pmetric.Metrics
	engineNorm []pmetric.Metrics
	profM      []pmetric.Metrics
	profT      []ptrace.Traces
	profL      []plog.Logs
	native     map[string]bool
}

func TestEverythingEmittedIsRegistered(t *testing.T) {
	o := newOffenders()
	var out outputs
	t.Run("nvml", func(t *testing.T) { out.gpu = runNVML(t, o) })
	t.Run("llmengine", func(t *testing.T) { out.engineRaw, out.native = runLLMEngine(t, o) })
	t.Run("llmnormalize", func(t *testing.T) { out.engineNorm = runLLMNormalize(t, o, out.engineRaw, out.native) })
	t.Run("profileimport", func(t *testing.T) { out.profM, out.profT, out.profL = runProfileImport(t, o) })
	t.Run("rootcause", func(t *testing.T) { checkConnectorOutputs(t, o, &out) })
	o.report(t)
}

func runNVML(t *testing.T, o *offenders) []pmetric.Metrics {
	lib := fakeNVML()
	f := nvmlreceiver.NewFactoryWithLibrary(func(string) nvml.Interface { return lib })
	cfg := f.CreateDefaultConfig().(*nvmlreceiver.Config)
	cfg.CollectionInterval = 50 * time.Millisecond
	cfg.InitialDelay = 0
	procRoot := t.TempDir()
	writeProc(t, procRoot, gpuPid, "vllm", "0::/kubepods.slice/kubepods-pod0c1d2e3f.slice/cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope\n")
	cfg.ProcRoot = procRoot
	sink := new(consumertest.MetricsSink)
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	startAll(t, r)
	// Three scrapes: process utilization and the XID count need a second.
	waitFor(t, "three nvml scrapes with an XID", 20*time.Second, func() bool {
		return len(sink.AllMetrics()) >= 3 && hasPoint(sink.AllMetrics(), spec.HwErrors, spec.AttrHwGpuXid)
	})
	got := sink.AllMetrics()
	o.checkMetrics("nvml", got, nil)
	return got
}

func writeProc(t *testing.T, root string, pid int, comm, cgroup string) {
	dir := filepath.Join(root, fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (%s) S 1 %d %d 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, comm, pid, pid, 1000)
	for name, body := range map[string]string{"comm": comm + "\n", "cgroup": cgroup, "stat": stat} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func hasPoint(batches []pmetric.Metrics, name, attr string) bool {
	found := false
	for _, md := range batches {
		pdatautil.EachMetric(md, func(m pmetric.Metric) {
			if m.Name() != name {
				return
			}
			pdatautil.EachAttributes(m, func(a pcommon.Map) bool {
				if _, ok := a.Get(attr); ok || attr == "" {
					found = true
				}
				return !found
			})
		})
	}
	return found
}

// runLLMEngine scrapes every engine enginereplay imitates, each from its
// real exposition, on loopback. It returns what the receiver emitted and
// the engine-native names among it (everything but its own llm.engine.*
// telemetry), which are not ours.
func runLLMEngine(t *testing.T, o *offenders) ([]pmetric.Metrics, map[string]bool) {
	f := llmenginereceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*llmenginereceiver.Config)
	// A scrape's timeout is capped at the interval: at 100 ms the largest
	// expositions timed out under -race on a loaded machine, and an engine
	// never scraped is never detected.
	cfg.CollectionInterval = time.Second
	cfg.InitialDelay = 0
	for _, e := range enginereplay.Engines() {
		srv, err := enginereplay.New(enginereplay.Options{Engine: e})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(hs.Close)
		cc := confighttp.NewDefaultClientConfig()
		cc.Endpoint = hs.URL + enginereplay.MetricsPath(e)
		cfg.Targets = append(cfg.Targets, llmenginereceiver.TargetConfig{ClientConfig: cc})
	}
	sink := new(consumertest.MetricsSink)
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	startAll(t, r)
	engines := len(enginereplay.Engines())
	waitFor(t, "two scrapes of every engine", time.Minute, func() bool {
		return len(engineNames(sink.AllMetrics())) == engines && len(sink.AllMetrics()) >= 2*engines
	})
	got := sink.AllMetrics()
	if n := len(engineNames(got)); n != engines {
		t.Fatalf("detected %d engines of %d: %v", n, engines, engineNames(got))
	}
	native := map[string]bool{}
	for _, md := range got {
		forMetrics(md, func(_ pcommon.Map, m pmetric.Metric) {
			if !spec.IsKnownMetric(m.Name()) {
				native[m.Name()] = true
			}
		})
	}
	// Only the receiver's own telemetry and the resources are ours here.
	passed := o.checkMetrics("llmengine", got, native)
	t.Logf("llmengine: %d engine-native metric names (%d metrics) not checked", len(native), passed)
	return got, native
}

func forMetrics(md pmetric.Metrics, f func(res pcommon.Map, m pmetric.Metric)) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				f(rms.At(i).Resource().Attributes(), ms.At(k))
			}
		}
	}
}

func engineNames(batches []pmetric.Metrics) map[string]bool {
	out := map[string]bool{}
	for _, md := range batches {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			if v, ok := rms.At(i).Resource().Attributes().Get(spec.AttrEngineName); ok && v.Str() != "" {
				out[v.Str()] = true
			}
		}
	}
	return out
}

// runLLMNormalize maps the engines' output (unmapped_metrics: keep, the
// default) and normalises a span carrying the legacy GenAI attributes.
func runLLMNormalize(t *testing.T, o *offenders, raw []pmetric.Metrics, native map[string]bool) []pmetric.Metrics {
	if len(raw) == 0 {
		t.Skip("no engine output")
	}
	f := llmnormalizeprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*llmnormalizeprocessor.Config)
	if cfg.UnmappedMetrics != llmnormalizeprocessor.UnmappedKeep {
		t.Fatalf("unmapped_metrics default is %q; the exclusion of native names assumes keep", cfg.UnmappedMetrics)
	}
	ctx := context.Background()
	sinkM, sinkT := new(consumertest.MetricsSink), new(consumertest.TracesSink)
	pm, err := f.CreateMetrics(ctx, processortest.NewNopSettings(f.Type()), cfg, sinkM)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := f.CreateTraces(ctx, processortest.NewNopSettings(f.Type()), cfg, sinkT)
	if err != nil {
		t.Fatal(err)
	}
	startAll(t, pm, pt)
	for _, md := range raw {
		c := pmetric.NewMetrics()
		md.CopyTo(c)
		if err := pm.ConsumeMetrics(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	got := sinkM.AllMetrics()
	mapped := 0
	for _, md := range got {
		forMetrics(md, func(_ pcommon.Map, m pmetric.Metric) {
			if spec.IsKnownMetric(m.Name()) && m.Name() != spec.EngineUp && m.Name() != spec.EngineScrapeDuration {
				mapped++
			}
		})
	}
	if mapped == 0 {
		t.Fatal("llmnormalize mapped nothing")
	}
	passed := o.checkMetrics("llmnormalize", got, native)
	t.Logf("llmnormalize: %d unified metrics, %d engine-native metrics passed through (not checked)", mapped, passed)

	// An application span with deprecated and vendor attributes: only what
	// llmnormalize adds or renames to is ours.
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "chat-frontend")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName("chat")
	a := sp.Attributes()
	a.PutInt("gen_ai.usage.prompt_tokens", 12)
	a.PutInt("gen_ai.usage.completion_tokens", 34)
	a.PutStr("gen_ai.system", "openai")
	a.PutStr("llm.model", "llama-3-8b")
	a.PutStr("trace_id", "0123456789ABCDEF0123456789abcdef")
	a.PutStr("llm.prompt_template_id", "t1")
	given := map[string]bool{}
	keys(a, func(k string) { given[k] = true })
	keys(rs.Resource().Attributes(), func(k string) { given[k] = true })
	if err := pt.ConsumeTraces(ctx, td); err != nil {
		t.Fatal(err)
	}
	o.checkTraces("llmnormalize", sinkT.AllTraces(), given)
	return got
}

// runProfileImport imports real PyTorch profiler traces (one with module
// paths, one with memory events), CUDA memory snapshots (pickle and JSON)
// and an Nsight Systems export.
func runProfileImport(t *testing.T, o *offenders) ([]pmetric.Metrics, []ptrace.Traces, []plog.Logs) {
	dir := t.TempDir()
	files := map[string]string{
		"b200_eager.pt.trace.json.gz": "../../../shared/fixtures/traces/tracelens-b200_eager.json.gz",
		"df_index.pt.trace.json.gz":   "../../../shared/fixtures/traces/hta-df_index_resolver.json.gz",
		"snapshot_p4.pickle":          "../../internal/profiles/snapshot/testdata/snapshot_p4.pickle",
		"snapshot.json.gz":            "../../internal/profiles/snapshot/testdata/snapshot.json.gz",
		"report.sqlite":               "../../internal/profiles/nsys/testdata/recent.sqlite",
	}
	for name, src := range files {
		b, err := os.ReadFile(testutil.SharedFixture(t, filepath.Dir(src), filepath.Base(src)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".tmp"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, name+".tmp"), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	f := profileimportreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*profileimportreceiver.Config)
	cfg.Include = []string{filepath.Join(dir, "*.json.gz"), filepath.Join(dir, "*.pickle"), filepath.Join(dir, "*.sqlite")}
	cfg.PollInterval = 20 * time.Millisecond
	cfg.SettleTime = 60 * time.Millisecond
	ctx := context.Background()
	set := receivertest.NewNopSettings(f.Type())
	sinkT, sinkM, sinkL := new(consumertest.TracesSink), new(consumertest.MetricsSink), new(consumertest.LogsSink)
	tr, err := f.CreateTraces(ctx, set, cfg, sinkT)
	if err != nil {
		t.Fatal(err)
	}
	mr, err := f.CreateMetrics(ctx, set, cfg, sinkM)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := f.CreateLogs(ctx, set, cfg, sinkL)
	if err != nil {
		t.Fatal(err)
	}
	startAll(t, tr, mr, lr)
	// Every file shows up (as llm.profile.file) in the metrics (Kineto
	// memory, snapshots) or traces (Kineto, nsys), then nothing more comes.
	imported := func() map[string]bool {
		seen := map[string]bool{}
		note := func(a pcommon.Map) {
			if v, ok := a.Get(spec.AttrProfileFile); ok {
				seen[filepath.Base(v.Str())] = true
			}
		}
		for _, md := range sinkM.AllMetrics() {
			for i := 0; i < md.ResourceMetrics().Len(); i++ {
				note(md.ResourceMetrics().At(i).Resource().Attributes())
			}
		}
		for _, td := range sinkT.AllTraces() {
			for i := 0; i < td.ResourceSpans().Len(); i++ {
				note(td.ResourceSpans().At(i).Resource().Attributes())
			}
		}
		return seen
	}
	waitFor(t, "every profile imported", 120*time.Second, func() bool { return len(imported()) == len(files) })
	last, stableSince := -1, time.Now()
	waitFor(t, "the import to settle", 30*time.Second, func() bool {
		n := len(sinkT.AllTraces()) + len(sinkM.AllMetrics()) + len(sinkL.AllLogs())
		if n != last {
			last, stableSince = n, time.Now()
		}
		return time.Since(stableSince) > 500*time.Millisecond
	})
	kinds := map[string]int{}
	for _, ld := range sinkL.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			for j := 0; j < ld.ResourceLogs().At(i).ScopeLogs().Len(); j++ {
				lrs := ld.ResourceLogs().At(i).ScopeLogs().At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					if v, ok := lrs.At(k).Attributes().Get(spec.IncidentKind); ok {
						kinds[v.Str()]++
					}
				}
			}
		}
	}
	if kinds[spec.IncidentKindLeakSuspect] == 0 || kinds[spec.IncidentKindGPUOOM] == 0 {
		t.Errorf("profileimport wrote records of kinds %v; want leak suspects and an out-of-memory event to check", kinds)
	}
	o.checkMetrics("profileimport", sinkM.AllMetrics(), nil)
	o.checkTraces("profileimport", sinkT.AllTraces(), nil)
	o.checkLogs("profileimport", sinkL.AllLogs())
	return sinkM.AllMetrics(), sinkT.AllTraces(), sinkL.AllLogs()
}

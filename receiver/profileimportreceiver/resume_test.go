// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package profileimportreceiver

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llmops-otel/otelcol-llmops/internal/offheap"
	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/metadata"
)

// gatedTraces takes the first `accept` span batches and refuses the rest,
// as a pipeline whose persistent sending queue has filled does.
type gatedTraces struct {
	mu      sync.Mutex
	accept  int
	batches int
	refused int
	spans   map[[8]byte]int // span id → times received
}

func (g *gatedTraces) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (g *gatedTraces) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.accept >= 0 && g.batches >= g.accept {
		g.refused++
		return errors.New("sending queue is full")
	}
	g.batches++
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j).Spans()
			for k := 0; k < ss.Len(); k++ {
				g.spans[ss.At(k).SpanID()]++
			}
		}
	}
	return nil
}

func (g *gatedTraces) state() (batches, refused, distinct, dups int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, n := range g.spans {
		dups += n - 1
	}
	return g.batches, g.refused, len(g.spans), dups
}

// startGated runs one receiver on dir with traces into g and metrics and
// logs into ms and ls.
func startGated(t *testing.T, dir string, st *memStorage, g *gatedTraces, ms *consumertest.MetricsSink, ls *consumertest.LogsSink) func() {
	t.Helper()
	return startInto(t, dir, st, func(cfg *Config) {
		cfg.Include = []string{filepath.Join(dir, "*.json.gz")}
		cfg.SettleTime = 0
		// Deleted once imported: the file's absence says the import finished.
		cfg.AfterImport = "delete"
	}, receivertest.NewNopSettings(metadata.Type), g, ms, ls)
}

// TestInterruptedImportResumes: a pipeline takes the first span batches of
// a large profile and then refuses; the import is retried from where it
// stopped (no batch twice), and after a restart on the same storage it
// resumes there too. Across both runs every span arrives exactly once, and
// the metrics and logs once.
func TestInterruptedImportResumes(t *testing.T) {
	data := syntheticProfile(t, 7000, 40)

	// The whole profile in one go: how many spans and batches it makes.
	full := &gatedTraces{accept: -1, spans: map[[8]byte]int{}}
	dir := t.TempDir()
	writeAtomically(t, filepath.Join(dir, "p.json.gz"), data)
	fm, fl := new(consumertest.MetricsSink), new(consumertest.LogsSink)
	startGated(t, dir, nil, full, fm, fl)
	waitFor(t, "the uninterrupted import", func() bool { return gone(filepath.Join(dir, "p.json.gz")) })
	wantBatches, _, wantSpans, _ := full.state()
	if wantBatches < 3 {
		t.Fatalf("the fixture makes %d span batches; the test needs at least 3", wantBatches)
	}

	st := &memStorage{data: map[string][]byte{}}
	dir = t.TempDir()
	writeAtomically(t, filepath.Join(dir, "p.json.gz"), data)
	first := &gatedTraces{accept: 1, spans: map[[8]byte]int{}}
	m1, l1 := new(consumertest.MetricsSink), new(consumertest.LogsSink)
	stop := startGated(t, dir, st, first, m1, l1)
	// Refused at least twice: the retry after the first refusal must not
	// send batch 1 again.
	waitFor(t, "two refusals", func() bool { _, r, _, _ := first.state(); return r >= 2 })
	first.mu.Lock()
	first.accept = 2 // room for one more batch
	first.mu.Unlock()
	waitFor(t, "the second batch", func() bool { b, _, _, _ := first.state(); return b == 2 })
	waitFor(t, "a refusal of the third", func() bool { _, r, _, _ := first.state(); return r >= 3 })
	stop()
	b1, _, _, d1 := first.state()
	if d1 > 0 || b1 != 2 {
		t.Fatalf("first run: %d batches taken, %d spans twice; want 2 batches, none twice", b1, d1)
	}
	if gone(filepath.Join(dir, "p.json.gz")) || m1.DataPointCount() > 0 || l1.LogRecordCount() > 0 {
		t.Fatal("metrics or logs were sent before all spans were")
	}

	second := &gatedTraces{accept: -1, spans: map[[8]byte]int{}}
	m2, l2 := new(consumertest.MetricsSink), new(consumertest.LogsSink)
	startGated(t, dir, st, second, m2, l2)
	waitFor(t, "the resumed import", func() bool { return gone(filepath.Join(dir, "p.json.gz")) })
	b2, _, _, d2 := second.state()
	if b2 != wantBatches-2 || d2 > 0 {
		t.Errorf("after the restart %d batches were sent (%d spans twice), want the %d not sent before", b2, d2, wantBatches-2)
	}
	seen := map[[8]byte]int{}
	for _, g := range []*gatedTraces{first, second} {
		for id, n := range g.spans {
			seen[id] += n
		}
	}
	dups := 0
	for _, n := range seen {
		dups += n - 1
	}
	if len(seen) != wantSpans || dups != 0 {
		t.Errorf("across the restart %d distinct spans with %d duplicates, want %d exactly once", len(seen), dups, wantSpans)
	}
	if fm.DataPointCount()+fl.LogRecordCount() == 0 {
		t.Error("the fixture made no memory metrics or log records: their resumption is not tested")
	}
	if m2.DataPointCount() != fm.DataPointCount() || l2.LogRecordCount() != fl.LogRecordCount() {
		t.Errorf("metrics %d and logs %d after resuming, want %d and %d", m2.DataPointCount(), l2.LogRecordCount(), fm.DataPointCount(), fl.LogRecordCount())
	}
	// Done: no progress record left behind.
	st.mu.Lock()
	defer st.mu.Unlock()
	for k := range st.data {
		if len(k) > 9 && k[:9] == "progress|" {
			t.Errorf("progress record %q left in storage after the import finished", k)
		}
	}
}

func gone(path string) bool {
	_, err := os.Stat(path)
	return errors.Is(err, os.ErrNotExist)
}

// syntheticProfile is a Kineto trace of n CPU ops (several span batches)
// and allocs GPU allocations never freed (memory metrics and a leak
// suspect), gzipped.
func syntheticProfile(t *testing.T, n, allocs int) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`{"schemaVersion":1,"baseTimeNanoseconds":1700000000000000000,"traceEvents":[`)
	ts := int64(1000)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"ph":"X","cat":"cpu_op","name":"aten::mm_%d","pid":7,"tid":7,"ts":%d,"dur":40,"args":{"External id":%d}}`, i%50, ts, i+1)
		ts += 50
		if i%(n/allocs) == 0 {
			fmt.Fprintf(&b, `,{"ph":"i","s":"t","cat":"[memory]","name":"[memory]","pid":7,"tid":7,"ts":%d,"args":{"Device Type":1,"Device Id":0,"Addr":%d,"Bytes":4194304,"Total Allocated":%d,"Total Reserved":1073741824}}`,
				ts-30, 0x7f0000000000+int64(i)*0x1000000, int64(i/(n/allocs)+1)*4194304)
		}
	}
	b.WriteString(`]}`)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return z.Bytes()
}

// TestObsReportCountsEachHandOver: every span batch, the metrics and the
// logs an import hands the pipeline are counted in the collector's
// standard receiver telemetry (transport "file"): accepted ones in
// otelcol_receiver_accepted_*, refused ones in otelcol_receiver_refused_*,
// so a profile import shows up on the same dashboards as every other
// receiver.
func TestObsReportCountsEachHandOver(t *testing.T) {
	data := syntheticProfile(t, 7000, 40)
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tt.Shutdown(context.Background()) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tt.NewTelemetrySettings()

	dir := t.TempDir()
	writeAtomically(t, filepath.Join(dir, "p.json.gz"), data)
	g := &gatedTraces{accept: 1, spans: map[[8]byte]int{}}
	ms, ls := new(consumertest.MetricsSink), new(consumertest.LogsSink)
	startInto(t, dir, nil, func(cfg *Config) {
		cfg.Include = []string{filepath.Join(dir, "*.json.gz")}
		cfg.SettleTime = 0
		cfg.AfterImport = "delete"
	}, set, g, ms, ls)
	waitFor(t, "a refused batch", func() bool { _, r, _, _ := g.state(); return r >= 1 })
	g.mu.Lock()
	g.accept = -1
	g.mu.Unlock()
	waitFor(t, "the import to finish", func() bool { return gone(filepath.Join(dir, "p.json.gz")) })

	_, refusedBatches, distinct, _ := g.state()
	sum := func(name string) (total int64, transports map[string]bool) {
		transports = map[string]bool{}
		m, err := tt.GetMetric(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sm, ok := m.Data.(metricdata.Sum[int64])
		if !ok {
			t.Fatalf("%s: %T, want a sum of int64", name, m.Data)
		}
		for _, dp := range sm.DataPoints {
			total += dp.Value
			if v, ok := dp.Attributes.Value("transport"); ok {
				transports[v.AsString()] = true
			}
		}
		return total, transports
	}
	accepted, tr := sum("otelcol_receiver_accepted_spans")
	if accepted != int64(distinct) || !tr["file"] {
		t.Errorf("accepted spans %d (transports %v), want %d under transport file", accepted, tr, distinct)
	}
	if refused, _ := sum("otelcol_receiver_refused_spans"); refused < int64(refusedBatches) || refused == 0 {
		t.Errorf("refused spans %d after %d refused batches", refused, refusedBatches)
	}
	if pts, _ := sum("otelcol_receiver_accepted_metric_points"); pts != int64(ms.DataPointCount()) || pts == 0 {
		t.Errorf("accepted metric points %d, the pipeline got %d", pts, ms.DataPointCount())
	}
	if recs, _ := sum("otelcol_receiver_accepted_log_records"); recs != int64(ls.LogRecordCount()) || recs == 0 {
		t.Errorf("accepted log records %d, the pipeline got %d", recs, ls.LogRecordCount())
	}
}

// TestOffHeapMemoryIsReported: what a Kineto import maps outside the Go
// heap, which GOMEMLIMIT and the memory_limiter cannot see, is in the
// receiver's own telemetry (otelcol_profileimport_offheap_memory).
func TestOffHeapMemoryIsReported(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux maps off the heap")
	}
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tt.Shutdown(context.Background()) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tt.NewTelemetrySettings()

	dir := t.TempDir()
	writeAtomically(t, filepath.Join(dir, "p.json.gz"), syntheticProfile(t, 7000, 40))
	ts, ms, ls := new(consumertest.TracesSink), new(consumertest.MetricsSink), new(consumertest.LogsSink)
	startInto(t, dir, nil, func(cfg *Config) {
		cfg.Include = []string{filepath.Join(dir, "*.json.gz")}
		cfg.SettleTime = 0
		cfg.AfterImport = "delete"
	}, set, ts, ms, ls)
	waitFor(t, "the import to finish", func() bool { return gone(filepath.Join(dir, "p.json.gz")) })

	m, err := tt.GetMetric("otelcol_profileimport_offheap_memory")
	if err != nil {
		t.Fatal(err)
	}
	g, ok := m.Data.(metricdata.Gauge[int64])
	if !ok || len(g.DataPoints) != 1 {
		t.Fatalf("%T with %v, want one int64 gauge point", m.Data, m.Data)
	}
	// The import's regions wait in the pool for the next one: still
	// mapped, and counted.
	if v := g.DataPoints[0].Value; v <= 0 || v > offheap.Budget {
		t.Fatalf("off-heap memory %d bytes after importing %d spans, want within (0, %d]", v, ts.SpanCount(), offheap.Budget)
	}
}

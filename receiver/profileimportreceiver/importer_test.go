// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package profileimportreceiver

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/metadata"
)

const fixtureDir = "../../../shared/fixtures/traces"

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testutil.SharedFixture(t, fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// memStorage is a storage extension keeping its data in memory, so that a
// test can restart the receiver against the same state. (The end-to-end
// test uses the real file_storage extension.)
type memStorage struct {
	mu   sync.Mutex
	data map[string][]byte
}

func (s *memStorage) Start(context.Context, component.Host) error { return nil }
func (s *memStorage) Shutdown(context.Context) error              { return nil }
func (s *memStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return &memClient{s}, nil
}

type memClient struct{ s *memStorage }

func (c *memClient) Get(_ context.Context, k string) ([]byte, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.data[k], nil
}

func (c *memClient) Set(_ context.Context, k string, v []byte) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.data[k] = v
	return nil
}

func (c *memClient) Delete(_ context.Context, k string) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	delete(c.s.data, k)
	return nil
}

func (c *memClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			op.Value, _ = c.Get(ctx, op.Key)
		case storage.Set:
			_ = c.Set(ctx, op.Key, op.Value)
		case storage.Delete:
			_ = c.Delete(ctx, op.Key)
		}
	}
	return nil
}

func (c *memClient) Close(context.Context) error { return nil }

type hostWithStorage struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h hostWithStorage) GetExtensions() map[component.ID]component.Component { return h.ext }

var storageID = component.MustNewIDWithName("file_storage", "test")

type running struct {
	traces  *consumertest.TracesSink
	metrics *consumertest.MetricsSink
	logs    *consumertest.LogsSink
	stop    func()
}

// start runs one receiver (all three signals sharing one importer) on dir,
// into sinks.
func start(t *testing.T, dir string, st *memStorage, mutate func(*Config)) running {
	t.Helper()
	return startWith(t, dir, st, mutate, receivertest.NewNopSettings(metadata.Type))
}

// startWith is start with the receiver's settings given (e.g. a logger the
// test reads).
func startWith(t *testing.T, dir string, st *memStorage, mutate func(*Config), set receiver.Settings) running {
	t.Helper()
	r := running{traces: new(consumertest.TracesSink), metrics: new(consumertest.MetricsSink), logs: new(consumertest.LogsSink)}
	r.stop = startInto(t, dir, st, mutate, set, r.traces, r.metrics, r.logs)
	return r
}

// startInto runs one receiver on dir into the given consumers and returns
// its stop (also run when the test ends).
func startInto(t *testing.T, dir string, st *memStorage, mutate func(*Config), set receiver.Settings, traces consumer.Traces, metrics consumer.Metrics, logs consumer.Logs) func() {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Include = []string{filepath.Join(dir, "*.json"), filepath.Join(dir, "*.json.gz")}
	cfg.PollInterval = 20 * time.Millisecond
	cfg.SettleTime = 60 * time.Millisecond
	if st != nil {
		id := storageID
		cfg.Storage = &id
	}
	if mutate != nil {
		mutate(cfg)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	f := NewFactory()
	ctx := context.Background()
	tr, err := f.CreateTraces(ctx, set, cfg, traces)
	if err != nil {
		t.Fatal(err)
	}
	mr, err := f.CreateMetrics(ctx, set, cfg, metrics)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := f.CreateLogs(ctx, set, cfg, logs)
	if err != nil {
		t.Fatal(err)
	}
	host := hostWithStorage{Host: componenttest.NewNopHost(), ext: map[component.ID]component.Component{}}
	if st != nil {
		host.ext[storageID] = extension.Extension(st)
	}
	for _, c := range []component.Component{tr, mr, lr} {
		if err := c.Start(ctx, host); err != nil {
			t.Fatal(err)
		}
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			for _, c := range []component.Component{tr, mr, lr} {
				if err := c.Shutdown(ctx); err != nil {
					t.Error(err)
				}
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// writeAtomically writes like Kineto: a .tmp file, then a rename.
func writeAtomically(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestImportsEachFileOnce(t *testing.T) {
	dir := t.TempDir()
	r := start(t, dir, nil, nil)
	writeAtomically(t, filepath.Join(dir, "rank0.pt.trace.json.gz"), fixture(t, "hta-simple_add.json.gz"))
	waitFor(t, "spans", func() bool { return len(r.traces.AllTraces()) == 1 })
	spans := r.traces.SpanCount()
	if spans == 0 {
		t.Fatal("no spans")
	}
	// Several more polls: nothing is imported twice.
	time.Sleep(300 * time.Millisecond)
	if n := len(r.traces.AllTraces()); n != 1 {
		t.Fatalf("imported %d times", n)
	}
}

func TestSlowlyWrittenFileIsImportedWhole(t *testing.T) {
	dir := t.TempDir()
	data := gunzip(t, fixture(t, "hta-simple_add.json.gz"))
	r := start(t, dir, nil, func(c *Config) { c.SettleTime = 300 * time.Millisecond })
	path := filepath.Join(dir, "slow.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	half := len(data) / 2
	if _, err := f.Write(data[:half]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond) // the writer pauses, less than settle_time
	if _, err := f.Write(data[half:]); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	waitFor(t, "the slow file", func() bool { return len(r.traces.AllTraces()) == 1 })
	time.Sleep(400 * time.Millisecond)
	if n := len(r.traces.AllTraces()); n != 1 {
		t.Fatalf("imported %d times", n)
	}
}

func TestRestartNeitherReimportsNorSkips(t *testing.T) {
	dir := t.TempDir()
	st := &memStorage{data: map[string][]byte{}}
	first := start(t, dir, st, nil)
	writeAtomically(t, filepath.Join(dir, "a.json.gz"), fixture(t, "hta-simple_add.json.gz"))
	waitFor(t, "first import", func() bool { return len(first.traces.AllTraces()) == 1 })
	first.stop()

	// While the collector is down, a second profile arrives.
	writeAtomically(t, filepath.Join(dir, "b.json.gz"), fixture(t, "tracelens-sglang_qwen3_decode.json.gz"))
	second := start(t, dir, st, nil)
	waitFor(t, "the file written while down", func() bool { return len(second.traces.AllTraces()) == 1 })
	time.Sleep(300 * time.Millisecond)
	if n := len(second.traces.AllTraces()); n != 1 {
		t.Fatalf("after a restart %d files were imported, want only the new one", n)
	}
}

func TestBrokenFileEmitsNothingAndIsNotRetried(t *testing.T) {
	dir := t.TempDir()
	r := start(t, dir, nil, nil)
	data := gunzip(t, fixture(t, "hta-simple_add.json.gz"))
	path := filepath.Join(dir, "killed.json")
	writeAtomically(t, path, data[:len(data)*2/3]) // a job killed mid-write
	time.Sleep(500 * time.Millisecond)
	if n := len(r.traces.AllTraces()) + len(r.metrics.AllMetrics()) + len(r.logs.AllLogs()); n != 0 {
		t.Fatalf("a truncated file emitted %d batches", n)
	}
	// Fixed (rewritten whole): a new version, imported.
	writeAtomically(t, path, data)
	waitFor(t, "the repaired file", func() bool { return len(r.traces.AllTraces()) == 1 })
}

func TestAfterImportAndLimits(t *testing.T) {
	dir, archive := t.TempDir(), t.TempDir()
	r := start(t, dir, nil, func(c *Config) { c.AfterImport = "move_to " + archive })
	writeAtomically(t, filepath.Join(dir, "m.json.gz"), fixture(t, "hta-simple_add.json.gz"))
	waitFor(t, "import", func() bool { return len(r.traces.AllTraces()) == 1 })
	waitFor(t, "move", func() bool {
		_, err := os.Stat(filepath.Join(archive, "m.json.gz"))
		return err == nil
	})

	dir2 := t.TempDir()
	d := start(t, dir2, nil, func(c *Config) { c.AfterImport = AfterImportDelete })
	writeAtomically(t, filepath.Join(dir2, "d.json.gz"), fixture(t, "hta-simple_add.json.gz"))
	waitFor(t, "import", func() bool { return len(d.traces.AllTraces()) == 1 })
	waitFor(t, "delete", func() bool {
		_, err := os.Stat(filepath.Join(dir2, "d.json.gz"))
		return os.IsNotExist(err)
	})

	dir3 := t.TempDir()
	small := start(t, dir3, nil, func(c *Config) { c.MaxFileSize = 1000 })
	writeAtomically(t, filepath.Join(dir3, "big.json.gz"), fixture(t, "hta-simple_add.json.gz"))
	time.Sleep(400 * time.Millisecond)
	if len(small.traces.AllTraces()) != 0 {
		t.Fatal("a file over max_file_size was imported")
	}
}

func TestConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	if err := testutil.LoadConfig(t, metadata.Type, "full", cfg); err != nil {
		t.Fatal(err)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	if action, dir := cfg.afterImport(); action != AfterImportMoveTo || dir != "/profiles/imported" || cfg.Storage.String() != "file_storage/profiles" {
		t.Fatalf("config: %+v", cfg)
	}
	bad := createDefaultConfig().(*Config)
	if err := testutil.LoadConfig(t, metadata.Type, "bad", bad); err != nil {
		t.Fatal(err)
	}
	err := confmap.Validate(bad)
	if cfg.ParseWorkers != 4 {
		t.Fatalf("parse_workers: %d", cfg.ParseWorkers)
	}
	for _, want := range []string{"include[0]", "after_import", "max_concurrent", "parse_workers"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSlowImportIsNotStartedTwice: an import that takes longer than the
// settle time must not be started again by the next polls.
func TestSlowImportIsNotStartedTwice(t *testing.T) {
	dir := t.TempDir()
	r := start(t, dir, nil, func(c *Config) {
		c.PollInterval = time.Millisecond
		c.SettleTime = time.Millisecond
		c.MaxConcurrent = 4
	})
	// The largest fixture takes far longer to import than the poll and
	// settle intervals.
	// Its spans come in several batches; the metrics, once per import,
	// follow the last one.
	writeAtomically(t, filepath.Join(dir, "big.json.gz"), fixture(t, "hta-df_index_resolver.json.gz"))
	waitFor(t, "import", func() bool { return len(r.metrics.AllMetrics()) == 1 })
	time.Sleep(300 * time.Millisecond)
	if n := len(r.metrics.AllMetrics()); n != 1 {
		t.Fatalf("imported %d times", n)
	}
	ids := map[pcommon.SpanID]bool{}
	for _, td := range r.traces.AllTraces() {
		rs := td.ResourceSpans()
		for i := 0; i < rs.Len(); i++ {
			for j := 0; j < rs.At(i).ScopeSpans().Len(); j++ {
				sp := rs.At(i).ScopeSpans().At(j).Spans()
				for k := 0; k < sp.Len(); k++ {
					if id := sp.At(k).SpanID(); ids[id] {
						t.Fatalf("span %v sent twice", id)
					} else {
						ids[id] = true
					}
				}
			}
		}
	}
	if len(r.traces.AllTraces()) < 2 {
		t.Errorf("%d span batches for %d spans", len(r.traces.AllTraces()), len(ids))
	}
}

// TestImportsMemorySnapshots: CUDA memory snapshots, pickled or as JSON,
// are recognised among the watched files and become outstanding memory per
// allocation site, fragmentation, leak suspects and the OOM record — the
// same signals as Kineto traces, and no spans.
func TestImportsMemorySnapshots(t *testing.T) {
	dir := t.TempDir()
	r := start(t, dir, nil, func(c *Config) {
		c.Include = append(c.Include, filepath.Join(dir, "*.pickle"))
	})
	for _, name := range []string{"snapshot_p4.pickle", "snapshot.json.gz"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "internal", "profiles", "snapshot", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		writeAtomically(t, filepath.Join(dir, name), data)
	}
	waitFor(t, "both snapshots", func() bool { return len(r.logs.AllLogs()) == 2 && len(r.metrics.AllMetrics()) == 2 })
	if n := len(r.traces.AllTraces()); n != 0 {
		t.Fatalf("a snapshot produced %d span batches", n)
	}
	for i, ld := range r.logs.AllLogs() {
		kinds := map[string]int{}
		var oomTrace string
		rls := ld.ResourceLogs()
		for j := 0; j < rls.Len(); j++ {
			sls := rls.At(j).ScopeLogs()
			for k := 0; k < sls.Len(); k++ {
				lrs := sls.At(k).LogRecords()
				for l := 0; l < lrs.Len(); l++ {
					v, _ := lrs.At(l).Attributes().Get("incident.kind")
					kinds[v.Str()]++
					if v.Str() == "gpu_oom" {
						oomTrace = lrs.At(l).TraceID().String()
					}
				}
			}
		}
		if kinds["leak_suspect"] == 0 || kinds["gpu_oom"] != 1 || oomTrace != "4f8bb47fd78c860c02e418d96df5eaf1" {
			t.Fatalf("snapshot %d: record kinds %v, OOM trace %q", i, kinds, oomTrace)
		}
	}
	var outstanding int
	for _, md := range r.metrics.AllMetrics() {
		rms := md.ResourceMetrics()
		for j := 0; j < rms.Len(); j++ {
			sms := rms.At(j).ScopeMetrics()
			for k := 0; k < sms.Len(); k++ {
				ms := sms.At(k).Metrics()
				for l := 0; l < ms.Len(); l++ {
					if ms.At(l).Name() == "llm.profile.memory.outstanding" {
						outstanding++
					}
				}
			}
		}
	}
	if outstanding != 2 {
		t.Fatalf("llm.profile.memory.outstanding in %d of 2 snapshots", outstanding)
	}
}

// TestImportsNsightExports: an Nsight Systems SQLite export in the watched
// directory becomes spans (kernels under their CUDA launches under NVTX
// ranges) and memory metrics, like a Kineto trace.
func TestImportsNsightExports(t *testing.T) {
	dir := t.TempDir()
	r := start(t, dir, nil, func(c *Config) {
		c.Include = append(c.Include, filepath.Join(dir, "*.sqlite"))
	})
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "profiles", "nsys", "testdata", "recent.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	writeAtomically(t, filepath.Join(dir, "report.sqlite"), data)
	waitFor(t, "the export's spans and metrics", func() bool {
		return len(r.traces.AllTraces()) > 0 && len(r.metrics.AllMetrics()) > 0
	})
	kinds := map[string]int{}
	withParent := 0
	for _, td := range r.traces.AllTraces() {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					v, _ := spans.At(k).Attributes().Get("llm.profile.category")
					kinds[v.Str()]++
					if !spans.At(k).ParentSpanID().IsEmpty() {
						withParent++
					}
				}
			}
		}
	}
	if len(kinds) < 3 || withParent == 0 {
		t.Fatalf("span categories %v, %d with a parent", kinds, withParent)
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package profiles

import (
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/offheap"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
)

// recorder is a Sink that keeps the order of what it was handed and can
// refuse one kind of signal.
type recorder struct {
	order   []string
	spans   int
	batches int
	points  int
	records int
	refuse  string // "spans", "metrics" or "logs"
}

var errFull = errors.New("queue is full")

func (r *recorder) ConsumeSpans(_ context.Context, td ptrace.Traces) error {
	if r.refuse == "spans" {
		return errFull
	}
	r.order = append(r.order, "spans")
	r.spans += td.SpanCount()
	r.batches++
	return nil
}

func (r *recorder) ConsumeMetrics(_ context.Context, md pmetric.Metrics) error {
	if r.refuse == "metrics" {
		return errFull
	}
	r.order = append(r.order, "metrics")
	r.points += md.DataPointCount()
	return nil
}

func (r *recorder) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	if r.refuse == "logs" {
		return errFull
	}
	r.order = append(r.order, "logs")
	r.records += ld.LogRecordCount()
	return nil
}

// kinetoTrace writes a small Kineto trace: a step with n kernels, and a
// 4 MiB allocation that is never freed (a leak suspect).
func kinetoTrace(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"schemaVersion":1,"deviceProperties":[],"traceEvents":[`)
	b.WriteString(`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100000}`)
	for i := range n {
		ts := 10 + i*10
		b.WriteString(`,{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":` + itoa(ts) + `,"dur":5,"args":{"External id":` + itoa(i+1) + `}}`)
		b.WriteString(`,{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":` + itoa(ts+2) + `,"dur":3,"args":{"device":0,"stream":7,"correlation":` + itoa(i+1) + `,"External id":` + itoa(i+1) + `}}`)
	}
	b.WriteString(`,{"ph":"i","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":20,"s":"t","args":{"Device Type":1,"Device Id":0,"Addr":4096,"Bytes":4194304,"Total Allocated":4194304,"Total Reserved":8388608}}`)
	b.WriteString(`]}`)
	p := filepath.Join(t.TempDir(), "t.pt.trace.json")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestImportHandsOverSpansThenMetricsThenLogs(t *testing.T) {
	path := kinetoTrace(t, 3*signals.BatchSize/2)
	r := &recorder{}
	afterRead := 0
	res, err := Import(context.Background(), path, Options{AfterRead: func(res *Result) error {
		afterRead++
		if r.spans > 0 {
			t.Error("AfterRead called after spans were handed over: a Kineto trace's spans need the whole file")
		}
		return nil
	}}, r)
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != FormatKineto || afterRead != 1 {
		t.Fatalf("format %v, AfterRead called %d times", res.Format, afterRead)
	}
	if r.batches < 2 || r.spans != res.Spans || res.SpanBatches != r.batches {
		t.Errorf("sink got %d spans in %d batches, result says %d in %d", r.spans, r.batches, res.Spans, res.SpanBatches)
	}
	want := append(slices.Repeat([]string{"spans"}, r.batches), "metrics", "logs")
	if strings.Join(r.order, ",") != strings.Join(want, ",") {
		t.Errorf("order %v, want %v", r.order, want)
	}
	if r.points != res.MemoryPoints || r.points == 0 || r.records != res.LogRecords || r.records == 0 {
		t.Errorf("metrics %d (result %d), logs %d (result %d)", r.points, res.MemoryPoints, r.records, res.LogRecords)
	}
	if res.TraceID.IsEmpty() || res.Kineto.Events == 0 {
		t.Errorf("trace id %v, events %d", res.TraceID, res.Kineto.Events)
	}
}

// TestImportTellsFileErrorsFromSinkErrors: the receiver retries what its
// pipeline refused and gives up on a broken file; it can only do so if
// the two errors are told apart.
func TestImportTellsFileErrorsFromSinkErrors(t *testing.T) {
	path := kinetoTrace(t, 10)
	for _, refuse := range []string{"spans", "metrics", "logs"} {
		_, err := Import(context.Background(), path, Options{}, &recorder{refuse: refuse})
		var se *SinkError
		if !errors.As(err, &se) || !errors.Is(err, errFull) {
			t.Errorf("refused %s: %v, want a *SinkError wrapping the sink's error", refuse, err)
		}
	}
	broken := filepath.Join(t.TempDir(), "broken.json")
	if err := os.WriteFile(broken, []byte(`{"traceEvents":[{"ph":"X",`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	_, err := Import(context.Background(), broken, Options{}, r)
	var fe *FileError
	if !errors.As(err, &fe) || fe.Path != broken || !strings.HasPrefix(err.Error(), broken+": ") || strings.Count(err.Error(), broken) != 1 {
		t.Errorf("broken trace: %v, want a *FileError naming the file once", err)
	}
	if len(r.order) != 0 {
		t.Errorf("a broken trace handed over %v", r.order)
	}
	_, err = Import(context.Background(), filepath.Join(t.TempDir(), "missing.json"), Options{}, r)
	if !errors.As(err, &fe) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	stop := errors.New("stop here")
	_, err = Import(context.Background(), path, Options{AfterRead: func(*Result) error { return stop }}, r)
	if !errors.As(err, &fe) || !errors.Is(err, stop) || len(r.order) != 0 {
		t.Errorf("AfterRead's error: %v (handed over %v), want a *FileError and nothing sent", err, r.order)
	}
}

// TestImportReadsTheOpenFile: with Options.File, the file read is the one
// the caller opened, whatever its name points to by then.
func TestImportReadsTheOpenFile(t *testing.T) {
	path := kinetoTrace(t, 10)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	// The name now names another file (the opened one lives on).
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("not a trace"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	res, err := Import(context.Background(), path, Options{File: f}, r)
	if err != nil || r.spans == 0 || res.Format != FormatKineto {
		t.Fatalf("import of the open file: %v, %d spans", err, r.spans)
	}
}

// TestDetect: every format in the tree's test data is told apart by its
// content through the open file; a gzipped trace is a trace.
func TestDetect(t *testing.T) {
	cases := map[string]Format{}
	snaps, _ := filepath.Glob(filepath.Join("snapshot", "testdata", "*.pickle"))
	for _, p := range snaps {
		cases[p] = FormatSnapshot
	}
	cases[filepath.Join("snapshot", "testdata", "snapshot.json.gz")] = FormatSnapshot
	cases[filepath.Join("nsys", "testdata", "recent.sqlite")] = FormatNsys
	trace := kinetoTrace(t, 10)
	cases[trace] = FormatKineto
	gz := trace + ".gz"
	writeGzip(t, gz, trace)
	cases[gz] = FormatKineto
	if len(snaps) < 5 {
		t.Fatalf("only %d snapshots found", len(snaps))
	}
	for p, want := range cases {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Detect(p, f)
		_ = f.Close()
		if err != nil || got != want {
			t.Errorf("%s: %v (%v), want %v", p, got, err, want)
		}
	}
}

func writeGzip(t *testing.T, dst, src string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	_, _ = zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestImportGivesTheTablesBackWhenItStops: a parse that fails, or an
// AfterRead that stops the import, frees what the builder mapped off the
// Go heap then, not whenever the collector runs its cleanups.
func TestImportGivesTheTablesBackWhenItStops(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux maps off the heap")
	}
	path := kinetoTrace(t, 20000) // 40k events: chunks past the first
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "truncated.json")
	if err := os.WriteFile(truncated, data[:len(data)-200], 0o644); err != nil {
		t.Fatal(err)
	}
	start := offheap.InUse()
	mapped := int64(0)
	stop := errors.New("stop here")
	_, err = Import(context.Background(), path, Options{AfterRead: func(*Result) error {
		mapped = offheap.InUse() - start
		return stop
	}}, &recorder{})
	if !errors.Is(err, stop) {
		t.Fatalf("AfterRead's error: %v", err)
	}
	if mapped == 0 {
		t.Fatal("nothing was mapped off the heap: the trace no longer fills a chunk past the first")
	}
	if got := offheap.InUse() - start; got != 0 {
		t.Errorf("stopped by AfterRead: %d bytes still mapped", got)
	}
	var fe *FileError
	if _, err := Import(context.Background(), truncated, Options{}, &recorder{}); !errors.As(err, &fe) {
		t.Fatalf("truncated trace: %v, want a *FileError", err)
	}
	if got := offheap.InUse() - start; got != 0 {
		t.Errorf("failed parse: %d bytes still mapped", got)
	}
}

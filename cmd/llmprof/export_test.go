// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kineto"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kinetobuild"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// sink is an in-process OTLP/gRPC server that keeps what it receives.
type sink struct {
	mu      sync.Mutex
	traces  []ptrace.Traces
	metrics []pmetric.Metrics
	logs    []plog.Logs
	// refuse makes every export fail; rejectSpans reports that many spans
	// rejected (partial success).
	refuse      bool
	rejectSpans int64
}

type traceSrv struct {
	ptraceotlp.UnimplementedGRPCServer
	s *sink
}

func (t traceSrv) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if t.s.refuse {
		return ptraceotlp.NewExportResponse(), status.Error(codes.ResourceExhausted, "memory limiter says no")
	}
	td := ptrace.NewTraces()
	req.Traces().CopyTo(td)
	t.s.traces = append(t.s.traces, td)
	resp := ptraceotlp.NewExportResponse()
	if t.s.rejectSpans > 0 {
		resp.PartialSuccess().SetRejectedSpans(t.s.rejectSpans)
		resp.PartialSuccess().SetErrorMessage("spans too old")
	}
	return resp, nil
}

type metricSrv struct {
	pmetricotlp.UnimplementedGRPCServer
	s *sink
}

func (m metricSrv) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	md := pmetric.NewMetrics()
	req.Metrics().CopyTo(md)
	m.s.metrics = append(m.s.metrics, md)
	return pmetricotlp.NewExportResponse(), nil
}

type logSrv struct {
	plogotlp.UnimplementedGRPCServer
	s *sink
}

func (l logSrv) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	ld := plog.NewLogs()
	req.Logs().CopyTo(ld)
	l.s.logs = append(l.s.logs, ld)
	return plogotlp.NewExportResponse(), nil
}

// startSink serves OTLP/gRPC on 127.0.0.1 (a free port) until the test ends.
func startSink(t *testing.T, s *sink) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	ptraceotlp.RegisterGRPCServer(srv, &traceSrv{s: s})
	pmetricotlp.RegisterGRPCServer(srv, &metricSrv{s: s})
	plogotlp.RegisterGRPCServer(srv, &logSrv{s: s})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Error(err)
		}
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return ln.Addr().String()
}

// expected builds path as the receiver does (default options) and returns
// the result with all spans in Traces.
func expected(t *testing.T, path string) kinetobuild.Result {
	t.Helper()
	b := kinetobuild.NewBuilder(kinetobuild.DefaultOptions())
	md, err := kineto.ParseFile(path, kineto.Options{}, b)
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Finish(md, path)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestExport(t *testing.T) {
	s := &sink{}
	addr := startSink(t, s)
	code, out, errOut := run(t, "export", llamaLeak, "--otlp", addr, "--insecure", "--timeout", "20s")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := expected(t, llamaLeak)
	s.mu.Lock()
	defer s.mu.Unlock()

	// Spans: the receiver's spans, same count, ids and attributes.
	var spans int
	byID := map[string]ptrace.Span{}
	for _, td := range s.traces {
		spans += td.SpanCount()
		for _, rs := range td.ResourceSpans().All() {
			if v, _ := rs.Resource().Attributes().Get(spec.AttrProfileFile); v.Str() != llamaLeak {
				t.Errorf("resource %s = %q", spec.AttrProfileFile, v.Str())
			}
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					byID[sp.SpanID().String()] = sp
				}
			}
		}
	}
	if spans == 0 || spans != want.Traces.SpanCount() || len(byID) != spans {
		t.Fatalf("received %d spans (%d distinct), the receiver builds %d", spans, len(byID), want.Traces.SpanCount())
	}
	if len(s.traces) != 1 {
		t.Errorf("%d span batches for %d spans, want 1", len(s.traces), spans)
	}
	leakSpans := 0
	for _, rs := range want.Traces.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, w := range ss.Spans().All() {
				g, ok := byID[w.SpanID().String()]
				if !ok {
					t.Fatalf("span %s %q not received", w.SpanID(), w.Name())
				}
				if g.TraceID().String() != "fedcba9876543210fedcba9876543210" || g.ParentSpanID() != w.ParentSpanID() ||
					g.Name() != w.Name() || g.StartTimestamp() != w.StartTimestamp() || !g.Attributes().Equal(w.Attributes()) {
					t.Fatalf("span %s differs from the receiver's", w.SpanID())
				}
				if v, ok := g.Attributes().Get(spec.AttrProfileModulePath); ok && v.Str() == leakPath {
					leakSpans++
				}
			}
		}
	}
	if leakSpans == 0 {
		t.Errorf("no span with %s = %s", spec.AttrProfileModulePath, leakPath)
	}

	// Metrics: the outstanding bytes of the leaking path.
	if len(s.metrics) != 1 || s.metrics[0].DataPointCount() != want.Metrics.DataPointCount() {
		t.Fatalf("metrics: %d requests; want the receiver's %d points", len(s.metrics), want.Metrics.DataPointCount())
	}
	found := false
	for _, rm := range s.metrics[0].ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				if m.Name() != spec.ProfileMemoryOutstanding {
					continue
				}
				for _, dp := range m.Sum().DataPoints().All() {
					if v, _ := dp.Attributes().Get(spec.AttrProfileModulePath); v.Str() == leakPath {
						found = dp.IntValue() == 3*32<<20
					}
				}
			}
		}
	}
	if !found {
		t.Errorf("no %s point of 96 MiB for %s", spec.ProfileMemoryOutstanding, leakPath)
	}

	// Logs: the leak suspect.
	if len(s.logs) != 1 || s.logs[0].LogRecordCount() != 1 {
		t.Fatalf("logs: %d requests", len(s.logs))
	}
	lr := s.logs[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	if v, _ := lr.Attributes().Get(spec.AttrProfileModulePath); v.Str() != leakPath || lr.SeverityText() != "WARN" {
		t.Errorf("leak suspect %v", lr.Attributes().AsRaw())
	}
	if _, ok := byID[lr.SpanID().String()]; !ok {
		t.Errorf("the leak suspect points at span %s, which was not sent", lr.SpanID())
	}
	if !strings.Contains(out, "sent 583 spans in 1 batches, 548 metric data points, 1 log records") {
		t.Errorf("stdout %q", out)
	}
}

func TestExportFailures(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		addr := startSink(t, &sink{refuse: true})
		code, _, errOut := run(t, "export", llamaLeak, "--otlp", "http://"+addr)
		if code != ExitExportFailed || !strings.Contains(errOut, "memory limiter says no") || !strings.Contains(errOut, "sending spans") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("partial success", func(t *testing.T) {
		addr := startSink(t, &sink{rejectSpans: 7})
		code, _, errOut := run(t, "export", llamaLeak, "--otlp", addr, "--insecure")
		if code != ExitExportFailed || !strings.Contains(errOut, "7 of 583 spans rejected: spans too old") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("nothing listening", func(t *testing.T) {
		ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		if err := ln.Close(); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := run(t, "export", llamaLeak, "--otlp", addr, "--insecure", "--timeout", "5s")
		if code != ExitExportFailed || !strings.Contains(errOut, addr) {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("bad file sends nothing", func(t *testing.T) {
		s := &sink{}
		addr := startSink(t, s)
		code, _, errOut := run(t, "export", "testdata/README.md", "--otlp", addr, "--insecure")
		if code != ExitImportFailed || !strings.Contains(errOut, "README.md") {
			t.Errorf("exit %d: %s", code, errOut)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.traces)+len(s.metrics)+len(s.logs) != 0 {
			t.Error("a file that cannot be imported sent data")
		}
	})
}

// TestExportBatches exports a fixture of ~45,000 spans: the receiver's
// batches of 10,000 spans, each a separate request.
func TestExportBatches(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a 45,000-span import; skipped with -short and -race")
	}
	path := fixture(t, "hta-ns_resolution-rank0.pt.trace.json.gz")
	s := &sink{}
	addr := startSink(t, s)
	code, _, errOut := run(t, "export", path, "--otlp", addr, "--insecure")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := expected(t, path).Traces.SpanCount()
	s.mu.Lock()
	defer s.mu.Unlock()
	total := 0
	for i, td := range s.traces {
		n := td.SpanCount()
		total += n
		if n > signals.BatchSize || (i < len(s.traces)-1 && n != signals.BatchSize) {
			t.Errorf("batch %d has %d spans", i, n)
		}
	}
	if total != want || len(s.traces) != (want+signals.BatchSize-1)/signals.BatchSize {
		t.Errorf("%d spans in %d batches, want %d", total, len(s.traces), want)
	}
}

// TestExportSnapshotAndNsight: export sends what the receiver emits for a
// CUDA memory snapshot (metrics and logs, no spans) and for an Nsight
// Systems export (spans in batches, then metrics and logs).
func TestExportSnapshotAndNsight(t *testing.T) {
	for _, c := range []struct {
		file      string
		wantSpans bool
	}{
		{filepath.Join("..", "..", "internal", "profiles", "snapshot", "testdata", "snapshot_p4.pickle"), false},
		{filepath.Join("..", "..", "internal", "profiles", "nsys", "testdata", "recent.sqlite"), true},
	} {
		s := &sink{}
		addr := startSink(t, s)
		code, out, errOut := run(t, "export", c.file, "--otlp", addr, "--insecure", "--timeout", "20s")
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", c.file, code, errOut)
		}
		s.mu.Lock()
		var spans, points, records int
		for _, td := range s.traces {
			spans += td.SpanCount()
		}
		for _, md := range s.metrics {
			points += md.DataPointCount()
		}
		for _, ld := range s.logs {
			records += ld.LogRecordCount()
		}
		s.mu.Unlock()
		if (spans > 0) != c.wantSpans || points == 0 || records == 0 {
			t.Fatalf("%s: received %d spans, %d points, %d log records (%s)", c.file, spans, points, records, out)
		}
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package profiles

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kineto"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kinetobuild"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/nsys"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/snapshot"
)

// Options are the import's settings. Start from DefaultOptions (the
// receiver's defaults, documented in its README): a zero number takes the
// importer's default, but a zero FoldPythonFrames means false.
type Options struct {
	// Kineto traces: spans shorter than MinDuration are dropped (memory
	// and GPU time still count), bare Python frames are folded into their
	// op, and at most SpanBudget spans are kept (Kineto and Nsight).
	MinDuration      time.Duration
	FoldPythonFrames bool
	SpanBudget       int
	// LeakSuspects is how many leak-suspect records at most, for
	// outstanding memory of at least MinLeakBytes (every format).
	LeakSuspects int
	MinLeakBytes int64
	// MaxDecompressedSize refuses a file whose content (after gunzip)
	// exceeds it: gzip bombs, runaway traces. 0: no limit.
	MaxDecompressedSize int64
	// ParseWorkers parse a large Kineto trace's events in parallel (1 or
	// 0: on the calling goroutine).
	ParseWorkers int

	// File, when set, is path already open: the import reads it rather
	// than opening path again (Nsight exports excepted: SQLite opens a
	// name), so a name swapped to another file meanwhile is not followed.
	File *os.File
	// BytesRead, when set, counts the bytes read from the file as the
	// import goes (compressed bytes of a .gz): a progress bar's numerator.
	BytesRead *atomic.Int64
	// AfterRead, when set, is called once the file has been read to its
	// end and before what is built from all of it goes to the sink: a
	// Kineto trace's spans (its span tree needs every event), an Nsight
	// export's or a snapshot's metrics and logs (an Nsight export's spans
	// were handed over as they were read). An error it returns ends the
	// import as the file's error.
	AfterRead func(*Result) error
}

// DefaultOptions are the profileimport receiver's defaults; llmprof uses
// them too, so that a file it reads is one the receiver imports.
func DefaultOptions() Options {
	return Options{
		FoldPythonFrames:    true,
		SpanBudget:          kinetobuild.DefaultSpanBudget,
		LeakSuspects:        kinetobuild.DefaultLeakSuspects,
		MinLeakBytes:        kinetobuild.DefaultMinLeakBytes,
		MaxDecompressedSize: 32 << 30,
		ParseWorkers:        2,
	}
}

// Sink takes an import's signals in order: the span batches (at most
// signals.BatchSize spans each, the same batches on every import of the
// same file), then the metrics, then the logs; a signal with nothing in it
// is not handed over. An error stops the import there and comes back from
// Import as a *SinkError.
type Sink interface {
	ConsumeSpans(ctx context.Context, td ptrace.Traces) error
	ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error
	ConsumeLogs(ctx context.Context, ld plog.Logs) error
}

// FormatSink is a Sink told the file's format before anything is handed
// to it (the receiver labels its telemetry with it).
type FormatSink interface {
	Sink
	SetFormat(Format)
}

// Result is what an import read and produced; after an error, what it had
// by then.
type Result struct {
	Format  Format
	TraceID pcommon.TraceID // of the spans (zero: a snapshot, no spans)
	// Spans, SpanBatches, MemoryPoints and LogRecords count what was
	// produced (handed to the sink or not).
	Spans, SpanBatches       int
	MemoryPoints, LogRecords int

	// Kineto is a Kineto trace's metadata (Rank and WorldSize -1 for the
	// other formats); Modules and Stats its memory account and what the
	// builder kept and dropped.
	Kineto  kineto.Metadata
	Modules []kinetobuild.ModuleMemory
	Stats   kinetobuild.Stats
	// Snapshot and Nsys count what a snapshot or an Nsight export held.
	Snapshot snapshot.Summary
	Nsys     nsys.Summary
}

// FileError is an import that failed because of the file: missing,
// unreadable, none of the formats, malformed, over a limit. Importing it
// again fails again until it changes.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string {
	return e.Path + ": " + strings.TrimPrefix(e.Err.Error(), e.Path+": ")
}
func (e *FileError) Unwrap() error { return e.Err }

// SinkError is an import the sink stopped: the file is fine, and what the
// sink accepted before the error stays accepted.
type SinkError struct{ Err error }

func (e *SinkError) Error() string { return e.Err.Error() }
func (e *SinkError) Unwrap() error { return e.Err }

// Import reads the profile at path (told apart by content, Detect) and
// hands its signals to sink. Errors are a *FileError or a *SinkError.
func Import(ctx context.Context, path string, opts Options, sink Sink) (Result, error) {
	res := Result{Kineto: kineto.Metadata{Rank: -1, WorldSize: -1}}
	f := opts.File
	if f == nil {
		var err error
		if f, err = os.Open(path); err != nil {
			return res, &FileError{path, err}
		}
		defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	}
	format, err := Detect(path, f)
	if err != nil {
		return res, &FileError{path, err}
	}
	res.Format = format
	if fs, ok := sink.(FormatSink); ok {
		fs.SetFormat(format)
	}
	imp := &run{ctx: ctx, path: path, opts: opts, sink: sink, res: &res}
	switch format {
	case FormatSnapshot:
		err = imp.snapshot(f)
	case FormatNsys:
		err = imp.nsys()
	default:
		err = imp.kineto(f)
	}
	if err == nil {
		err = imp.metricsAndLogs()
	}
	var se *SinkError
	if err != nil && !errors.As(err, &se) {
		var fe *FileError
		if !errors.As(err, &fe) {
			err = &FileError{path, err}
		}
	}
	return res, err
}

// run is one import under way.
type run struct {
	ctx  context.Context
	path string
	opts Options
	sink Sink
	res  *Result
	md   pmetric.Metrics
	ld   plog.Logs
}

// spans hands one batch to the sink, counting it.
func (r *run) spans(td ptrace.Traces) error {
	r.res.SpanBatches++
	r.res.Spans += td.SpanCount()
	if r.res.TraceID.IsEmpty() {
		if rs := td.ResourceSpans(); rs.Len() > 0 && rs.At(0).ScopeSpans().Len() > 0 && rs.At(0).ScopeSpans().At(0).Spans().Len() > 0 {
			r.res.TraceID = rs.At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
		}
	}
	if td.SpanCount() == 0 {
		return nil
	}
	if err := r.sink.ConsumeSpans(r.ctx, td); err != nil {
		return &SinkError{err}
	}
	return nil
}

func (r *run) afterRead() error {
	if r.opts.AfterRead == nil {
		return nil
	}
	return r.opts.AfterRead(r.res)
}

// metricsAndLogs hands over what is left once the spans are: the file's
// metrics, then its logs.
func (r *run) metricsAndLogs() error {
	if r.md != (pmetric.Metrics{}) {
		r.res.MemoryPoints = r.md.DataPointCount()
		if r.res.MemoryPoints > 0 {
			if err := r.sink.ConsumeMetrics(r.ctx, r.md); err != nil {
				return &SinkError{err}
			}
		}
	}
	if r.ld != (plog.Logs{}) {
		r.res.LogRecords = r.ld.LogRecordCount()
		if r.res.LogRecords > 0 {
			if err := r.sink.ConsumeLogs(r.ctx, r.ld); err != nil {
				return &SinkError{err}
			}
		}
	}
	return nil
}

func (r *run) snapshot(f *os.File) error {
	in := r.reader(f)
	// The file's modification time is the snapshot's time when it records
	// none.
	var mtime time.Time
	if st, err := f.Stat(); err == nil {
		mtime = st.ModTime()
	}
	out, err := snapshot.Import(in, r.path, snapshot.Options{MaxBytes: r.opts.MaxDecompressedSize,
		LeakSuspects: r.opts.LeakSuspects, MinLeakBytes: r.opts.MinLeakBytes, ModTime: mtime})
	r.res.Snapshot = out.Summary
	if err != nil {
		return err
	}
	r.md, r.ld = out.Metrics, out.Logs
	return r.afterRead()
}

func (r *run) nsys() error {
	// By name: the SQLite driver opens a path.
	out, err := nsys.ImportFile(r.path, nsys.Options{SpanBudget: r.opts.SpanBudget, LeakSuspects: r.opts.LeakSuspects,
		MinLeakBytes: r.opts.MinLeakBytes}, signals.BatchSize, r.spans)
	r.res.Nsys = out.Summary
	if err != nil {
		return err
	}
	r.md, r.ld = out.Metrics, out.Logs
	return r.afterRead()
}

func (r *run) kineto(f *os.File) error {
	in := r.reader(f)
	zr, err := kineto.Open(in)
	if err != nil {
		return err
	}
	workers := max(r.opts.ParseWorkers, 1)
	if workers > 1 {
		if st, err := f.Stat(); err == nil {
			workers = kineto.WorkersFor(st.Size(), kineto.Gzipped(zr), workers)
		}
	}
	b := kinetobuild.NewBuilder(kinetobuild.Options{MinDuration: r.opts.MinDuration, FoldPythonFrames: r.opts.FoldPythonFrames,
		SpanBudget: r.opts.SpanBudget, LeakSuspects: r.opts.LeakSuspects, MinLeakBytes: r.opts.MinLeakBytes})
	// A failed parse gives the builder's tables back now, not when the
	// collector gets to it (part of them are mapped off the Go heap).
	defer b.Release()
	md, err := kineto.Parse(zr, kineto.Options{MaxDecompressed: r.opts.MaxDecompressedSize, Workers: workers,
		NoOtherArgs: true}, b) // the builder reads no Args.Other
	r.res.Kineto = md
	if err != nil {
		return err
	}
	if err := r.afterRead(); err != nil {
		return err
	}
	out, err := b.FinishBatches(md, r.path, signals.BatchSize, r.spans)
	r.res.Modules, r.res.Stats, r.res.TraceID = out.Modules, out.Stats, out.TraceID
	if err != nil {
		return err
	}
	r.md, r.ld = out.Metrics, out.Logs
	return nil
}

// reader reads f from its start, whatever its position (Detect read it
// at offsets), counting into Options.BytesRead when set.
func (r *run) reader(f *os.File) io.Reader {
	var in io.Reader = io.NewSectionReader(f, 0, 1<<62)
	if r.opts.BytesRead != nil {
		in = &countingReader{r: in, n: r.opts.BytesRead}
	}
	return in
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// Format is one of the file formats Import reads.
type Format int

const (
	FormatKineto Format = iota + 1
	FormatSnapshot
	FormatNsys
)

// String names the format as the receiver's log lines do.
func (f Format) String() string {
	switch f {
	case FormatSnapshot:
		return "memory snapshot"
	case FormatNsys:
		return "Nsight Systems export"
	case FormatKineto:
		return "profile"
	}
	return "unknown format"
}

// ReadByName says the format's importer opens the file by its name (SQLite
// does), not through Options.File: a caller guarding against a swapped
// name checks afterwards that the name still names its file.
func (f Format) ReadByName() bool { return f == FormatNsys }

// Detect tells the formats apart from the open file f (named path): a
// snapshot by its extension (.pickle, .pkl, and those gzipped) or, in
// JSON, by its first keys; an Nsight export by the SQLite header; anything
// else is read as a Kineto trace. It reads f at offsets, so it leaves f's
// position alone.
func Detect(path string, f *os.File) (Format, error) {
	lower := strings.ToLower(path)
	for _, ext := range []string{".pickle", ".pkl", ".pickle.gz", ".pkl.gz"} {
		if strings.HasSuffix(lower, ext) {
			return FormatSnapshot, nil
		}
	}
	if r, err := kineto.Open(io.NewSectionReader(f, 0, 1<<62)); err == nil {
		prefix := make([]byte, 4096)
		n, _ := io.ReadFull(r, prefix)
		if snapshot.IsSnapshotJSON(prefix[:n]) {
			return FormatSnapshot, nil
		}
	}
	head := make([]byte, 16)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	if nsys.IsNsysSQLite(head[:n]) {
		return FormatNsys, nil
	}
	return FormatKineto, nil
}

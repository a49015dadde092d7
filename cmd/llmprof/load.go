// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kineto"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kinetobuild"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// importError is a file that could not be imported (exit code 1).
type importError struct{ err error }

func (e *importError) Error() string { return e.err.Error() }
func (e *importError) Unwrap() error { return e.err }

// parseWorkers bounds the goroutines parsing one trace (the builder takes
// the events on one goroutine: more would wait for it).
const parseWorkers = 4

// importOptions are the receiver's defaults (so that a file that
// summarizes here also imports there), with as many parse workers as the
// machine gives, up to parseWorkers.
func importOptions() profiles.Options {
	opts := profiles.DefaultOptions()
	opts.ParseWorkers = min(runtime.GOMAXPROCS(0), parseWorkers)
	return opts
}

// importFile reads path through profiles.Import, as the receiver does,
// into sink, with the progress bar on prog. Errors name the file and,
// where the parser knows it, the position of the problem; a sink's error
// comes back as it is (a *profiles.SinkError).
func importFile(ctx context.Context, path string, opts profiles.Options, prog *progress, sink profiles.Sink) (profiles.Result, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return profiles.Result{}, &importError{err}
	}
	if fi.IsDir() {
		return profiles.Result{}, &importError{fmt.Errorf("%s: is a directory, not a trace file", path)}
	}
	if fi.Size() == 0 {
		// Whatever its name says (an nsys export interrupted before it
		// wrote anything is one), there is nothing in it.
		return profiles.Result{}, &importError{fmt.Errorf("%s: empty file (0 bytes); %s", path, formatsRead)}
	}
	var read atomic.Int64
	opts.BytesRead = &read
	prog.start(path, fi.Size(), &read)
	opts.AfterRead = func(res *profiles.Result) error {
		prog.setPhase("building spans and memory accounts…")
		if res.Format == profiles.FormatKineto && res.Kineto.Events == 0 {
			// Valid JSON, but nothing a profiler wrote: saying so beats an
			// empty summary that looks like an idle GPU.
			what := sniffJSONShape(path)
			if what == "" {
				what = "JSON with no traceEvents"
			}
			return fmt.Errorf("not a Kineto trace: %s, no traceEvents; %s", what, formatsRead)
		}
		return nil
	}
	res, err := profiles.Import(ctx, path, opts, sink)
	var fe *profiles.FileError
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &fe) && res.Format == profiles.FormatKineto:
		return res, &importError{describeParseError(path, res.Kineto, fe.Err)}
	case errors.As(err, &fe):
		return res, &importError{err}
	}
	return res, err
}

// describeParseError names the file and says in words what a parser error
// means for the person holding the file.
func describeParseError(path string, md kineto.Metadata, err error) error {
	var se *kineto.SyntaxError
	switch {
	case errors.As(err, &se) && se.Offset == 0:
		return fmt.Errorf("%s: not a Kineto trace (not JSON); %s: %w", path, formatsRead, err)
	case errors.As(err, &se) && strings.Contains(se.Msg, "end of input"):
		return fmt.Errorf("%s: truncated JSON (was the profiler still writing it?), %d events read: %w", path, md.Events, err)
	case errors.As(err, &se):
		// Valid JSON of another shape (a metrics dump, a config) is not
		// broken: say what it is rather than "malformed".
		if what := sniffJSONShape(path); what != "" {
			return fmt.Errorf("%s: not a Kineto trace: %s; %s: %w", path, what, formatsRead, err)
		}
		return fmt.Errorf("%s: malformed JSON: %w", path, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: truncated file (gzip stream ends early), %d events read: %w", path, md.Events, err)
	case errors.Is(err, kineto.ErrTooLarge):
		return fmt.Errorf("%s: %w (%d bytes decompressed)", path, err, profiles.DefaultOptions().MaxDecompressedSize)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// GPU activity categories whose duration is GPU time (as the builder's
// "launched" kinds, without cuda_sync: waiting is not work).
func gpuWorkCategory(cat string) bool {
	switch cat {
	case "kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset":
		return true
	}
	return false
}

func cpuOpCategory(cat string) bool {
	return cat == "cpu_op" || cat == "Operator" || cat == "operator"
}

// gpuSpan is what the summary keeps of a kernel/memcpy/memset span.
type gpuSpan struct {
	parent     pcommon.SpanID
	path       string // llm.profile.module_path ("" when none)
	device     int64
	start, end int64
}

// cpuSpan is what the summary keeps of other spans, to find the outermost
// CPU op above a kernel that has no module path.
type cpuSpan struct {
	parent pcommon.SpanID
	name   string
	op     bool
}

// analysis is everything the summary and diff read from one file.
type analysis struct {
	file     string
	md       kineto.Metadata
	traceID  string
	winStart int64
	winEnd   int64
	spans    int64
	clock    string // TraceInfo.Clock

	gpu   []gpuSpan
	cpu   map[pcommon.SpanID]cpuSpan
	steps []Step

	modules []kinetobuild.ModuleMemory
	leaks   []LeakSuspect
	stats   kinetobuild.Stats
}

// collector is the sink of a summary: spans are looked at batch by batch
// and let go (a large trace is never held whole); metrics and logs are
// kept.
type collector struct {
	a  *analysis
	md pmetric.Metrics
	ld plog.Logs
}

func (c *collector) ConsumeSpans(_ context.Context, td ptrace.Traces) error {
	c.a.take(td)
	return nil
}

func (c *collector) ConsumeMetrics(_ context.Context, md pmetric.Metrics) error {
	c.md = md
	return nil
}

func (c *collector) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	c.ld = ld
	return nil
}

// loaded is one file read for summary or diff: the analysis of its spans
// (any format with spans), and its metrics and logs.
type loaded struct {
	res profiles.Result
	*collector
}

// load imports path with every span kept (no span budget: the GPU time
// of a module must count all of its kernels).
func load(path string, prog *progress) (*loaded, error) {
	defer prog.stop()
	opts := importOptions()
	opts.SpanBudget = math.MaxInt32
	c := &collector{a: &analysis{file: path, cpu: make(map[pcommon.SpanID]cpuSpan)},
		md: pmetric.NewMetrics(), ld: plog.NewLogs()}
	res, err := importFile(context.Background(), path, opts, prog, c)
	if err != nil {
		return nil, err
	}
	return &loaded{res: res, collector: c}, nil
}

// analyze loads path and collects the figures of the summary from the
// spans, metrics and logs the import produced. A memory snapshot has no
// spans: summarizeSnapshot is its summary.
func analyze(path string, prog *progress) (*analysis, error) {
	l, err := load(path, prog)
	if err != nil {
		return nil, err
	}
	if l.res.Format == profiles.FormatSnapshot {
		return nil, &importError{fmt.Errorf("%s: a CUDA memory snapshot has no spans to compare; `llmprof summary` reads it", path)}
	}
	return l.analysis(), nil
}

// analysis completes the span analysis of a loaded Kineto trace or Nsight
// export with its memory account and leak suspects.
func (l *loaded) analysis() *analysis {
	a := l.a
	a.md, a.traceID, a.stats = l.res.Kineto, l.res.TraceID.String(), l.res.Stats
	a.leaks = leakSuspects(l.ld)
	if l.res.Format == profiles.FormatNsys {
		nsysAccount(a, l.res.Nsys, l.md)
		return a
	}
	a.modules = l.res.Modules
	return a
}

// take reads one batch of spans.
func (a *analysis) take(td ptrace.Traces) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				a.spans++
				attrs := sp.Attributes()
				cat := strAttr(attrs, spec.AttrProfileCategory)
				start, end := int64(sp.StartTimestamp()), int64(sp.EndTimestamp())
				switch {
				case sp.ParentSpanID().IsEmpty() && cat == signals.RootSpanCategory:
					a.winStart, a.winEnd = start, end
				case gpuWorkCategory(cat):
					dev := int64(-1)
					if v, ok := attrs.Get(spec.AttrProfileDevice); ok {
						dev = v.Int()
					}
					a.gpu = append(a.gpu, gpuSpan{parent: sp.ParentSpanID(), path: strAttr(attrs, spec.AttrProfileModulePath),
						device: dev, start: start, end: end})
				default:
					name := sp.Name()
					if (cat == "user_annotation" || cat == "User Annotation") && strings.HasPrefix(name, "ProfilerStep#") {
						a.steps = append(a.steps, Step{Name: name, StartNs: start, DurationNs: end - start})
					}
					a.cpu[sp.SpanID()] = cpuSpan{parent: sp.ParentSpanID(), name: name, op: cpuOpCategory(cat)}
				}
			}
		}
	}
}

func strAttr(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.Str()
	}
	return ""
}

// gpuPath is the key a kernel's GPU time is accounted under: its module
// path; else (traces recorded without with_modules) the outermost CPU op
// above its launch; else <unattributed>. The same rule as the builder's
// memory attribution, so GPU time and memory of one layer share a row.
func (a *analysis) gpuPath(g *gpuSpan, memo map[pcommon.SpanID]string) string {
	if g.path != "" {
		return g.path
	}
	if p, ok := memo[g.parent]; ok {
		return p
	}
	outer := ""
	seen := 0
	for id := g.parent; !id.IsEmpty() && seen <= len(a.cpu); seen++ {
		c, ok := a.cpu[id]
		if !ok {
			break
		}
		if c.op {
			outer = c.name
		}
		id = c.parent
	}
	if outer == "" {
		outer = signals.UnattributedPath
	}
	memo[g.parent] = outer
	return outer
}

// ModuleGPU is one row of the GPU-time table.
type ModuleGPU struct {
	ModulePath string  `json:"module_path"`
	GPUTimeNs  int64   `json:"gpu_time_ns"`
	Kernels    int64   `json:"kernels"`
	Share      float64 `json:"share"`
}

// gpuByModule sums kernel/memcpy/memset durations per module path, largest
// first (ties by path).
func (a *analysis) gpuByModule() ([]ModuleGPU, int64) {
	memo := make(map[pcommon.SpanID]string)
	idx := make(map[string]int)
	var rows []ModuleGPU
	var total int64
	for i := range a.gpu {
		g := &a.gpu[i]
		p := a.gpuPath(g, memo)
		j, ok := idx[p]
		if !ok {
			j = len(rows)
			idx[p] = j
			rows = append(rows, ModuleGPU{ModulePath: p})
		}
		rows[j].GPUTimeNs += g.end - g.start
		rows[j].Kernels++
		total += g.end - g.start
	}
	for i := range rows {
		if total > 0 {
			rows[i].Share = round4(float64(rows[i].GPUTimeNs) / float64(total))
		}
	}
	slices.SortFunc(rows, func(x, y ModuleGPU) int {
		if c := cmp.Compare(y.GPUTimeNs, x.GPUTimeNs); c != 0 {
			return c
		}
		return cmp.Compare(x.ModulePath, y.ModulePath)
	})
	return rows, total
}

// round4 keeps 4 decimals: shares in the JSON stay readable and stable.
func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

// DeviceIdle is the busy and idle time of one GPU over the window.
type DeviceIdle struct {
	Device       int64   `json:"device"`
	BusyNs       int64   `json:"busy_ns"`
	IdleNs       int64   `json:"idle_ns"`
	IdleFraction float64 `json:"idle_fraction"`
	Activities   int64   `json:"activities"`
}

// idle computes, per device, the window minus the union of its
// kernel/memcpy/memset intervals (overlapping streams count once).
func (a *analysis) idle() []DeviceIdle {
	byDev := make(map[int64][][2]int64)
	for _, g := range a.gpu {
		byDev[g.device] = append(byDev[g.device], [2]int64{g.start, g.end})
	}
	window := a.winEnd - a.winStart
	var out []DeviceIdle
	for dev, iv := range byDev {
		slices.SortFunc(iv, func(x, y [2]int64) int { return cmp.Compare(x[0], y[0]) })
		var busy int64
		curS, curE := iv[0][0], iv[0][1]
		for _, x := range iv[1:] {
			if x[0] > curE {
				busy += curE - curS
				curS, curE = x[0], x[1]
			} else if x[1] > curE {
				curE = x[1]
			}
		}
		busy += curE - curS
		d := DeviceIdle{Device: dev, BusyNs: busy, IdleNs: max(window-busy, 0), Activities: int64(len(iv))}
		if window > 0 {
			d.IdleFraction = round4(float64(d.IdleNs) / float64(window))
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(x, y DeviceIdle) int { return cmp.Compare(x.Device, y.Device) })
	return out
}

// LeakSuspect is one leak-suspect log record of the builder.
type LeakSuspect struct {
	ModulePath             string `json:"module_path"`
	Device                 int64  `json:"device"`
	OutstandingBytes       int64  `json:"outstanding_bytes"`
	OutstandingAllocations int64  `json:"outstanding_allocations"`
	AllocatedBytes         int64  `json:"allocated_bytes"`
	Message                string `json:"message"`
}

func leakSuspects(ld plog.Logs) []LeakSuspect {
	var out []LeakSuspect
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				a := lr.Attributes()
				if strAttr(a, spec.IncidentKind) != spec.IncidentKindLeakSuspect {
					continue
				}
				l := LeakSuspect{ModulePath: strAttr(a, spec.AttrProfileModulePath), Message: lr.Body().Str()}
				if v, ok := a.Get(spec.AttrProfileDevice); ok {
					l.Device = v.Int()
				}
				if v, ok := a.Get(spec.AttrProfileOutstandingBytes); ok {
					l.OutstandingBytes = v.Int()
				}
				if v, ok := a.Get(spec.AttrProfileOutstandingAllocations); ok {
					l.OutstandingAllocations = v.Int()
				}
				if v, ok := a.Get(spec.AttrProfileAllocatedBytes); ok {
					l.AllocatedBytes = v.Int()
				}
				out = append(out, l)
			}
		}
	}
	return out
}

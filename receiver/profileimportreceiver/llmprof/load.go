package llmprof

import (
	"cmp"
	"compress/gzip"
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
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/kineto"
	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/nsys"
	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/profile"
)

// maxDecompressed is the receiver's default max_decompressed_size: the
// command refuses what the receiver would refuse, so that a file that
// summarizes here also imports there.
const maxDecompressed = 32 << 30

// spanBatchSize is the receiver's batch size: spans are looked at (or sent)
// batch by batch and let go, so a large trace is never held whole.
const spanBatchSize = 10000

// importError is a file that could not be imported (exit code 1).
type importError struct{ err error }

func (e *importError) Error() string { return e.err.Error() }
func (e *importError) Unwrap() error { return e.err }

// countingReader counts the bytes read from the file (compressed bytes for
// a .gz), which is what the progress bar compares with the file's size.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// parseWorkers bounds the goroutines parsing one trace (the builder takes
// the events on one goroutine: more would wait for it).
const parseWorkers = 4

// parse reads path into a Builder the way the receiver does (events parsed
// by several goroutines on large files) and returns the builder ready for
// Finish. Errors name the file, and where the parser knows it, the position
// of the problem.
func parse(path string, opts profile.Options, prog *progress) (*profile.Builder, kineto.Metadata, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, kineto.Metadata{}, &importError{err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, kineto.Metadata{}, &importError{err}
	}
	if fi.IsDir() {
		return nil, kineto.Metadata{}, &importError{fmt.Errorf("%s: is a directory, not a trace file", path)}
	}
	if fi.Size() == 0 {
		// Whatever its name says (an nsys export interrupted before it
		// wrote anything is one), there is nothing in it.
		return nil, kineto.Metadata{}, &importError{fmt.Errorf("%s: empty file (0 bytes); %s", path, formatsRead)}
	}
	cr := &countingReader{r: f}
	// The caller stops the bar once the builder is done too.
	prog.start(path, fi.Size(), &cr.n)
	r, err := kineto.Open(cr)
	if err != nil {
		return nil, kineto.Metadata{}, &importError{fmt.Errorf("%s: %w", path, err)}
	}
	b := profile.NewBuilder(opts)
	_, gz := r.(*gzip.Reader)
	workers := kineto.WorkersFor(fi.Size(), gz, min(runtime.GOMAXPROCS(0), parseWorkers))
	md, err := kineto.Parse(r, kineto.Options{MaxDecompressed: maxDecompressed, Workers: workers}, b)
	if err != nil {
		return nil, md, &importError{describeParseError(path, md, err)}
	}
	prog.setPhase("building spans and memory accounts…")
	if md.Events == 0 {
		// Valid JSON, but nothing a profiler wrote: saying so beats an
		// empty summary that looks like an idle GPU.
		what := sniffJSONShape(path)
		if what == "" {
			what = "JSON with no traceEvents"
		}
		return nil, md, &importError{fmt.Errorf("%s: not a Kineto trace: %s, no traceEvents; %s", path, what, formatsRead)}
	}
	return b, md, nil
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
		return fmt.Errorf("%s: %w (%d bytes decompressed)", path, err, int64(maxDecompressed))
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

	modules []profile.ModuleMemory
	leaks   []LeakSuspect
	stats   profile.Stats
}

// analyze imports path with every span kept (no span budget: the GPU time
// of a module must count all of its kernels) and collects the figures of
// the summary from the spans, metrics and logs the builder emits.
func analyze(path string, prog *progress) (*analysis, error) {
	if nsys.IsNsysFile(path) {
		return analyzeNsys(path, prog)
	}
	opts := profile.DefaultOptions()
	opts.SpanBudget = math.MaxInt32
	defer prog.stop()
	b, md, err := parse(path, opts, prog)
	if err != nil {
		return nil, err
	}
	a := &analysis{file: path, md: md, cpu: make(map[pcommon.SpanID]cpuSpan)}
	res, err := b.FinishBatches(md, path, spanBatchSize, func(td ptrace.Traces) error {
		a.take(td)
		return nil
	})
	if err != nil {
		return nil, &importError{fmt.Errorf("%s: %w", path, err)}
	}
	a.traceID = res.TraceID.String()
	a.modules = res.Modules
	a.stats = res.Stats
	a.leaks = leakSuspects(res.Logs)
	return a, nil
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
				case sp.ParentSpanID().IsEmpty() && cat == profile.RootSpanCategory:
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
		outer = profile.UnattributedPath
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

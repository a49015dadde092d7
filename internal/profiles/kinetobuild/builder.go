// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package profile turns the event stream of a PyTorch profiler (Kineto)
// trace into OpenTelemetry traces, metrics and logs.
//
// A Builder receives events one at a time (it implements kineto.Handler),
// keeps a compact copy of what it needs (interned strings, one small struct
// per duration event, one per memory event) and builds everything in
// Finish, once the whole profiling window is known:
//
//   - one trace per file: a synthetic root span covering the window, spans
//     for user annotations (ProfilerStep#N ...), nn.Module frames, CPU ops,
//     runtime/driver calls and GPU kernels/memcpy/memset;
//   - per (module path, device) GPU memory metrics and the allocator's
//     Total Allocated / Total Reserved over time;
//   - leak-suspect log records for the module paths whose allocations are
//     still outstanding at the end of the window.
package kinetobuild

import (
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/llmops-otel/otelcol-llmops/internal/offheap"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kineto"
)

// Options tune the builder. The zero value is usable: NewBuilder fills the
// defaults documented on each field.
type Options struct {
	// MinDuration folds CPU-side events (ops, Python frames, runtime calls)
	// shorter than this into their parent: they are not spans, their
	// children attach to the nearest kept ancestor. User annotations are
	// never folded. Default 0: keep all ops.
	MinDuration time.Duration
	// FoldPythonFrames folds bare Python frames (python_function events
	// that are not "nn.Module: ..." frames). NewBuilder cannot tell an unset
	// bool from false, so use DefaultOptions (or set it explicitly); the
	// receiver's config default is true.
	FoldPythonFrames bool
	// SpanBudget caps the spans of the trace (default 100000, root
	// included). See Finish for what is kept when it is exceeded.
	SpanBudget int
	// LeakSuspects is how many module paths, largest outstanding bytes
	// first, become leak-suspect log records (default 5; negative: none).
	LeakSuspects int
	// MinLeakBytes ignores paths with less outstanding (default 1 MiB;
	// negative: no minimum).
	MinLeakBytes int64
}

// Defaults.
const (
	DefaultSpanBudget   = 100000
	DefaultLeakSuspects = 5
	DefaultMinLeakBytes = 1 << 20
)

// DefaultOptions returns the documented defaults (FoldPythonFrames true).
func DefaultOptions() Options {
	return Options{FoldPythonFrames: true, SpanBudget: DefaultSpanBudget,
		LeakSuspects: DefaultLeakSuspects, MinLeakBytes: DefaultMinLeakBytes}
}

// kind is the normalized category of an event.
type kind uint8

const (
	kOther         kind = iota
	kAnnotation         // user_annotation (CPU side), ProfilerStep#N
	kGPUAnnotation      // gpu_user_annotation
	kPython             // python_function
	kOp                 // cpu_op, Operator (2021-22)
	kRuntime            // cuda_runtime, cuda_driver, Runtime (2021-22)
	kKernel             // kernel, Kernel
	kMemcpy             // gpu_memcpy, Memcpy
	kMemset             // gpu_memset, Memset
	kSync               // cuda_sync (GPU-side synchronization records)
)

func (k kind) gpu() bool {
	return k == kKernel || k == kMemcpy || k == kMemset || k == kSync || k == kGPUAnnotation
}

func (k kind) launched() bool { return k == kKernel || k == kMemcpy || k == kMemset || k == kSync }

func (k kind) cpu() bool {
	return k == kAnnotation || k == kPython || k == kOp || k == kRuntime
}

func kindOf(cat string) kind {
	switch cat {
	case "user_annotation", "User Annotation":
		return kAnnotation
	case "gpu_user_annotation":
		return kGPUAnnotation
	case "python_function", "Python", "python":
		return kPython
	case "cpu_op", "Operator", "operator":
		return kOp
	case "cuda_runtime", "cuda_driver", "Runtime", "runtime", "Driver":
		return kRuntime
	case "kernel", "Kernel":
		return kKernel
	case "gpu_memcpy", "Memcpy":
		return kMemcpy
	case "gpu_memset", "Memset":
		return kMemset
	case "cuda_sync":
		return kSync
	}
	return kOther
}

const moduleFramePrefix = "nn.Module: "

// node flags.
const (
	fModule uint8 = 1 << iota // python_function "nn.Module: ..."
	fStep                     // ProfilerStep#N
	fWide                     // ids, thread, category or device in Builder.wide
)

// node is one kept duration event ('X'). 48 bytes rather than the 64 its
// fields take at full width: the 54 MB trace keeps 123k of them, and the
// 2 MB this saves took its import's peak RSS from 26.1 to 24.5 MB (median
// of 20 alternating cold runs; largest 28.0 against 26.4). Ids,
// thread, category and device are read through Builder.full: a value
// that does not fit its narrow field, which real traces do not write, is
// kept whole in Builder.wide and the node is flagged fWide.
type node struct {
	start int64 // ts as written (ns); Metadata.BaseTimeNs added in Finish
	dur   int64
	// "correlation" and "External id"; for Python frames "Python id" and
	// "Python parent id" instead. -1: absent.
	corr32, ext32 int32
	name          uint32 // interned
	extra         uint32 // index into Builder.extras (0: none)
	parent        int32  // tree parent (node index), -1: none
	stream        int32
	thread16      uint16 // index into Builder.threads
	cat16         uint16 // interned raw category
	device16      int16
	kind          kind
	flags         uint8
}

// wideNode holds a node's ids, thread, category and device at full width
// when one of them does not fit the node (fWide).
type wideNode struct {
	corr, ext   int64
	thread, cat uint32
	device      int32
}

// narrow stores w in n, or in b.wide under index i when a value does not
// survive its narrow field.
func (b *Builder) narrow(i int32, n *node, w wideNode) {
	n.corr32, n.ext32 = int32(w.corr), int32(w.ext)
	n.thread16, n.cat16, n.device16 = uint16(w.thread), uint16(w.cat), int16(w.device)
	if n.narrowFields() == w {
		return
	}
	if b.wide == nil {
		b.wide = make(map[int32]wideNode)
	}
	b.wide[i] = w
	n.flags |= fWide
}

// narrowFields is what n's narrow fields hold, at full width.
func (n *node) narrowFields() wideNode {
	return wideNode{corr: int64(n.corr32), ext: int64(n.ext32), thread: uint32(n.thread16), cat: uint32(n.cat16), device: int32(n.device16)}
}

// full returns node i's ids, thread, category and device at full width,
// from the node or, when it is flagged fWide, from b.wide.
func (b *Builder) full(i int32, n *node) wideNode {
	if n.flags&fWide != 0 {
		return b.wide[i]
	}
	return n.narrowFields()
}

// threadOf is full(i, n).thread without building the whole wideNode (five
// fields: the compiler keeps it in memory, not registers): the CPU tree's
// sweep asks for a node's thread at every step.
func (b *Builder) threadOf(i int32, n *node) uint32 {
	if n.flags&fWide != 0 {
		return b.wide[i].thread
	}
	return uint32(n.thread16)
}

func (n *node) end() int64 { return n.start + n.dur }

// extra holds the structured args kept on a span, interned.
type extra struct{ inputDims, grid, block, callStack uint32 }

// memEvent is one [memory] instant event. 48 bytes.
type memEvent struct {
	ts         int64
	addr       int64
	bytes      int64
	totalAlloc int64
	totalRes   int64
	thread     uint32
	device     int16
	devType    int8
}

// flow is one ac2g flow point.
type flow struct {
	id     uint64
	ts     int64
	thread uint32
	start  bool
}

// threadCount is what one thread holds: CPU-side nodes and memory events.
type threadCount struct{ cpu, mem int32 }

// window is a time span [lo, hi] in ns.
type window struct{ lo, hi int64 }

// widen extends b's window to [lo, hi].
func (b *Builder) widen(lo, hi int64) {
	if !b.hasWin {
		b.win, b.hasWin = window{lo, hi}, true
		return
	}
	b.win.lo, b.win.hi = min(b.win.lo, lo), max(b.win.hi, hi)
}

type threadKey struct {
	pid, tid       int64
	pidStr, tidStr string
}

// Builder accumulates events; see the package documentation.
type Builder struct {
	opts Options

	strs   []string
	strIdx map[string]uint32
	// strCache maps a cheap fingerprint of a string to its index + 1 (0:
	// empty slot); see intern.
	strCache [internCacheSize]uint32
	threads  []threadKey
	thrIdx   map[threadKey]uint32
	// perThread counts, by thread, the CPU-side nodes and the memory
	// events: Finish groups each by thread with a counting pass over these
	// (one bucket per thread, a few runs in time order each, then merged)
	// instead of sorting the whole table, and picks the main pid from them.
	perThread []threadCount
	// lastThr caches the thread of the previous lookup (events come in
	// runs from the same thread).
	lastThr    uint32
	hasLastThr bool
	// lastCat caches the interned category of the previous event.
	lastCat    string
	lastCatIdx uint32
	hasLastCat bool

	// The event tables, in arrival order, their chunks in arena (a
	// separate allocation, so that cleanup can free it once the Builder
	// is unreachable; see Release).
	nodes   nodeTable
	extras  table[extra] // entry 0: none
	mems    table[memEvent]
	flows   table[flow]
	arena   *offheap.Arena
	cleanup runtime.Cleanup
	// wide holds, by node index, the nodes flagged fWide (see node).
	wide map[int32]wideNode

	catCount []int64 // by interned category
	events   int64
	firstTs  int64
	hasFirst bool
	// win is the profiling window as written (ns): the earliest start and
	// the latest end of the kept nodes and memory events, kept as they
	// arrive rather than found by another pass over the table in Finish.
	win         window
	hasWin      bool
	processName map[int64]string // pid -> process_name (metadata events)
	ignored     int64
	done        bool
}

// NewBuilder returns a builder; zero fields of opts take their defaults
// (FoldPythonFrames excepted, see Options).
func NewBuilder(opts Options) *Builder {
	if opts.SpanBudget <= 0 {
		opts.SpanBudget = DefaultSpanBudget
	}
	if opts.LeakSuspects == 0 {
		opts.LeakSuspects = DefaultLeakSuspects
	}
	if opts.MinLeakBytes == 0 {
		opts.MinLeakBytes = DefaultMinLeakBytes
	}
	b := &Builder{
		opts:    opts,
		strIdx:  make(map[string]uint32),
		thrIdx:  make(map[threadKey]uint32),
		strs:    nil,
		threads: nil,
	}
	b.intern("") // index 0 is the empty string
	b.arena = new(offheap.Arena)
	b.nodes.arena, b.extras.arena, b.mems.arena, b.flows.arena = b.arena, b.arena, b.arena, b.arena
	// A caller that drops the Builder without Finish or Release still
	// gives the mapped chunks back, once the collector finds it
	// unreachable: only the Builder refers to them.
	b.cleanup = runtime.AddCleanup(b, func(a *offheap.Arena) { a.Free() }, b.arena)
	return b
}

// Release frees what the Builder holds (its event tables, some mapped
// outside the Go heap) without building anything: for a caller that stops
// before Finish, which releases on its own. The Builder cannot be used
// afterwards; Release may be called more than once.
func (b *Builder) Release() {
	b.done = true
	b.release()
}

func (b *Builder) intern(s string) uint32 {
	// A small direct-mapped cache in front of the map: names (kernel
	// names are long C++ signatures) repeat, and checking a candidate is
	// cheaper than hashing the whole string.
	var slot uint32
	if n := len(s); n > 0 {
		slot = (uint32(n)*31 + uint32(s[0])*7 + uint32(s[n/2])*3 + uint32(s[n-1])) % internCacheSize
		if c := b.strCache[slot]; c != 0 && b.strs[c-1] == s {
			return c - 1
		}
	}
	i, ok := b.strIdx[s]
	if !ok {
		s = strings.Clone(s)
		i = uint32(len(b.strs))
		b.strs = append(b.strs, s)
		b.strIdx[s] = i
	}
	if len(s) > 0 {
		b.strCache[slot] = i + 1
	}
	return i
}

const internCacheSize = 512

func (b *Builder) thread(e *kineto.Event) uint32 {
	k := threadKey{pid: e.Pid, tid: e.Tid, pidStr: e.PidStr, tidStr: e.TidStr}
	if b.hasLastThr && b.threads[b.lastThr] == k {
		return b.lastThr
	}
	if i, ok := b.thrIdx[k]; ok {
		b.lastThr, b.hasLastThr = i, true
		return i
	}
	k.pidStr, k.tidStr = strings.Clone(k.pidStr), strings.Clone(k.tidStr)
	i := uint32(len(b.threads))
	b.threads = append(b.threads, k)
	b.perThread = append(b.perThread, threadCount{})
	b.thrIdx[k] = i
	b.lastThr, b.hasLastThr = i, true
	return i
}

// chunkBits sizes the chunks of a table (8192 elements: 512 KiB of
// nodes).
const chunkBits = 13

// table is one of the builder's event tables (nodes, memory events, flow
// points), by arrival index. It is stored in fixed-size chunks rather than
// one slice: a table never gets reallocated and copied as it grows, never
// needs twice its size while it does, and Finish reads it in place rather
// than flattening it first (flattening the memory events and flow points
// of a 541 MB trace was 60 ms of Finish, most of it faulting in the new
// slices' pages).
//
// Full-size chunks are mapped outside the Go heap (arena, see package
// offheap) while the process's budget lasts, and are on the heap past it;
// each element type is pointer-free. The first chunk starts small on the
// heap, so that a small trace maps nothing, and moves to a mapped chunk
// once it holds firstOnHeap elements. On the 54 MB trace, mapping the
// chunks took the median peak RSS of 15 alternating cold imports from
// 42.9 to 37.3 MB and their CPU from 0.47 to 0.41 s (first touches
// 10,601 → 6,075): the tables no longer count in the collector's heap
// goal, and their pages come in 2 MiB at a time.
type table[E any] struct {
	chunks [][]E
	n      int32
	arena  *offheap.Arena // nil: every chunk on the heap
}

// firstOnHeap is how many elements a table's first chunk holds on the
// heap before it moves to a mapped chunk (when one can be had): a trace
// with fewer maps nothing.
const firstOnHeap = 1024

type nodeTable = table[node]

func (t *table[E]) add(x E) {
	c := int(t.n >> chunkBits)
	if c == len(t.chunks) {
		size := 1 << chunkBits
		if c == 0 {
			size = 64 // the first chunk grows as needed: small traces stay small
		}
		// The first chunk grows by append on the heap; a full-size
		// chunk is mapped when the budget allows.
		var chunk []E
		if c > 0 {
			chunk = offheap.Make[E](t.arena, size)
		}
		if chunk == nil {
			chunk = make([]E, 0, size)
		}
		t.chunks = append(t.chunks, chunk)
	}
	if c == 0 && len(t.chunks[0]) == firstOnHeap {
		if chunk := offheap.Make[E](t.arena, 1<<chunkBits); chunk != nil {
			t.chunks[0] = append(chunk, t.chunks[0]...)
		}
	}
	t.chunks[c] = append(t.chunks[c], x)
	t.n++
}

func (t table[E]) len() int32 { return t.n }

func (t table[E]) at(i int32) *E {
	return &t.chunks[i>>chunkBits][i&(1<<chunkBits-1)]
}

func clampInt32(v int64) int32 {
	if v < -1 || v > 1<<31-1 {
		return -1
	}
	return int32(v)
}

// Event implements kineto.Handler. It copies what it keeps; e may be
// reused by the caller after it returns.
func (b *Builder) Event(e *kineto.Event) error {
	b.events++
	var ci uint32
	if b.hasLastCat && e.Cat == b.lastCat {
		ci = b.lastCatIdx
	} else {
		ci = b.intern(e.Cat)
		b.lastCat, b.lastCatIdx, b.hasLastCat = b.strs[ci], ci, true
	}
	for int(ci) >= len(b.catCount) {
		b.catCount = append(b.catCount, 0)
	}
	b.catCount[ci]++
	if e.Phase != 'M' && !b.hasFirst {
		b.firstTs, b.hasFirst = e.TsNs, true
	}
	switch e.Phase {
	case 'X':
		b.addNode(e, ci)
	case 'i', 'I':
		if e.Name == "[memory]" {
			th := b.thread(e)
			b.mems.add(memEvent{
				ts: e.TsNs, addr: e.Args.Addr, bytes: e.Args.Bytes,
				totalAlloc: e.Args.TotalAllocated, totalRes: e.Args.TotalReserved,
				thread: th, device: int16(clampInt32(e.Args.DeviceID)), devType: int8(clampInt32(e.Args.DeviceType)),
			})
			b.perThread[th].mem++
			b.widen(e.TsNs, e.TsNs)
		}
	case 's', 'f', 't':
		if e.Cat == "ac2g" && e.Phase != 't' {
			b.flows.add(flow{id: flowID(e.ID), ts: e.TsNs, thread: b.thread(e), start: e.Phase == 's'})
		}
	case 'M':
		if e.Name == "process_name" && e.Args.MetaName != "" && e.PidStr == "" {
			if b.processName == nil {
				b.processName = make(map[int64]string)
			}
			b.processName[e.Pid] = strings.Clone(e.Args.MetaName)
		}
	default:
		b.ignored++
	}
	return nil
}

func flowID(s string) uint64 {
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		return v
	}
	// FNV-1a for non-numeric ids, top bit set so it cannot collide with a
	// small numeric id.
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h | 1<<63
}

func (b *Builder) addNode(e *kineto.Event, ci uint32) {
	k := kindOf(e.Cat)
	if k == kOther {
		return
	}
	n := node{start: e.TsNs, dur: e.DurNs, name: b.intern(e.Name), parent: -1, stream: clampInt32(e.Args.Stream), kind: k}
	w := wideNode{corr: e.Args.Correlation, ext: e.Args.ExternalID, thread: b.thread(e), cat: ci, device: clampInt32(e.Args.Device)}
	if n.dur < 0 {
		n.dur = 0
	}
	switch k {
	case kPython:
		w.corr, w.ext = e.Args.PythonID, e.Args.PythonParentID
		if strings.HasPrefix(e.Name, moduleFramePrefix) {
			n.flags |= fModule
		}
	case kAnnotation:
		if strings.HasPrefix(e.Name, "ProfilerStep#") {
			n.flags |= fStep
		}
	}
	if k.gpu() && w.device < 0 && e.PidStr == "" && e.Pid >= 0 && e.Pid < 1<<16 {
		w.device = int32(e.Pid) // Kineto writes GPU activity with pid = device index
	}
	a := &e.Args
	if a.InputDims != "" || a.Grid != "" || a.Block != "" || a.CallStack != "" {
		x := extra{inputDims: b.intern(a.InputDims), grid: b.intern(a.Grid), block: b.intern(a.Block), callStack: b.intern(a.CallStack)}
		if b.extras.len() == 0 {
			b.extras.add(extra{}) // index 0 means none
		}
		n.extra = uint32(b.extras.len())
		b.extras.add(x)
	}
	if k.cpu() {
		b.perThread[w.thread].cpu++
	}
	b.narrow(b.nodes.len(), &n, w)
	b.widen(n.start, n.end())
	b.nodes.add(n)
}

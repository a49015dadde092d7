// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kinetobuild

import (
	"crypto/sha256"
	"errors"
	"math/bits"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kineto"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// Names of what the builder emits are in internal/spec (spec.AttrProfile*,
// spec.ProfileServiceName, spec.IncidentKindLeakSuspect); these are the
// builder's own.
const (
	MetricMemoryTotalAllocated = spec.ProfileMemoryTotalAllocated
	MetricMemoryTotalReserved  = spec.ProfileMemoryTotalReserved

	extraOTelTraceID = "otel.trace_id"
)

// Stats counts what the builder saw and did.
type Stats struct {
	Events           int64            // events received
	EventsByCategory map[string]int64 // by "cat" as written ("" for none)
	IgnoredEvents    int64            // phases the builder does not use (B/E/C/...)

	Spans        int64 // spans emitted, root included
	SpansDropped int64 // span-eligible events over SpanBudget
	SpansFolded  int64 // bare Python frames and events shorter than MinDuration
	SpansByKind  map[string]int64

	PartialOverlaps        int64 // CPU events overlapping a sibling without nesting
	KernelsLinkedByFlow    int64 // GPU activity linked to its launch by ac2g flow only
	KernelsWithoutLauncher int64 // GPU activity with no launching runtime call

	MemoryEvents           int64 // [memory] instant events
	GPUMemoryEvents        int64 // of which Device Type 1 (CUDA) or 6 (HIP)
	CPUMemoryEvents        int64 // of which other device types (skipped)
	UnattributedAllocs     int64 // GPU allocations with no enclosing CPU span
	UnmatchedFrees         int64 // frees of an address not allocated in the window
	UnmatchedFreeBytes     int64
	ReallocatedWithoutFree int64 // allocation at a live address (previous one treated as freed)
	MemoryPointsThinned    int64 // Total Allocated/Reserved points not emitted (see thinning)
	LeakSuspects           int64
}

// ModuleMemory is the GPU memory account of one (module path, device).
type ModuleMemory struct {
	ModulePath             string
	Device                 int64
	AllocatedBytes         int64 // sum of positive Bytes
	Allocations            int64
	PeakOutstandingBytes   int64
	OutstandingBytes       int64 // allocated in the window and not freed by its end
	OutstandingAllocations int64
	// LargestOutstanding is the node of the largest outstanding allocation
	// (-1 none); internal.
	largestNode  int32
	largestBytes int64
	largestSeq   int32
}

// Result is what Finish builds.
type Result struct {
	Traces  ptrace.Traces
	Metrics pmetric.Metrics
	Logs    plog.Logs
	Stats   Stats
	// Modules is the GPU memory account per (module path, device), sorted
	// by path then device.
	Modules []ModuleMemory
	TraceID pcommon.TraceID
}

// Finish builds the trace, metrics and logs. md is the file's metadata
// (known only after the last event); file is the profile's path (its base
// name goes into deterministic ids, the whole path into llm.profile.file).
//
// Span budget: when the span-eligible events exceed SpanBudget (root
// included), spans are kept in this order until the budget is used:
//  1. user annotations (ProfilerStep#N first), gpu_user_annotation ranges
//     and nn.Module frames, longest first;
//  2. CPU ops with GPU time below them, most GPU time first;
//  3. GPU kernels/memcpy/memset launched by a runtime call whose span is
//     kept, or whose parent span is kept so that launch and kernel can be
//     kept as a pair; by the launch's GPU time;
//  4. everything else (ops without GPU time, runtime calls, bare Python
//     frames when not folded, unmatched kernels), longest first.
//
// A kept span whose parent was dropped hangs off its nearest kept
// ancestor. Dropped events still count for memory attribution.
//
// A Builder builds once: Finish releases its state and a second call
// returns an error.
//
// Finish is FinishBatches with one unbounded batch, kept in Result.Traces.
func (b *Builder) Finish(md kineto.Metadata, file string) (Result, error) {
	var td ptrace.Traces
	got := false
	res, err := b.FinishBatches(md, file, 0, func(batch ptrace.Traces) error {
		if !got {
			td, got = batch, true
		} else {
			batch.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	if got {
		res.Traces = td
	}
	return res, nil
}

// FinishBatches is Finish with the spans handed to emit in consecutive
// batches of at most batchSpans spans (batchSpans <= 0: one batch), in
// Finish's order and with Finish's ids, attributes and parents. Each batch
// is a complete ptrace.Traces (one resource, one scope, as in Finish) and
// is built only after the previous emit returned, so that the caller can
// hand it downstream and let it go before the next one is built; emit owns
// the batch. The returned Result has Metrics, Logs, Stats, Modules and
// TraceID filled and Traces empty (ptrace.NewTraces()). An error from
// emit stops the spans and is returned (after the metrics and logs, built
// alongside, are done).
func (b *Builder) FinishBatches(md kineto.Metadata, file string, batchSpans int, emit func(ptrace.Traces) error) (Result, error) {
	var res Result
	res.Traces = ptrace.NewTraces()
	if b.done {
		return res, errors.New("profile: Finish called after Finish or Release")
	}
	b.done = true
	defer b.release()
	st := &res.Stats
	st.Events = b.events
	st.IgnoredEvents = b.ignored
	st.EventsByCategory = make(map[string]int64, len(b.catCount))
	for i, c := range b.catCount {
		if c > 0 {
			st.EventsByCategory[b.strs[i]] = c
		}
	}
	off := int64(0)
	if md.HasBaseTime {
		off = md.BaseTimeNs
	}
	t := &tree{b: b, nodes: b.nodes, stats: st}
	// The CPU tree and the GPU links write the parents of disjoint node
	// sets (CPU-side kinds, GPU-side kinds), distinct Stats fields, and
	// read no parent: they run side by side.
	var linked sync.WaitGroup
	linked.Add(1)
	go func() {
		defer linked.Done()
		t.linkGPU()
	}()
	t.buildCPUTree()
	linked.Wait()
	// Module paths and span folding read the parents only and write
	// their own tables (computePaths alone interns): side by side.
	linked.Add(1)
	go func() {
		defer linked.Done()
		t.fold()
	}()
	t.computePaths()
	linked.Wait()

	mainPid := b.mainPid()
	base := filepath.Base(file)
	tid := b.traceID(md, base, off, mainPid)
	res.TraceID = tid
	ids := signals.NewSpanIDs(tid)

	// The window, as the events came (zero without nodes or memory
	// events).
	winStart, winEnd := b.win.lo+off, b.win.hi+off

	res.Metrics = pmetric.NewMetrics()
	res.Logs = plog.NewLogs()
	resource := pcommon.NewResource()
	b.fillResource(resource, md, file, mainPid)
	b.fillResource(res.Metrics.ResourceMetrics().AppendEmpty().Resource(), md, file, mainPid)
	b.fillResource(res.Logs.ResourceLogs().AppendEmpty().Resource(), md, file, mainPid)
	b.flows = table[flow]{}

	// Memory accounting runs alongside the span selection and then the
	// spans (the bulk of the result); the leak suspects, which name kept
	// spans, wait for the selection. Both sides only read the tree, the
	// node table and the string table, and write distinct Stats fields
	// and outputs; memoryPath's one new string is interned beforehand so
	// that intern does not grow the string table meanwhile. Running the
	// memory side under the selection rather than after it took 40-50 ms
	// off the finish of a 541 MB trace. The memory metrics are built
	// after the spans: built alongside, their pdata (3.5 MB for the 16k
	// points of the 54 MB trace) was live through every span batch and
	// the collector let the heap grow by twice that; after, that import's
	// peak RSS went from 32.9 to 29.2 MB (median of 20 alternating cold
	// runs, wall time unchanged, as on the 541 MB trace).
	b.intern(signals.UnattributedPath)
	var (
		mem      *memAccount
		keep     []bool
		selected = make(chan struct{})
		wg       sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		mem = t.memory(st)
		<-selected
		b.emitLeaks(res.Logs, t, mem, keep, tid, ids, winEnd, file, st)
	}()
	keep = t.selectSpans(st)
	close(selected)
	err := b.emitSpans(resource, batchSpans, emit, t, keep, tid, ids, off, winStart, winEnd, base, st)
	wg.Wait()
	b.emitMetrics(res.Metrics, mem, off, winStart, winEnd, file, st)
	res.Modules = mem.modules
	return res, err
}

// mainPid is the numeric pid of most CPU-side events.
func (b *Builder) mainPid() int64 {
	// Count per pid what each thread holds.
	count := make(map[int64]int64)
	for i, c := range b.perThread {
		if th := &b.threads[i]; c.cpu+c.mem > 0 && th.pidStr == "" {
			count[th.pid] += int64(c.cpu) + int64(c.mem)
		}
	}
	best, bestN := int64(-1), int64(0)
	for pid, n := range count {
		if n > bestN || (n == bestN && pid < best) {
			best, bestN = pid, n
		}
	}
	return best
}

// parseTraceID reads the trace id a trace's metadata names, in any form
// the other formats accept too.
func parseTraceID(s string) (pcommon.TraceID, bool) {
	tc, ok := signals.FindTraceContext(s)
	return tc.Trace, ok
}

func (b *Builder) traceID(md kineto.Metadata, base string, off, pid int64) pcommon.TraceID {
	if id, ok := parseTraceID(md.TraceID); ok {
		return id
	}
	for _, kv := range md.Extra {
		if kv.Key == extraOTelTraceID {
			if id, ok := parseTraceID(strings.Trim(kv.Value, `"`)); ok {
				return id
			}
		}
	}
	h := sha256.New()
	h.Write([]byte(base))
	h.Write([]byte{0})
	h.Write([]byte(strconv.FormatInt(b.firstTs+off, 10)))
	h.Write([]byte{0})
	h.Write([]byte(strconv.FormatInt(b.events, 10)))
	h.Write([]byte{0})
	h.Write([]byte(strconv.FormatInt(pid, 10)))
	var id pcommon.TraceID
	copy(id[:], h.Sum(nil))
	return id
}

// selectSpans applies the span budget; it returns keep per node.
func (t *tree) selectSpans(st *Stats) []bool {
	nodes := t.nodes
	keep := make([]bool, int(nodes.len()))
	eligible := 0
	for i := int32(0); i < nodes.len(); i++ {
		if t.span[i] {
			eligible++
		}
	}
	budget := t.b.opts.SpanBudget - 1 // the root
	if eligible <= budget {
		copy(keep, t.span)
		return keep
	}
	st.SpansDropped = int64(eligible - max(budget, 0))
	left := max(budget, 0)
	take := func(i int32) {
		if left == 0 || keep[i] {
			return
		}
		keep[i] = true
		left--
	}
	// GPU time of each node: launched activity's duration added to its
	// parent chain.
	gpu := make([]int64, int(nodes.len()))
	for i := int32(0); i < nodes.len(); i++ {
		if !nodes.at(i).kind.launched() {
			continue
		}
		d := nodes.at(i).dur
		for p := nodes.at(i).parent; p >= 0; p = nodes.at(p).parent {
			gpu[p] += d
		}
	}
	var tier []int32
	// 1. annotations and module frames.
	for i := int32(0); i < nodes.len(); i++ {
		n := nodes.at(i)
		if t.span[i] && (n.kind == kAnnotation || n.kind == kGPUAnnotation || n.flags&fModule != 0) {
			tier = append(tier, i)
		}
	}
	var vals []int64 // firstK's scratch, shared by the first two tiers
	if len(tier) > left {
		vals = slices.Grow(vals[:0], len(tier))
		firstK(tier, left, func(i int32) int64 { return -int64(nodes.at(i).flags & fStep) },
			func(i int32) int64 { return -nodes.at(i).dur }, vals)
	}
	for _, i := range tier {
		take(i)
	}
	if left == 0 {
		return keep
	}
	// 2. ops with GPU time.
	tier = tier[:0]
	for i := int32(0); i < nodes.len(); i++ {
		if t.span[i] && nodes.at(i).kind == kOp && gpu[i] > 0 {
			tier = append(tier, i)
		}
	}
	if len(tier) > left {
		vals = slices.Grow(vals[:0], len(tier))
		firstK(tier, left, func(i int32) int64 { return -gpu[i] }, func(i int32) int64 { return -nodes.at(i).dur }, vals)
	}
	for _, i := range tier {
		take(i)
	}
	if left == 0 {
		return keep
	}
	// 3. GPU activity of kept spans, with its launch.
	tier = tier[:0]
	launcher := func(k int32) int32 {
		if p := nodes.at(k).parent; p >= 0 && t.span[p] {
			return p
		}
		return t.up[k]
	}
	for i := int32(0); i < nodes.len(); i++ {
		if t.span[i] && nodes.at(i).kind.launched() {
			if l := launcher(i); l >= 0 && nodes.at(l).kind == kRuntime {
				tier = append(tier, i)
			}
		}
	}
	sortByKey(tier, func(i int32) (int64, int64) {
		l := launcher(i)
		return -gpu[l], int64(l)
	})
	for _, k := range tier {
		if left == 0 {
			break
		}
		l := launcher(k)
		switch {
		case keep[l]:
			take(k)
		case left >= 2:
			if u := t.up[l]; u < 0 || keep[u] {
				take(l)
				take(k)
			}
		}
	}
	if left == 0 {
		return keep
	}
	// 4. the rest, longest first.
	tier = tier[:0]
	for i := int32(0); i < nodes.len(); i++ {
		if t.span[i] && !keep[i] {
			tier = append(tier, i)
		}
	}
	if len(tier) > left {
		// gpu is no longer read: its memory is the scratch (as many
		// values as nodes, more than the tier holds).
		firstK(tier, left, func(i int32) int64 { return -nodes.at(i).dur }, func(int32) int64 { return 0 }, gpu[:0])
	}
	for _, i := range tier {
		take(i)
	}
	return keep
}

// firstK reorders idx, node indexes in ascending order, so that idx[:k]
// holds the k indexes that come first in the order of (p(i), s(i), i), in
// no particular order: where all a tier's picks fit in the budget, which
// ones are taken depends on the order, the order in which they are taken
// does not. vals is scratch with room for len(idx) values.
//
// No sort and no precomputed keys: the k-th smallest p is found by
// selection over p's values, then, among the indexes at that value, the
// needed number of smallest s the same way, and what is tied there goes by
// index. 8 bytes an index where (p, s, i) keys took 32; on the 54 MB
// trace the selection's largest scratch went from 1.45 MB of keys to
// none (the last tier reuses the GPU-time table).
func firstK(idx []int32, k int, p, s func(int32) int64, vals []int64) {
	if k <= 0 || k >= len(idx) {
		return
	}
	vals = vals[:0]
	for _, i := range idx {
		vals = append(vals, p(i))
	}
	tp := kthSmallest(vals, k)
	below, tied := 0, 0
	for _, i := range idx {
		switch v := p(i); {
		case v < tp:
			below++
		case v == tp:
			tied++
		}
	}
	// Of the tied, take need: all, or those with s below ts and then
	// sEq of those at ts, the lowest indexes first.
	need := k - below
	ts, sEq := int64(0), 0
	if need < tied {
		vals = vals[:0]
		for _, i := range idx {
			if p(i) == tp {
				vals = append(vals, s(i))
			}
		}
		ts = kthSmallest(vals, need)
		sEq = need
		for _, i := range idx {
			if p(i) == tp && s(i) < ts {
				sEq--
			}
		}
	}
	// Move the picks to the front. A swap only moves an index already
	// visited, so the rest are visited in ascending order.
	w := 0
	for r, i := range idx {
		pick := false
		switch v := p(i); {
		case v < tp:
			pick = true
		case v == tp && need == tied:
			pick = true
		case v == tp:
			if sv := s(i); sv < ts {
				pick = true
			} else if sv == ts && sEq > 0 {
				pick = true
				sEq--
			}
		}
		if pick {
			idx[w], idx[r] = idx[r], idx[w]
			w++
		}
	}
}

// kthSmallest returns the k-th smallest of v (1 <= k <= len(v)),
// reordering v (quickselect with a three-way partition, which many equal
// values do not slow down; sorts past the depth limit).
func kthSmallest(v []int64, k int) int64 {
	k--
	for depth := 2 * bits.Len(uint(len(v))); ; depth-- {
		if len(v) <= 16 || depth == 0 {
			slices.Sort(v)
			return v[k]
		}
		a, b, c := v[0], v[len(v)/2], v[len(v)-1]
		pivot := max(min(a, b), min(max(a, b), c))
		lt, i, gt := 0, 0, len(v)
		for i < gt {
			switch x := v[i]; {
			case x < pivot:
				v[lt], v[i] = x, v[lt]
				lt++
				i++
			case x > pivot:
				gt--
				v[gt], v[i] = x, v[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			v = v[:lt]
		case k >= gt:
			v, k = v[gt:], k-gt
		default:
			return pivot
		}
	}
}

// sortByKey sorts idx by (key(i), i) ascending, computing each key once
// (the comparator then reads neither the nodes nor side tables).
func sortByKey(idx []int32, key func(int32) (int64, int64)) {
	buf := make([]sortKey, len(idx))
	for j, i := range idx {
		a, b := key(i)
		buf[j] = sortKey{a: a, b: b, d: int64(i)}
	}
	sortKeys(buf)
	for j := range buf {
		idx[j] = int32(buf[j].d)
	}
}

// keptParent is the nearest kept ancestor of node i (-1: the root).
func (t *tree) keptParent(i int32, keep []bool) int32 {
	var p int32
	if q := t.nodes.at(i).parent; q >= 0 && t.span[q] {
		p = q
	} else {
		p = t.up[i]
	}
	for p >= 0 && !keep[p] {
		p = t.up[p]
	}
	return p
}

var kindNames = [...]string{kOther: "other", kAnnotation: "annotation", kGPUAnnotation: "gpu_annotation",
	kPython: "python_function", kOp: "cpu_op", kRuntime: "runtime", kKernel: "kernel",
	kMemcpy: "memcpy", kMemset: "memset", kSync: "sync"}

// emitSpans builds the spans (the root, then the kept nodes in node
// order) in batches of at most batchSpans (<= 0: unbounded), each under a
// copy of resource, and hands each full batch to emit before building the
// next, on the caller's goroutine. Building each batch's second half on
// another goroutine, as this did from 29 November, no longer shortened
// the import: in alternating cold imports of the 54 MB trace one
// goroutine took the same wall time (medians 224.3 against 226.0 ms over
// 80 runs, 185.8 against 185.5 and, on its .gz, 218.7 against 221.3 over
// 40) for 13-24 ms less CPU and 0.5-0.7 MiB less RSS; the 541 MB trace
// 1.42 against 1.52 s (5 runs). Allocating pdata is most of the work,
// and the collector, which a heap this small runs every 2-3 MB, takes
// the other core; the spans-only floor (kinetoparse -floor-spans) shows
// the same: 83.8 against 83.7 ms, 16 ms more CPU on two goroutines.
func (b *Builder) emitSpans(resource pcommon.Resource, batchSpans int, emit func(ptrace.Traces) error,
	t *tree, keep []bool, tid pcommon.TraceID, ids signals.SpanIDs,
	off, winStart, winEnd int64, base string, st *Stats) error {
	nKept := 0
	for _, k := range keep {
		if k {
			nKept++
		}
	}
	total := nKept + 1 // and the root
	if batchSpans <= 0 {
		batchSpans = total
	}
	// Each batch's nodes are found in keep as the batch is built: a list
	// of every kept node (4 bytes a node, 0.5 MB for the 54 MB trace)
	// would be live through all the batches.
	scan := 0 // where in keep the next batch's nodes start
	st.SpansByKind = make(map[string]int64)
	var byKind [len(kindNames)]int64
	defer func() {
		for k, c := range byKind {
			if c > 0 {
				st.SpansByKind[kindNames[k]] += c
			}
		}
	}()

	rootID := ids.ID(-1)
	st.Spans = 0
	// The nodes of batch 0 follow the root; later batches hold nodes only.
	for first := -1; first < nKept; {
		n := min(batchSpans, nKept-first)
		td, spans := signals.NewSpanBatch(resource, n)
		want := n // this batch's nodes: n spans, the first batch's root among them
		if first < 0 {
			signals.FillRoot(spans.AppendEmpty(), tid, rootID, base, winStart, winEnd)
			want--
		}
		for ; want > 0; scan++ {
			if !keep[scan] {
				continue
			}
			i := int32(scan)
			b.fillSpan(spans.AppendEmpty(), t, keep, i, tid, ids, off)
			byKind[t.nodes.at(i).kind]++
			want--
		}
		st.Spans += int64(n)
		first += n
		if err := emit(td); err != nil {
			return err
		}
	}
	return nil
}

// fillSpan writes node i's span.
func (b *Builder) fillSpan(sp ptrace.Span, t *tree, keep []bool, i int32, tid pcommon.TraceID, ids signals.SpanIDs,
	off int64) {
	nd := t.nodes.at(i)
	ids.Link(sp, tid, i, t.keptParent(i, keep))
	sp.SetName(b.strs[nd.name])
	sp.SetStartTimestamp(pcommon.Timestamp(nd.start + off))
	sp.SetEndTimestamp(pcommon.Timestamp(nd.end() + off))
	w := b.full(i, nd)
	a := sp.Attributes()
	a.EnsureCapacity(b.attrCount(t, nd, i, w))
	a.PutStr(spec.AttrProfileCategory, b.strs[w.cat])
	if p := t.modPath[i]; p != 0 {
		a.PutStr(spec.AttrProfileModulePath, b.strs[p])
	}
	if w.device >= 0 {
		a.PutInt(spec.AttrProfileDevice, int64(w.device))
	}
	if nd.stream >= 0 {
		a.PutInt(spec.AttrProfileStream, int64(nd.stream))
	}
	if nd.kind != kPython {
		if w.ext >= 0 {
			a.PutInt(spec.AttrProfileExternalID, w.ext)
		}
		if w.corr >= 0 {
			a.PutInt(spec.AttrProfileCorrelation, w.corr)
		}
	}
	if nd.kind.cpu() {
		if th := &b.threads[w.thread]; th.tidStr == "" {
			a.PutInt(spec.AttrThreadID, th.tid)
		}
	}
	if nd.extra != 0 {
		x := b.extras.at(int32(nd.extra))
		putRaw(a, spec.AttrProfileInputDims, b.strs[x.inputDims])
		putRaw(a, spec.AttrProfileGrid, b.strs[x.grid])
		putRaw(a, spec.AttrProfileBlock, b.strs[x.block])
		putRaw(a, spec.AttrProfileCallStack, b.strs[x.callStack])
	}
}

// attrCount is the exact number of attributes emitSpans puts on node i's
// span, so that the attribute map is allocated once at its final size.
func (b *Builder) attrCount(t *tree, nd *node, i int32, w wideNode) int {
	c := 1
	if t.modPath[i] != 0 {
		c++
	}
	if w.device >= 0 {
		c++
	}
	if nd.stream >= 0 {
		c++
	}
	if nd.kind != kPython {
		if w.ext >= 0 {
			c++
		}
		if w.corr >= 0 {
			c++
		}
	}
	if nd.kind.cpu() && b.threads[w.thread].tidStr == "" {
		c++
	}
	if nd.extra != 0 {
		x := b.extras.at(int32(nd.extra))
		for _, v := range [...]uint32{x.inputDims, x.grid, x.block, x.callStack} {
			if v != 0 {
				c++
			}
		}
	}
	return c
}

// putRaw stores a raw JSON arg as written; a JSON string is unquoted.
func putRaw(a pcommon.Map, k, v string) {
	if v == "" {
		return
	}
	if len(v) >= 2 && v[0] == '"' {
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
		if v == "" {
			return
		}
	}
	a.PutStr(k, v)
}

func (b *Builder) fillResource(r pcommon.Resource, md kineto.Metadata, file string, pid int64) {
	a := r.Attributes()
	a.PutStr(spec.AttrServiceName, spec.ProfileServiceName)
	for _, kv := range md.Extra {
		switch kv.Key {
		case "host_name", "hostname", spec.AttrHostName:
			if v := strings.Trim(kv.Value, `"`); v != "" {
				a.PutStr(spec.AttrHostName, v)
			}
		}
	}
	if pid >= 0 {
		a.PutInt(spec.AttrProcessPid, pid)
		if name := b.processName[pid]; name != "" {
			a.PutStr(spec.AttrProcessExecutableName, name)
		}
	}
	a.PutStr(spec.AttrProfileFile, file)
	if md.Rank >= 0 {
		a.PutInt(spec.AttrProfileRank, md.Rank)
	}
	if md.WorldSize >= 0 {
		a.PutInt(spec.AttrProfileWorldSize, md.WorldSize)
	}
	if len(md.Devices) > 0 {
		s := a.PutEmptySlice(spec.AttrProfileGPUNames)
		for _, d := range md.Devices {
			s.AppendEmpty().SetStr(d.Name)
		}
	}
}

// release drops the builder's state once Finish has built the result, and
// gives the tables' mapped chunks back: nothing refers to them any more.
func (b *Builder) release() {
	b.nodes, b.extras, b.mems, b.flows = nodeTable{}, table[extra]{}, table[memEvent]{}, table[flow]{}
	b.wide = nil
	if b.arena != nil {
		b.cleanup.Stop()
		b.arena.Free()
	}
	b.strs, b.strIdx, b.threads, b.thrIdx, b.perThread = nil, nil, nil, nil, nil
	b.hasLastThr, b.hasLastCat, b.lastCat = false, false, ""
	b.strCache = [internCacheSize]uint32{}
}

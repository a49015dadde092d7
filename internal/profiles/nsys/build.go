// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nsys

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// reqLink is the request an NVTX range names.
type reqLink struct {
	trace pcommon.TraceID
	span  pcommon.SpanID // zero when the text has only a trace id
}

// parseRequest finds the request trace id an NVTX range is tagged with,
// in the forms every profile format accepts (signals.FindTraceContext).
func parseRequest(text string) (reqLink, bool) {
	tc, ok := signals.FindTraceContext(text)
	return reqLink{trace: tc.Trace, span: tc.Span}, ok
}

// link parents runtime calls under the innermost NVTX range on the same
// thread that contains them, NVTX ranges under the innermost enclosing
// range, and GPU activity under its launching runtime call (same process
// and correlationId); it fills the module paths on the way.
func (im *importer) link() {
	nodes := im.nodes
	// Per thread: NVTX ranges and runtime calls in start order, ranges
	// first and longest first at equal start so that they enclose.
	byThread := map[int64][]int32{}
	for i := range nodes {
		if k := nodes[i].kind; k == kNVTX || k == kRuntime {
			byThread[nodes[i].gtid] = append(byThread[nodes[i].gtid], int32(i))
		}
	}
	tids := make([]int64, 0, len(byThread))
	for t := range byThread {
		tids = append(tids, t)
	}
	slices.Sort(tids)
	for _, t := range tids {
		evs := byThread[t]
		slices.SortFunc(evs, func(a, b int32) int {
			x, y := &nodes[a], &nodes[b]
			if c := cmp.Compare(x.start, y.start); c != 0 {
				return c
			}
			if c := cmp.Compare(x.kind, y.kind); c != 0 { // kNVTX < kRuntime
				return c
			}
			if c := cmp.Compare(y.end, x.end); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		// stack holds the open ranges in start order. Start/end ranges
		// need not nest, so the innermost range containing an event is
		// looked for from the top rather than assumed to be the top.
		var stack []int32
		for _, i := range evs {
			n := &nodes[i]
			for len(stack) > 0 && nodes[stack[len(stack)-1]].end < n.start {
				stack = stack[:len(stack)-1]
			}
			p := int32(-1)
			for j := len(stack) - 1; j >= 0; j-- {
				if r := &nodes[stack[j]]; r.start <= n.start && r.end >= n.end {
					p = stack[j]
					break
				}
			}
			n.parent = p
			parentPath := ""
			if p >= 0 {
				parentPath = nodes[p].path
			}
			switch {
			case n.kind == kRuntime, n.reqTag:
				// A request range groups modules; it is not one.
				n.path = parentPath
			case parentPath == "":
				n.path = n.name
			default:
				n.path = parentPath + "/" + n.name
			}
			if n.kind == kNVTX {
				stack = append(stack, i)
			}
		}
	}
	// Correlation ids are unique per process, not across processes.
	type corrKey struct{ gpid, corr int64 }
	launch := map[corrKey]int32{}
	byCorr := map[int64]int32{} // for GPU rows without globalPid; -2: ambiguous
	for i := range nodes {
		if n := &nodes[i]; n.kind == kRuntime && n.corr >= 0 {
			launch[corrKey{n.gpid, n.corr}] = int32(i)
			if _, dup := byCorr[n.corr]; dup {
				byCorr[n.corr] = -2
			} else {
				byCorr[n.corr] = int32(i)
			}
		}
	}
	for i := range nodes {
		n := &nodes[i]
		if !n.kind.gpu() {
			continue
		}
		r, ok := int32(-1), false
		if n.corr >= 0 {
			if n.gpid >= 0 {
				r, ok = launch[corrKey{n.gpid, n.corr}]
			} else {
				r, ok = byCorr[n.corr]
				ok = ok && r >= 0
			}
		}
		if !ok {
			im.sum.KernelsWithoutLauncher++
			continue
		}
		n.parent = r
		n.path = nodes[r].path
		if n.gpid < 0 {
			n.gpid = nodes[r].gpid
		}
	}
}

// selectSpans applies the span budget (root included): NVTX ranges
// (longest first), then runtime calls by the GPU time they launched with
// their GPU activity, then the remaining runtime calls and unlaunched GPU
// activity, longest first.
func (im *importer) selectSpans() []bool {
	nodes := im.nodes
	keep := make([]bool, len(nodes))
	budget := im.opts.SpanBudget - 1
	if len(nodes) <= budget {
		for i := range keep {
			keep[i] = true
		}
		return keep
	}
	im.sum.SpansDropped = int64(len(nodes) - max(budget, 0))
	left := max(budget, 0)
	take := func(i int32) {
		if left > 0 && !keep[i] {
			keep[i] = true
			left--
		}
	}
	gpu := make([]int64, len(nodes))
	children := map[int32][]int32{}
	for i := range nodes {
		if n := &nodes[i]; n.kind.gpu() && n.parent >= 0 {
			gpu[n.parent] += n.end - n.start
			children[n.parent] = append(children[n.parent], int32(i))
		}
	}
	byDur := func(idx []int32) {
		slices.SortFunc(idx, func(a, b int32) int {
			if c := cmp.Compare(nodes[b].end-nodes[b].start, nodes[a].end-nodes[a].start); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
	}
	var tier []int32
	for i := range nodes {
		if nodes[i].kind == kNVTX {
			tier = append(tier, int32(i))
		}
	}
	byDur(tier)
	for _, i := range tier {
		take(i)
	}
	tier = tier[:0]
	for i := range nodes {
		if nodes[i].kind == kRuntime && gpu[i] > 0 {
			tier = append(tier, int32(i))
		}
	}
	slices.SortFunc(tier, func(a, b int32) int {
		if c := cmp.Compare(gpu[b], gpu[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for _, r := range tier {
		// A launch is only worth its budget with its kernels: take it
		// when at least one of them fits too.
		if left < 2 {
			break
		}
		take(r)
		for _, k := range children[r] {
			take(k)
		}
	}
	tier = tier[:0]
	for i := range nodes {
		if !keep[i] {
			tier = append(tier, int32(i))
		}
	}
	byDur(tier)
	for _, i := range tier {
		take(i)
	}
	return keep
}

// keptParent is the nearest kept ancestor of node i (-1: the root).
func (im *importer) keptParent(i int32, keep []bool) int32 {
	p := im.nodes[i].parent
	for p >= 0 && !keep[p] {
		p = im.nodes[p].parent
	}
	return p
}

func (im *importer) finish(batchSpans int, emit func(ptrace.Traces) error) (Result, error) {
	res := Result{Metrics: pmetric.NewMetrics(), Logs: plog.NewLogs()}
	im.link()
	nodes := im.nodes

	// Window, processes and the main process (most events).
	winStart, winEnd, first := int64(0), int64(0), true
	per := map[int64]int64{}
	widen := func(s, e int64) {
		if first || s < winStart {
			winStart = s
		}
		if first || e > winEnd {
			winEnd = e
		}
		first = false
	}
	for i := range nodes {
		widen(nodes[i].start, nodes[i].end)
		if nodes[i].gpid >= 0 {
			per[nodes[i].pid()]++
		}
	}
	for i := range im.mems {
		widen(im.mems[i].ts, im.mems[i].ts)
		per[(im.mems[i].gpid>>24)&0xFFFFFF]++
	}
	im.sum.Processes = len(per)
	mainPid, best := int64(-1), int64(0)
	for pid, n := range per {
		if n > best || (n == best && pid < mainPid) {
			mainPid, best = pid, n
		}
	}
	im.clock(winStart, !first)
	rawStart, rawEnd := winStart, winEnd
	winStart, winEnd = im.at(winStart), im.at(winEnd)

	base := filepath.Base(im.name)
	h := sha256.New()
	for _, s := range []string{base, strconv.FormatInt(winStart, 10), strconv.Itoa(len(nodes) + len(im.mems)), strconv.FormatInt(mainPid, 10)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var tid pcommon.TraceID
	copy(tid[:], h.Sum(nil))
	ids := signals.NewSpanIDs(tid)

	resource := pcommon.NewResource()
	for _, r := range []pcommon.Resource{resource, res.Metrics.ResourceMetrics().AppendEmpty().Resource(),
		res.Logs.ResourceLogs().AppendEmpty().Resource()} {
		a := r.Attributes()
		a.PutStr(spec.AttrServiceName, spec.ProfileServiceName)
		if mainPid >= 0 {
			a.PutInt(spec.AttrProcessPid, mainPid)
			if n := im.pnames[mainPid]; n != "" {
				a.PutStr(spec.AttrProcessExecutableName, n)
			}
		}
		a.PutStr(spec.AttrProfileFile, im.name)
	}

	keep := im.selectSpans()
	acc := im.memory()
	im.emitMetrics(res.Metrics, acc, winStart, winEnd, rawStart, rawEnd)
	im.emitLeaks(res.Logs, acc, keep, tid, ids, winEnd)
	err := im.emitSpans(resource, batchSpans, emit, keep, tid, ids, winStart, winEnd, base)
	res.Summary = im.sum
	return res, err
}

// at is a time of the file on the clock the spans use (see clock): plus
// timeOff, saturating at the ends of int64 and floored at 0, so that times
// an export should not hold (negative, or overflowing once the session
// start is added) keep their order instead of wrapping around.
func (im *importer) at(t int64) int64 {
	off := im.timeOff
	switch {
	case off > 0 && t > math.MaxInt64-off:
		return math.MaxInt64
	case off < 0 && t < math.MinInt64-off:
		return 0
	}
	return max(t+off, 0)
}

func (im *importer) emitSpans(resource pcommon.Resource, batchSpans int, emit func(ptrace.Traces) error,
	keep []bool, tid pcommon.TraceID, ids signals.SpanIDs, winStart, winEnd int64, base string) error {
	var kept []int32
	for i, k := range keep {
		if k {
			kept = append(kept, int32(i))
		}
	}
	total := len(kept) + 1
	if batchSpans <= 0 {
		batchSpans = total
	}
	im.sum.SpansByKind = map[string]int64{}
	rootID := ids.ID(-1)
	for first := -1; first < len(kept); {
		n := min(batchSpans, len(kept)-first)
		td, spans := signals.NewSpanBatch(resource, n)
		from := first
		if first < 0 {
			signals.FillRoot(spans.AppendEmpty(), tid, rootID, base, winStart, winEnd)
			from = 0
		}
		for _, i := range kept[from : first+n] {
			nd := &im.nodes[i]
			sp := spans.AppendEmpty()
			ids.Link(sp, tid, i, im.keptParent(i, keep))
			sp.SetName(nd.name)
			sp.SetStartTimestamp(pcommon.Timestamp(im.at(nd.start)))
			sp.SetEndTimestamp(pcommon.Timestamp(im.at(nd.end)))
			a := sp.Attributes()
			a.PutStr(spec.AttrProfileCategory, kindCategories[nd.kind])
			if nd.path != "" {
				a.PutStr(spec.AttrProfileModulePath, nd.path)
			}
			if nd.device >= 0 {
				a.PutInt(spec.AttrProfileDevice, nd.device)
			}
			if nd.stream >= 0 {
				a.PutInt(spec.AttrProfileStream, nd.stream)
			}
			if nd.corr >= 0 {
				a.PutInt(spec.AttrProfileCorrelation, nd.corr)
			}
			if nd.gtid >= 0 {
				a.PutInt(spec.AttrThreadID, nd.gtid&0xFFFFFF)
			}
			if nd.grid != "" {
				a.PutStr(spec.AttrProfileGrid, nd.grid)
			}
			if nd.block != "" {
				a.PutStr(spec.AttrProfileBlock, nd.block)
			}
			if nd.link >= 0 {
				l := im.links[nd.link]
				sl := sp.Links().AppendEmpty()
				sl.SetTraceID(l.trace)
				sl.SetSpanID(l.span)
			}
			im.sum.SpansByKind[kindNames[nd.kind]]++
		}
		im.sum.Spans += int64(n)
		first += n
		if err := emit(td); err != nil {
			return err
		}
	}
	return nil
}

// Memory accounting.

type memGroupKey struct {
	pid, device int64
	path        string
}

type memGroup struct {
	memGroupKey
	allocated, allocations     int64
	outstanding, outstandingN  int64
	largestNode                int32 // allocating runtime call of the largest outstanding allocation (-1 none)
	largestBytes, largestOrder int64
}

type seriesKey struct{ pid, device int64 }

type memAccount struct {
	groups  []memGroup
	series  map[seriesKey][][2]int64 // (ts, total allocated) after each event
	seriesK []seriesKey
}

// memory replays the device memory events in time order: the running
// total per (process, device), and allocations not freed by the end per
// (process, device, module path of the allocating call).
func (im *importer) memory() *memAccount {
	acc := &memAccount{series: map[seriesKey][][2]int64{}}
	if len(im.mems) == 0 {
		return acc
	}
	type corrKey struct{ gpid, corr int64 }
	launch := map[corrKey]int32{}
	for i := range im.nodes {
		if n := &im.nodes[i]; n.kind == kRuntime && n.corr >= 0 {
			launch[corrKey{n.gpid, n.corr}] = int32(i)
		}
	}
	type addrKey struct{ gpid, device, addr int64 }
	type live struct {
		group int32
		bytes int64
		node  int32
		order int64
	}
	groups := map[memGroupKey]int32{}
	alive := map[addrKey]live{}
	totals := map[seriesKey]int64{}
	for order, e := range im.mems {
		sk := seriesKey{(e.gpid >> 24) & 0xFFFFFF, e.device}
		ak := addrKey{e.gpid, e.device, e.addr}
		if e.free {
			l, ok := alive[ak]
			if !ok {
				im.sum.UnmatchedFrees++
				continue
			}
			delete(alive, ak)
			g := &acc.groups[l.group]
			g.outstanding -= l.bytes
			g.outstandingN--
			totals[sk] -= l.bytes
		} else {
			nd, ok := launch[corrKey{e.gpid, e.corr}]
			if !ok || e.corr < 0 {
				nd = -1
			}
			path := signals.UnattributedPath
			if nd >= 0 && im.nodes[nd].path != "" {
				path = im.nodes[nd].path
			}
			gk := memGroupKey{sk.pid, e.device, path}
			g, ok := groups[gk]
			if !ok {
				g = int32(len(acc.groups))
				groups[gk] = g
				acc.groups = append(acc.groups, memGroup{memGroupKey: gk, largestNode: -1})
			}
			if old, ok := alive[ak]; ok { // a free the capture missed
				og := &acc.groups[old.group]
				og.outstanding -= old.bytes
				og.outstandingN--
				totals[sk] -= old.bytes
			}
			gr := &acc.groups[g]
			gr.allocated += e.bytes
			gr.allocations++
			gr.outstanding += e.bytes
			gr.outstandingN++
			alive[ak] = live{group: g, bytes: e.bytes, node: nd, order: int64(order)}
			totals[sk] += e.bytes
		}
		if _, ok := acc.series[sk]; !ok {
			acc.seriesK = append(acc.seriesK, sk)
		}
		acc.series[sk] = append(acc.series[sk], [2]int64{e.ts, totals[sk]})
	}
	for _, l := range alive {
		g := &acc.groups[l.group]
		if l.bytes > g.largestBytes || (l.bytes == g.largestBytes && l.order < g.largestOrder) {
			g.largestBytes, g.largestNode, g.largestOrder = l.bytes, l.node, l.order
		}
		im.sum.OutstandingBytes += l.bytes
	}
	slices.SortFunc(acc.groups, func(a, b memGroup) int {
		return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.device, b.device), cmp.Compare(a.path, b.path))
	})
	slices.SortFunc(acc.seriesK, func(a, b seriesKey) int {
		return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.device, b.device))
	})
	return acc
}

func (im *importer) emitMetrics(md pmetric.Metrics, acc *memAccount, winStart, winEnd, rawStart, rawEnd int64) {
	ms := signals.NewScopeMetrics(md)
	start, end := pcommon.Timestamp(winStart), pcommon.Timestamp(winEnd)
	signals.AppendModuleMemory(ms, signals.MemoryDescriptions{
		Allocated:   "GPU device memory allocated during an nsys capture, per process, device and module path of the allocating call.",
		Outstanding: "GPU device memory allocated during an nsys capture and not freed by its end, per process, device and module path.",
	}, len(acc.groups), func(i int) signals.MemoryRow {
		g := &acc.groups[i]
		return signals.MemoryRow{Path: g.path, Device: g.device, Pid: g.pid, HasPid: true, Allocated: g.allocated, Outstanding: g.outstanding}
	}, start, end, im.name)
	if len(acc.seriesK) == 0 {
		return
	}
	dps := spec.AppendNumberMetric(ms, spec.ProfileMemoryTotalAllocated,
		"GPU device memory allocated (cudaMalloc and friends) over an nsys capture, per process and device.")
	var keep []int
	for _, sk := range acc.seriesK {
		pts := acc.series[sk]
		keep = signals.Thin(keep[:0], len(pts), rawStart, rawEnd, func(i int) (int64, int64, bool) { return pts[i][0], pts[i][1], true })
		for _, k := range keep {
			pt := pts[k]
			dp := dps.AppendEmpty()
			dp.SetTimestamp(pcommon.Timestamp(im.at(pt[0])))
			dp.SetIntValue(pt[1])
			a := dp.Attributes()
			a.PutInt(spec.AttrProcessPid, sk.pid)
			a.PutInt(spec.AttrProfileDevice, sk.device)
			a.PutStr(spec.AttrProfileFile, im.name)
		}
	}
}

// emitLeaks writes the leak-suspect records in the Kineto import's schema
// (so that the rootcause connector and llmprof read both alike), plus
// process.pid: an nsys capture may cover several processes.
func (im *importer) emitLeaks(ld plog.Logs, acc *memAccount, keep []bool, tid pcommon.TraceID, ids signals.SpanIDs, winEnd int64) {
	sl := signals.NewScopeLogs(ld)
	if im.opts.LeakSuspects < 0 {
		return
	}
	// Groups are sorted by process, device and path: equal ones keep that
	// order.
	cand, total := signals.LeakCandidates(len(acc.groups), func(i int) int64 { return acc.groups[i].outstanding },
		cmp.Compare[int], im.opts.MinLeakBytes, im.opts.LeakSuspects)
	for _, ci := range cand {
		g := &acc.groups[ci]
		rec := signals.LeakRecord{File: im.name, Path: g.path, Device: g.device, Pid: g.pid, HasPid: true,
			Outstanding: g.outstanding, OutstandingN: g.outstandingN, Allocated: g.allocated,
			Total: total, Threshold: im.opts.MinLeakBytes, Time: pcommon.Timestamp(winEnd),
			Body: fmt.Sprintf("%s allocated in %s on GPU %d by process %d during the nsys capture is still outstanding at its end (%d allocations, %s allocated in total); check what keeps these allocations alive (caches, lists of outputs, retained graphs)",
				signals.FormatBytes(g.outstanding), g.path, g.device, g.pid, g.outstandingN, signals.FormatBytes(g.allocated)),
			Action: "Find what holds the memory allocated in " + g.path + " past the captured steps and release it.",
		}
		rec.AppendUnder(sl, tid, ids, signals.KeptOrParent(g.largestNode, keep, im.keptParent))
		im.sum.LeakSuspects++
	}
}

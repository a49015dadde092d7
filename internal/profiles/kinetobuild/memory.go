// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kinetobuild

import (
	"cmp"
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// GPU device types of [memory] events.
const (
	deviceTypeCUDA = 1
	deviceTypeHIP  = 6
)

type memAccount struct {
	modules []ModuleMemory
	// series per device: indices of GPU memory events in time order.
	devices []int64
	series  [][]int32
	order   []int32 // all memory events in time order
}

type groupKey struct {
	path   uint32
	device int64
}

type liveAlloc struct {
	group int32
	bytes int64
	node  int32
	seq   int32
}

type addrKey struct {
	device int64
	addr   int64
}

// memoryPath is the path an allocation attributed to node n is accounted
// under: its module path; else the name of the outermost CPU op enclosing
// it (traces recorded without with_stack/with_modules have no module
// frames); else <unattributed>.
func (t *tree) memoryPath(n int32) uint32 {
	if n < 0 {
		return t.b.intern(signals.UnattributedPath)
	}
	if p := t.modPath[n]; p != 0 {
		return p
	}
	outer := int32(-1)
	for p := n; p >= 0; p = t.nodes.at(p).parent {
		if t.nodes.at(p).kind == kOp {
			outer = p
		}
	}
	if outer >= 0 {
		return t.nodes.at(outer).name
	}
	return t.b.intern(signals.UnattributedPath)
}

// memory accounts GPU [memory] events (Device Type 1 or 6) per (path,
// device). CPU memory events (Device Type 0 and others) are counted in
// Stats.CPUMemoryEvents and otherwise skipped.
func (t *tree) memory(st *Stats) *memAccount {
	mems := t.b.mems
	acc := &memAccount{}
	st.MemoryEvents = int64(mems.len())
	// All memory events by time, ties by arrival: one bucket of the
	// arrival order's time-ordered runs, merged.
	order := make([]int32, mems.len())
	for i := range order {
		order[i] = int32(i)
	}
	orderRuns(order, []int{0, len(order)}, memEarlier(mems))
	acc.order = order

	groups := make(map[groupKey]int32)
	devIdx := make(map[int64]int)
	live := make(map[addrKey]liveAlloc)
	pathMemo := make(map[int32]uint32)
	for _, m := range order {
		e := mems.at(m)
		if e.devType != deviceTypeCUDA && e.devType != deviceTypeHIP {
			st.CPUMemoryEvents++
			continue
		}
		st.GPUMemoryEvents++
		dev := int64(e.device)
		di, ok := devIdx[dev]
		if !ok {
			di = len(acc.devices)
			devIdx[dev] = di
			acc.devices = append(acc.devices, dev)
			acc.series = append(acc.series, nil)
		}
		acc.series[di] = append(acc.series[di], m)
		ak := addrKey{dev, e.addr}
		switch {
		case e.bytes > 0:
			nd := t.memNode[m]
			if nd < 0 {
				st.UnattributedAllocs++
			}
			path, ok := pathMemo[nd]
			if !ok {
				path = t.memoryPath(nd)
				pathMemo[nd] = path
			}
			gk := groupKey{path, dev}
			g, ok := groups[gk]
			if !ok {
				g = int32(len(acc.modules))
				groups[gk] = g
				acc.modules = append(acc.modules, ModuleMemory{ModulePath: t.b.strs[path], Device: dev, largestNode: -1})
			}
			if old, ok := live[ak]; ok {
				st.ReallocatedWithoutFree++
				t.release(acc, old)
			}
			mm := &acc.modules[g]
			mm.AllocatedBytes += e.bytes
			mm.Allocations++
			mm.OutstandingBytes += e.bytes
			mm.OutstandingAllocations++
			mm.PeakOutstandingBytes = max(mm.PeakOutstandingBytes, mm.OutstandingBytes)
			live[ak] = liveAlloc{group: g, bytes: e.bytes, node: nd, seq: m}
		case e.bytes < 0:
			old, ok := live[ak]
			if !ok {
				st.UnmatchedFrees++
				st.UnmatchedFreeBytes += -e.bytes
				continue
			}
			delete(live, ak)
			t.release(acc, old)
		}
	}
	// Largest outstanding allocation per group (ties: earliest event).
	for _, a := range live {
		mm := &acc.modules[a.group]
		if a.bytes > mm.largestBytes || (a.bytes == mm.largestBytes && a.seq < mm.largestSeq) {
			mm.largestBytes, mm.largestNode, mm.largestSeq = a.bytes, a.node, a.seq
		}
	}
	slices.SortFunc(acc.modules, func(a, b ModuleMemory) int {
		if c := cmp.Compare(a.ModulePath, b.ModulePath); c != 0 {
			return c
		}
		return cmp.Compare(a.Device, b.Device)
	})
	return acc
}

func (t *tree) release(acc *memAccount, a liveAlloc) {
	mm := &acc.modules[a.group]
	mm.OutstandingBytes -= a.bytes
	mm.OutstandingAllocations--
}

func (b *Builder) emitMetrics(md pmetric.Metrics, acc *memAccount, off, winStart, winEnd int64, file string, st *Stats) {
	ms := signals.NewScopeMetrics(md)
	start, end := pcommon.Timestamp(winStart), pcommon.Timestamp(winEnd)
	signals.AppendModuleMemory(ms, signals.MemoryDescriptions{
		Allocated:   "GPU memory allocated during a profile, attributed to the model-layer path that allocated it.",
		Outstanding: "GPU memory allocated during a profile and not freed by its end, per model-layer path.",
	}, len(acc.modules), func(i int) signals.MemoryRow {
		mm := &acc.modules[i]
		return signals.MemoryRow{Path: mm.ModulePath, Device: mm.Device, Allocated: mm.AllocatedBytes, Outstanding: mm.OutstandingBytes}
	}, start, end, file)
	if len(acc.devices) == 0 {
		return
	}
	ga := spec.AppendNumberMetric(ms, MetricMemoryTotalAllocated, "Caching allocator's Total Allocated over the profile, per device.")
	gr := spec.AppendNumberMetric(ms, MetricMemoryTotalReserved, "Caching allocator's Total Reserved over the profile, per device.")
	devs := make([]int, len(acc.devices))
	for i := range devs {
		devs[i] = i
	}
	slices.SortFunc(devs, func(x, y int) int { return cmp.Compare(acc.devices[x], acc.devices[y]) })
	mems := b.mems
	var keep []int
	for _, di := range devs {
		dev := acc.devices[di]
		for _, s := range []struct {
			dps pmetric.NumberDataPointSlice
			get func(*memEvent) int64
		}{{ga, func(e *memEvent) int64 { return e.totalAlloc }}, {gr, func(e *memEvent) int64 { return e.totalRes }}} {
			series := acc.series[di]
			keep = signals.Thin(keep[:0], len(series), winStart-off, winEnd-off, func(i int) (int64, int64, bool) {
				e := mems.at(series[i])
				v := s.get(e)
				return e.ts, v, v >= 0
			})
			st.MemoryPointsThinned += int64(len(series) - len(keep))
			s.dps.EnsureCapacity(s.dps.Len() + len(keep))
			for _, k := range keep {
				e := mems.at(series[k])
				dp := s.dps.AppendEmpty()
				dp.SetTimestamp(pcommon.Timestamp(e.ts + off))
				dp.SetIntValue(s.get(e))
				a := dp.Attributes()
				a.EnsureCapacity(2) // one allocation for both, not one each
				a.PutInt(spec.AttrProfileDevice, dev)
				a.PutStr(spec.AttrProfileFile, file)
			}
		}
	}
}

func (b *Builder) emitLeaks(ld plog.Logs, t *tree, acc *memAccount, keep []bool, tid pcommon.TraceID, ids signals.SpanIDs,
	winEnd int64, file string, st *Stats) {
	sl := signals.NewScopeLogs(ld)
	if b.opts.LeakSuspects < 0 {
		return
	}
	cand, total := signals.LeakCandidates(len(acc.modules), func(i int) int64 { return acc.modules[i].OutstandingBytes },
		func(x, y int) int {
			a, c := &acc.modules[x], &acc.modules[y]
			return cmp.Or(cmp.Compare(a.ModulePath, c.ModulePath), cmp.Compare(a.Device, c.Device))
		}, b.opts.MinLeakBytes, b.opts.LeakSuspects)
	for _, ci := range cand {
		mm := &acc.modules[ci]
		rec := signals.LeakRecord{File: file, Path: mm.ModulePath, Device: mm.Device,
			Outstanding: mm.OutstandingBytes, OutstandingN: mm.OutstandingAllocations, Allocated: mm.AllocatedBytes,
			Total: total, Threshold: b.opts.MinLeakBytes, Time: pcommon.Timestamp(winEnd),
			Body: fmt.Sprintf("%s allocated in %s on GPU %d during the profile is still outstanding at its end (%d allocations, %s allocated in total); check what keeps these tensors alive (caches, lists of outputs, retained graphs)",
				signals.FormatBytes(mm.OutstandingBytes), mm.ModulePath, mm.Device, mm.OutstandingAllocations, signals.FormatBytes(mm.AllocatedBytes)),
			Action: "Find what holds the tensors allocated in " + mm.ModulePath + " past the profiled steps and release them.",
		}
		rec.AppendUnder(sl, tid, ids, signals.KeptOrParent(mm.largestNode, keep, t.keptParent))
		st.LeakSuspects++
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// Names of what the snapshot emits are in internal/spec
// (spec.AttrProfile*, spec.IncidentKindGPUOOM).
const (
	MetricLargestFreeBlock = spec.ProfileAllocatorLargestFreeBlock

	UnknownSite = "<unknown>"
	OtherSites  = "<other sites>"

	// maxSitesPerDevice bounds the outstanding series per device: the
	// rest is summed under OtherSites (a model has a few dozen sites; a
	// snapshot of a long-running server may have thousands of one-off ones).
	maxSitesPerDevice = 200
	maxStackFrames    = 64
)

type siteKey struct {
	site   string
	device int64
}

type siteAcc struct {
	bytes, count int64
}

type deviceState struct {
	reserved, allocated, largestFree, outstanding int64
	hasSegments                                   bool
}

type analysis struct {
	s        *store
	file     string
	segs     []uint32
	devTrace map[int64]*traceList
	sum      Summary
	siteMemo map[uint32]siteInfo
}

// Notes on a site whose stack has no Python frame.
const (
	noteCppOnly = "no Python frames recorded (C++ stack only)"
	noteNoSite  = "site unknown: no Python frames recorded, and the C++ stack holds only unwinder, allocator and runtime frames"
)

type siteInfo struct {
	site, note string
}

// site is the allocation site of a stack (see the package comment).
func (a *analysis) site(stack uint32) string { return a.siteInfo(stack).site }

// siteInfo is the allocation site of a stack and, when the stack has no
// Python frame, a note saying so: the innermost non-library frame; else
// the innermost Python frame (library code: PyTorch called from C++ or
// from a thread with no user frame); else, for a C++-only stack, the
// innermost frame that is not the unwinder that recorded the stack, the
// caching allocator or the C/Python runtime; else unknown.
func (a *analysis) siteInfo(stack uint32) siteInfo {
	if stack == 0 {
		return siteInfo{site: UnknownSite}
	}
	if a.siteMemo == nil {
		a.siteMemo = make(map[uint32]siteInfo)
	}
	if s, ok := a.siteMemo[stack]; ok {
		return s
	}
	fr := a.s.stacks[stack]
	si := siteInfo{site: UnknownSite, note: noteNoSite}
	pick := func() int {
		for i, f := range fr {
			if !isLibraryFrame(a.s.frames[f].file) {
				return i
			}
		}
		for i, f := range fr {
			if !isNativeFrame(a.s.frames[f].file) {
				return i
			}
		}
		for i, f := range fr {
			if !isNativeInternal(a.s.frames[f]) {
				si.note = noteCppOnly
				return i
			}
		}
		return -1
	}()
	if pick >= 0 {
		if si.note == noteNoSite {
			si.note = ""
		}
		si.site = frameSite(a.s.frames[fr[pick]])
	}
	a.siteMemo[stack] = si
	return si
}

// frameSite is "file.py:LINE function" (the base name of the file, split
// on '/' or '\' whatever the OS the snapshot was taken on), or the
// function alone for a native frame whose file is unknown.
func frameSite(f frame) string {
	if (f.file == "" || f.file == "??") && f.line == 0 && f.name != "" {
		return f.name
	}
	return baseName(f.file) + ":" + strconv.FormatInt(f.line, 10) + " " + f.name
}

func baseName(file string) string {
	if i := strings.LastIndexAny(file, `/\`); i >= 0 && i < len(file)-1 {
		return file[i+1:]
	}
	return file
}

// stdlibWindows matches a Windows CPython's standard library
// (C:\Python311\Lib\..., ...\Programs\Python\Python312\Lib\...), with the
// path's backslashes already turned into slashes.
var stdlibWindows = regexp.MustCompile(`(?i)/python[23][0-9]*/lib/`)

// isLibraryFrame: PyTorch itself, installed packages, the standard library,
// frozen modules and native (C++/CUDA) frames. Windows paths
// (backslashes, drive letters) are read like POSIX ones.
func isLibraryFrame(file string) bool {
	if isNativeFrame(file) {
		return true
	}
	f := strings.ToLower(strings.ReplaceAll(file, `\`, "/"))
	switch {
	case strings.HasPrefix(f, "<frozen"), strings.HasPrefix(f, "<built-in"):
		return true
	case strings.Contains(f, "/torch/"), strings.HasPrefix(f, "torch/"),
		strings.Contains(f, "site-packages/"), strings.Contains(f, "dist-packages/"):
		return true
	case strings.Contains(f, "/lib/python3") || strings.Contains(f, "/lib64/python3") || strings.Contains(f, "/lib/python2"):
		return true
	case stdlibWindows.MatchString(f):
		return true
	}
	return false
}

// isNativeFrame: a C/C++/CUDA frame (no file, a source file of those
// languages, or a shared library, versioned or not).
func isNativeFrame(file string) bool {
	if file == "" || file == "??" {
		return true
	}
	b := strings.ToLower(baseName(file))
	switch path.Ext(b) {
	case ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".cu", ".cuh", ".so", ".dll", ".pyd", ".dylib":
		return true
	}
	return strings.Contains(b, ".so.") // libc.so.6, libpython3.11.so.1.0
}

// Native frames that say nothing about what allocated: the unwinder that
// recorded the stack, the caching allocator and the tensor factories it
// serves (c10::, at::detail::), std::function plumbing, and the C and
// Python runtimes.
var (
	internalPrefixes = []string{"torch::unwind::", "torch::CapturedTraceback", "c10::", "std::",
		"_Py", "Py", "pymain_", "method_vectorcall", "cfunction_", "slot_tp_", "__libc_", "_dl_"}
	internalContains = []string{" c10::", "at::detail::", "torch::unwind::"}
	internalNames    = map[string]bool{"main": true, "_start": true, "start_thread": true, "clone": true,
		"clone3": true, "__clone": true, "__clone3": true}
	internalLibs = []string{"libc.so", "libc-", "libpthread", "libpython", "ld-linux", "libstdc++", "libgcc_s"}
)

func isNativeInternal(f frame) bool {
	name := strings.TrimSpace(f.name)
	if name == "" || internalNames[name] {
		return true
	}
	for _, p := range internalPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, c := range internalContains {
		if strings.Contains(name, c) {
			return true
		}
	}
	b := strings.ToLower(baseName(f.file))
	for _, l := range internalLibs {
		if strings.HasPrefix(b, l) {
			return true
		}
	}
	// The interpreter's own binary (/usr/bin/python3.11).
	return strings.HasPrefix(b, "python") && !strings.HasSuffix(b, ".py")
}

func (a *analysis) stackStrings(stack uint32) []string {
	if stack == 0 {
		return nil
	}
	fr := a.s.stacks[stack]
	out := make([]string, 0, min(len(fr), maxStackFrames))
	for i, f := range fr {
		if i == maxStackFrames {
			out = append(out, fmt.Sprintf("… %d more frames", len(fr)-i))
			break
		}
		x := a.s.frames[f]
		out = append(out, x.file+":"+strconv.FormatInt(x.line, 10)+" "+x.name)
	}
	return out
}

type suspect struct {
	site                  string
	device                int64
	bytes, count, alloced int64
	firstUS               int64
	largest               int64
	stack, meta           uint32
	pattern               *leakPattern // nil: early-and-alive only
}

func (a *analysis) emit(opts Options, mtime time.Time) Result {
	s := a.s
	sum := &a.sum
	sum.EntriesByAction = map[string]int64{}
	sum.Frames = len(s.frames) - 1
	sum.Stacks = len(s.stacks) - 1

	// Devices: from segments and trace rings.
	devs := map[int64]*deviceState{}
	dev := func(d int64) *deviceState {
		if x, ok := devs[d]; ok {
			return x
		}
		x := &deviceState{}
		devs[d] = x
		return x
	}
	var firstUS, endUS int64
	for d, tl := range a.devTrace {
		dev(d)
		sum.TraceEntries += tl.entries
		for i, n := range tl.byAction {
			if n > 0 {
				sum.EntriesByAction[actionNames[i]] += n
			}
		}
		sum.OOMs += tl.byAction[actOOM]
		if tl.hasTime {
			if firstUS == 0 || tl.first < firstUS {
				firstUS = tl.first
			}
			endUS = max(endUS, tl.end)
		}
	}
	sum.SnapshotTimeUS = endUS
	end := pcommon.Timestamp(endUS * 1000)
	if endUS == 0 {
		if mtime.IsZero() {
			mtime = time.Now()
		}
		end = pcommon.NewTimestampFromTime(mtime)
	}
	start := pcommon.Timestamp(firstUS * 1000)
	if firstUS == 0 {
		start = end
	}

	// Segments: allocator state and outstanding bytes per site.
	out := map[siteKey]*siteAcc{}
	for _, si := range a.segs {
		g := &s.segments[si]
		sum.Segments++
		ds := dev(g.device)
		ds.hasSegments = true
		ds.reserved += g.total
		blocks, _ := s.listItems(g.blocks)
		hasBlocks := false
		for _, bv := range blocks {
			bc := s.contOf(bv)
			if bc == nil || bc.kind != cBlock {
				continue
			}
			hasBlocks = true
			b := &s.blocks[bc.ref]
			sum.Blocks++
			switch b.state {
			case stateActiveAllocated:
				ds.allocated += b.size
				ds.outstanding += b.size
				sum.ActiveBlocks++
				stack := b.stack
				if stack == 0 {
					// No frames on the block (history recorded without
					// them, or an older format): the trace ring may know
					// who allocated it.
					if tl := a.devTrace[g.device]; tl != nil {
						if la, ok := tl.live[b.addr]; ok {
							stack = la.stack
						}
					}
				}
				k := siteKey{a.site(stack), g.device}
				acc := out[k]
				if acc == nil {
					acc = &siteAcc{}
					out[k] = acc
				}
				acc.bytes += b.size
				acc.count++
			case stateActivePendingFree:
				ds.allocated += b.size
			case stateInactive:
				ds.largestFree = max(ds.largestFree, b.size)
			}
		}
		if !hasBlocks {
			ds.allocated += g.allocated
		}
	}
	devList := make([]int64, 0, len(devs))
	for d, ds := range devs {
		devList = append(devList, d)
		sum.ReservedBytes += ds.reserved
		sum.AllocatedBytes += ds.allocated
		sum.OutstandingBytes += ds.outstanding
	}
	slices.Sort(devList)
	sum.Devices = len(devList)

	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	a.fillResource(rm.Resource())
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(signals.ScopeName)
	ms := sm.Metrics()

	// llm.signals.memory.outstanding per site and device.
	keys := make([]siteKey, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y siteKey) int {
		if c := cmp.Compare(x.device, y.device); c != 0 {
			return c
		}
		if c := cmp.Compare(out[y].bytes, out[x].bytes); c != 0 {
			return c
		}
		return cmp.Compare(x.site, y.site)
	})
	if len(keys) > 0 {
		sum.Sites = len(keys)
		dps := spec.AppendNumberMetric(ms, spec.ProfileMemoryOutstanding,
			"GPU memory still allocated when the memory snapshot was taken, per allocation site (innermost non-library Python frame) and device.")
		put := func(site string, d, v int64) {
			dp := dps.AppendEmpty()
			dp.SetStartTimestamp(start)
			dp.SetTimestamp(end)
			dp.SetIntValue(v)
			at := dp.Attributes()
			at.PutStr(spec.AttrProfileModulePath, site)
			at.PutInt(spec.AttrProfileDevice, d)
			at.PutStr(spec.AttrProfileFile, a.file)
		}
		perDev, other := 0, int64(0)
		for i, k := range keys {
			if i == 0 || keys[i-1].device != k.device {
				perDev, other = 0, 0
			}
			perDev++
			if perDev <= maxSitesPerDevice {
				put(k.site, k.device, out[k].bytes)
			} else {
				other += out[k].bytes
			}
			if (i == len(keys)-1 || keys[i+1].device != k.device) && other > 0 {
				put(OtherSites, k.device, other)
			}
		}
	}

	// Allocator state per device, with the trace ring's history.
	if len(devList) > 0 {
		fd := spec.AppendNumberMetric(ms, spec.ProfileAllocatorFragmentation,
			"(reserved − allocated − largest free block) / reserved of the caching allocator when the snapshot was taken.")
		ld := spec.AppendNumberMetric(ms, MetricLargestFreeBlock,
			"Largest inactive (free) block in the caching allocator's segments when the snapshot was taken.")
		tad := spec.AppendNumberMetric(ms, spec.ProfileMemoryTotalAllocated,
			"Caching allocator's allocated bytes per device, over the memory history and at the snapshot.")
		trd := spec.AppendNumberMetric(ms, spec.ProfileMemoryTotalReserved,
			"Caching allocator's reserved bytes per device, over the memory history and at the snapshot.")
		gauge := func(dps pmetric.NumberDataPointSlice, d int64, ts pcommon.Timestamp) pmetric.NumberDataPoint {
			dp := dps.AppendEmpty()
			dp.SetTimestamp(ts)
			dp.Attributes().PutInt(spec.AttrProfileDevice, d)
			dp.Attributes().PutStr(spec.AttrProfileFile, a.file)
			return dp
		}
		for _, d := range devList {
			ds := devs[d]
			if !ds.hasSegments {
				continue
			}
			f := 0.0
			if ds.reserved > 0 {
				f = max(float64(ds.reserved-ds.allocated-ds.largestFree)/float64(ds.reserved), 0)
			}
			gauge(fd, d, end).SetDoubleValue(f)
			gauge(ld, d, end).SetIntValue(ds.largestFree)
			// The ring starts mid-run: its history is anchored on the
			// state at the snapshot (absolute = final − relative at end +
			// relative then).
			if tl := a.devTrace[d]; tl != nil {
				offA, offR := ds.allocated-tl.a, ds.reserved-tl.r
				for _, p := range tl.pts {
					ts := pcommon.Timestamp(p.t * 1000)
					if ts >= end {
						continue // the final point below is exact
					}
					gauge(tad, d, ts).SetIntValue(max(offA+p.a, 0))
					gauge(trd, d, ts).SetIntValue(max(offR+p.r, 0))
				}
			}
			gauge(tad, d, end).SetIntValue(ds.allocated)
			gauge(trd, d, end).SetIntValue(ds.reserved)
		}
	}
	sum.MetricPoints = md.DataPointCount()

	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	a.fillResource(rl.Resource())
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(signals.ScopeName)
	a.emitLeaks(sl, opts, end)
	a.emitOOMs(sl, devs, end)
	return Result{Metrics: md, Logs: ld, Summary: *sum}
}

func (a *analysis) fillResource(r pcommon.Resource) {
	at := r.Attributes()
	at.PutStr(spec.AttrServiceName, spec.ProfileServiceName)
	at.PutStr(spec.AttrProfileFile, a.file)
}

// emitLeaks reports the sites whose allocations from the first half of a
// device's trace ring are all still alive at its end, and the sites whose
// allocation history shows a leak pattern (patterns.go; see the package
// comment).
func (a *analysis) emitLeaks(sl plog.ScopeLogs, opts Options, end pcommon.Timestamp) {
	if opts.LeakSuspects < 0 {
		return
	}
	by := map[siteKey]*suspect{}
	var total int64
	for d, tl := range a.devTrace {
		mid := tl.first + (tl.end-tl.first)/2
		allocBySite := map[string]int64{}
		for st, i := range tl.statIdx {
			allocBySite[a.site(st)] += tl.stats[i].bytes
		}
		// A site's pattern: of its stacks with one, the one holding the
		// most (then the lowest stack id, for a stable choice).
		pats := map[string]leakPattern{}
		if !opts.noPatterns {
			for _, p := range a.patterns(tl) {
				site := a.site(p.stack)
				if q, ok := pats[site]; !ok || p.bytes > q.bytes || (p.bytes == q.bytes && p.stack < q.stack) {
					pats[site] = p
				}
			}
		}
		for _, la := range tl.live {
			site := a.site(la.stack)
			early := la.seq < tl.entries/2
			if tl.hasTime {
				early = la.timeUS != 0 && la.timeUS <= mid
			}
			// A site with a pattern accumulates step after step: every
			// allocation of the ring it still holds counts, early or not.
			_, patterned := pats[site]
			if !early && !patterned {
				continue
			}
			total += la.size
			k := siteKey{site, d}
			sp := by[k]
			if sp == nil {
				sp = &suspect{site: k.site, device: d, firstUS: la.timeUS, alloced: allocBySite[k.site]}
				if p, ok := pats[site]; ok {
					sp.pattern = &p
					// The incident starts with the pattern's first step
					// (for a growing tensor, long before the live one).
					if p.firstUS != 0 && p.firstUS < sp.firstUS {
						sp.firstUS = p.firstUS
					}
				}
				by[k] = sp
			}
			sp.bytes += la.size
			sp.count++
			sp.firstUS = min(sp.firstUS, la.timeUS)
			if la.size > sp.largest || (la.size == sp.largest && la.stack < sp.stack) {
				sp.largest, sp.stack = la.size, la.stack
			}
			if sp.meta == 0 || (la.meta != 0 && la.meta < sp.meta) {
				sp.meta = la.meta
			}
		}
	}
	var cand []*suspect
	for _, sp := range by {
		if sp.bytes >= opts.MinLeakBytes {
			cand = append(cand, sp)
		}
	}
	slices.SortFunc(cand, func(x, y *suspect) int {
		if c := cmp.Compare(y.bytes, x.bytes); c != 0 {
			return c
		}
		if c := cmp.Compare(x.site, y.site); c != 0 {
			return c
		}
		return cmp.Compare(x.device, y.device)
	})
	if len(cand) > opts.LeakSuspects {
		cand = cand[:opts.LeakSuspects]
	}
	for _, sp := range cand {
		// Without time_us (a ring recorded without times, or an old
		// format) the time is unknown: said so, rather than the epoch.
		when, start := "time not recorded in the snapshot", ""
		if sp.firstUS != 0 {
			start = rfc(sp.firstUS)
			when = "first at " + start
		}
		rec := signals.LeakRecord{File: a.file, Path: sp.site, Device: sp.device,
			Outstanding: sp.bytes, OutstandingN: sp.count, Allocated: sp.alloced,
			Total: total, Threshold: opts.MinLeakBytes, Time: end, Start: start,
			Body: fmt.Sprintf("%s allocated at %s on GPU %d early in the memory history (%s) is still allocated at its end (%d allocations, %s allocated there during the history); check what keeps these tensors alive (caches, lists of outputs, retained graphs)%s",
				signals.FormatBytes(sp.bytes), sp.site, sp.device, when, sp.count, signals.FormatBytes(sp.alloced), a.noteOf(sp.stack)),
			Action: "Find what holds the tensors allocated at " + sp.site + " past the recorded steps and release them.",
		}
		if p := sp.pattern; p != nil {
			rec.Pattern, rec.ForwardFrame, rec.GrowthPerStep, rec.Steps = p.name, p.frame, p.growth, p.steps
			rec.Body = fmt.Sprintf("%s allocated at %s on GPU %d during the memory history (%s) is still allocated at its end (%d allocations, %s allocated there during the history): %s; %s%s",
				signals.FormatBytes(sp.bytes), sp.site, sp.device, when, sp.count, signals.FormatBytes(sp.alloced), p.describe(), p.advice(), a.noteOf(sp.stack))
			rec.Action = "Find what " + p.where() + " keeps from each step (" + strings.ReplaceAll(p.name, "_", " ") + ") and release or bound it."
		}
		lr := rec.AppendTo(sl)
		if start == "" {
			lr.Attributes().Remove(spec.IncidentStartTime)
		}
		a.join(lr, sp.meta)
		a.putStack(lr.Attributes(), sp.stack)
		a.sum.LeakSuspects++
		if sp.pattern != nil {
			a.sum.LeakPatterns++
		}
	}
}

func (a *analysis) emitOOMs(sl plog.ScopeLogs, devs map[int64]*deviceState, end pcommon.Timestamp) {
	devList := make([]int64, 0, len(a.devTrace))
	for d := range a.devTrace {
		devList = append(devList, d)
	}
	slices.Sort(devList)
	for _, d := range devList {
		tl := a.devTrace[d]
		ds := devs[d]
		for _, o := range tl.ooms {
			e := o.e
			site := a.site(e.stack)
			lr := sl.LogRecords().AppendEmpty()
			when := ""
			if e.timeUS != 0 {
				ts := pcommon.Timestamp(e.timeUS * 1000)
				lr.SetTimestamp(ts)
				lr.SetObservedTimestamp(ts)
			} else {
				// No time_us: the event time is unknown (left unset);
				// observed is when the snapshot was taken.
				lr.SetObservedTimestamp(end)
				when = "; time not recorded in the snapshot"
			}
			lr.SetSeverityNumber(plog.SeverityNumberError)
			lr.SetSeverityText("ERROR")
			state := ""
			at := lr.Attributes()
			if ds != nil && ds.hasSegments {
				alloc := max(ds.allocated-tl.a+o.a, 0)
				res := max(ds.reserved-tl.r+o.r, 0)
				state = fmt.Sprintf("; the caching allocator held %s reserved, %s of it allocated (%s cached but unusable for this request: fragmentation)",
					signals.FormatBytes(res), signals.FormatBytes(alloc), signals.FormatBytes(max(res-alloc, 0)))
				at.PutInt(spec.AttrProfileAllocatorAllocatedBytes, alloc)
				at.PutInt(spec.AttrProfileAllocatorReservedBytes, res)
			}
			lr.Body().SetStr(fmt.Sprintf("CUDA out of memory on GPU %d at %s: %s requested with %s free on the device%s%s%s",
				d, site, signals.FormatBytes(e.size), signals.FormatBytes(e.deviceFree), state, a.noteOf(e.stack), when))
			a.join(lr, e.meta)
			h := sha256.Sum256([]byte(spec.IncidentKindGPUOOM + "\x00" + a.file + "\x00" + strconv.FormatInt(d, 10) + "\x00" + strconv.FormatInt(o.seq, 10)))
			at.PutStr(spec.IncidentID, hex.EncodeToString(h[:8]))
			at.PutStr(spec.IncidentKind, spec.IncidentKindGPUOOM)
			at.PutStr(spec.IncidentQuadrant, spec.QuadrantErrors)
			at.PutStr(spec.IncidentSeverity, spec.SeverityCritical)
			at.PutStr(spec.IncidentState, spec.StateFiring)
			if e.timeUS != 0 {
				at.PutStr(spec.IncidentStartTime, rfc(e.timeUS))
			}
			at.PutDouble(spec.IncidentScore, 1)
			evs := at.PutEmptySlice(spec.IncidentEvidence)
			ev := evs.AppendEmpty().SetEmptyMap()
			ev.PutStr(spec.EvidenceSignal, spec.AttrProfileRequestedBytes)
			ev.PutInt(spec.EvidenceValue, e.size)
			ev.PutInt(spec.EvidenceThreshold, e.deviceFree)
			ev.PutStr(spec.EvidenceUnit, "By")
			at.PutStr(spec.IncidentAction, "Reduce the memory needed at "+site+" (batch size, sequence length, cache size), or set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True if reserved memory is mostly unallocated.")
			at.PutStr(spec.AttrProfileModulePath, site)
			at.PutInt(spec.AttrProfileDevice, d)
			at.PutInt(spec.AttrProfileRequestedBytes, e.size)
			at.PutInt(spec.AttrProfileDeviceFreeBytes, e.deviceFree)
			at.PutInt(spec.AttrProfileStream, e.stream)
			at.PutStr(spec.AttrProfileFile, a.file)
			a.putStack(at, e.stack)
		}
	}
}

// noteOf is "; <note>" for a stack without Python frames, else "".
func (a *analysis) noteOf(stack uint32) string {
	if n := a.siteInfo(stack).note; n != "" {
		return "; " + n
	}
	return ""
}

// join sets the record's trace (and parent span) from user_metadata.
func (a *analysis) join(lr plog.LogRecord, meta uint32) {
	if meta == 0 {
		return
	}
	x := a.s.ids[meta]
	lr.SetTraceID(pcommon.TraceID(x.trace))
	if x.span != ([8]byte{}) {
		lr.SetSpanID(pcommon.SpanID(x.span))
	}
	a.sum.TraceIDJoins++
}

func (a *analysis) putStack(at pcommon.Map, stack uint32) {
	fr := a.stackStrings(stack)
	if len(fr) == 0 {
		return
	}
	sl := at.PutEmptySlice(spec.AttrProfilePythonStack)
	sl.EnsureCapacity(len(fr))
	for _, f := range fr {
		sl.AppendEmpty().SetStr(f)
	}
}

func rfc(us int64) string {
	return time.UnixMicro(us).UTC().Format(time.RFC3339Nano)
}

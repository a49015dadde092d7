// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package signals

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// LeakRecord is one leak-suspect record in the schema every profile import
// writes (Kineto traces here, memory snapshots, Nsight Systems exports),
// which the rootcause connector and llmprof read alike.
type LeakRecord struct {
	File   string // llm.profile.file
	Path   string // module path, or allocation site
	Device int64
	// Pid, when HasPid, is the process (an Nsight capture may cover
	// several): process.pid, and part of the incident id.
	Pid    int64
	HasPid bool

	Outstanding  int64 // bytes still allocated at the end
	OutstandingN int64 // allocations still alive
	Allocated    int64 // bytes allocated in all
	// Total is the outstanding bytes of every candidate: the score is
	// Outstanding / Total. Threshold is min_leak_bytes.
	Total, Threshold int64

	Time   pcommon.Timestamp // record time
	Start  string            // incident.start_time (RFC 3339; "": Time)
	Body   string
	Action string

	// Pattern, when set, is the leak pattern the allocation history shows
	// (spec.LeakPattern*: only memory snapshots replay one; the other
	// importers leave it empty and no llm.profile.leak.* attribute is
	// written): the module forward frame it happens in ("file.py:LINE
	// forward"), the bytes each step adds and the steps it covers.
	Pattern       string
	ForwardFrame  string
	GrowthPerStep int64
	Steps         int64
}

// AppendTo writes the record to sl and returns it, for the caller's trace
// and span ids and any attribute of its own.
func (r *LeakRecord) AppendTo(sl plog.ScopeLogs) plog.LogRecord {
	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(r.Time)
	lr.SetObservedTimestamp(r.Time)
	lr.SetSeverityNumber(plog.SeverityNumberWarn)
	lr.SetSeverityText("WARN")
	lr.Body().SetStr(r.Body)
	// The id is stable across re-imports of the same file: the same
	// suspect keeps its incident.
	key := spec.IncidentKindLeakSuspect + "\x00" + r.File + "\x00" + r.Path + "\x00" + strconv.FormatInt(r.Device, 10)
	if r.HasPid {
		key += "\x00" + strconv.FormatInt(r.Pid, 10)
	}
	h := sha256.Sum256([]byte(key))
	a := lr.Attributes()
	a.PutStr(spec.IncidentID, hex.EncodeToString(h[:8]))
	a.PutStr(spec.IncidentKind, spec.IncidentKindLeakSuspect)
	a.PutStr(spec.IncidentQuadrant, spec.QuadrantSaturation)
	a.PutStr(spec.IncidentSeverity, spec.SeverityWarning)
	a.PutStr(spec.IncidentState, spec.StateFiring)
	start := r.Start
	if start == "" {
		start = r.Time.AsTime().UTC().Format(time.RFC3339Nano)
	}
	a.PutStr(spec.IncidentStartTime, start)
	score := 0.0
	if r.Total > 0 {
		score = float64(r.Outstanding) / float64(r.Total)
	}
	a.PutDouble(spec.IncidentScore, score)
	ev := a.PutEmptySlice(spec.IncidentEvidence).AppendEmpty().SetEmptyMap()
	ev.PutStr(spec.EvidenceSignal, spec.ProfileMemoryOutstanding)
	ev.PutInt(spec.EvidenceValue, r.Outstanding)
	ev.PutInt(spec.EvidenceThreshold, r.Threshold)
	ev.PutStr(spec.EvidenceUnit, "By")
	a.PutStr(spec.IncidentAction, r.Action)
	a.PutStr(spec.AttrProfileModulePath, r.Path)
	a.PutInt(spec.AttrProfileDevice, r.Device)
	if r.HasPid {
		a.PutInt(spec.AttrProcessPid, r.Pid)
	}
	a.PutInt(spec.AttrProfileOutstandingBytes, r.Outstanding)
	a.PutInt(spec.AttrProfileOutstandingAllocations, r.OutstandingN)
	a.PutInt(spec.AttrProfileAllocatedBytes, r.Allocated)
	a.PutStr(spec.AttrProfileFile, r.File)
	if r.Pattern != "" {
		a.PutStr(spec.AttrProfileLeakPattern, r.Pattern)
		a.PutStr(spec.AttrProfileLeakForwardFrame, r.ForwardFrame)
		a.PutInt(spec.AttrProfileLeakGrowthPerStep, r.GrowthPerStep)
		a.PutInt(spec.AttrProfileLeakSteps, r.Steps)
	}
	return lr
}

// AppendUnder is AppendTo for a record that points at a span of trace tid:
// the span of index span (the root when span < 0), which a drill-down
// opens on.
func (r *LeakRecord) AppendUnder(sl plog.ScopeLogs, tid pcommon.TraceID, ids SpanIDs, span int32) plog.LogRecord {
	lr := r.AppendTo(sl)
	lr.SetTraceID(tid)
	lr.SetSpanID(ids.ID(max(span, -1)))
	return lr
}

// KeptOrParent is the span a record about node n points at: n's span when
// n is kept, else its nearest kept ancestor's (parent gives it, -1 for the
// root); -1 (the root) when there is no node.
func KeptOrParent(n int32, keep []bool, parent func(int32, []bool) int32) int32 {
	if n < 0 {
		return -1
	}
	if keep[n] {
		return n
	}
	return parent(n, keep)
}

// LeakCandidates picks the rows (0 ≤ i < n) worth a leak-suspect record:
// outstanding(i) > 0 and ≥ minBytes, largest first (equal ones in the
// order tie gives), at most limit of them. total is the outstanding bytes
// of all rows, the denominator of each record's score. Every format ranks
// its suspects this way, so their scores compare.
func LeakCandidates(n int, outstanding func(i int) int64, tie func(a, b int) int, minBytes int64, limit int) (cand []int, total int64) {
	for i := range n {
		if o := outstanding(i); o > 0 {
			total += o
			if o >= minBytes {
				cand = append(cand, i)
			}
		}
	}
	slices.SortFunc(cand, func(a, b int) int {
		return cmp.Or(cmp.Compare(outstanding(b), outstanding(a)), tie(a, b))
	})
	if len(cand) > limit {
		cand = cand[:max(limit, 0)]
	}
	return cand, total
}

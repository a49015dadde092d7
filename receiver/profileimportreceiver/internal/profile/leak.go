package profile

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// LeakRecord is one leak-suspect record in the schema every profile import
// writes (Kineto traces here, memory snapshots, Nsight Systems exports),
// which the rootcause processor and llmprof read alike.
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
	Start  string            // incident.start_time (RFC 3339)
	Body   string
	Action string
}

// AppendTo writes the record to sl and returns it, for the caller's trace
// and span ids and any attribute of its own.
func (r *LeakRecord) AppendTo(sl plog.ScopeLogs) plog.LogRecord {
	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(r.Time)
	lr.SetObservedTimestamp(r.Time)
	lr.SetSeverityNumber(plog.SeverityNumberWarn)
	lr.SetSeverityText(leakSeverityText)
	lr.Body().SetStr(r.Body)
	// The id is stable across re-imports of the same file: the same
	// suspect keeps its incident.
	key := KindLeakSuspect + "\x00" + r.File + "\x00" + r.Path + "\x00" + strconv.FormatInt(r.Device, 10)
	if r.HasPid {
		key += "\x00" + strconv.FormatInt(r.Pid, 10)
	}
	h := sha256.Sum256([]byte(key))
	a := lr.Attributes()
	a.PutStr(spec.IncidentID, hex.EncodeToString(h[:8]))
	a.PutStr(spec.IncidentKind, KindLeakSuspect)
	a.PutStr(spec.IncidentQuadrant, "saturation")
	a.PutStr(spec.IncidentSeverity, "warning")
	a.PutStr(spec.IncidentState, "firing")
	a.PutStr(spec.IncidentStartTime, r.Start)
	score := 0.0
	if r.Total > 0 {
		score = float64(r.Outstanding) / float64(r.Total)
	}
	a.PutDouble(spec.IncidentScore, score)
	ev := a.PutEmptySlice(spec.IncidentEvidence).AppendEmpty().SetEmptyMap()
	ev.PutStr("signal", spec.ProfileMemoryOutstanding)
	ev.PutInt("value", r.Outstanding)
	ev.PutInt("threshold", r.Threshold)
	ev.PutStr("unit", "By")
	a.PutStr(spec.IncidentAction, r.Action)
	a.PutStr(spec.AttrProfileModulePath, r.Path)
	a.PutInt(spec.AttrProfileDevice, r.Device)
	if r.HasPid {
		a.PutInt(spec.AttrProcessPid, r.Pid)
	}
	a.PutInt(AttrOutstandingB, r.Outstanding)
	a.PutInt(AttrOutstandingN, r.OutstandingN)
	a.PutInt(AttrAllocatedB, r.Allocated)
	a.PutStr(spec.AttrProfileFile, r.File)
	return lr
}

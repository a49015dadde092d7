// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// Incident attributes added after the founding shape of an incident record
// (docs/architecture.md, "Incident records"); in the spec registry.
const (
	attrIncidentSubject   = spec.IncidentSubject
	attrIncidentLayer     = spec.IncidentLayer
	attrIncidentDrilldown = spec.IncidentDrilldown
)

// incident is one (kind, subject) while it fires.
type incident struct {
	id       string
	key      string
	start    int64
	lastTrue int64
	lastEmit int64
	severity string
	f        finding
	drill    drillResult
	drilled  bool
	// subject identity, kept for the resolved record after the subject
	// itself is gone.
	subj subject
	// shown is what the last llm.incident.active point of the incident
	// carried (incident_metrics.go).
	shown struct {
		set             bool
		severity, layer string
	}
}

func incidentKey(f *finding) string {
	return f.kind + "\x00" + strconv.Itoa(int(f.subj.kind)) + "\x00" + f.subj.key + "\x00" + f.suffix
}

// track applies one evaluation's findings to the incidents and returns the
// records to emit: new incidents, escalations, re-notifications and
// resolutions. The caller holds d.mu.
func (d *diagnoser) track(now int64, findings []finding) (plog.Logs, int, int) {
	out := plog.NewLogs()
	var lrs plog.LogRecordSlice
	records := func() plog.LogRecordSlice {
		if out.ResourceLogs().Len() == 0 {
			sl := out.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
			sl.Scope().SetName("github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector")
			lrs = sl.LogRecords()
		}
		return lrs
	}
	fired, resolved := 0, 0
	for i := range findings {
		f := &findings[i]
		key := f.key
		if key == "" {
			key = incidentKey(f)
		}
		inc := d.incidents[key]
		if inc == nil {
			h := sha256.Sum256([]byte(key + "\x00" + strconv.FormatInt(now, 10)))
			inc = &incident{id: hex.EncodeToString(h[:12]), key: key, start: f.start, severity: f.severity}
			if inc.start <= 0 || inc.start > now {
				inc.start = now
			}
			d.incidents[key] = inc
			fired++
			d.incMetrics.onFired(f.kind, f.severity)
		}
		escalated := f.severity == spec.SeverityCritical && inc.severity != spec.SeverityCritical
		inc.f, inc.lastTrue, inc.subj = *f, now, *f.subj
		inc.subj.prev, inc.subj.next = nil, nil
		if escalated {
			inc.severity = spec.SeverityCritical
		}
		renotify := d.cfg.RenotifyInterval > 0 && now-inc.lastEmit >= int64(d.cfg.RenotifyInterval)
		if inc.lastEmit == 0 || escalated || renotify {
			if !inc.drilled || renotify {
				inc.drill = d.drillFor(f, inc.start, now)
				inc.drilled = true
			}
			d.fillRecord(records().AppendEmpty(), inc, "firing", now)
			inc.lastEmit = now
			d.rememberExemplar(inc)
		}
	}
	var done []string
	for k, inc := range d.incidents {
		// Findings of this evaluation set lastTrue to now.
		if now-inc.lastTrue >= int64(d.cfg.ResolveAfter) {
			done = append(done, k)
		}
	}
	sort.Strings(done) // a deterministic order of resolutions
	for _, key := range done {
		inc := d.incidents[key]
		d.fillRecord(records().AppendEmpty(), inc, "resolved", now)
		d.incMetrics.onResolved(inc)
		d.forgetExemplar(inc)
		delete(d.incidents, key)
		resolved++
	}
	return out, fired, resolved
}

// drillFor finds the span and layer behind a finding.
func (d *diagnoser) drillFor(f *finding, start, now int64) drillResult {
	pids := d.pidsOf(f.subj)
	switch f.drill {
	case drillMemory:
		return d.drill.memory(pids, now)
	case drillTime:
		from := min(start, now-int64(d.cfg.Latency.Window))
		r := d.drill.timed(pids, from, now)
		if r.top == "" {
			// Profiles are taken for a few seconds at a time: the newest
			// one of the process within retention says where time goes.
			r = d.drill.timed(pids, now-int64(d.cfg.DrillDown.Retention), now)
			if r.top != "" {
				r.note = "newest profiler spans of the process (none inside the incident window)"
			}
		}
		return r
	}
	return drillResult{}
}

// pidsOf lists the processes a subject stands for: itself, the engine's
// process, or every process seen on a GPU.
func (d *diagnoser) pidsOf(s *subject) []int64 {
	var pids []int64
	if s.pid >= 0 {
		pids = append(pids, s.pid)
	}
	if s.kind == kindGPU || (s.kind == kindEngine && s.pid < 0 && s.hwID != "") {
		for k := range d.subjects.procs {
			if k.hwID == s.hwID {
				pids = append(pids, k.pid)
			}
		}
	}
	return pids
}

func severityNumber(sev string) (plog.SeverityNumber, string) {
	if sev == spec.SeverityCritical {
		return plog.SeverityNumberError, "ERROR"
	}
	return plog.SeverityNumberWarn, "WARN"
}

func (d *diagnoser) fillRecord(lr plog.LogRecord, inc *incident, state string, now int64) {
	f := &inc.f
	ts := pcommon.Timestamp(now)
	lr.SetTimestamp(ts)
	lr.SetObservedTimestamp(ts)
	num, text := severityNumber(inc.severity)
	lr.SetSeverityNumber(num)
	lr.SetSeverityText(text)
	body := f.body
	if inc.drill.top != "" {
		body += "; " + layerSentence(inc.drill)
	} else if f.drill != drillNone && inc.drill.note != "" {
		body += "; " + inc.drill.note
	}
	if state == "resolved" {
		body = "resolved after " + fmtDur(now-inc.start) + ": " + body
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
	}
	lr.Body().SetStr(body)
	if !inc.drill.traceID.IsEmpty() {
		lr.SetTraceID(inc.drill.traceID)
		lr.SetSpanID(inc.drill.spanID)
	}
	a := lr.Attributes()
	a.EnsureCapacity(24)
	a.PutStr(spec.IncidentID, inc.id)
	a.PutStr(spec.IncidentKind, f.kind)
	a.PutStr(spec.IncidentQuadrant, f.quadrant)
	a.PutStr(spec.IncidentSeverity, inc.severity)
	a.PutStr(spec.IncidentState, state)
	a.PutDouble(spec.IncidentScore, math.Round(f.score*1000)/1000)
	a.PutStr(spec.IncidentStartTime, time.Unix(0, inc.start).UTC().Format(time.RFC3339Nano))
	a.PutStr(spec.IncidentAction, f.action)
	a.PutStr(attrIncidentSubject, subjectText(&inc.subj))
	ev := a.PutEmptySlice(spec.IncidentEvidence)
	for _, x := range f.evidence {
		m := ev.AppendEmpty().SetEmptyMap()
		m.PutStr("signal", x.signal)
		m.PutDouble("value", x.value)
		if x.hasBaseline {
			m.PutDouble("baseline", x.baseline)
		}
		if x.hasThresh {
			m.PutDouble("threshold", x.threshold)
		}
		m.PutStr("unit", x.unit)
		if x.note != "" {
			m.PutStr("note", x.note)
		}
	}
	a.PutStr(attrIncidentLayer, inc.drill.top)
	ls := a.PutEmptySlice(spec.IncidentLayerStack)
	for _, l := range inc.drill.stack {
		m := ls.AppendEmpty().SetEmptyMap()
		m.PutStr("module_path", l.path)
		if l.bytes > 0 {
			m.PutInt("bytes", int64(l.bytes))
		}
		if l.ns > 0 {
			m.PutInt("time_ns", l.ns)
		}
	}
	if inc.drill.note != "" {
		a.PutStr(attrIncidentDrilldown, inc.drill.note)
	}
	s := &inc.subj
	if s.hwID != "" {
		a.PutStr(spec.AttrHwID, s.hwID)
	}
	if s.pid >= 0 {
		a.PutInt(spec.AttrProcessPid, s.pid)
	}
	for _, kv := range [][2]string{
		{spec.AttrProcessExecutableName, s.exe}, {spec.AttrContainerID, s.containerID},
		{spec.AttrK8sPodUID, s.podUID}, {spec.AttrK8sPodName, s.podName}, {spec.AttrK8sNamespaceName, s.namespace},
		{spec.AttrEngineName, s.engineName}, {spec.AttrEngineTarget, s.target}, {spec.AttrGenAIRequestModel, s.model},
	} {
		if kv[1] != "" {
			a.PutStr(kv[0], kv[1])
		}
	}
	if f.kind == spec.IncidentKindXIDError && f.suffix != "" {
		if code, err := strconv.ParseInt(f.suffix, 10, 64); err == nil {
			a.PutInt(spec.AttrHwGpuXid, code)
		}
	}
}

// layerSentence is the drill-down in words: which layer, how much.
func layerSentence(d drillResult) string {
	top := d.stack[len(d.stack)-1]
	switch {
	case top.bytes > 0:
		return fmt.Sprintf("%s leaves %s outstanding in %s (%s)", profileWord(d), fmtBytes(top.bytes), d.top, spanWord(d))
	case top.ns > 0:
		return fmt.Sprintf("%s spends %s in %s (%s)", profileWord(d), time.Duration(top.ns).Round(time.Microsecond), d.top, spanWord(d))
	}
	return "layer " + d.top
}

func profileWord(d drillResult) string {
	if strings.HasPrefix(d.note, "profile ") {
		return "the last profile of the process"
	}
	return "the profiler spans"
}

func spanWord(d drillResult) string {
	if d.traceID.IsEmpty() {
		return "no span id"
	}
	return "span " + hex.EncodeToString(d.spanID[:]) + " of trace " + hex.EncodeToString(d.traceID[:])
}

func fmtBytes(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", b/(1<<20))
	default:
		return fmt.Sprintf("%.0f KiB", b/(1<<10))
	}
}

func subjectText(s *subject) string {
	switch s.kind {
	case kindProcess:
		return "process " + processName(s)
	case kindGPU:
		if s.hwName != "" {
			return "GPU " + s.hwID + " (" + s.hwName + ")"
		}
		return "GPU " + s.hwID
	case kindEngine:
		return "engine " + engineName(s)
	case kindRule:
		return "series " + s.key
	}
	return s.key
}

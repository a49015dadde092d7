// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
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
	found    int64 // when a detector first reported it (the hold counts from here)
	lastTrue int64
	lastEmit int64 // 0: not sent yet (a symptom in its correlation hold)
	severity string
	f        finding
	drill    drillResult
	drilled  bool
	// updates counts the records re-sent because the figures moved; change
	// says what moved, on the record that carries it.
	updates int
	change  string
	sent    sentFigures
	// onset: when the fault began, once a detector estimated it.
	onset int64
	// resolution and supersededBy describe the resolved record.
	resolution, supersededBy string
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

// sentFigures are the figures of the last record sent, which an update is
// measured against.
type sentFigures struct {
	score               float64
	headlineSignal      string
	headline, tte       float64
	hasHeadline, hasTTE bool
	// signals: the evidence's signals; a new one (a symptom absorbed as
	// evidence) is an update.
	signals []string
}

func incidentKey(f *finding) string {
	return f.kind + "\x00" + strconv.Itoa(int(f.subj.kind)) + "\x00" + f.subj.key + "\x00" + f.suffix
}

// track applies one evaluation to the incidents and returns the records to
// emit: new incidents (once past their correlation hold), escalations,
// updates, re-notifications and resolutions. The caller holds d.mu.
func (d *diagnoser) track(now int64, ev *evaluation) (plog.Logs, int, int) {
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
	for i := range ev.out {
		f := &ev.out[i]
		key := f.key
		if key == "" {
			key = incidentKey(f)
		}
		inc := d.incidents[key]
		if inc == nil {
			h := sha256.Sum256([]byte(key + "\x00" + strconv.FormatInt(now, 10)))
			inc = &incident{id: hex.EncodeToString(h[:12]), key: key, start: f.start, found: now, severity: f.severity}
			if inc.start <= 0 || inc.start > now {
				inc.start = now
			}
			d.incidents[key] = inc
		}
		escalated := f.severity == spec.SeverityCritical && inc.severity != spec.SeverityCritical
		if f.onset != 0 && inc.onset == 0 {
			// The first onset seen stays: a later fit whose window no
			// longer holds the flat stretch cannot see it.
			inc.onset = f.onset
		}
		inc.f, inc.lastTrue, inc.subj = *f, now, *f.subj
		inc.subj.prev, inc.subj.next = nil, nil
		if escalated {
			inc.severity = spec.SeverityCritical
		}
		first := inc.lastEmit == 0
		if first && f.hold && !escalated && now-inc.found < int64(d.cfg.CorrelationHold) {
			continue // its cause may show within the hold and replace it
		}
		renotify := !first && d.cfg.RenotifyInterval > 0 && now-inc.lastEmit >= int64(d.cfg.RenotifyInterval)
		inc.change = ""
		if !first && (escalated || renotify || now-inc.lastEmit >= int64(d.cfg.Updates.MinInterval)) {
			// A re-notification that finds the figures moved is an
			// update too.
			inc.change = d.materialChange(inc)
		}
		if !first && !escalated && !renotify && inc.change == "" {
			continue
		}
		if first {
			fired++
			d.incMetrics.onFired(f.kind, inc.severity)
		} else if escalated || inc.change != "" {
			inc.updates++
			if escalated {
				inc.change = strings.TrimSuffix("severity "+spec.SeverityWarning+" → "+spec.SeverityCritical+"; "+inc.change, "; ")
			}
		}
		if !inc.drilled || renotify {
			inc.drill = d.drillFor(f, inc.start, now)
			inc.drilled = true
		}
		d.fillRecord(records().AppendEmpty(), inc, spec.StateFiring, now)
		inc.lastEmit = now
		inc.sent = figuresOf(inc)
		d.rememberExemplar(inc)
	}
	// A cause found: its symptoms' incidents end, naming it.
	for fk, causeKey := range ev.superseded {
		key := symptomKey(fk.subj, fk.kind)
		if inc := d.incidents[key]; inc != nil && inc.lastTrue < now {
			inc.resolution = spec.ResolutionSuperseded
			if cause := d.incidents[causeKey]; cause != nil && cause.lastEmit != 0 {
				inc.supersededBy = cause.id
			}
			ev.resolveNow[key] = spec.ResolutionSuperseded
		}
	}
	var done []string
	for k, inc := range d.incidents {
		// Findings of this evaluation set lastTrue to now.
		if inc.lastTrue == now {
			continue
		}
		if inc.lastEmit == 0 {
			// A held symptom that cleared or was replaced within its hold:
			// it was never sent, so nothing resolves.
			delete(d.incidents, k)
			continue
		}
		if r, ok := ev.resolveNow[k]; ok {
			inc.resolution = r
			done = append(done, k)
		} else if now-inc.lastTrue >= int64(d.cfg.ResolveAfter) {
			if inc.resolution == "" {
				inc.resolution = spec.ResolutionCleared
			}
			done = append(done, k)
		}
	}
	sort.Strings(done) // a deterministic order of resolutions
	for _, key := range done {
		inc := d.incidents[key]
		d.fillRecord(records().AppendEmpty(), inc, spec.StateResolved, now)
		d.incMetrics.onResolved(inc)
		d.forgetExemplar(inc)
		delete(d.incidents, key)
		resolved++
	}
	return out, fired, resolved
}

// figuresOf are the figures an incident's record carries now.
func figuresOf(inc *incident) sentFigures {
	f := &inc.f
	s := sentFigures{score: f.score}
	if f.headline >= 0 && f.headline < len(f.evidence) {
		e := f.evidence[f.headline]
		s.headlineSignal, s.headline, s.hasHeadline = e.signal, e.value, true
	}
	if tte, ok := f.timeToExhaustion(); ok {
		s.tte, s.hasTTE = tte, true
	}
	for _, e := range f.evidence {
		if !slices.Contains(s.signals, e.signal) {
			s.signals = append(s.signals, e.signal)
		}
	}
	return s
}

// timeToExhaustion is the finding's time to exhaustion (s), when it has one.
func (f *finding) timeToExhaustion() (float64, bool) {
	for _, e := range f.evidence {
		if e.signal == spec.HwGpuMemoryTimeToExhaustion {
			return e.value, true
		}
	}
	return 0, false
}

// materialChange says what moved by updates.change or more since the last
// record of inc ("" when nothing did).
func (d *diagnoser) materialChange(inc *incident) string {
	c := d.cfg.Updates.Change
	if c <= 0 {
		return ""
	}
	moved := func(was, is float64) bool { return math.Abs(is-was) >= c*math.Max(math.Abs(was), 1e-9) }
	now, was := figuresOf(inc), inc.sent
	var parts []string
	if now.hasHeadline && was.hasHeadline {
		e := inc.f.evidence[inc.f.headline]
		switch {
		case now.headlineSignal != was.headlineSignal:
			parts = append(parts, "now led by "+now.headlineSignal+" at "+fmtValue(e.value, e.unit))
		case moved(was.headline, now.headline):
			parts = append(parts, fmt.Sprintf("%s %s → %s", e.signal, fmtValue(was.headline, e.unit), fmtValue(now.headline, e.unit)))
		}
	}
	if now.hasTTE && (!was.hasTTE || moved(was.tte, now.tte)) {
		from := "none"
		if was.hasTTE {
			from = fmtValue(was.tte, "s")
		}
		parts = append(parts, fmt.Sprintf("time to exhaustion %s → %s", from, fmtValue(now.tte, "s")))
	}
	var added []string
	for _, sig := range now.signals {
		if !slices.Contains(was.signals, sig) {
			added = append(added, sig)
		}
	}
	if len(added) > 0 {
		parts = append(parts, "new evidence: "+strings.Join(added, ", "))
	}
	if len(parts) == 0 && moved(was.score, now.score) {
		parts = append(parts, fmt.Sprintf("score %.2f → %.2f", was.score, now.score))
	}
	return strings.Join(parts, "; ")
}

// fmtValue writes an evidence figure in its unit for people.
func fmtValue(v float64, unit string) string {
	switch unit {
	case "1":
		return fmt.Sprintf("%.0f%%", 100*v)
	case "By":
		return fmtBytes(v)
	case "s":
		if v >= 120 {
			return fmtDur(int64(v * 1e9))
		}
		return fmt.Sprintf("%.2fs", v)
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + " " + unit
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
	if len(f.ruledOut) > 0 {
		body += "; ruled out: " + strings.Join(f.ruledOut, "; ")
	}
	if state == spec.StateResolved {
		body = resolvedPrefix(inc, now) + body
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
	} else if inc.change != "" {
		body = "update " + strconv.Itoa(inc.updates) + " (" + inc.change + "): " + body
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
	if f.actionID != "" {
		a.PutStr(spec.IncidentActionID, f.actionID)
	}
	a.PutStr(attrIncidentSubject, subjectText(&inc.subj))
	a.PutInt(spec.IncidentUpdate, int64(inc.updates))
	if inc.change != "" && state == spec.StateFiring {
		a.PutStr(spec.IncidentChange, inc.change)
	}
	if inc.onset != 0 {
		a.PutStr(spec.IncidentOnsetTime, time.Unix(0, inc.onset).UTC().Format(time.RFC3339Nano))
	}
	if f.horizon != "" {
		a.PutStr(spec.IncidentHorizon, f.horizon)
	}
	if len(f.ruledOut) > 0 {
		ro := a.PutEmptySlice(spec.IncidentRuledOut)
		for _, why := range f.ruledOut {
			ro.AppendEmpty().SetStr(why)
		}
	}
	if state == spec.StateResolved {
		a.PutStr(spec.IncidentResolution, inc.resolution)
		if inc.supersededBy != "" {
			a.PutStr(spec.IncidentSupersededBy, inc.supersededBy)
		}
	}
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
	// The cited leak suspect's pattern (memory snapshots), under the keys
	// the suspect's record uses, so both join on them.
	if p := inc.drill.pattern; p.name != "" {
		a.PutStr(spec.AttrProfileLeakPattern, p.name)
		a.PutStr(spec.AttrProfileLeakForwardFrame, p.frame)
		a.PutInt(spec.AttrProfileLeakGrowthPerStep, p.growth)
		a.PutInt(spec.AttrProfileLeakSteps, p.steps)
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
		{spec.AttrServiceName, s.service}, {spec.AttrServiceInstanceID, s.instance},
	} {
		if kv[1] != "" {
			a.PutStr(kv[0], kv[1])
		}
	}
	if f.kind == spec.IncidentKindXIDError && f.suffix != "" {
		if code, err := strconv.ParseInt(f.suffix, 10, 64); err == nil {
			a.PutInt(spec.AttrHwGpuXid, code)
			if info, ok := spec.LookupXID(code); ok {
				a.PutStr(spec.AttrHwGpuXidRecovery, info.Recovery.String())
			}
		}
	}
}

// resolvedPrefix opens a resolved record's body with how it ended.
func resolvedPrefix(inc *incident, now int64) string {
	after := fmtDur(now - inc.start)
	switch inc.resolution {
	case spec.ResolutionSuperseded:
		by := "its cause's incident"
		if inc.supersededBy != "" {
			by = "incident " + inc.supersededBy
		}
		return "superseded after " + after + " by " + by + ", which names the cause: "
	case spec.ResolutionGPUReset:
		return "resolved after " + after + " by a GPU reset or driver reload: "
	case spec.ResolutionAcknowledged:
		return "acknowledged after " + after + ": "
	case spec.ResolutionExpired:
		return "expired after " + after + " with no reset or acknowledgment seen (hardware_errors.resolve_after): "
	}
	return "resolved after " + after + ": "
}

// layerSentence is the drill-down in words: which layer, how much.
func layerSentence(d drillResult) string {
	top := d.stack[len(d.stack)-1]
	switch {
	case top.bytes > 0 && d.pattern.name != "":
		p := d.pattern
		return fmt.Sprintf("%s leaves %s outstanding in %s, %s: %s more each of %d steps of %s (%s)", profileWord(d), fmtBytes(top.bytes), d.top,
			strings.ReplaceAll(p.name, "_", " "), fmtBytes(float64(p.growth)), p.steps, p.frame, spanWord(d))
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

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package alertwebhookexporter

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// kindLeakSuspect is profileimport's one-shot finding: it has no lifecycle
// (no resolution, no re-notification), so it is not re-sent.
const kindLeakSuspect = spec.IncidentKindLeakSuspect

// incident is one incident log record, read once from pdata.
type incident struct {
	ID, Kind, Quadrant, Severity, State string
	Body, Action, Layer, Subject        string
	// ActionID: incident.action.id, the automatic response it calls for.
	ActionID        string
	Score           float64
	Start, Time     time.Time
	TraceID, SpanID string // hex, "" when absent
	Attrs           map[string]any
	Resource        map[string]any
}

// incidents extracts the incident records of a batch: log records with an
// incident.kind. Other records are not incidents and are skipped.
func incidents(ld plog.Logs) (out []incident, skipped int) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		var res map[string]any
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				a := lr.Attributes()
				kind, ok := a.Get(spec.IncidentKind)
				if !ok || kind.Str() == "" {
					skipped++
					continue
				}
				if res == nil {
					res = rl.Resource().Attributes().AsRaw()
				}
				out = append(out, fromRecord(lr, res))
			}
		}
	}
	return out, skipped
}

func str(a pcommon.Map, k string) string {
	if v, ok := a.Get(k); ok {
		return v.AsString()
	}
	return ""
}

func fromRecord(lr plog.LogRecord, res map[string]any) incident {
	a := lr.Attributes()
	in := incident{
		ID: str(a, spec.IncidentID), Kind: str(a, spec.IncidentKind), Quadrant: str(a, spec.IncidentQuadrant),
		Severity: str(a, spec.IncidentSeverity), State: str(a, spec.IncidentState),
		Body: lr.Body().AsString(), Action: str(a, spec.IncidentAction), Layer: str(a, spec.IncidentLayer),
		Subject: str(a, spec.IncidentSubject), ActionID: str(a, spec.IncidentActionID), Attrs: a.AsRaw(), Resource: res,
	}
	if v, ok := a.Get(spec.IncidentScore); ok {
		in.Score = v.Double()
		if v.Type() == pcommon.ValueTypeInt {
			in.Score = float64(v.Int())
		}
	}
	in.Time = lr.Timestamp().AsTime()
	if lr.Timestamp() == 0 {
		in.Time = lr.ObservedTimestamp().AsTime()
	}
	if lr.Timestamp() == 0 && lr.ObservedTimestamp() == 0 {
		in.Time = time.Now()
	}
	in.Start = in.Time
	if st := str(a, spec.IncidentStartTime); st != "" {
		if t, err := time.Parse(time.RFC3339Nano, st); err == nil {
			in.Start = t
		}
	}
	if in.Severity == "" {
		// Fall back on the record's severity number.
		switch {
		case lr.SeverityNumber() >= plog.SeverityNumberError:
			in.Severity = SeverityCritical
		case lr.SeverityNumber() >= plog.SeverityNumberWarn:
			in.Severity = SeverityWarning
		default:
			in.Severity = SeverityInfo
		}
	}
	if in.State == "" {
		in.State = spec.StateFiring
	}
	if in.ID == "" {
		// Without an id, the kind and subject identify it (stable across
		// re-sends, so receivers can still deduplicate).
		in.ID = in.Kind + ":" + in.Subject
	}
	if tid := lr.TraceID(); !tid.IsEmpty() {
		in.TraceID = hex.EncodeToString(tid[:])
	}
	if sid := lr.SpanID(); !sid.IsEmpty() {
		in.SpanID = hex.EncodeToString(sid[:])
	}
	return in
}

// attr returns a subject attribute from the record, else its resource.
func (in *incident) attr(k string) string {
	if v, ok := in.Attrs[k]; ok {
		return fmt.Sprint(v)
	}
	if v, ok := in.Resource[k]; ok {
		return fmt.Sprint(v)
	}
	return ""
}

// description is the evidence and layer stack as text, for humans.
func (in *incident) description() string {
	var b strings.Builder
	if in.Subject != "" {
		b.WriteString("Subject: " + in.Subject + "\n")
	}
	if ev, ok := in.Attrs[spec.IncidentEvidence].([]any); ok && len(ev) > 0 {
		b.WriteString("Evidence:\n")
		for _, e := range ev {
			m, _ := e.(map[string]any)
			fmt.Fprintf(&b, "- %v = %v %v", m[spec.EvidenceSignal], m[spec.EvidenceValue], m[spec.EvidenceUnit])
			if v, ok := m[spec.EvidenceBaseline]; ok {
				fmt.Fprintf(&b, ", baseline %v", v)
			}
			if v, ok := m[spec.EvidenceThreshold]; ok {
				fmt.Fprintf(&b, ", threshold %v", v)
			}
			if v, ok := m["note"]; ok {
				fmt.Fprintf(&b, " (%v)", v)
			}
			b.WriteByte('\n')
		}
	}
	if ls, ok := in.Attrs[spec.IncidentLayerStack].([]any); ok && len(ls) > 0 {
		b.WriteString("Layer stack:\n")
		for _, l := range ls {
			m, _ := l.(map[string]any)
			fmt.Fprintf(&b, "- %v", m["module_path"])
			if v, ok := m["bytes"]; ok {
				fmt.Fprintf(&b, ": %v bytes", v)
			}
			if v, ok := m["time_ns"]; ok {
				fmt.Fprintf(&b, ": %v ns", v)
			}
			b.WriteByte('\n')
		}
	}
	if in.Action != "" {
		b.WriteString("Action: " + in.Action + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func fillIDs(template string, in *incident) string {
	if template == "" || in.TraceID == "" && strings.Contains(template, "{trace_id}") {
		return ""
	}
	return strings.NewReplacer("{trace_id}", in.TraceID, "{span_id}", in.SpanID).Replace(template)
}

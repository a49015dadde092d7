// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package exported

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// KindLeakSuspect is the incident.kind of profileimport's leak-suspect
// records: findings in one imported profile, not incidents with a lifecycle.
const KindLeakSuspect = spec.IncidentKindLeakSuspect

func (r *Reader) ingestLogs(ld plog.Logs) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource().Attributes()
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				if _, ok := lr.Attributes().Get(spec.IncidentKind); !ok {
					continue
				}
				inc := parseIncident(res, lr)
				r.data.observe(inc.Time)
				if inc.Kind == KindLeakSuspect {
					r.data.LeakSuspects = append(r.data.LeakSuspects, inc)
				} else {
					r.data.Incidents = append(r.data.Incidents, inc)
				}
			}
		}
	}
}

func parseIncident(res pcommon.Map, lr plog.LogRecord) Incident {
	a := lr.Attributes()
	str := func(k string) string { return lookupStr(res, a, k) }
	ts := lr.Timestamp()
	if ts == 0 {
		ts = lr.ObservedTimestamp()
	}
	inc := Incident{
		ID:        str(spec.IncidentID),
		Kind:      str(spec.IncidentKind),
		State:     str(spec.IncidentState),
		Severity:  str(spec.IncidentSeverity),
		Quadrant:  str(spec.IncidentQuadrant),
		Body:      lr.Body().AsString(),
		Action:    str(spec.IncidentAction),
		Layer:     str(spec.IncidentLayer),
		Subject:   str(spec.IncidentSubject),
		Drilldown: str(spec.IncidentDrilldown),
		HwID:      str(spec.AttrHwID),
		Pod:       str(spec.AttrK8sPodName),
		Engine:    str(spec.AttrEngineName),
		Model:     str(spec.AttrGenAIRequestModel),
		Target:    str(spec.AttrEngineTarget),

		Change:       str(spec.IncidentChange),
		Resolution:   str(spec.IncidentResolution),
		SupersededBy: str(spec.IncidentSupersededBy),
	}
	if v, ok := a.Get(spec.IncidentUpdate); ok {
		inc.Update, _ = asInt(v)
	}
	if t, err := time.Parse(time.RFC3339Nano, str(spec.IncidentOnsetTime)); err == nil {
		inc.Onset = t
	}
	if v, ok := a.Get(spec.IncidentRuledOut); ok && v.Type() == pcommon.ValueTypeSlice {
		for i := 0; i < v.Slice().Len(); i++ {
			inc.RuledOut = append(inc.RuledOut, v.Slice().At(i).AsString())
		}
	}
	if ts != 0 {
		inc.Time = time.Unix(0, int64(ts)).UTC()
	}
	if v, ok := lookup(res, a, spec.AttrProcessPid); ok {
		if pid, ok := asInt(v); ok {
			inc.PID = pid
		}
	}
	if v, ok := a.Get(spec.IncidentScore); ok {
		switch v.Type() {
		case pcommon.ValueTypeDouble:
			inc.Score = v.Double()
		case pcommon.ValueTypeInt:
			inc.Score = float64(v.Int())
		}
	}
	if v, ok := a.Get(spec.IncidentStartTime); ok {
		switch v.Type() {
		case pcommon.ValueTypeStr:
			if t, err := time.Parse(time.RFC3339Nano, v.Str()); err == nil {
				inc.Start = t.UTC()
			}
		case pcommon.ValueTypeInt:
			inc.Start = time.Unix(0, v.Int()).UTC()
		}
	}
	if tid := lr.TraceID(); !tid.IsEmpty() {
		inc.TraceID = tid.String()
	}
	if sid := lr.SpanID(); !sid.IsEmpty() {
		inc.SpanID = sid.String()
	}
	if v, ok := a.Get(spec.IncidentEvidence); ok && v.Type() == pcommon.ValueTypeSlice {
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			if e := s.At(i); e.Type() == pcommon.ValueTypeMap {
				inc.Evidence = append(inc.Evidence, e.Map().AsRaw())
			}
		}
	}
	if v, ok := a.Get(spec.IncidentLayerStack); ok && v.Type() == pcommon.ValueTypeSlice {
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			e := s.At(i)
			if e.Type() != pcommon.ValueTypeMap {
				continue
			}
			m := e.Map()
			var l Layer
			if p, ok := m.Get("module_path"); ok {
				l.Path = p.AsString()
			}
			if b, ok := m.Get("bytes"); ok {
				l.Bytes, _ = asInt(b)
			}
			if n, ok := m.Get("time_ns"); ok {
				l.TimeNs, _ = asInt(n)
			}
			inc.LayerStack = append(inc.LayerStack, l)
		}
	}
	if inc.Kind == KindLeakSuspect {
		// profileimport names the layer and the profile in its own
		// attributes; fill the common fields so callers need no special case.
		if inc.Layer == "" {
			inc.Layer = str(spec.AttrProfileModulePath)
		}
		if inc.Drilldown == "" {
			if f := str(spec.AttrProfileFile); f != "" {
				inc.Drilldown = "profile " + f
			}
		}
	}
	return inc
}

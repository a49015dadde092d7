// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"context"
	"sort"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// The incidents as metrics, for a Prometheus without a log backend:
// llm.incident.active is 1 per firing incident (as Prometheus' own ALERTS
// series) and llm.incident.fired counts the incidents that started, by kind
// and severity. They go into the pass-through pair's pipeline, next to the
// metrics they were diagnosed from.

// scopeName is the instrumentation scope of everything the connector writes.
const scopeName = "github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector"

// connectorKinds are the kinds this connector fires (gpu_oom and
// leak_suspect are profileimport's records); their counters start at 0, so
// Prometheus' rate() and increase() see the first incident of each kind
// (a counter that appears at 1 shows no increase).
var connectorKinds = []string{
	spec.IncidentKindCacheHitDrop, spec.IncidentKindECCUncorrected, spec.IncidentKindGPUMemoryLeak,
	spec.IncidentKindGPUThrottling, spec.IncidentKindJointDegradation, spec.IncidentKindKVCacheGrowth,
	spec.IncidentKindKVCacheSaturation, spec.IncidentKindLatencySpike, spec.IncidentKindQueueBuildup,
	spec.IncidentKindThroughputDrop, spec.IncidentKindXIDError,
}

var severities = []string{spec.SeverityWarning, spec.SeverityCritical}

// incidentMetricsState is what the incident metrics keep between
// evaluations. It is bounded: fired has one entry per (kind, severity) and
// resolved holds one evaluation's resolutions (it is emptied at every tick,
// sent or not).
type incidentMetricsState struct {
	start    int64 // the counters' start time: the connector's
	fired    map[firedKey]int64
	resolved []incident // resolved since the last tick: one 0 point each
	dirty    bool       // an incident fired or resolved since the last send
	lastSent int64
}

type firedKey struct{ kind, severity string }

func (s *incidentMetricsState) onFired(kind, severity string) {
	if s.fired == nil {
		s.fired = map[firedKey]int64{}
	}
	s.fired[firedKey{kind, severity}]++
	s.dirty = true
}

func (s *incidentMetricsState) onResolved(inc *incident) {
	s.resolved = append(s.resolved, *inc)
	s.dirty = true
}

// sendIncidentMetrics hands the incident metrics to the pass-through
// pipeline when an incident fired or resolved, or the interval passed.
func (d *diagnoser) sendIncidentMetrics(ctx context.Context, now int64) {
	d.wiring.Lock()
	next := d.wiring.metrics
	d.wiring.Unlock()
	d.mu.Lock()
	md, ok := d.incidentMetricsAt(now, next != nil && d.cfg.Derived.IncidentMetrics)
	d.mu.Unlock()
	if !ok {
		return
	}
	if err := next.ConsumeMetrics(ctx, md); err != nil {
		d.logger.Warn("could not hand the incident metrics to the metrics pipeline", zap.Error(err))
	}
}

// incidentMetricsAt builds the batch to send at now, if one is due. The
// caller holds d.mu.
func (d *diagnoser) incidentMetricsAt(now int64, enabled bool) (pmetric.Metrics, bool) {
	s := &d.incMetrics
	defer func() { s.resolved = s.resolved[:0] }()
	if !enabled {
		s.dirty = false
		return pmetric.Metrics{}, false
	}
	if !s.dirty && s.lastSent != 0 && now-s.lastSent < int64(d.cfg.Derived.IncidentMetricsInterval) {
		return pmetric.Metrics{}, false
	}
	s.dirty, s.lastSent = false, now

	md := pmetric.NewMetrics()
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(scopeName)
	ts := pcommon.Timestamp(now)

	open := make([]*incident, 0, len(d.incidents))
	for _, inc := range d.incidents {
		if inc.lastEmit != 0 { // a symptom in its correlation hold is not out yet
			open = append(open, inc)
		}
	}
	sort.Slice(open, func(i, j int) bool { return open[i].id < open[j].id })
	if len(open)+len(s.resolved) > 0 {
		pts := spec.AppendNumberMetric(sm.Metrics(), spec.IncidentActive, "")
		for _, inc := range open {
			// An escalation, or a drill-down naming another layer,
			// changes the series' labels: the old series gets its 0, or
			// it would read 1 beside the new one for Prometheus' whole
			// lookback.
			if inc.shown.set && (inc.shown.severity != inc.severity || inc.shown.layer != inc.drill.top) {
				old := *inc
				old.severity, old.drill.top = inc.shown.severity, inc.shown.layer
				activePoint(pts.AppendEmpty(), &old, ts, 0)
			}
			activePoint(pts.AppendEmpty(), inc, ts, 1)
			inc.shown.set, inc.shown.severity, inc.shown.layer = true, inc.severity, inc.drill.top
		}
		for i := range s.resolved {
			r := &s.resolved[i]
			if r.shown.set && (r.shown.severity != r.severity || r.shown.layer != r.drill.top) {
				old := *r
				old.severity, old.drill.top = r.shown.severity, r.shown.layer
				activePoint(pts.AppendEmpty(), &old, ts, 0)
			}
			activePoint(pts.AppendEmpty(), r, ts, 0)
		}
	}

	pts := spec.AppendNumberMetric(sm.Metrics(), spec.IncidentFired, "")
	for _, kind := range connectorKinds {
		for _, sev := range severities {
			p := pts.AppendEmpty()
			p.SetStartTimestamp(pcommon.Timestamp(s.start))
			p.SetTimestamp(ts)
			p.SetIntValue(s.fired[firedKey{kind, sev}])
			p.Attributes().PutStr(spec.IncidentKind, kind)
			p.Attributes().PutStr(spec.IncidentSeverity, sev)
		}
	}
	return md, true
}

// activePoint fills one llm.incident.active point: the incident's kind,
// severity and subject, and the subject's ids, which join it with the
// subject's own series.
func activePoint(p pmetric.NumberDataPoint, inc *incident, ts pcommon.Timestamp, v int64) {
	p.SetStartTimestamp(pcommon.Timestamp(inc.start))
	p.SetTimestamp(ts)
	p.SetIntValue(v)
	a := p.Attributes()
	a.PutStr(spec.IncidentKind, inc.f.kind)
	a.PutStr(spec.IncidentSeverity, inc.severity)
	a.PutStr(spec.IncidentQuadrant, inc.f.quadrant)
	a.PutStr(spec.IncidentSubject, subjectText(&inc.subj))
	a.PutStr(spec.IncidentID, inc.id)
	if inc.drill.top != "" {
		a.PutStr(spec.IncidentLayer, inc.drill.top)
	}
	s := &inc.subj
	if s.hwID != "" {
		a.PutStr(spec.AttrHwID, s.hwID)
	}
	if s.pid >= 0 {
		a.PutInt(spec.AttrProcessPid, s.pid)
	}
	for _, kv := range [][2]string{
		{spec.AttrEngineName, s.engineName}, {spec.AttrGenAIRequestModel, s.model},
		{spec.AttrK8sPodName, s.podName}, {spec.AttrK8sNamespaceName, s.namespace},
	} {
		if kv[1] != "" {
			a.PutStr(kv[0], kv[1])
		}
	}
}

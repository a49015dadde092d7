// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// incidentPoints flattens the incident metrics of one batch: the active
// points as (id, severity) → value, and the fired counters by kind/severity.
func incidentPoints(t *testing.T, md pmetric.Metrics) (active []map[string]any, fired map[string]int64) {
	t.Helper()
	fired = map[string]int64{}
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		switch m.Name() {
		case spec.IncidentActive:
			if m.Type() != pmetric.MetricTypeGauge || m.Unit() != "{incident}" {
				t.Fatalf("%s is a %s of unit %q", m.Name(), m.Type(), m.Unit())
			}
			for j := 0; j < m.Gauge().DataPoints().Len(); j++ {
				p := m.Gauge().DataPoints().At(j)
				a := p.Attributes().AsRaw()
				a["value"] = p.IntValue()
				active = append(active, a)
			}
		case spec.IncidentFired:
			if !m.Sum().IsMonotonic() || m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
				t.Fatalf("%s is not a cumulative counter", m.Name())
			}
			for j := 0; j < m.Sum().DataPoints().Len(); j++ {
				p := m.Sum().DataPoints().At(j)
				a := p.Attributes().AsRaw()
				fired[a[spec.IncidentKind].(string)+"/"+a[spec.IncidentSeverity].(string)] = p.IntValue()
			}
		default:
			t.Fatalf("unexpected metric %s", m.Name())
		}
	}
	return active, fired
}

// TestIncidentMetricsFollowTheIncident: an XID fires at 5 s and resolves
// once the error count has stopped rising for resolve_after. The active series is 1 from the
// evaluation that fired it, 0 once at resolution and then absent; the
// counter of that kind goes 0 → 1 and stays; between changes a batch leaves
// only every incident_metrics_interval.
func TestIncidentMetricsFollowTheIncident(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) {
		c.ResolveAfter = 10 * time.Second
		c.Derived.IncidentMetricsInterval = 4 * time.Second
	})
	type sent struct {
		at     float64
		active []map[string]any
		fired  map[string]int64
	}
	var out []sent
	firedAt, resolvedAt := -1.0, -1.0
	for s := 0.0; s <= 40; s++ {
		n := 0.0
		if s >= 5 {
			n = 1
		}
		d.consumeMetrics(batch(nvmlRes, sec(s),
			pt{name: spec.HwGpuMemoryUsage, v: gib, attrs: map[string]any{"hw.id": gpu0}},
			pt{name: spec.HwErrors, v: n, sum: true, attrs: map[string]any{"hw.id": gpu0, "error.type": "xid", "hw.gpu.xid": int64(13)}}), true)
		now := sec(s) + int64(100*time.Millisecond)
		if _, f, r := d.evaluateAt(now); f > 0 {
			firedAt = s
		} else if r > 0 {
			resolvedAt = s
		}
		if md, ok := d.incidentMetricsAt(now, true); ok {
			a, f := incidentPoints(t, md)
			out = append(out, sent{s, a, f})
		}
	}
	at := map[float64]sent{}
	var times []float64
	for _, x := range out {
		at[x.at] = x
		times = append(times, x.at)
	}
	if firedAt != 5 || resolvedAt < 15 {
		t.Fatalf("the XID fired at %gs and resolved at %gs", firedAt, resolvedAt)
	}
	// The first batch (counters at 0), then every 4 s, and at once when the
	// incident fires and when it resolves, the interval counting from there.
	var want []float64
	for s, next := 0.0, 0.0; s <= 40; s++ {
		if s == next || s == firedAt || s == resolvedAt {
			want = append(want, s)
			next = s + 4
		}
	}
	if len(times) != len(want) {
		t.Fatalf("batches at %v, want %v", times, want)
	}
	for i := range want {
		if times[i] != want[i] {
			t.Fatalf("batches at %v, want %v", times, want)
		}
	}
	if len(at[0].active) != 0 || at[0].fired["xid_error/warning"] != 0 || len(at[0].fired) != len(connectorKinds)*2 {
		t.Fatalf("before any incident: %+v", at[0])
	}
	var during, after []float64
	for _, s := range want {
		if s >= firedAt && s < resolvedAt {
			during = append(during, s)
		} else if s > resolvedAt {
			after = append(after, s)
		}
	}
	if len(during) < 3 || len(after) < 2 {
		t.Fatalf("timeline too short: during %v, after %v", during, after)
	}
	for _, s := range during {
		a := at[s].active
		if len(a) != 1 || a[0]["value"] != int64(1) || a[0][spec.IncidentKind] != spec.IncidentKindXIDError ||
			a[0][spec.IncidentSeverity] != spec.SeverityWarning || a[0][spec.AttrHwID] != gpu0 ||
			a[0][spec.IncidentID] == "" || a[0][spec.IncidentQuadrant] != spec.QuadrantErrors {
			t.Fatalf("at %gs, active: %+v", s, a)
		}
		if at[s].fired["xid_error/warning"] != 1 {
			t.Fatalf("at %gs, fired: %v", s, at[s].fired)
		}
	}
	if a := at[resolvedAt].active; len(a) != 1 || a[0]["value"] != int64(0) || a[0][spec.IncidentID] != at[5].active[0][spec.IncidentID] {
		t.Fatalf("at resolution, want the same series at 0: %+v", a)
	}
	for _, s := range after {
		if len(at[s].active) != 0 || at[s].fired["xid_error/warning"] != 1 {
			t.Fatalf("after resolution at %gs: %+v", s, at[s])
		}
	}
}

// TestIncidentEscalationZeroesTheOldSeries: when a warning becomes
// critical the series labelled warning gets a 0, or Prometheus would show
// the incident twice for its whole lookback.
func TestIncidentEscalationZeroesTheOldSeries(t *testing.T) {
	d := newTestDiagnoser(t, nil)
	inc := &incident{id: "abc", key: "k", start: sec(0), lastEmit: sec(0), severity: spec.SeverityWarning,
		f: finding{kind: spec.IncidentKindGPUMemoryLeak, quadrant: spec.QuadrantSaturation}}
	inc.subj.pid = 42
	inc.subj.hwID = gpu0
	d.incidents[inc.key] = inc
	md, ok := d.incidentMetricsAt(sec(1), true)
	if !ok {
		t.Fatal("no batch")
	}
	a, _ := incidentPoints(t, md)
	if len(a) != 1 || a[0][spec.IncidentSeverity] != spec.SeverityWarning || a[0][spec.AttrProcessPid] != int64(42) {
		t.Fatalf("%+v", a)
	}
	inc.severity = spec.SeverityCritical
	d.incMetrics.dirty = true
	md, _ = d.incidentMetricsAt(sec(2), true)
	a, _ = incidentPoints(t, md)
	if len(a) != 2 || a[0][spec.IncidentSeverity] != spec.SeverityWarning || a[0]["value"] != int64(0) ||
		a[1][spec.IncidentSeverity] != spec.SeverityCritical || a[1]["value"] != int64(1) {
		t.Fatalf("after escalation: %+v", a)
	}
	md, _ = d.incidentMetricsAt(sec(20), true)
	if a, _ = incidentPoints(t, md); len(a) != 1 || a[0][spec.IncidentSeverity] != spec.SeverityCritical {
		t.Fatalf("the old series is zeroed once: %+v", a)
	}
}

// TestIncidentMetricsOff: derived.incident_metrics false sends nothing and
// keeps no resolutions.
func TestIncidentMetricsOff(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.Derived.IncidentMetrics = false })
	d.incMetrics.onResolved(&incident{id: "x"})
	if _, ok := d.incidentMetricsAt(sec(1), false); ok || len(d.incMetrics.resolved) != 0 {
		t.Fatal("disabled incident metrics sent a batch or kept state")
	}
}

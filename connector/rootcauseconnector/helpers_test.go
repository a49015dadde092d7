// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector/internal/metadata"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// t0 is the start of every simulated timeline.
const t0 = int64(1_760_000_000) * int64(time.Second)

func sec(s float64) int64 { return t0 + int64(s*float64(time.Second)) }

func testConfig(mutate func(*Config)) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Warmup = 0
	if mutate != nil {
		mutate(cfg)
	}
	return cfg
}

func newTestDiagnoser(t *testing.T, mutate func(*Config)) *diagnoser {
	t.Helper()
	cfg := testConfig(mutate)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	d, err := newDiagnoser(cfg, connectortest.NewNopSettings(metadata.Type))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// pt is one number point of a batch.
type pt struct {
	name  string
	v     float64
	attrs map[string]any
	sum   bool
}

// batch builds one resource's metrics at time ts.
func batch(res map[string]any, ts int64, pts ...pt) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	_ = rm.Resource().Attributes().FromRaw(res)
	sm := rm.ScopeMetrics().AppendEmpty()
	for _, p := range pts {
		m := sm.Metrics().AppendEmpty()
		m.SetName(p.name)
		var dp pmetric.NumberDataPoint
		if p.sum {
			s := m.SetEmptySum()
			s.SetIsMonotonic(true)
			s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			dp = s.DataPoints().AppendEmpty()
		} else {
			dp = m.SetEmptyGauge().DataPoints().AppendEmpty()
		}
		dp.SetTimestamp(pcommon.Timestamp(ts))
		dp.SetDoubleValue(p.v)
		_ = dp.Attributes().FromRaw(p.attrs)
	}
	return md
}

// histBatch adds one cumulative histogram point to md's first resource.
func addHist(md pmetric.Metrics, name string, ts int64, bounds []float64, counts []uint64) {
	m := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().AppendEmpty()
	m.SetName(name)
	h := m.SetEmptyHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	dp := h.DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.Timestamp(ts))
	dp.ExplicitBounds().FromRaw(bounds)
	dp.BucketCounts().FromRaw(counts)
	var n uint64
	for _, c := range counts {
		n += c
	}
	dp.SetCount(n)
}

// record is one incident log record, flattened for assertions.
type record struct {
	kind, state, severity, quadrant, layer, body, id string
	attrs                                            map[string]any
	traceID                                          pcommon.TraceID
	ts                                               int64
}

func records(ld plog.Logs) []record {
	var out []record
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		sls := ld.ResourceLogs().At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				a := lr.Attributes().AsRaw()
				str := func(k string) string { s, _ := a[k].(string); return s }
				out = append(out, record{kind: str("incident.kind"), state: str("incident.state"), severity: str("incident.severity"),
					quadrant: str("incident.quadrant"), layer: str("incident.layer"), id: str("incident.id"),
					body: lr.Body().Str(), attrs: a, traceID: lr.TraceID(), ts: int64(lr.Timestamp())})
			}
		}
	}
	return out
}

// run feeds one batch per second from 0 to `to` (made by gen) and
// evaluates after each, collecting every record.
func run(d *diagnoser, to float64, gen func(s float64) []pmetric.Metrics) []record {
	var out []record
	for s := 0.0; s <= to; s++ {
		for _, md := range gen(s) {
			d.consumeMetrics(md, true)
		}
		ld, _, _ := d.evaluateAt(sec(s) + int64(100*time.Millisecond))
		out = append(out, records(ld)...)
	}
	return out
}

// firing returns the first record of each incident of kind (updates and
// re-notifications left out: see updated).
func firing(recs []record, kind string) []record {
	var out []record
	seen := map[string]bool{}
	for _, r := range recs {
		if r.kind == kind && r.state == "firing" && !seen[r.id] {
			seen[r.id] = true
			out = append(out, r)
		}
	}
	return out
}

// updated returns the update records of kind: firing again because the
// figures moved.
func updated(recs []record, kind string) []record {
	var out []record
	for _, r := range recs {
		if u, _ := r.attrs[spec.IncidentUpdate].(int64); r.kind == kind && r.state == "firing" && u > 0 {
			out = append(out, r)
		}
	}
	return out
}

// resolved returns the resolved records of kind.
func resolved(recs []record, kind string) []record {
	var out []record
	for _, r := range recs {
		if r.kind == kind && r.state == spec.StateResolved {
			out = append(out, r)
		}
	}
	return out
}

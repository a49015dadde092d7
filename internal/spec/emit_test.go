// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

func TestAppendNumberMetricFollowsTheRegistry(t *testing.T) {
	ms := pmetric.NewMetricSlice()
	AppendNumberMetric(ms, ProfileMemoryAllocated, "")
	AppendNumberMetric(ms, ProfileMemoryOutstanding, "from a test")
	AppendNumberMetric(ms, ProfileAllocatorFragmentation, "")
	for i, want := range []struct {
		typ        pmetric.MetricType
		monotonic  bool
		unit, desc string
	}{
		{pmetric.MetricTypeSum, true, "By", mustMetric(t, ProfileMemoryAllocated).Description},
		{pmetric.MetricTypeSum, false, "By", "from a test"},
		{pmetric.MetricTypeGauge, false, "1", mustMetric(t, ProfileAllocatorFragmentation).Description},
	} {
		m := ms.At(i)
		if m.Type() != want.typ || m.Unit() != want.unit || m.Description() != want.desc {
			t.Errorf("%s: %v %q %q, want %v %q %q", m.Name(), m.Type(), m.Unit(), m.Description(), want.typ, want.unit, want.desc)
		}
		if m.Type() == pmetric.MetricTypeSum && (m.Sum().IsMonotonic() != want.monotonic ||
			m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative) {
			t.Errorf("%s: monotonic %v, temporality %v", m.Name(), m.Sum().IsMonotonic(), m.Sum().AggregationTemporality())
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a name outside the registry did not panic")
		}
	}()
	AppendNumberMetric(ms, "not.a.unified.metric", "")
}

func mustMetric(t *testing.T, name string) Metric {
	t.Helper()
	m, ok := LookupMetric(name)
	if !ok {
		t.Fatalf("%s not in the registry", name)
	}
	return m
}

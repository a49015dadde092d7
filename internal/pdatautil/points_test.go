// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package pdatautil

import (
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

func TestEachAttributesVisitsEveryTypeAndStops(t *testing.T) {
	ms := pmetric.NewMetricSlice()
	ms.AppendEmpty().SetEmptyGauge().DataPoints().AppendEmpty().Attributes().PutStr("k", "gauge")
	ms.AppendEmpty().SetEmptySum().DataPoints().AppendEmpty().Attributes().PutStr("k", "sum")
	ms.AppendEmpty().SetEmptyHistogram().DataPoints().AppendEmpty().Attributes().PutStr("k", "histogram")
	ms.AppendEmpty().SetEmptyExponentialHistogram().DataPoints().AppendEmpty().Attributes().PutStr("k", "exphistogram")
	s := ms.AppendEmpty().SetEmptySummary().DataPoints()
	s.AppendEmpty().Attributes().PutStr("k", "summary")
	s.AppendEmpty().Attributes().PutStr("k", "summary2")
	var seen []string
	for i := 0; i < ms.Len(); i++ {
		EachAttributes(ms.At(i), func(a pcommon.Map) bool {
			v, _ := a.Get("k")
			seen = append(seen, v.Str())
			return v.Str() != "summary" // stop before summary2
		})
	}
	want := []string{"gauge", "sum", "histogram", "exphistogram", "summary"}
	if len(seen) != len(want) {
		t.Fatalf("visited %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("visited %v, want %v", seen, want)
		}
	}
}

func TestEachMetricVisitsEveryMetricInOrder(t *testing.T) {
	md := pmetric.NewMetrics()
	for r := range 2 {
		rm := md.ResourceMetrics().AppendEmpty()
		for s := range 2 {
			sm := rm.ScopeMetrics().AppendEmpty()
			for m := range 2 {
				sm.Metrics().AppendEmpty().SetName(fmt.Sprintf("r%d.s%d.m%d", r, s, m))
			}
		}
	}
	md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty() // empty scope
	var got []string
	EachMetric(md, func(m pmetric.Metric) { got = append(got, m.Name()) })
	want := "r0.s0.m0 r0.s0.m1 r0.s1.m0 r0.s1.m1 r1.s0.m0 r1.s0.m1 r1.s1.m0 r1.s1.m1"
	if strings.Join(got, " ") != want {
		t.Errorf("visited %v, want %s", got, want)
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package pdatautil

import (
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

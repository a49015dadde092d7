// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package pdatautil holds small pdata walks shared by components.
package pdatautil

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// EachMetric calls fn with every metric of md, resource by resource and
// scope by scope, in order.
func EachMetric(md pmetric.Metrics, fn func(pmetric.Metric)) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				fn(ms.At(k))
			}
		}
	}
}

// EachAttributes calls fn with the attributes of every data point of m,
// whatever its type, until fn returns false.
func EachAttributes(m pmetric.Metric, fn func(pcommon.Map) bool) {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		dps := m.Gauge().DataPoints()
		for i := 0; i < dps.Len() && fn(dps.At(i).Attributes()); i++ {
		}
	case pmetric.MetricTypeSum:
		dps := m.Sum().DataPoints()
		for i := 0; i < dps.Len() && fn(dps.At(i).Attributes()); i++ {
		}
	case pmetric.MetricTypeHistogram:
		dps := m.Histogram().DataPoints()
		for i := 0; i < dps.Len() && fn(dps.At(i).Attributes()); i++ {
		}
	case pmetric.MetricTypeExponentialHistogram:
		dps := m.ExponentialHistogram().DataPoints()
		for i := 0; i < dps.Len() && fn(dps.At(i).Attributes()); i++ {
		}
	case pmetric.MetricTypeSummary:
		dps := m.Summary().DataPoints()
		for i := 0; i < dps.Len() && fn(dps.At(i).Attributes()); i++ {
		}
	}
}

// NumberPoints returns the points of a gauge or a sum; ok is false for
// the other types (histograms, summaries).
func NumberPoints(m pmetric.Metric) (pmetric.NumberDataPointSlice, bool) {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints(), true
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints(), true
	}
	return pmetric.NumberDataPointSlice{}, false
}

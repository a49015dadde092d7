// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import (
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// AppendNumberMetric appends the unified metric name to ms as the registry
// defines it — a Gauge, or a cumulative Sum (monotonic for a Counter) — with
// the registry's unit, and returns its data points to fill. Producers use it
// so that what they emit cannot drift from the published spec. description,
// when not empty, replaces the registry's (a producer saying where its
// numbers come from).
//
// A name outside the registry or a Histogram is a programming error, caught
// by the producer's tests: it panics.
func AppendNumberMetric(ms pmetric.MetricSlice, name, description string) pmetric.NumberDataPointSlice {
	i, ok := metricIndex[name]
	if !ok {
		panic("spec: AppendNumberMetric of a metric not in the registry: " + name)
	}
	def := &metrics[i]
	if description == "" {
		description = def.Description
	}
	m := ms.AppendEmpty()
	m.SetName(name)
	m.SetUnit(def.Unit)
	m.SetDescription(description)
	switch def.Instrument {
	case Gauge:
		return m.SetEmptyGauge().DataPoints()
	case Counter, UpDownCounter:
		s := m.SetEmptySum()
		s.SetIsMonotonic(def.Monotonic())
		s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		return s.DataPoints()
	}
	panic("spec: AppendNumberMetric of a " + string(def.Instrument) + ": " + name)
}

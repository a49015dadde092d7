// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import (
	"fmt"

	"github.com/prometheus/otlptranslator"
)

// How the unified names look in Prometheus. The collector's `prometheus`
// and `prometheus_remote_write` exporters translate OpenTelemetry names with
// github.com/prometheus/otlptranslator under its default strategy,
// UnderscoreEscapingWithSuffixes: dots become underscores, the unit becomes
// a suffix (By → _bytes, s → _seconds, a gauge of unit 1 → _ratio, {…}
// annotations → nothing) and a monotonic counter gets _total. The same
// library at the version the distribution builds with computes the names
// here, so rules, dashboards and docs/prometheus-names.md cannot drift from
// what the exporters write; the end-to-end test against a real Prometheus
// checks the two agree.

// PrometheusMetric is a unified metric as Prometheus stores it.
type PrometheusMetric struct {
	// Name is the metric family name (a histogram's, without _bucket).
	Name string
	// Type is the Prometheus metric type: counter, gauge or histogram.
	Type string
	// Series are the sample names a query selects: Name, or for a
	// histogram Name_bucket (with le), Name_sum and Name_count.
	Series []string
	// Labels are the label names of the metric's attributes, in the
	// registry's order. Resource attributes become labels only where the
	// exporter is told to (resource_to_telemetry_conversion).
	Labels []string
}

var (
	promMetricNamer = otlptranslator.NewMetricNamer("", otlptranslator.UnderscoreEscapingWithSuffixes)
	promLabelNamer  = otlptranslator.LabelNamer{}
)

// Prometheus translates a unified metric.
func Prometheus(m Metric) PrometheusMetric {
	var (
		typ   otlptranslator.MetricType
		ptype string
	)
	switch m.Instrument {
	case Gauge:
		typ, ptype = otlptranslator.MetricTypeGauge, "gauge"
	case UpDownCounter:
		// A non-monotonic sum is a Prometheus gauge.
		typ, ptype = otlptranslator.MetricTypeNonMonotonicCounter, "gauge"
	case Counter:
		typ, ptype = otlptranslator.MetricTypeMonotonicCounter, "counter"
	case Histogram:
		typ, ptype = otlptranslator.MetricTypeHistogram, "histogram"
	}
	name, err := promMetricNamer.Build(otlptranslator.Metric{Name: m.Name, Unit: m.Unit, Type: typ})
	if err != nil {
		// Registry names are validated dotted lower-case names: this is a
		// programming error, caught by the spec's tests.
		panic(fmt.Sprintf("spec: %s has no Prometheus name: %v", m.Name, err))
	}
	pm := PrometheusMetric{Name: name, Type: ptype, Series: []string{name}}
	if m.Instrument == Histogram {
		pm.Series = []string{name + "_bucket", name + "_sum", name + "_count"}
	}
	for _, a := range m.Attributes {
		pm.Labels = append(pm.Labels, PrometheusLabel(a.Name))
	}
	return pm
}

// PrometheusName is the Prometheus metric family name of a unified metric
// (see Prometheus); it panics on a name the registry does not define, so a
// rule or panel cannot be generated for a metric that does not exist.
func PrometheusName(name string) string {
	m, ok := LookupMetric(name)
	if !ok {
		panic(fmt.Sprintf("spec: %q is not a unified metric", name))
	}
	return Prometheus(m).Name
}

// PrometheusLabel is the Prometheus label name of an attribute (hw.id →
// hw_id).
func PrometheusLabel(attr string) string {
	l, err := promLabelNamer.Build(attr)
	if err != nil {
		panic(fmt.Sprintf("spec: attribute %q has no Prometheus label: %v", attr, err))
	}
	return l
}

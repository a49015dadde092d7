// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package spec is the unified metric and attribute specification of
// otelcol-llmops: the contract between every component of the distribution.
//
// Receivers emit engine- or device-native data, llmnormalize maps it onto the
// names defined here, rootcause reads only these names, and exporters ship
// them. Keeping the whole contract in one table (rather than as string
// literals scattered through components) is what lets a test prove that the
// published documentation (docs/metric-spec.md) and the code agree, and lets
// a configuration that names a unified metric be validated at start.
//
// Components refer to names through the constants in names.go.
package spec

import (
	"fmt"
	"sort"
)

// Instrument is the OpenTelemetry instrument kind a unified metric is
// emitted as. It fixes the pdata type downstream code can rely on.
type Instrument string

const (
	// Gauge is a sampled value (pmetric Gauge).
	Gauge Instrument = "Gauge"
	// UpDownCounter is a non-monotonic cumulative sum (pmetric Sum,
	// IsMonotonic=false), used for amounts that rise and fall, such as bytes
	// in use or requests in a queue.
	UpDownCounter Instrument = "UpDownCounter"
	// Counter is a monotonic cumulative sum (pmetric Sum, IsMonotonic=true).
	Counter Instrument = "Counter"
	// Histogram is an explicit-bucket histogram (pmetric Histogram).
	Histogram Instrument = "Histogram"
)

// Group says which part of the stack a metric describes.
type Group string

const (
	GroupGPU     Group = "gpu"
	GroupProcess Group = "process"
	GroupEngine  Group = "engine"
	GroupProfile Group = "profile"
	// GroupApp: quality signals an LLM application sends about its answers.
	GroupApp     Group = "app"
	GroupDerived Group = "derived"
	// GroupIncident: rootcause's incidents, counted and listed as metrics.
	GroupIncident Group = "incident"
)

// Origin says who defines a name: an OpenTelemetry semantic convention, or
// this distribution (for what the conventions do not cover yet).
type Origin string

const (
	OriginSemconv Origin = "semconv"
	OriginLLMOps  Origin = "otelcol-llmops"
)

// Requirement is how strongly an attribute is expected on a metric point.
type Requirement string

const (
	// Required attributes are present on every point; a point without them is
	// a bug in the component that produced it.
	Required Requirement = "required"
	// ConditionallyRequired attributes are present whenever the producer
	// knows the value (for example the model name of an engine that reports
	// it).
	ConditionallyRequired Requirement = "conditionally required"
	// Recommended attributes are present when cheap to obtain.
	Recommended Requirement = "recommended"
)

// AttrType is the pcommon value type of an attribute.
type AttrType string

const (
	TypeString AttrType = "string"
	TypeInt    AttrType = "int"
	TypeDouble AttrType = "double"
	TypeBool   AttrType = "bool"
	TypeSlice  AttrType = "slice"
	TypeMap    AttrType = "map"
)

// Attribute defines one attribute name used by the unified spec.
type Attribute struct {
	Name        string
	Type        AttrType
	Origin      Origin
	Description string
	// Values lists the allowed values of an enumerated attribute; empty
	// means any value of Type.
	Values []string
}

// AttrRef is an attribute as used by one metric.
type AttrRef struct {
	Name        string
	Requirement Requirement
	// Fixed, when set, is the only value this metric uses (hw.type=gpu).
	Fixed string
}

// Metric defines one unified metric.
type Metric struct {
	Name        string
	Group       Group
	Instrument  Instrument
	Unit        string
	Origin      Origin
	Description string
	Attributes  []AttrRef
}

// Monotonic reports whether the metric is a monotonic sum.
func (m Metric) Monotonic() bool { return m.Instrument == Counter }

// IsSum reports whether the metric is emitted as a pmetric Sum.
func (m Metric) IsSum() bool { return m.Instrument == Counter || m.Instrument == UpDownCounter }

// Attribute returns the metric's use of the named attribute.
func (m Metric) Attribute(name string) (AttrRef, bool) {
	for _, a := range m.Attributes {
		if a.Name == name {
			return a, true
		}
	}
	return AttrRef{}, false
}

// IncidentField is one attribute of an incident log record emitted by the
// rootcause connector (and of leak-suspect records of profileimport).
type IncidentField struct {
	Name        string
	Type        AttrType
	Required    bool
	Description string
	Values      []string
}

var (
	metricIndex    = map[string]int{}
	attributeIndex = map[string]int{}
)

func init() {
	for i, m := range metrics {
		if _, dup := metricIndex[m.Name]; dup {
			panic(fmt.Sprintf("spec: metric %q defined twice", m.Name))
		}
		metricIndex[m.Name] = i
	}
	for i, a := range attributes {
		if _, dup := attributeIndex[a.Name]; dup {
			panic(fmt.Sprintf("spec: attribute %q defined twice", a.Name))
		}
		attributeIndex[a.Name] = i
	}
}

// Metrics returns every unified metric, in documentation order. The slice is
// a copy: callers may not change the registry.
func Metrics() []Metric {
	out := make([]Metric, len(metrics))
	for i, m := range metrics {
		m.Attributes = append([]AttrRef(nil), m.Attributes...)
		out[i] = m
	}
	return out
}

// GroupOf returns the group of a unified metric without copying anything
// (for hot paths; LookupMetric copies the attribute list).
func GroupOf(name string) (Group, bool) {
	i, ok := metricIndex[name]
	if !ok {
		return "", false
	}
	return metrics[i].Group, true
}

// LookupMetric returns the unified metric with the given name.
func LookupMetric(name string) (Metric, bool) {
	i, ok := metricIndex[name]
	if !ok {
		return Metric{}, false
	}
	m := metrics[i]
	m.Attributes = append([]AttrRef(nil), m.Attributes...)
	return m, true
}

// Attributes returns every attribute the spec uses, sorted by name.
func Attributes() []Attribute {
	out := make([]Attribute, len(attributes))
	copy(out, attributes)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupAttribute returns the attribute definition with the given name.
func LookupAttribute(name string) (Attribute, bool) {
	i, ok := attributeIndex[name]
	if !ok {
		return Attribute{}, false
	}
	return attributes[i], true
}

// IncidentFields returns the attributes of an incident log record.
func IncidentFields() []IncidentField {
	out := make([]IncidentField, len(incidentFields))
	copy(out, incidentFields)
	return out
}

// IncidentKinds returns the incident kinds, sorted.
func IncidentKinds() []string {
	f, _ := lookupIncidentField(IncidentKind)
	return append([]string(nil), f.Values...)
}

func lookupIncidentField(name string) (IncidentField, bool) {
	for _, f := range incidentFields {
		if f.Name == name {
			return f, true
		}
	}
	return IncidentField{}, false
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import (
	"fmt"
	"slices"
	"strings"
)

// A Mapping says how one engine-native metric (or a label-selected part of
// it) becomes a unified metric. Mappings are data: the llmnormalize
// processor interprets them, and user-defined mappings from configuration
// go through the same validation (Validate) at start.
type Mapping struct {
	// Engine is the llm.engine.name the source belongs to ("dcgm" for
	// dcgm-exporter, whose names are recognised on any resource).
	Engine string
	// Source is the engine-native metric name as the llmengine receiver
	// emits it (counters keep their _total suffix).
	Source string
	// Match selects points by label value (e.g. kv_cache_block_type=fraction
	// of nv_trt_llm_kv_cache_block_metrics); the matched labels are dropped.
	Match map[string]string
	// SourceType is what the source is: "gauge", "counter", "histogram",
	// "summary", or "histogram_sum" (the _sum of a histogram, read as a
	// counter: e.g. TGI's total input tokens).
	SourceType string
	// SourceUnit is the unit the engine reports in; together with the
	// target's unit it fixes the conversion (see Conversion).
	SourceUnit string
	// Target is the unified metric name; it must be in the registry.
	Target string
	// Labels renames engine labels for this mapping, on top of the common
	// renames (CommonLabelRenames).
	Labels map[string]string
	// Set adds fixed attributes (e.g. gen_ai.token.type=input).
	Set map[string]string
	// ValueLabel, when set, takes the point's value from this label, read
	// as a number: engines publish their configuration as an info gauge
	// of 1 whose labels are the settings (vLLM cache_config_info). Only
	// the labels Labels renames are kept (the other settings are not
	// attributes of the unified point); a point whose label is missing or
	// not a number ("None") is left out.
	ValueLabel string
	// Deprecated marks an older alias: when the current name arrives in the
	// same scrape, the alias is dropped so the unified metric appears once.
	Deprecated bool
	// Note explains a mapping that is not a plain rename.
	Note string
}

// A Derivation computes a unified metric an engine does not report
// directly but whose value follows exactly from two metrics it does
// report: Target = Numerator / Denominator (both gauges or both counters of
// the same resource and label set).
type Derivation struct {
	Engine      string
	Target      string
	Numerator   string
	Denominator string
	Note        string
}

// CommonLabelRenames apply to every engine metric that is mapped.
var CommonLabelRenames = map[string]string{
	"model_name":      AttrGenAIRequestModel,
	"model":           AttrGenAIRequestModel,
	"engine":          AttrEngineRank,
	"finished_reason": AttrFinishReason,
}

// Conversion is a unit conversion applied to values (and histogram bounds
// and sums).
type Conversion struct {
	Factor float64 // value × Factor
}

// unitFactors lists the conversions the processor knows, keyed by
// "source→target" unit. A mapping whose units are not here is refused.
var unitFactors = map[string]float64{
	"ms→s":   1e-3,
	"us→s":   1e-6,
	"%→1":    1e-2,
	"MiB→By": 1 << 20,
	"KiB→By": 1 << 10,
	"mJ→J":   1e-3,
	"MHz→Hz": 1e6,
	"mW→W":   1e-3,
}

// ConversionFor returns the conversion from a source unit to a unified unit.
func ConversionFor(sourceUnit, targetUnit string) (Conversion, error) {
	if sourceUnit == targetUnit {
		return Conversion{Factor: 1}, nil
	}
	// Counts: a dimensionless source ("1", or no unit, as Prometheus
	// exposes counts) is a count of whatever the target annotates
	// ({request}, {token}).
	if (sourceUnit == "1" || sourceUnit == "") && strings.HasPrefix(targetUnit, "{") {
		return Conversion{Factor: 1}, nil
	}
	if f, ok := unitFactors[sourceUnit+"→"+targetUnit]; ok {
		return Conversion{Factor: f}, nil
	}
	return Conversion{}, fmt.Errorf("no conversion from unit %q to %q", sourceUnit, targetUnit)
}

// compatible lists which source types may feed which unified instruments.
var compatible = map[string][]Instrument{
	"gauge":         {Gauge, UpDownCounter},
	"counter":       {Counter},
	"histogram":     {Histogram},
	"summary":       {},
	"histogram_sum": {Counter},
}

// Validate checks a mapping against the registry: the target exists, the
// source type can become the target's instrument, the units convert, and
// fixed or renamed attributes are spec attributes.
func (m Mapping) Validate() error {
	var errs []string
	if m.Source == "" {
		errs = append(errs, "source is empty")
	}
	t, ok := LookupMetric(m.Target)
	if !ok {
		errs = append(errs, fmt.Sprintf("target %q is not a unified metric", m.Target))
	} else {
		insts, known := compatible[m.SourceType]
		if !known {
			errs = append(errs, fmt.Sprintf("source type %q is not one of gauge, counter, histogram, histogram_sum", m.SourceType))
		} else if !slices.Contains(insts, t.Instrument) {
			errs = append(errs, fmt.Sprintf("a %s cannot become %s, which is a %s", m.SourceType, m.Target, t.Instrument))
		}
		if _, err := ConversionFor(m.SourceUnit, t.Unit); err != nil {
			errs = append(errs, fmt.Sprintf("%v (target %s is in %q)", err, m.Target, t.Unit))
		}
	}
	if m.ValueLabel != "" && m.SourceType != "gauge" {
		errs = append(errs, fmt.Sprintf("value_label needs an info gauge, not a %s", m.SourceType))
	}
	for k := range m.Set {
		if _, ok := LookupAttribute(k); !ok {
			errs = append(errs, fmt.Sprintf("set: %q is not a spec attribute", k))
		}
	}
	for from, to := range m.Labels {
		if _, ok := LookupAttribute(to); !ok {
			errs = append(errs, fmt.Sprintf("labels: %q → %q is not a spec attribute", from, to))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("mapping %s → %s: %s", m.Source, m.Target, strings.Join(errs, "; "))
	}
	return nil
}

// Mappings returns the built-in mappings of every engine.
func Mappings() []Mapping {
	var out []Mapping
	for _, table := range mappingTables {
		out = append(out, table...)
	}
	return out
}

// Derivations returns the built-in derivations.
func Derivations() []Derivation { return append([]Derivation(nil), derivations...) }

// mappingTables is filled by the per-engine files (mappings_<engine>.go).
var mappingTables = map[string][]Mapping{}

var derivations []Derivation

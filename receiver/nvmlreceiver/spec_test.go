// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver

import (
	"os"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// TestMetricsFollowTheUnifiedSpec ties metadata.yaml to internal/spec: every
// metric this receiver emits is a unified metric with the same instrument
// and unit, and carries the attributes the spec requires.
func TestMetricsFollowTheUnifiedSpec(t *testing.T) {
	raw, err := os.ReadFile("metadata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Metrics map[string]struct {
			Unit  string `yaml:"unit"`
			Gauge *struct {
				ValueType string `yaml:"value_type"`
			} `yaml:"gauge"`
			Sum *struct {
				Monotonic bool `yaml:"monotonic"`
			} `yaml:"sum"`
			Attributes []string `yaml:"attributes"`
		} `yaml:"metrics"`
	}
	if err := yaml.Unmarshal(raw, &md); err != nil {
		t.Fatal(err)
	}
	for name, m := range md.Metrics {
		u, ok := spec.LookupMetric(name)
		if !ok {
			t.Errorf("%s is not in the unified spec (internal/spec)", name)
			continue
		}
		var inst spec.Instrument
		switch {
		case m.Gauge != nil:
			inst = spec.Gauge
		case m.Sum != nil && m.Sum.Monotonic:
			inst = spec.Counter
		case m.Sum != nil:
			inst = spec.UpDownCounter
		}
		if inst != u.Instrument || m.Unit != u.Unit {
			t.Errorf("%s: metadata.yaml says %s %q, the spec %s %q", name, inst, m.Unit, u.Instrument, u.Unit)
		}
		have := map[string]bool{}
		for _, a := range m.Attributes {
			have[a] = true
			if _, ok := spec.LookupAttribute(a); !ok {
				t.Errorf("%s: attribute %s is not in the spec", name, a)
			}
		}
		for _, a := range u.Attributes {
			if a.Requirement == spec.Required && !have[a.Name] {
				t.Errorf("%s: required attribute %s missing", name, a.Name)
			}
		}
	}
}

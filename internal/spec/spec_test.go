// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocumentIsUpToDate fails when docs/metric-spec.md was not regenerated
// after a change to the registry.
func TestDocumentIsUpToDate(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "metric-spec.md")
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v (run `make generate`)", path, err)
	}
	var fresh bytes.Buffer
	if err := WriteMarkdown(&fresh); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, fresh.Bytes()) {
		t.Fatalf("%s is stale: the registry in internal/spec changed; run `make generate` and commit the result", path)
	}
}

var (
	metricName = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)
	// UCUM-style units the spec may use. A new unit is a deliberate change.
	knownUnits = map[string]bool{"By": true, "1": true, "s": true, "W": true, "J": true, "Hz": true, "Cel": true, "By/s": true,
		"{error}": true, "{request}": true, "{token}": true, "{preemption}": true, "{incident}": true, "{block}": true}
)

func TestMetricsAreWellFormed(t *testing.T) {
	seenGroups := map[Group]bool{}
	for _, m := range Metrics() {
		seenGroups[m.Group] = true
		if !metricName.MatchString(m.Name) {
			t.Errorf("%s: name is not a dotted lower-case name", m.Name)
		}
		switch m.Instrument {
		case Gauge, UpDownCounter, Counter, Histogram:
		default:
			t.Errorf("%s: unknown instrument %q", m.Name, m.Instrument)
		}
		if !knownUnits[m.Unit] {
			t.Errorf("%s: unit %q is not one of the spec's units", m.Name, m.Unit)
		}
		if m.Origin != OriginSemconv && m.Origin != OriginLLMOps {
			t.Errorf("%s: origin %q", m.Name, m.Origin)
		}
		if m.Description == "" || !strings.HasSuffix(m.Description, ".") {
			t.Errorf("%s: description must be a sentence", m.Name)
		}
		if m.Instrument == Histogram && m.Unit != "s" {
			t.Errorf("%s: histograms in the spec are latencies in seconds, got %q", m.Name, m.Unit)
		}
		if len(m.Attributes) == 0 {
			t.Errorf("%s: no attributes", m.Name)
		}
		seenAttr := map[string]bool{}
		for _, a := range m.Attributes {
			def, ok := LookupAttribute(a.Name)
			if !ok {
				t.Errorf("%s: attribute %q is not defined in the attribute table", m.Name, a.Name)
				continue
			}
			if seenAttr[a.Name] {
				t.Errorf("%s: attribute %q listed twice", m.Name, a.Name)
			}
			seenAttr[a.Name] = true
			switch a.Requirement {
			case Required, ConditionallyRequired, Recommended:
			default:
				t.Errorf("%s/%s: requirement %q", m.Name, a.Name, a.Requirement)
			}
			if a.Fixed != "" && len(def.Values) > 0 && !contains(def.Values, a.Fixed) {
				t.Errorf("%s/%s: fixed value %q is not among %v", m.Name, a.Name, a.Fixed, def.Values)
			}
		}
		switch m.Group {
		case GroupGPU:
			if r, ok := m.Attribute(AttrHwID); !ok || r.Requirement != Required {
				t.Errorf("%s: GPU metrics must require hw.id", m.Name)
			}
		case GroupProcess:
			for _, n := range []string{AttrHwID, AttrProcessPid} {
				if r, ok := m.Attribute(n); !ok || r.Requirement != Required {
					t.Errorf("%s: process metrics must require %s", m.Name, n)
				}
			}
		case GroupEngine:
			if r, ok := m.Attribute(AttrEngineName); !ok || r.Requirement != Required {
				t.Errorf("%s: engine metrics must require llm.engine.name", m.Name)
			}
			if _, ok := m.Attribute(AttrGenAIRequestModel); !ok {
				t.Errorf("%s: engine metrics must carry gen_ai.request.model", m.Name)
			}
		}
	}
	for _, g := range groupTitles {
		if !seenGroups[g.group] {
			t.Errorf("group %q has no metric", g.group)
		}
	}
}

func TestDesignContractNames(t *testing.T) {
	// The names and shapes docs/architecture.md ("The contract between
	// components") fixes; other components depend on them.
	want := map[string]struct {
		inst Instrument
		unit string
	}{
		HwGpuMemoryUsage:              {UpDownCounter, "By"},
		HwGpuMemoryLimit:              {UpDownCounter, "By"},
		HwGpuMemoryUtilization:        {Gauge, "1"},
		HwGpuUtilization:              {Gauge, "1"},
		HwGpuIo:                       {Counter, "By"},
		HwErrors:                      {Counter, "{error}"},
		HwPower:                       {Gauge, "W"},
		HwEnergy:                      {Counter, "J"},
		GenAIServerTimeToFirstToken:   {Histogram, "s"},
		GenAIServerTimePerOutputToken: {Histogram, "s"},
		GenAIServerRequestDuration:    {Histogram, "s"},
		EngineRequestQueueDuration:    {Histogram, "s"},
		EngineKvCacheUtilization:      {Gauge, "1"},
		EnginePrefixCacheQueries:      {Counter, "{token}"},
		EnginePrefixCacheHits:         {Counter, "{token}"},
		EngineTokens:                  {Counter, "{token}"},
		EngineRequestsFinished:        {Counter, "{request}"},
	}
	for name, w := range want {
		m, ok := LookupMetric(name)
		if !ok {
			t.Errorf("%s missing from the registry", name)
			continue
		}
		if m.Instrument != w.inst || m.Unit != w.unit {
			t.Errorf("%s: got %s %s, want %s %s", name, m.Instrument, m.Unit, w.inst, w.unit)
		}
	}
	for _, n := range []string{ProcessGpuMemoryUsage, ProcessGpuUtilization, HwGpuTemperature, HwGpuClockFrequency,
		HwGpuMemoryReserved, HwGpuThrottle, HwGpuSmUtilization, HwGpuTensorUtilization, EngineRequestsRunning,
		EngineRequestsWaiting, EnginePreemptions, ProfileMemoryAllocated, ProfileMemoryOutstanding, ProfileAllocatorFragmentation} {
		if _, ok := LookupMetric(n); !ok {
			t.Errorf("%s missing from the registry", n)
		}
	}
	if _, ok := LookupMetric("vllm:gpu_cache_usage_perc"); ok {
		t.Error("engine-native names must not be unified metrics")
	}
}

func TestIncidentFields(t *testing.T) {
	required := map[string]bool{}
	for _, f := range IncidentFields() {
		if f.Required {
			required[f.Name] = true
		}
		if strings.HasPrefix(f.Name, "incident.") {
			continue
		}
		// Subject fields reuse metric attribute names, so joins are by name.
		if _, ok := LookupAttribute(f.Name); !ok {
			t.Errorf("incident subject field %q is not a spec attribute", f.Name)
		}
	}
	for _, n := range []string{IncidentID, IncidentKind, IncidentQuadrant, IncidentSeverity, IncidentState, IncidentScore, IncidentEvidence} {
		if !required[n] {
			t.Errorf("incident field %s must be required", n)
		}
	}
	kinds := IncidentKinds()
	for _, k := range []string{"gpu_memory_leak", "kv_cache_saturation", "latency_spike", "throughput_drop", "queue_buildup", "xid_error"} {
		if !contains(kinds, k) {
			t.Errorf("incident kind %q missing", k)
		}
	}
}

func TestRegistryIsReadOnly(t *testing.T) {
	ms := Metrics()
	ms[0].Name = "changed"
	ms[0].Attributes[0].Name = "changed"
	m, _ := LookupMetric(HwGpuMemoryUsage)
	if m.Name != HwGpuMemoryUsage || m.Attributes[0].Name != AttrHwID {
		t.Fatal("callers could modify the registry through Metrics()")
	}
	m.Attributes[0].Name = "changed"
	again, _ := LookupMetric(HwGpuMemoryUsage)
	if again.Attributes[0].Name != AttrHwID {
		t.Fatal("callers could modify the registry through LookupMetric()")
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

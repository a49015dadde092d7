// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestPrometheusNames pins the translation of names the shipped rules and
// dashboards rely on, one of each unit and instrument rule: a change of the
// translation library that renames them must be a deliberate change here.
func TestPrometheusNames(t *testing.T) {
	for name, want := range map[string]string{
		HwGpuMemoryUsage:            "hw_gpu_memory_usage_bytes",
		HwGpuMemoryUtilization:      "hw_gpu_memory_utilization_ratio",
		HwGpuTemperature:            "hw_temperature_celsius",
		HwErrors:                    "hw_errors_total",
		HwEnergy:                    "hw_energy_joules_total",
		HwStatus:                    "hw_status",
		GenAIServerTimeToFirstToken: "gen_ai_server_time_to_first_token_seconds",
		EngineKvCacheUtilization:    "llm_engine_kv_cache_utilization_ratio",
		EngineTokens:                "llm_engine_tokens_total",
		EngineRequestsWaiting:       "llm_engine_requests_waiting",
		HwGpuMemoryGrowthRate:       "hw_gpu_memory_growth_rate_bytes_per_second",
		IncidentActive:              "llm_incident_active",
		IncidentFired:               "llm_incident_fired_total",
	} {
		if got := PrometheusName(name); got != want {
			t.Errorf("PrometheusName(%s) = %s, want %s", name, got, want)
		}
	}
	h := Prometheus(mustMetric(t, GenAIServerRequestDuration))
	if h.Type != "histogram" || len(h.Series) != 3 || h.Series[0] != "gen_ai_server_request_duration_seconds_bucket" {
		t.Errorf("histogram translation: %+v", h)
	}
	if got := PrometheusLabel(AttrEngineName); got != "llm_engine_name" {
		t.Errorf("label of %s = %s", AttrEngineName, got)
	}
}

// TestPrometheusNamesAreUnique: two unified metrics must not collide in
// Prometheus (e.g. a gauge x of unit 1 and a metric named x_ratio).
func TestPrometheusNamesAreUnique(t *testing.T) {
	seen := map[string]string{}
	for _, m := range Metrics() {
		for _, s := range Prometheus(m).Series {
			if other, dup := seen[s]; dup {
				t.Errorf("%s and %s are both %s in Prometheus", other, m.Name, s)
			}
			seen[s] = m.Name
		}
	}
}

func TestPrometheusNameOfUnknownMetricPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("PrometheusName of a name outside the registry did not panic")
		}
	}()
	PrometheusName("hw.gpu.nonexistent")
}

// TestPrometheusDocumentIsUpToDate fails when docs/prometheus-names.md was
// not regenerated after a change to the registry.
func TestPrometheusDocumentIsUpToDate(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "prometheus-names.md")
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v (run `make generate`)", path, err)
	}
	var fresh bytes.Buffer
	if err := WritePrometheusMarkdown(&fresh); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, fresh.Bytes()) {
		t.Fatalf("%s is stale: the registry in internal/spec changed; run `make generate` and commit the result", path)
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// TestLLMEngineScrapesReplayServer runs the built binary against the engine
// replay server playing vLLM's KV-cache saturation scenario, next to a
// target that is down, and checks what reaches a real OTLP backend.
func TestLLMEngineScrapesReplayServer(t *testing.T) {
	backend := harness.StartBackend(t)
	scenario := filepath.Join(harness.RepoRoot(t), "tests", "enginereplay", "scenarios", "vllm-kv-saturation.scenario")
	vllm := harness.StartEngineReplay(t, "-engine", "vllm", "-scenario", scenario, "-speed", "20")
	tgi := harness.StartEngineReplay(t, "-engine", "tgi")
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/metrics"
	_ = l.Close()

	health := harness.FreePort(t)
	cfg := backend.MetricsAgentConfig(fmt.Sprintf(`  llmengine:
    collection_interval: 250ms
    timeout: 200ms
    targets:
      - endpoint: %s/metrics
      - endpoint: %s/metrics
      - endpoint: %s`, vllm, tgi, dead), []string{"llmengine"}, health)
	harness.StartCollector(t, harness.Options{Name: "agent", Config: cfg, HealthPort: health})

	var kv []float64
	harness.Eventually(t, 60*time.Second, func() (bool, string) {
		kv = gaugeSeries(backend.Metrics(t), vllm+"/metrics", "vllm:gpu_cache_usage_perc")
		return len(kv) >= 4 && kv[len(kv)-1] > kv[0], fmt.Sprintf("kv cache samples %v", kv)
	})

	up := map[string]float64{}
	engines := map[string]string{}
	models := map[string]string{}
	m := backend.Metrics(t)
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		target := str(rm.Resource().Attributes(), "llm.engine.target")
		engines[target] = str(rm.Resource().Attributes(), "llm.engine.name")
		if mod := str(rm.Resource().Attributes(), "gen_ai.request.model"); mod != "" {
			models[target] = mod
		}
		ms := rm.ScopeMetrics().At(0).Metrics()
		for k := 0; k < ms.Len(); k++ {
			mt := ms.At(k)
			if strings.HasSuffix(mt.Name(), "_created") {
				t.Errorf("%s emitted", mt.Name())
			}
			if mt.Name() == "llm.engine.up" {
				up[target] = float64(mt.Gauge().DataPoints().At(0).IntValue())
			}
		}
	}
	if engines[vllm+"/metrics"] != "vllm" || engines[tgi+"/metrics"] != "tgi" {
		t.Errorf("engines detected: %v", engines)
	}
	if models[vllm+"/metrics"] == "" || models[tgi+"/metrics"] == "" {
		t.Errorf("models detected: %v", models)
	}
	if up[vllm+"/metrics"] != 1 || up[tgi+"/metrics"] != 1 || up[dead] != 0 {
		t.Errorf("llm.engine.up per target: %v", up)
	}
}

// gaugeSeries returns a gauge's values for one target, in arrival order.
func gaugeSeries(m pmetric.Metrics, target, name string) []float64 {
	var out []float64
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		if str(rm.Resource().Attributes(), "llm.engine.target") != target {
			continue
		}
		ms := rm.ScopeMetrics().At(0).Metrics()
		for k := 0; k < ms.Len(); k++ {
			if mt := ms.At(k); mt.Name() == name && mt.Type() == pmetric.MetricTypeGauge && mt.Gauge().DataPoints().Len() > 0 {
				out = append(out, mt.Gauge().DataPoints().At(0).DoubleValue())
			}
		}
	}
	return out
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// TestNormalizedEnginesShareOneSpec: vLLM and TGI scraped at once, through
// llmnormalize, reach the backend under one set of unified names.
func TestNormalizedEnginesShareOneSpec(t *testing.T) {
	backend := harness.StartBackend(t)
	vllm := harness.StartEngineReplay(t, "-engine", "vllm")
	tgi := harness.StartEngineReplay(t, "-engine", "tgi")
	health := harness.FreePort(t)
	cfg := backend.MetricsAgentConfigWithProcessors(fmt.Sprintf(`  llmengine:
    collection_interval: 250ms
    targets:
      - endpoint: %s/metrics
      - endpoint: %s/metrics`, vllm, tgi), []string{"llmengine"},
		`  llmnormalize:
    unmapped_metrics: drop`, []string{"llmnormalize"}, health)
	harness.StartCollector(t, harness.Options{Name: "agent", Config: cfg, HealthPort: health})

	byEngine := map[string]map[string]bool{}
	harness.Eventually(t, 60*time.Second, func() (bool, string) {
		byEngine = unifiedNamesByEngine(t, backend.Metrics(t))
		return len(byEngine["vllm"]) > 0 && len(byEngine["tgi"]) > 0, fmt.Sprintf("%v", byEngine)
	})
	for engine, names := range byEngine {
		for name := range names {
			if _, ok := spec.LookupMetric(name); !ok {
				t.Errorf("%s: engine-native name %q reached the backend", engine, name)
			}
		}
	}
	// What both fixtures have must arrive under the same names. (The
	// recorded TGI capture is cut before its latency histograms and
	// predates the KV-capacity gauge, so those are vLLM's alone here.)
	for _, name := range []string{spec.EngineRequestsRunning, spec.EngineRequestsWaiting, spec.EngineTokens,
		spec.EngineRequestsFinished, spec.EngineUp} {
		for _, engine := range []string{"vllm", "tgi"} {
			if !byEngine[engine][name] {
				t.Errorf("%s: %s missing (has %s)", engine, name, keys(byEngine[engine]))
			}
		}
	}
	if byEngine["tgi"][spec.GenAIServerTimeToFirstToken] {
		t.Error("TGI has no time to first token, yet one reached the backend")
	}
}

func unifiedNamesByEngine(_ *testing.T, m pmetric.Metrics) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		engine := str(rm.Resource().Attributes(), "llm.engine.name")
		if out[engine] == nil {
			out[engine] = map[string]bool{}
		}
		ms := rm.ScopeMetrics().At(0).Metrics()
		for k := 0; k < ms.Len(); k++ {
			out[engine][ms.At(k).Name()] = true
		}
	}
	return out
}

func keys(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package helmtest

import (
	"fmt"
	"testing"

	"github.com/llmops-otel/otelcol-llmops/tests/configcheck"
)

// allBackends enables every exporter the chart can render, so that each
// rendering below carries all of them.
var allBackends = []string{
	"--set", "exporters.otlp.enabled=true", "--set", "exporters.otlp.endpoint=tempo:4317",
	"--set", "exporters.prometheusRemoteWrite.enabled=true", "--set", "exporters.prometheusRemoteWrite.endpoint=http://mimir/api/v1/push",
	"--set", "exporters.prometheus.enabled=true",
	"--set", "exporters.alertmanager.enabled=true", "--set", "exporters.alertmanager.endpoint=http://alertmanager:9093",
	"--set", "exporters.debug.enabled=true",
}

// TestDurableExporters: in every rendering of every ci/ values file, with
// its own exporters and with all of them enabled, agents and gateway alike,
// every exporter that sends over the network has a persistent queue bounded
// in bytes, retries, and no batch processor in front of it
// (tests/configcheck); the values shape the queue as documented.
func TestDurableExporters(t *testing.T) {
	for _, file := range ValuesFiles(t) {
		for _, extra := range [][]string{nil, allBackends} {
			name := file
			if extra != nil {
				name += " + every exporter"
			}
			r := render(t, file, extra...)
			for what, cfg := range map[string]map[string]any{"agent": r.agent, "gateway": r.gw} {
				if cfg == nil {
					continue
				}
				for _, p := range configcheck.Durable(cfg) {
					t.Errorf("%s, %s: %s", name, what, p)
				}
			}
		}
	}

	r := render(t, "deploy/helm/otelcol-llmops/ci/defaults-values.yaml", append([]string{
		"--set", "exporters.queueSizeMiB=64", "--set", "exporters.timeout=45s",
		"--set", "exporters.batch.maxSize=1000", "--set", "exporters.batch.minSize=10",
	}, allBackends...)...)
	otlp, _ := Get(r.agent, "exporters", "otlp_grpc/backend").(map[string]any)
	if otlp == nil {
		t.Fatalf("no otlp_grpc/backend in the agent: %v", Get(r.agent, "exporters"))
	}
	for path, want := range map[string]string{
		"sending_queue.queue_size":     fmt.Sprint(64 << 20),
		"sending_queue.sizer":          "bytes",
		"sending_queue.batch.max_size": "1000",
		"sending_queue.batch.min_size": "10",
		"timeout":                      "45s",
	} {
		var v any = otlp
		for _, k := range splitDots(path) {
			v = Get(v, k)
		}
		if fmt.Sprint(v) != want {
			t.Errorf("otlp_grpc/backend %s = %v, want %s", path, v, want)
		}
	}
	if got := Get(r.agent, "exporters", "prometheus_remote_write/backend", "timeout"); got != "45s" {
		t.Errorf("prometheus_remote_write/backend timeout = %v, want 45s", got)
	}
	if got := fmt.Sprint(Get(r.agent, "exporters", "alertwebhook/alertmanager", "retry_on_failure", "max_elapsed_time")); got != "0s" {
		t.Errorf("alertwebhook retries until %s, want 0s (until delivered)", got)
	}
}

func splitDots(s string) []any {
	var out []any
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

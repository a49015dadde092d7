// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"sort"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// wantComponents is the distribution's component list. Components of this
// repository are added here by the issue that adds them to builder-config.yaml.
var wantComponents = map[string][]string{
	"receivers":  {"otlp", "receiver_creator", "nvml", "llmengine", "profileimport"},
	"processors": {"batch", "memory_limiter", "transform", "tail_sampling", "llmnormalize"},
	"exporters":  {"otlp_grpc", "otlp_http", "debug", "file", "prometheus", "prometheus_remote_write", "alertwebhook"},
	"extensions": {"health_check", "pprof", "file_storage", "k8s_observer", "bearertokenauth"},
	"connectors": {"rootcause"},
}

func TestComponentsListed(t *testing.T) {
	out := harness.Run(t, "components")
	var listed map[string]any
	if err := yaml.Unmarshal(out, &listed); err != nil {
		t.Fatalf("`components` output is not YAML: %v\n%s", err, out)
	}
	for kind, want := range wantComponents {
		got := map[string]bool{}
		entries, _ := listed[kind].([]any)
		for _, e := range entries {
			if m, ok := e.(map[string]any); ok {
				if name, ok := m["name"].(string); ok {
					got[name] = true
				}
			}
		}
		for _, name := range want {
			if !got[name] {
				names := make([]string, 0, len(got))
				for n := range got {
					names = append(names, n)
				}
				sort.Strings(names)
				t.Errorf("%s: %q missing from `components` (listed: %v)", kind, name, names)
			}
		}
	}
}

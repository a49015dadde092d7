// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmops-otel/otelcol-llmops/deploy/helmtest"
	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// TestChartConfigsValidate renders the Helm chart with each of its ci/ values
// files and runs `otelcol-llmops validate` on every collector configuration
// it puts in a ConfigMap (the agents' and, with the gateway on, the
// gateway's), with the variables the pods get from the downward API set.
func TestChartConfigsValidate(t *testing.T) {
	for _, kv := range helmtest.ConfigEnv() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	for _, file := range helmtest.ValuesFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			objs := helmtest.Documents(t, helmtest.MustTemplate(t, "-f", file))
			for name, cfg := range helmtest.CollectorConfigs(t, objs) {
				path := filepath.Join(t.TempDir(), name+".yaml")
				if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
					t.Fatal(err)
				}
				harness.Run(t, "validate", "--config", path)
			}
		})
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// TestDefaultConfigStartsWithoutGPU runs the binary on distro/config.yaml
// exactly as `make run` does (on this machine there is no GPU and no
// engine), with the listening ports moved to free ones through the
// configuration's environment variables, and checks it becomes healthy and
// serves its own telemetry on loopback.
func TestDefaultConfigStartsWithoutGPU(t *testing.T) {
	root := harness.RepoRoot(t)
	cfg := filepath.Join(root, "distro", "config.yaml")
	harness.Run(t, "validate", "--config", cfg)

	health, telemetry := harness.FreePort(t), harness.FreePort(t)
	harness.StartCollector(t, harness.Options{
		Name:       "default-config",
		ConfigPath: cfg,
		HealthPort: health,
		Env: []string{
			fmt.Sprintf("LLMOPS_OTLP_GRPC_ENDPOINT=127.0.0.1:%d", harness.FreePort(t)),
			fmt.Sprintf("LLMOPS_OTLP_HTTP_ENDPOINT=127.0.0.1:%d", harness.FreePort(t)),
			fmt.Sprintf("LLMOPS_HEALTH_ENDPOINT=127.0.0.1:%d", health),
			fmt.Sprintf("LLMOPS_TELEMETRY_PORT=%d", telemetry),
			"LLMOPS_STATE_DIR=" + t.TempDir(),
			"LLMOPS_PROFILE_DIR=" + t.TempDir(),
		},
	})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", telemetry), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("own telemetry not served on loopback: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("own telemetry endpoint: %s", resp.Status)
	}
}

// TestExampleConfigsValidate keeps the documented example configurations
// loadable by the binary they are written for.
func TestExampleConfigsValidate(t *testing.T) {
	matches, err := filepath.Glob(filepath.Join(harness.RepoRoot(t), "distro", "examples", "*.yaml"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no example configurations found: %v", err)
	}
	for _, path := range matches {
		t.Run(filepath.Base(path), func(t *testing.T) {
			args := []string{"validate", "--config", path}
			// Most examples are overlays of the shipped configuration
			// (their headers say so), not configurations of their own.
			if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), "An overlay of the shipped configuration") {
				args = []string{"validate", "--config", filepath.Join(harness.RepoRoot(t), "distro", "config.yaml"), "--config", path}
			}
			cmd := exec.CommandContext(t.Context(), harness.Binary(t), args...)
			cmd.Env = append(os.Environ(), "K8S_NODE_NAME=gpu-node-7", "LLMOPS_PROMETHEUS_REMOTE_WRITE_URL=http://127.0.0.1:9090/api/v1/write",
				"LLMOPS_OTLP_BACKEND=127.0.0.1:4317", "LLMOPS_ALERTMANAGER_URL=http://127.0.0.1:9093")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}

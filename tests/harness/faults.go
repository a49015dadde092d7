// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
)

// Helpers for the fault-injection tests (tests/e2e/faults_test.go).

// Pid is the operating-system process id of the running collector, for
// sampling its memory in /proc/<pid>/status.
func (c *Collector) Pid() int { return c.cmd.Process.Pid }

// RestartableBackend is a Backend that can be stopped and started again on
// the same ports, keeping what it wrote before: its file exporters append
// instead of truncating on start.
type RestartableBackend struct {
	*Backend
	cfg        string
	healthPort int
	starts     int
	t          testing.TB
}

// StartRestartableBackend starts a backend whose Stop and Start can be
// called repeatedly during the test; Metrics, Logs and Traces return
// everything written across all its runs.
func StartRestartableBackend(t testing.TB) *RestartableBackend {
	t.Helper()
	dir := t.TempDir()
	grpcPort, httpPort, healthPort := FreePort(t), FreePort(t), FreePort(t)
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%[1]d
      http:
        endpoint: 127.0.0.1:%[2]d
exporters:
  file/metrics:
    path: %[4]s
    flush_interval: 100ms
    append: true
  file/traces:
    path: %[5]s
    flush_interval: 100ms
    append: true
  file/logs:
    path: %[6]s
    flush_interval: 100ms
    append: true
extensions:
  health_check:
    endpoint: 127.0.0.1:%[3]d
service:
  extensions: [health_check]
  telemetry:
    metrics:
      level: none
  pipelines:
    metrics:
      receivers: [otlp]
      exporters: [file/metrics]
    traces:
      receivers: [otlp]
      exporters: [file/traces]
    logs:
      receivers: [otlp]
      exporters: [file/logs]
`, grpcPort, httpPort, healthPort,
		filepath.Join(dir, "metrics.jsonl"), filepath.Join(dir, "traces.jsonl"), filepath.Join(dir, "logs.jsonl"))
	b := &RestartableBackend{
		Backend: &Backend{
			GRPCEndpoint: fmt.Sprintf("127.0.0.1:%d", grpcPort),
			HTTPEndpoint: fmt.Sprintf("http://127.0.0.1:%d", httpPort),
			dir:          dir,
		},
		cfg: cfg, healthPort: healthPort, t: t,
	}
	b.Start()
	return b
}

// Start starts the backend (again) on its ports and waits until it is
// ready. Each run is stopped when the test ends, if it still runs.
func (b *RestartableBackend) Start() {
	b.t.Helper()
	b.starts++
	b.Collector = StartCollector(b.t, Options{
		Name: fmt.Sprintf("backend-%d", b.starts), Config: b.cfg, HealthPort: b.healthPort,
	})
}

// Stop shuts the current run down gracefully (SIGTERM) and waits for it.
func (b *RestartableBackend) Stop() {
	b.t.Helper()
	b.Collector.Stop(b.t)
}

// Kill ends the collector with SIGKILL, as the kernel's OOM killer or a
// node's crash would: no shutdown, nothing flushed. It waits until the
// process is gone; the test's cleanup then has nothing left to stop.
func (c *Collector) Kill(t testing.TB) {
	t.Helper()
	c.stopOnce.Do(func() {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.exited
	})
}

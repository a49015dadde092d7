// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package configcheck

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// TestShippedConfigsDurable: distro/config.yaml, the demo's configuration,
// and each example (an overlay merged after distro/config.yaml, as its
// header says, or a configuration of its own).
func TestShippedConfigsDurable(t *testing.T) {
	root := repoRoot(t)
	base, err := Load(filepath.Join(root, "distro", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	configs := map[string]Config{"distro/config.yaml": base}
	demo, err := Load(filepath.Join(root, "distro", "demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	configs["distro/demo.yaml"] = demo
	examples, err := filepath.Glob(filepath.Join(root, "distro", "examples", "*.yaml"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples in distro/examples: %v", err)
	}
	overlays := 0
	for _, path := range examples {
		c, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		name := "distro/examples/" + filepath.Base(path)
		if strings.Contains(string(b), "An overlay of the shipped configuration") {
			c = Merge(base, c)
			name = "distro/config.yaml + " + name
			overlays++
		}
		configs[name] = c
	}
	if overlays < 4 {
		t.Errorf("%d overlays in distro/examples, want at least the four backends (otlp-backend, alertmanager, prometheus-remote-write, prometheus-scrape)", overlays)
	}
	queuedSeen := 0
	for name, c := range configs {
		for _, p := range Durable(c) {
			t.Errorf("%s: %s", name, p)
		}
		exporters, _ := c["exporters"].(map[string]any)
		for id := range exporters {
			typ, _, _ := strings.Cut(id, "/")
			if queued[typ] || typ == "prometheus_remote_write" {
				queuedSeen++
			}
		}
	}
	if queuedSeen < 3 {
		t.Errorf("only %d network exporters in the shipped configurations: the check would pass on nothing", queuedSeen)
	}
}

// TestDurableRefuses: each way to be not durable is caught.
func TestDurableRefuses(t *testing.T) {
	good := `
exporters:
  otlp_grpc/backend:
    endpoint: x:4317
    sending_queue: {storage: file_storage, sizer: bytes, queue_size: 1048576}
    retry_on_failure: {enabled: true}
service:
  pipelines:
    traces:
      processors: [memory_limiter]
      exporters: [otlp_grpc/backend]
`
	if p := Durable(parse(t, good)); len(p) != 0 {
		t.Fatalf("a durable configuration was refused: %v", p)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"no queue", `
exporters:
  otlp_http: {endpoint: http://x, retry_on_failure: {enabled: true}}
`, "no sending_queue"},
		{"in memory", `
exporters:
  otlp_grpc: {sending_queue: {sizer: bytes, queue_size: 10}, retry_on_failure: {}}
`, "want file_storage"},
		{"sized in requests", `
exporters:
  alertwebhook: {sending_queue: {storage: file_storage, queue_size: 1000}, retry_on_failure: {}}
`, "want bytes"},
		{"disabled", `
exporters:
  otlp_grpc: {sending_queue: {enabled: false, storage: file_storage, sizer: bytes, queue_size: 10}, retry_on_failure: {}}
`, "sending_queue.enabled is false"},
		{"no retry", `
exporters:
  otlp_grpc: {sending_queue: {storage: file_storage, sizer: bytes, queue_size: 10}, retry_on_failure: {enabled: false}}
`, "retry_on_failure.enabled is false"},
		{"batch in front", good + `
    logs:
      processors: [batch]
      exporters: [otlp_grpc/backend, debug]
`, "processor batch holds acknowledged data"},
		{"remote write queue in memory", `
exporters:
  prometheus_remote_write: {wal: {directory: /s}, retry_on_failure: {}}
`, "remote_write_queue.enabled must be false"},
		{"remote write without wal", `
exporters:
  prometheus_remote_write: {remote_write_queue: {enabled: false}, retry_on_failure: {}}
`, "no wal"},
		{"unknown exporter", `
exporters:
  kafka: {}
`, "neither known"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Durable(parse(t, tc.yaml))
			if !strings.Contains(strings.Join(p, "\n"), tc.want) {
				t.Errorf("problems %q, want one containing %q", p, tc.want)
			}
		})
	}
}

func TestMergeReplacesLists(t *testing.T) {
	m := Merge(parse(t, "a: {b: [1, 2], c: 1}\nd: x"), parse(t, "a: {b: [3]}\ne: y"))
	a := m["a"].(map[string]any)
	if b := a["b"].([]any); len(b) != 1 || a["c"] != 1 || m["d"] != "x" || m["e"] != "y" {
		t.Errorf("merged %v", m)
	}
}

func parse(t *testing.T, s string) Config {
	t.Helper()
	var c Config
	if err := yaml.Unmarshal([]byte(s), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

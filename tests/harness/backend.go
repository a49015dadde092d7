// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Backend is a real OTLP backend for end-to-end tests: a second instance of
// the distro binary with an otlp receiver and one file exporter per signal.
// What the collector under test exports is read back from those files.
type Backend struct {
	*Collector
	// GRPCEndpoint is host:port of the backend's OTLP/gRPC receiver.
	GRPCEndpoint string
	// HTTPEndpoint is the base URL of the backend's OTLP/HTTP receiver.
	HTTPEndpoint string

	dir string
}

// StartBackend starts the backend collector and waits until it is ready.
func StartBackend(t testing.TB) *Backend {
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
  file/traces:
    path: %[5]s
    flush_interval: 100ms
  file/logs:
    path: %[6]s
    flush_interval: 100ms
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
	c := StartCollector(t, Options{Name: "backend", Config: cfg, HealthPort: healthPort})
	return &Backend{
		Collector:    c,
		GRPCEndpoint: fmt.Sprintf("127.0.0.1:%d", grpcPort),
		HTTPEndpoint: fmt.Sprintf("http://127.0.0.1:%d", httpPort),
		dir:          dir,
	}
}

// Metrics returns everything the backend has written so far, merged in
// arrival order.
func (b *Backend) Metrics(t testing.TB) pmetric.Metrics {
	t.Helper()
	out := pmetric.NewMetrics()
	var u pmetric.JSONUnmarshaler
	b.eachLine(t, "metrics.jsonl", func(line []byte) error {
		m, err := u.UnmarshalMetrics(line)
		if err != nil {
			return err
		}
		m.ResourceMetrics().MoveAndAppendTo(out.ResourceMetrics())
		return nil
	})
	return out
}

// Traces returns every span the backend has written so far.
func (b *Backend) Traces(t testing.TB) ptrace.Traces {
	t.Helper()
	out := ptrace.NewTraces()
	var u ptrace.JSONUnmarshaler
	b.eachLine(t, "traces.jsonl", func(line []byte) error {
		tr, err := u.UnmarshalTraces(line)
		if err != nil {
			return err
		}
		tr.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
		return nil
	})
	return out
}

// Logs returns every log record the backend has written so far.
func (b *Backend) Logs(t testing.TB) plog.Logs {
	t.Helper()
	out := plog.NewLogs()
	var u plog.JSONUnmarshaler
	b.eachLine(t, "logs.jsonl", func(line []byte) error {
		l, err := u.UnmarshalLogs(line)
		if err != nil {
			return err
		}
		l.ResourceLogs().MoveAndAppendTo(out.ResourceLogs())
		return nil
	})
	return out
}

func (b *Backend) eachLine(t testing.TB, name string, fn func([]byte) error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(b.dir, name))
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		// The exporter may be mid-write: a last line without its newline is
		// picked up on the next read.
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := fn(line); err != nil {
			if n == lineCount(data) && !bytes.HasSuffix(data, []byte("\n")) {
				return
			}
			t.Fatalf("%s line %d: %v", name, n, err)
		}
	}
}

func lineCount(data []byte) int {
	n := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		n++
	}
	return n
}

// Eventually polls cond every 100ms until it returns true or timeout passes,
// then fails the test with the message of cond's last call.
func Eventually(t testing.TB, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s: %s", timeout, msg)
		}
		<-tick.C
	}
}

// AgentConfig is the configuration of an agent under test: sections is the
// YAML of its receivers, processors, connectors and exporters (top-level
// keys), pipelines the body of service.pipelines (indented by four
// spaces); health_check listens on healthPort and the collector's own
// metrics are off.
func AgentConfig(sections, pipelines string, healthPort int) string {
	return fmt.Sprintf(`
%s
extensions:
  health_check:
    endpoint: 127.0.0.1:%d
service:
  extensions: [health_check]
  telemetry:
    metrics:
      level: none
  pipelines:
%s
`, strings.Trim(sections, "\n"), healthPort, strings.TrimRight(pipelines, "\n"))
}

// OTLPExporter is the exporters section of an agent sending to the backend
// over OTLP gRPC, as the exporter otlp.
func (b *Backend) OTLPExporter() string {
	return fmt.Sprintf(`exporters:
  otlp:
    endpoint: %s
    tls:
      insecure: true
`, b.GRPCEndpoint)
}

// MetricsAgentConfig is the configuration of an agent under test whose
// metrics pipeline runs receivers (receiversYAML is the body of the
// `receivers:` section, indented by two spaces; names lists the pipeline's
// receivers) and exports to the backend over OTLP, with health_check on
// healthPort.
func (b *Backend) MetricsAgentConfig(receiversYAML string, names []string, healthPort int) string {
	return AgentConfig("receivers:\n"+strings.TrimRight(receiversYAML, "\n")+"\n"+b.OTLPExporter(),
		"    metrics:\n      receivers: ["+strings.Join(names, ", ")+"]\n      exporters: [otlp]\n", healthPort)
}

// MetricsAgentConfigWithProcessors is MetricsAgentConfig with processors
// (processorsYAML is the body of `processors:`; names their pipeline order).
func (b *Backend) MetricsAgentConfigWithProcessors(receiversYAML string, receivers []string, processorsYAML string, processors []string, healthPort int) string {
	cfg := b.MetricsAgentConfig(receiversYAML, receivers, healthPort)
	cfg = strings.Replace(cfg, "\nexporters:\n", "\nprocessors:\n"+strings.TrimRight(processorsYAML, "\n")+"\nexporters:\n", 1)
	return strings.Replace(cfg, "      exporters: [otlp]\n", "      processors: ["+strings.Join(processors, ", ")+"]\n      exporters: [otlp]\n", 1)
}

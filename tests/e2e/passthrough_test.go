// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

// End-to-end tests of the built distro binary. Run with `make test`, which
// builds the binary first, or `go test -tags e2e ./tests/e2e/` after `make build`.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// agentConfig is a minimal node-agent pipeline: OTLP in, OTLP out to the
// backend, with extraProcessors (a YAML list body) between them.
func agentConfig(grpcPort, httpPort, healthPort int, backend string, processors string) string {
	pipelineProcessors := ""
	processorsSection := ""
	if processors != "" {
		processorsSection = "processors:\n" + processors
		pipelineProcessors = "      processors: [transform]\n"
	}
	return fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d
%s
exporters:
  otlp:
    endpoint: %s
    tls:
      insecure: true
extensions:
  health_check:
    endpoint: 127.0.0.1:%d
service:
  extensions: [health_check]
  telemetry:
    metrics:
      level: none
  pipelines:
    metrics:
      receivers: [otlp]
%s      exporters: [otlp]
    traces:
      receivers: [otlp]
      exporters: [otlp]
    logs:
      receivers: [otlp]
      exporters: [otlp]
`, grpcPort, httpPort, processorsSection, backend, healthPort, pipelineProcessors)
}

type agent struct {
	*harness.Collector
	grpc string
	http string
}

func startAgent(t *testing.T, backend *harness.Backend, processors string) agent {
	grpcPort, httpPort, healthPort := harness.FreePort(t), harness.FreePort(t), harness.FreePort(t)
	c := harness.StartCollector(t, harness.Options{
		Name:       "agent",
		Config:     agentConfig(grpcPort, httpPort, healthPort, backend.GRPCEndpoint, processors),
		HealthPort: healthPort,
	})
	return agent{Collector: c, grpc: fmt.Sprintf("127.0.0.1:%d", grpcPort), http: fmt.Sprintf("http://127.0.0.1:%d", httpPort)}
}

func dial(t *testing.T, endpoint string) *grpc.ClientConn {
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// postOTLP sends a protobuf OTLP/HTTP request, as SDKs do by default.
func postOTLP(t *testing.T, url string, body []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", url, resp.Status)
	}
}

// TestOTLPPassesThroughUnchanged sends metrics (gRPC), traces (HTTP) and logs
// (gRPC) into the agent and checks that exactly the same data reaches a real
// OTLP backend.
func TestOTLPPassesThroughUnchanged(t *testing.T) {
	backend := harness.StartBackend(t)
	a := startAgent(t, backend, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	wantMetrics, wantTraces, wantLogs := sampleMetrics(), sampleTraces(), sampleLogs()
	conn := dial(t, a.grpc)
	if _, err := pmetricotlp.NewGRPCClient(conn).Export(ctx, pmetricotlp.NewExportRequestFromMetrics(cloneMetrics(wantMetrics))); err != nil {
		t.Fatalf("exporting metrics: %v", err)
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(wantTraces).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	postOTLP(t, a.http+"/v1/traces", body)
	if _, err := plogotlp.NewGRPCClient(conn).Export(ctx, plogotlp.NewExportRequestFromLogs(wantLogs)); err != nil {
		t.Fatalf("exporting logs: %v", err)
	}

	harness.Eventually(t, 30*time.Second, func() (bool, string) {
		m, tr, l := backend.Metrics(t), backend.Traces(t), backend.Logs(t)
		got := fmt.Sprintf("backend has %d data points, %d spans, %d log records; want %d, %d, %d",
			m.DataPointCount(), tr.SpanCount(), l.LogRecordCount(),
			wantMetrics.DataPointCount(), wantTraces.SpanCount(), wantLogs.LogRecordCount())
		return m.DataPointCount() >= wantMetrics.DataPointCount() &&
			tr.SpanCount() >= wantTraces.SpanCount() &&
			l.LogRecordCount() >= wantLogs.LogRecordCount(), got
	})

	if err := pmetrictest.CompareMetrics(wantMetrics, backend.Metrics(t)); err != nil {
		t.Errorf("metrics changed on the way: %v", err)
	}
	if err := ptracetest.CompareTraces(wantTraces, backend.Traces(t)); err != nil {
		t.Errorf("traces changed on the way: %v", err)
	}
	if err := plogtest.CompareLogs(wantLogs, backend.Logs(t)); err != nil {
		t.Errorf("logs changed on the way: %v", err)
	}
}

// TestComparisonCatchesAlteredData proves the pass-through check can fail:
// an agent that rewrites one attribute must be caught.
func TestComparisonCatchesAlteredData(t *testing.T) {
	backend := harness.StartBackend(t)
	a := startAgent(t, backend, `  transform:
    metric_statements:
      - context: datapoint
        statements:
          - set(attributes["hw.id"], "GPU-tampered") where attributes["hw.id"] == "GPU-3f2c9a7e-0000-0000-0000-000000000001"
`)
	want := sampleMetrics()
	conn := dial(t, a.grpc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := pmetricotlp.NewGRPCClient(conn).Export(ctx, pmetricotlp.NewExportRequestFromMetrics(cloneMetrics(want))); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() (bool, string) {
		n := backend.Metrics(t).DataPointCount()
		return n >= want.DataPointCount(), fmt.Sprintf("%d data points at the backend", n)
	})
	if err := pmetrictest.CompareMetrics(want, backend.Metrics(t)); err == nil {
		t.Fatal("an altered attribute went unnoticed by the comparison")
	}
}

func cloneMetrics(m pmetric.Metrics) pmetric.Metrics {
	out := pmetric.NewMetrics()
	m.CopyTo(out)
	return out
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// TestProfileImportThroughBinary imports a real Kineto trace with the built
// binary, restarts the collector with the same file_storage, and checks
// the backend got the trace once and a file added while it was down.
func TestProfileImportThroughBinary(t *testing.T) {
	backend := harness.StartBackend(t)
	watch, state := t.TempDir(), t.TempDir()
	fixtures := filepath.Join(harness.RepoRoot(t), "..", "shared", "fixtures", "traces")
	if _, err := os.Stat(fixtures); err != nil {
		t.Skipf("shared fixtures not available: %v", err)
	}
	copyTrace := func(name, as string) {
		data, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(watch, as+".tmp")
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(watch, as)); err != nil {
			t.Fatal(err)
		}
	}
	config := func(health int) string {
		return fmt.Sprintf(`
receivers:
  profileimport:
    include: [%s/*.json.gz]
    poll_interval: 100ms
    settle_time: 200ms
    storage: file_storage
exporters:
  otlp:
    endpoint: %s
    tls:
      insecure: true
extensions:
  health_check:
    endpoint: 127.0.0.1:%d
  file_storage:
    directory: %s
service:
  extensions: [health_check, file_storage]
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [profileimport]
      exporters: [otlp]
    metrics:
      receivers: [profileimport]
      exporters: [otlp]
    logs:
      receivers: [profileimport]
      exporters: [otlp]
`, watch, backend.GRPCEndpoint, health, state)
	}

	copyTrace("hta-simple_add.json.gz", "rank0.pt.trace.json.gz")
	health := harness.FreePort(t)
	first := harness.StartCollector(t, harness.Options{Name: "agent", Config: config(health), HealthPort: health})
	var spans int
	harness.Eventually(t, 60*time.Second, func() (bool, string) {
		spans = backend.Traces(t).SpanCount()
		return spans > 0, fmt.Sprintf("%d spans", spans)
	})
	time.Sleep(500 * time.Millisecond) // several polls: it must not import again
	if n := backend.Traces(t).SpanCount(); n != spans {
		t.Fatalf("spans grew from %d to %d without a new file", spans, n)
	}
	first.Stop(t)

	copyTrace("tracelens-sglang_qwen3_decode.json.gz", "rank1.pt.trace.json.gz")
	health2 := harness.FreePort(t)
	harness.StartCollector(t, harness.Options{Name: "agent-restarted", Config: config(health2), HealthPort: health2})
	firstSpans := spans
	harness.Eventually(t, 60*time.Second, func() (bool, string) {
		n := traceIDs(backend.Traces(t))
		return n == 2, fmt.Sprintf("%d traces at the backend, want 2 (one per file)", n)
	})
	time.Sleep(500 * time.Millisecond)
	td := backend.Traces(t)
	if n := traceIDs(td); n != 2 {
		t.Fatalf("%d traces after the restart", n)
	}
	// Nothing of the first file came twice: its spans are still counted once.
	if perTrace := spansOf(td); perTrace[firstTrace(t, perTrace, firstSpans)] != firstSpans {
		t.Fatalf("the first file's spans changed after the restart: %v (was %d)", perTrace, firstSpans)
	}
}

func traceIDs(td ptrace.Traces) int { return len(spansOf(td)) }

func spansOf(td ptrace.Traces) map[pcommon.TraceID]int {
	out := map[pcommon.TraceID]int{}
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			for k := 0; k < sss.At(j).Spans().Len(); k++ {
				out[sss.At(j).Spans().At(k).TraceID()]++
			}
		}
	}
	return out
}

// firstTrace finds the trace of the first import by its span count.
func firstTrace(t *testing.T, perTrace map[pcommon.TraceID]int, spans int) pcommon.TraceID {
	for id, n := range perTrace {
		if n == spans {
			return id
		}
	}
	t.Fatalf("no trace has the first import's %d spans (re-imported?): %v", spans, perTrace)
	return pcommon.TraceID{}
}

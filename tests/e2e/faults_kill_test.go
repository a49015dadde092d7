// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// The agent killed (issue 18 §2): SIGKILL, then a start on the same state
// directory, with the shipped configuration and its OTLP overlay
// (distro/config.yaml + distro/examples/otlp-backend.yaml) exactly as a
// user runs them.

// shippedAgent is the ports and state of one agent on the shipped
// configuration; start runs it (again) with them.
type shippedAgent struct {
	grpcPort, httpPort, healthPort, telemetryPort int
	stateDir, profileDir                          string
	backend                                       string
	overlays                                      []string
	runs                                          int
}

func newShippedAgent(t *testing.T, backend string, overlays ...string) *shippedAgent {
	return &shippedAgent{
		grpcPort: harness.FreePort(t), httpPort: harness.FreePort(t), healthPort: harness.FreePort(t), telemetryPort: harness.FreePort(t),
		stateDir: t.TempDir(), profileDir: t.TempDir(), backend: backend, overlays: overlays,
	}
}

func (a *shippedAgent) start(t *testing.T) *harness.Collector {
	t.Helper()
	a.runs++
	root := harness.RepoRoot(t)
	args := []string{"--config", filepath.Join(root, "distro", "examples", "otlp-backend.yaml")}
	for _, o := range a.overlays {
		args = append(args, "--config", o)
	}
	return harness.StartCollector(t, harness.Options{
		Name:       fmt.Sprintf("agent-%d", a.runs),
		ConfigPath: filepath.Join(root, "distro", "config.yaml"),
		Args:       args,
		HealthPort: a.healthPort,
		Env: []string{
			fmt.Sprintf("LLMOPS_OTLP_GRPC_ENDPOINT=127.0.0.1:%d", a.grpcPort),
			fmt.Sprintf("LLMOPS_OTLP_HTTP_ENDPOINT=127.0.0.1:%d", a.httpPort),
			fmt.Sprintf("LLMOPS_HEALTH_ENDPOINT=127.0.0.1:%d", a.healthPort),
			fmt.Sprintf("LLMOPS_TELEMETRY_PORT=%d", a.telemetryPort),
			"LLMOPS_STATE_DIR=" + a.stateDir,
			"LLMOPS_PROFILE_DIR=" + a.profileDir,
			"LLMOPS_OTLP_BACKEND=" + a.backend,
			"LLMOPS_OTLP_BACKEND_INSECURE=true",
			// Nothing else to watch: no GPU library, no engine.
			"LLMOPS_NVML_LIBRARY=" + filepath.Join(a.stateDir, "no-libnvidia-ml.so.1"),
			fmt.Sprintf("LLMOPS_ENGINE_ENDPOINT=http://127.0.0.1:%d/metrics", harness.FreePort(t)),
		},
	})
}

// agentTelemetry is one scrape of an agent's own metrics endpoint, as
// lines of the Prometheus text format.
type agentTelemetry []string

func scrapeTelemetry(port int) (agentTelemetry, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", port), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }() // read only: a failed close loses nothing
	var lines agentTelemetry
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}

// sum adds up the series whose name is name (with or without _total) and
// whose labels contain every one of labels, and says how many there were.
func (tel agentTelemetry) sum(name string, labels ...string) (float64, int) {
	sum, n := 0.0, 0
next:
	for _, line := range tel {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+"_total{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue next
			}
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			sum += v
			n++
		}
	}
	return sum, n
}

// telemetry scrapes the agent once and sums one metric (agentTelemetry.sum).
func telemetry(port int, name string, labels ...string) (float64, error) {
	tel, err := scrapeTelemetry(port)
	if err != nil {
		return 0, err
	}
	v, _ := tel.sum(name, labels...)
	return v, nil
}

// xidMetrics is one GPU's error counter as the nvml receiver reports it:
// hw.errors of type xid for code 79 (fallen off the bus).
func xidMetrics(at time.Time, count int64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "otelcol-llmops")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	mem := ms.AppendEmpty()
	mem.SetName(spec.HwGpuMemoryUsage)
	mem.SetUnit("By")
	dp := mem.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(at))
	dp.SetIntValue(1 << 30)
	dp.Attributes().PutStr(spec.AttrHwID, faultGPU)
	errs := ms.AppendEmpty()
	errs.SetName(spec.HwErrors)
	errs.SetUnit("{error}")
	sum := errs.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	p := sum.DataPoints().AppendEmpty()
	p.SetTimestamp(pcommon.NewTimestampFromTime(at))
	p.SetIntValue(count)
	p.Attributes().PutStr(spec.AttrHwID, faultGPU)
	p.Attributes().PutStr(spec.AttrErrorType, "xid")
	p.Attributes().PutInt(spec.AttrHwGpuXid, 79)
	return md
}

const faultGPU = "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000b0000"

// incidentsAt counts the backend's incident records about faultGPU by kind.
func incidentsAt(ld plog.Logs, kind string) int {
	n := 0
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		sls := ld.ResourceLogs().At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				a := lrs.At(k).Attributes()
				kv, _ := a.Get(spec.IncidentKind)
				hv, _ := a.Get(spec.AttrHwID)
				if kv.Str() == kind && hv.Str() == faultGPU {
					n++
				}
			}
		}
	}
	return n
}

// killDupBound bounds the points the backend may get twice after a kill:
// what was in flight to it when it went down, and what the restarted agent
// sends again from its queue because the killed one never heard that it
// was delivered. The exporter batches after its queue and sends one batch
// at a time (the sending_queue's batch: one consumer), a batch being the
// points of one flush_timeout (1s) at this sender's 20 a second: at most
// two such batches.
const killDupBound = 2 * int(time.Second/faultPace)

// TestFaultAgentKilled: numbered points flow into the agent; the backend
// goes down; an XID fault raises an incident; the agent is killed with
// SIGKILL and started again on the same state directory; the backend comes
// back. Every point the agent acknowledged to the sender, and the incident
// raised before the kill, must reach the backend.
func TestFaultAgentKilled(t *testing.T) {
	start := time.Now()
	backend := harness.StartRestartableBackend(t)
	a := newShippedAgent(t, backend.GRPCEndpoint)
	agent := a.start(t)
	endpoint := fmt.Sprintf("127.0.0.1:%d", a.grpcPort)
	sender := startPacedSender(t, endpoint)
	harness.Eventually(t, 60*time.Second, func() (bool, string) {
		n := len(seqCounts(backend.Metrics(t)))
		return n >= 20, fmt.Sprintf("%d points at the backend before the fault", n)
	})

	backend.Stop()
	// The scripted fault: GPU faultGPU's XID counter goes 0 → 1.
	client := pmetricotlp.NewGRPCClient(dial(t, endpoint))
	now := time.Now()
	for i, md := range []pmetric.Metrics{xidMetrics(now.Add(-2*time.Second), 0), xidMetrics(now, 1)} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := client.Export(ctx, pmetricotlp.NewExportRequestFromMetrics(md))
		cancel()
		if err != nil {
			t.Fatalf("the agent refused XID batch %d: %v", i, err)
		}
	}
	// The incident is in the logs exporter's persistent queue once it
	// has fired and that queue is not empty.
	harness.Eventually(t, 30*time.Second, func() (bool, string) {
		fired, err := telemetry(a.telemetryPort, "otelcol_rootcause_incidents_fired")
		if err != nil {
			return false, err.Error()
		}
		queued, err := telemetry(a.telemetryPort, "otelcol_exporter_queue_size", `data_type="logs"`)
		if err != nil {
			return false, err.Error()
		}
		return fired >= 1 && queued > 0, fmt.Sprintf("incidents fired %g, logs queue %g bytes", fired, queued)
	})
	// Points keep coming for a few seconds with the backend down: they
	// are only on the agent's disk when it is killed.
	queuedAt := sender.count()
	harness.Eventually(t, 30*time.Second, func() (bool, string) {
		n := sender.count() - queuedAt
		return n >= 60, fmt.Sprintf("%d points accepted with the backend down", n)
	})

	agent.Kill(t)
	sender.mu.Lock()
	ackedBeforeKill := append([]int64(nil), sender.accepted...)
	sender.mu.Unlock()
	killedAt := time.Now()
	a.start(t) // the harness stops the restarted agent at cleanup
	restarted := time.Since(killedAt)
	backend.Start()
	harness.Eventually(t, 60*time.Second, func() (bool, string) {
		n := sender.count() - len(ackedBeforeKill)
		return n >= 40, fmt.Sprintf("%d points accepted by the restarted agent", n)
	})
	sender.Stop()
	sender.mu.Lock()
	accepted := append([]int64(nil), sender.accepted...)
	refusedDuringKill := len(sender.refused)
	sender.mu.Unlock()

	var counts map[int64]int
	harness.Eventually(t, 120*time.Second, func() (bool, string) {
		counts = seqCounts(backend.Metrics(t))
		missing, first := 0, int64(-1)
		for _, seq := range accepted {
			if counts[seq] == 0 {
				missing++
				if first < 0 {
					first = seq
				}
			}
		}
		return missing == 0, fmt.Sprintf("%d of %d acknowledged points missing at the backend (first: seq %d; %d acknowledged before the kill)", missing, len(accepted), first, len(ackedBeforeKill))
	})
	harness.Eventually(t, 60*time.Second, func() (bool, string) {
		n := incidentsAt(backend.Logs(t), "xid_error")
		return n >= 1, fmt.Sprintf("the XID incident raised before the kill reached the backend %d times", n)
	})
	dups := 0
	for _, n := range counts {
		dups += max(n-1, 0)
	}
	t.Logf("%d points acknowledged (%d before the kill); the sender was refused %d while the agent was down (%s to restart); all delivered; duplicates %d (bound %d); test ran %s",
		len(accepted), len(ackedBeforeKill), refusedDuringKill, restarted.Round(time.Millisecond), dups, killDupBound, time.Since(start).Round(time.Second))
	if dups > killDupBound {
		t.Errorf("%d duplicate points at the backend, more than the bound of %d", dups, killDupBound)
	}
}

var importedSpans = regexp.MustCompile(`profile imported.*"spans": (\d+)`)

// TestFaultImportKilled: a large PyTorch profiler trace is being imported
// while the backend is down and the traces queue (made small here) has
// filled, so the import has handed over part of its spans and waits; the
// agent is killed and started again on the same state directory, and the
// backend comes back. The trace must arrive exactly once: every span, none
// twice.
func TestFaultImportKilled(t *testing.T) {
	const trace = "hta-df_index_resolver.json.gz" // 53 MB of JSON, the largest fixture
	src := testutil.SharedFixture(t, filepath.Join(harness.RepoRoot(t), "..", "shared", "fixtures", "traces"), trace)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	backend := harness.StartRestartableBackend(t)
	backend.Stop()
	small := filepath.Join(t.TempDir(), "small-queue.yaml")
	// 8 MiB of spans on disk: a part of this trace's.
	if err := os.WriteFile(small, []byte("exporters:\n  otlp_grpc/backend:\n    sending_queue:\n      queue_size: 8388608\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newShippedAgent(t, backend.GRPCEndpoint, small)
	agent := a.start(t)
	tmp := filepath.Join(a.profileDir, trace+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(a.profileDir, trace)); err != nil {
		t.Fatal(err)
	}
	// Part of the trace accepted, the rest refused by the full queue.
	harness.Eventually(t, 180*time.Second, func() (bool, string) {
		// (The profile importer has no receiver obsreport counts yet:
		// what it handed over is what the traces queue holds.)
		accepted, err := telemetry(a.telemetryPort, "otelcol_exporter_queue_size", `data_type="traces"`)
		if err != nil {
			return false, err.Error()
		}
		refused, err := telemetry(a.telemetryPort, "otelcol_exporter_enqueue_failed_spans")
		if err != nil {
			return false, err.Error()
		}
		return accepted > 0 && refused > 0, fmt.Sprintf("traces queue %g bytes, spans refused by the full queue %g", accepted, refused)
	})
	if strings.Contains(agent.Log(), "profile imported") {
		t.Fatal("the profile was imported whole before the kill: the queue did not fill, and the test proves nothing")
	}
	agent.Kill(t)
	backend.Start()
	agent = a.start(t)

	var total int
	harness.Eventually(t, 300*time.Second, func() (bool, string) {
		m := importedSpans.FindStringSubmatch(agent.Log())
		if m == nil {
			return false, "the restarted agent has not finished the import"
		}
		total, _ = strconv.Atoi(m[1])
		return true, ""
	})
	var distinct, dups int
	harness.Eventually(t, 180*time.Second, func() (bool, string) {
		ids := map[pcommon.SpanID]int{}
		td := backend.Traces(t)
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			sss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				ss := sss.At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					ids[ss.At(k).SpanID()]++
				}
			}
		}
		distinct, dups = len(ids), 0
		for _, n := range ids {
			dups += n - 1
		}
		return distinct >= total, fmt.Sprintf("%d of the trace's %d spans at the backend (%d twice)", distinct, total, dups)
	})
	t.Logf("trace of %d spans imported across a SIGKILL: %d distinct at the backend, %d duplicates; test ran %s", total, distinct, dups, time.Since(start).Round(time.Second))
	if distinct != total || dups != 0 {
		t.Errorf("the backend has %d distinct spans (%d duplicates), want the trace's %d exactly once", distinct, dups, total)
	}
}

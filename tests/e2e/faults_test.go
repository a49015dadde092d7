// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"google.golang.org/grpc"
	// The otlp exporter compresses with gzip by default.
	_ "google.golang.org/grpc/encoding/gzip"

	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// Fault injection (issue 18 §2): a persistent sending queue on
// file_storage with endless retries, as every shipped backend exporter has,
// under a backend outage and a slow backend. The agent killed and the
// import killed, on the shipped configuration itself: faults_kill_test.go.

// faultOutage is how long the backend is down in TestFaultBackendOutage:
// the 60s under CI=true; otherwise FAULT_OUTAGE (a Go duration) or
// 20s, to keep local runs short.
func faultOutage(t *testing.T) time.Duration {
	if os.Getenv("CI") == "true" {
		return 60 * time.Second
	}
	if s := os.Getenv("FAULT_OUTAGE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("FAULT_OUTAGE=%q: %v", s, err)
		}
		return d
	}
	return 20 * time.Second
}

const (
	// faultPace is the sender's interval: one request, one point, each.
	faultPace = 50 * time.Millisecond
	// faultConsumers is the agent exporter's sending_queue num_consumers:
	// how many requests can be in flight to the backend at once.
	faultConsumers = 4
	// faultDupBound bounds the points the backend may receive twice. The
	// exporter delivers at least once: a request the backend has written
	// but whose answer the agent never got (in flight when the backend
	// went down, or timed out) is sent again. At most faultConsumers
	// requests are in flight at once, each of one point, and the backend
	// goes down once; so at most faultConsumers duplicates. Requests that
	// never reached the backend are not duplicates, and the queue itself
	// is not replayed (the agent does not restart).
	faultDupBound = faultConsumers * 1
)

// faultAgentConfig is an agent with a persistent queue and endless retries
// exporting metrics and logs to backend: shorter retry intervals than the
// shipped ones, so that the test waits less after the backend comes back,
// and the queue sized in requests and without batching, so that the test
// can count what is queued and in flight (one point per request).
func faultAgentConfig(grpcPort, healthPort, telemetryPort int, backend, storageDir string, queueSize int, timeout time.Duration) string {
	return fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
exporters:
  otlp:
    endpoint: %s
    tls:
      insecure: true
    timeout: %s
    sending_queue:
      enabled: true
      storage: file_storage
      queue_size: %d
      num_consumers: %d
    retry_on_failure:
      enabled: true
      initial_interval: 1s
      max_interval: 5s
      max_elapsed_time: 0s
extensions:
  health_check:
    endpoint: 127.0.0.1:%d
  file_storage:
    directory: %s
    create_directory: true
service:
  extensions: [health_check, file_storage]
  telemetry:
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %d
  pipelines:
    metrics:
      receivers: [otlp]
      exporters: [otlp]
    logs:
      receivers: [otlp]
      exporters: [otlp]
`, grpcPort, backend, timeout, queueSize, faultConsumers, healthPort, storageDir, telemetryPort)
}

// seqMetrics is one gauge point carrying seq.
func seqMetrics(seq int64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "fault-sender")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("fault.seq")
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	dp.SetIntValue(seq)
	dp.Attributes().PutInt("seq", seq)
	return md
}

// seqCounts counts how often the backend received each seq.
func seqCounts(md pmetric.Metrics) map[int64]int {
	out := map[int64]int{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if ms.At(k).Name() != "fault.seq" {
					continue
				}
				dps := ms.At(k).Gauge().DataPoints()
				for l := 0; l < dps.Len(); l++ {
					if v, ok := dps.At(l).Attributes().Get("seq"); ok {
						out[v.Int()]++
					}
				}
			}
		}
	}
	return out
}

// faultIncident is an incident-shaped log record, as rootcause emits them.
func faultIncident(id string) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "otelcol-llmops")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	now := time.Now()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(now))
	lr.SetSeverityNumber(plog.SeverityNumberError)
	lr.SetSeverityText("ERROR")
	lr.Body().SetStr("GPU memory of pid 41001 grows 120 MiB/min")
	a := lr.Attributes()
	a.PutStr("incident.id", id)
	a.PutStr("incident.kind", "gpu_memory_leak")
	a.PutStr("incident.state", "firing")
	a.PutStr("incident.severity", "critical")
	a.PutStr("incident.start_time", now.Add(-time.Minute).UTC().Format(time.RFC3339Nano))
	a.PutStr("hw.id", "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000a0000")
	a.PutInt("process.pid", 41001)
	return ld
}

// pacedSender sends one numbered point every faultPace until stopped.
type pacedSender struct {
	client   pmetricotlp.GRPCClient
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	accepted []int64
	refused  map[int64]error
}

func startPacedSender(t *testing.T, endpoint string) *pacedSender {
	s := &pacedSender{
		client: pmetricotlp.NewGRPCClient(dial(t, endpoint)),
		stop:   make(chan struct{}), done: make(chan struct{}), refused: map[int64]error{},
	}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(faultPace)
		defer tick.Stop()
		for seq := int64(1); ; seq++ {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := s.client.Export(ctx, pmetricotlp.NewExportRequestFromMetrics(seqMetrics(seq)))
			cancel()
			s.mu.Lock()
			if err != nil {
				s.refused[seq] = err
			} else {
				s.accepted = append(s.accepted, seq)
			}
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(s.Stop)
	return s
}

func (s *pacedSender) Stop() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

func (s *pacedSender) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.accepted)
}

// TestFaultBackendOutage: the backend is down for faultOutage while
// numbered points (one every 50ms) and an incident flow into the agent, then
// comes back on the same port. Every point the agent accepted and the
// incident must reach it, with at most faultDupBound duplicates.
func TestFaultBackendOutage(t *testing.T) {
	outage := faultOutage(t)
	start := time.Now()
	backend := harness.StartRestartableBackend(t)
	grpcPort, healthPort, telemetryPort := harness.FreePort(t), harness.FreePort(t), harness.FreePort(t)
	// Room for the whole outage and then some: 20 requests a second.
	queueSize := int(4*outage/faultPace) + 1000
	agent := harness.StartCollector(t, harness.Options{
		Name:       "agent",
		Config:     faultAgentConfig(grpcPort, healthPort, telemetryPort, backend.GRPCEndpoint, t.TempDir(), queueSize, 5*time.Second),
		HealthPort: healthPort,
	})
	endpoint := fmt.Sprintf("127.0.0.1:%d", grpcPort)
	sender := startPacedSender(t, endpoint)

	// Flowing end to end before the outage.
	harness.Eventually(t, 30*time.Second, func() (bool, string) {
		n := len(seqCounts(backend.Metrics(t)))
		return n >= 20, fmt.Sprintf("%d points at the backend before the outage", n)
	})

	backend.Stop()
	down := time.Now()
	sentBefore := sender.count()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := plogotlp.NewGRPCClient(dial(t, endpoint)).Export(ctx, plogotlp.NewExportRequestFromLogs(faultIncident("inc-fault-outage"))); err != nil {
		t.Fatalf("the agent refused the incident during the outage: %v", err)
	}
	// The outage's length is what the test is about, not a condition to
	// wait for; the agent must live through it.
	select {
	case <-agent.Exited():
		t.Fatal("the agent exited while the backend was down")
	case <-time.After(time.Until(down.Add(outage))):
	}
	backend.Start()
	back := time.Now()
	t.Logf("backend down for %s; %d points accepted by the agent meanwhile", back.Sub(down).Round(time.Millisecond), sender.count()-sentBefore)

	// Keep sending for a few seconds with the backend back, then stop and
	// wait for everything.
	harness.Eventually(t, 60*time.Second, func() (bool, string) {
		n := len(seqCounts(backend.Metrics(t)))
		return n > sentBefore+int(outage/faultPace)/2 && time.Since(back) > 5*time.Second,
			fmt.Sprintf("%d distinct points at the backend after it came back", n)
	})
	sender.Stop()
	sender.mu.Lock()
	accepted, refused := append([]int64(nil), sender.accepted...), len(sender.refused)
	for seq, err := range sender.refused {
		t.Errorf("the agent refused point %d: %v", seq, err)
		break
	}
	sender.mu.Unlock()
	if refused > 0 {
		t.Errorf("the agent refused %d of %d points", refused, refused+len(accepted))
	}

	var counts map[int64]int
	harness.Eventually(t, 90*time.Second, func() (bool, string) {
		counts = seqCounts(backend.Metrics(t))
		missing := 0
		first := int64(-1)
		for _, seq := range accepted {
			if counts[seq] == 0 {
				missing++
				if first < 0 {
					first = seq
				}
			}
		}
		return missing == 0, fmt.Sprintf("%d of %d accepted points missing at the backend (first: seq %d)", missing, len(accepted), first)
	})
	drained := time.Since(back)
	harness.Eventually(t, 30*time.Second, func() (bool, string) {
		n := 0
		ld := backend.Logs(t)
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					if v, ok := lrs.At(k).Attributes().Get("incident.id"); ok && v.Str() == "inc-fault-outage" {
						n++
					}
				}
			}
		}
		return n >= 1, fmt.Sprintf("incident received %d times", n)
	})

	dups, extra := 0, 0
	for seq, n := range counts {
		if n > 1 {
			dups += n - 1
		}
		if seq < 1 || seq > accepted[len(accepted)-1] {
			extra++
		}
	}
	t.Logf("%d points sent and delivered; duplicates: %d (bound %d); all delivered %s after the backend came back; test ran %s",
		len(accepted), dups, faultDupBound, drained.Round(time.Millisecond), time.Since(start).Round(time.Second))
	if dups > faultDupBound {
		t.Errorf("%d duplicate points at the backend, more than the bound of %d (one per request in flight)", dups, faultDupBound)
	}
	if extra > 0 {
		t.Errorf("%d points at the backend that were never sent", extra)
	}
}

// slowMetricsServer is an OTLP/gRPC backend that answers every request
// after faultSlowAnswer: the environment under test, not synchronisation.
type slowMetricsServer struct {
	pmetricotlp.UnimplementedGRPCServer
	delay    time.Duration
	mu       sync.Mutex
	answered int
}

func (s *slowMetricsServer) Export(ctx context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	select {
	case <-ctx.Done():
		return pmetricotlp.NewExportResponse(), ctx.Err()
	case <-time.After(s.delay):
	}
	s.mu.Lock()
	s.answered++
	s.mu.Unlock()
	return pmetricotlp.NewExportResponse(), nil
}

// procStatusKiB reads a field (VmRSS, RssAnon) of /proc/<pid>/status in KiB.
func procStatusKiB(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			return strconv.ParseInt(f[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// queueGauges scrapes the agent's own telemetry for the metrics exporter's
// otelcol_exporter_queue_size and _capacity.
func queueGauges(port int) (size, capacity float64, err error) {
	tel, err := scrapeTelemetry(port)
	if err != nil {
		return 0, 0, err
	}
	size, n := tel.sum("otelcol_exporter_queue_size", `data_type="metrics"`)
	capacity, m := tel.sum("otelcol_exporter_queue_capacity", `data_type="metrics"`)
	if n == 0 || m == 0 {
		return 0, 0, fmt.Errorf("otelcol_exporter_queue_size/capacity for metrics not in the agent's telemetry")
	}
	return size, capacity, nil
}

// TestFaultSlowBackend: the backend answers every request after 5s while a
// steady stream (20 requests of 100 points a second) flows into the agent
// for faultSlowRun. The agent's RSS, sampled every second, must level off
// and stay under an absolute cap, and the sending queue must never exceed
// its capacity: a full queue refuses data instead of growing.
func TestFaultSlowBackend(t *testing.T) {
	const (
		faultSlowRun    = 60 * time.Second
		faultSlowAnswer = 5 * time.Second
		window          = 20 * time.Second
		queueSize       = 1000 // requests (the shipped queues are sized in bytes)
		rssCapMiB       = 300
		growthFactor    = 1.3
		growthSlackMiB  = 8
		pointsPerReq    = 100
	)
	start := time.Now()
	lis, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	slow := &slowMetricsServer{delay: faultSlowAnswer}
	srv := grpc.NewServer()
	pmetricotlp.RegisterGRPCServer(srv, slow)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	grpcPort, healthPort, telemetryPort := harness.FreePort(t), harness.FreePort(t), harness.FreePort(t)
	agent := harness.StartCollector(t, harness.Options{
		Name: "agent",
		// A timeout above the backend's answer time: slow, not failing.
		Config:     faultAgentConfig(grpcPort, healthPort, telemetryPort, lis.Addr().String(), t.TempDir(), queueSize, 10*time.Second),
		HealthPort: healthPort,
	})
	client := pmetricotlp.NewGRPCClient(dial(t, fmt.Sprintf("127.0.0.1:%d", grpcPort)))

	stop, done := make(chan struct{}), make(chan struct{})
	var accepted, refused int
	go func() {
		defer close(done)
		tick := time.NewTicker(faultPace)
		defer tick.Stop()
		for seq := int64(1); ; seq++ {
			md := seqMetrics(seq)
			dps := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Gauge().DataPoints()
			for i := 1; i < pointsPerReq; i++ {
				dp := dps.AppendEmpty()
				dps.At(0).CopyTo(dp)
				dp.Attributes().PutInt("i", int64(i))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := client.Export(ctx, pmetricotlp.NewExportRequestFromMetrics(md))
			cancel()
			if err != nil {
				refused++
			} else {
				accepted++
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	stopSender := sync.OnceFunc(func() { close(stop); <-done })
	t.Cleanup(stopSender)

	type sample struct {
		at              time.Duration
		rss, anon       int64 // KiB
		queue, capacity float64
	}
	var samples []sample
	pid := agent.Pid()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	runStart := time.Now()
	for time.Since(runStart) < faultSlowRun {
		select {
		case <-agent.Exited():
			t.Fatal("the agent exited under a slow backend")
		case <-tick.C:
		}
		rss, err := procStatusKiB(pid, "VmRSS")
		if err != nil {
			t.Fatal(err)
		}
		anon, err := procStatusKiB(pid, "RssAnon")
		if err != nil {
			t.Fatal(err)
		}
		q, c, err := queueGauges(telemetryPort)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, sample{time.Since(runStart), rss, anon, q, c})
		if q > c {
			t.Errorf("at %s the queue holds %g requests, above its capacity %g", time.Since(runStart).Round(time.Second), q, c)
		}
	}
	stopSender()

	var firstMax, lastMax, maxRSS, maxAnon int64
	var maxQueue, capacity float64
	for _, s := range samples {
		if s.at <= window {
			firstMax = max(firstMax, s.rss)
		}
		if s.at >= faultSlowRun-window {
			lastMax = max(lastMax, s.rss)
		}
		maxRSS, maxAnon = max(maxRSS, s.rss), max(maxAnon, s.anon)
		maxQueue, capacity = max(maxQueue, s.queue), s.capacity
	}
	slow.mu.Lock()
	answered := slow.answered
	slow.mu.Unlock()
	t.Logf("%d samples; VmRSS max first %s: %.1f MiB, last %s: %.1f MiB, overall %.1f MiB (RssAnon max %.1f MiB); queue max %g of capacity %g",
		len(samples), window, mib(firstMax), window, mib(lastMax), mib(maxRSS), mib(maxAnon), maxQueue, capacity)
	t.Logf("requests accepted by the agent %d, refused %d (queue full); answered by the slow backend %d; test ran %s",
		accepted, refused, answered, time.Since(start).Round(time.Second))
	if limit := mib(firstMax)*growthFactor + growthSlackMiB; mib(lastMax) > limit {
		t.Errorf("RSS grows: the last %s peaked at %.1f MiB, above %.1f MiB (first %s's peak %.1f MiB × %.1f + %d MiB)",
			window, mib(lastMax), limit, window, mib(firstMax), growthFactor, growthSlackMiB)
	}
	if mib(maxRSS) > rssCapMiB {
		t.Errorf("RSS peaked at %.1f MiB, above the cap of %d MiB", mib(maxRSS), rssCapMiB)
	}
	// Slow, not broken: the exporter's requests must get through (a
	// backend that refuses them would leave the queue empty and prove
	// nothing).
	if answered == 0 {
		t.Error("the slow backend answered no request: the agent's exports never got through")
	}
	if capacity != queueSize {
		t.Errorf("queue capacity %g, want the configured %d", capacity, queueSize)
	}
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

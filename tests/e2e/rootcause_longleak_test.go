// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// TestRootcauseLongHorizonLeakBackfill sends three days of history (one
// point a minute, timestamps from now−3d to now) of one process growing
// 2 GiB/day into the built collector's OTLP receiver, and expects the
// gpu_memory_leak incident of the long horizon.
//
// The connector keys its windows by point time and evaluates on the wall
// clock, and the tiers take points older than their newest bucket, so
// history works — sent as one request: a subject whose newest point is
// older than stale_after (2m) at an evaluation is dropped, so history sent
// oldest-first over several evaluations would be forgotten before its end
// arrived.
func TestRootcauseLongHorizonLeakBackfill(t *testing.T) {
	backend := harness.StartBackend(t)
	grpcPort, healthPort := harness.FreePort(t), harness.FreePort(t)
	cfg := harness.AgentConfig(fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
connectors:
  rootcause:
    evaluation_interval: 1s
    warmup: 0s
`, grpcPort)+backend.OTLPExporter(), `
    metrics:
      receivers: [otlp]
      exporters: [rootcause]
    logs:
      receivers: [rootcause]
      exporters: [otlp]
`, healthPort)
	harness.StartCollector(t, harness.Options{Name: "rootcause-longleak", Config: cfg, HealthPort: healthPort})

	const (
		gib, mib   = float64(1 << 30), float64(1 << 20)
		rate       = 2 * gib / 86400 // bytes/s
		limit      = 80 * gib
		other      = 2 * gib
		minutes    = 3 * 24 * 60
		procBase   = 60 * gib
		procPID    = int64(4242)
		noiseSigma = 20 * mib
	)
	gpuID := "GPU-0000000e-0000-0000-0000-00000000002e"
	now := time.Now()
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(spec.AttrHwID, gpuID)
	sm := rm.ScopeMetrics().AppendEmpty()
	gauge := func(name string) pmetric.NumberDataPointSlice {
		m := sm.Metrics().AppendEmpty()
		m.SetName(name)
		m.SetUnit("By")
		return m.SetEmptyGauge().DataPoints()
	}
	procPts, gpuPts, limPts := gauge(spec.ProcessGpuMemoryUsage), gauge(spec.HwGpuMemoryUsage), gauge(spec.HwGpuMemoryLimit)
	rng := rand.New(rand.NewPCG(3, 7))
	var last float64
	for m := 0; m <= minutes; m++ {
		ts := pcommon.NewTimestampFromTime(now.Add(time.Duration(m-minutes) * time.Minute))
		v := procBase + rate*60*float64(m) + rng.NormFloat64()*noiseSigma
		dp := procPts.AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(v)
		dp.Attributes().PutInt(spec.AttrProcessPid, procPID)
		dp.Attributes().PutStr(spec.AttrProcessExecutableName, "python")
		g := gpuPts.AppendEmpty()
		g.SetTimestamp(ts)
		g.SetDoubleValue(v + other)
		l := limPts.AppendEmpty()
		l.SetTimestamp(ts)
		l.SetDoubleValue(limit)
		last = v + other
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := pmetricotlp.NewGRPCClient(dial(t, fmt.Sprintf("127.0.0.1:%d", grpcPort))).Export(ctx, pmetricotlp.NewExportRequestFromMetrics(md)); err != nil {
		t.Fatalf("exporting three days of history: %v", err)
	}

	var found incident
	harness.Eventually(t, 30*time.Second, func() (bool, string) {
		all := incidents(t, backend)
		for _, i := range all {
			if i.firing() && i.kind() == spec.IncidentKindGPUMemoryLeak && i.pid() == procPID {
				found = i
				return true, ""
			}
		}
		return false, "no gpu_memory_leak of pid 4242; " + describe(all)
	})
	t.Logf("incident: %s", found)
	horizon := found.str(spec.IncidentHorizon)
	if horizon == "" {
		t.Fatalf("no %s: the short window found it, not the long horizon: %s", spec.IncidentHorizon, found)
	}
	ev, ok := found.evidenceFor(spec.EvidenceMemoryFloorGrowthRate)
	if !ok {
		t.Fatalf("no %s evidence: %s", spec.EvidenceMemoryFloorGrowthRate, found)
	}
	perHour, _ := ev["value"].(float64)
	if want := rate * 3600 / mib; math.Abs(perHour-want) > 0.2*want {
		t.Errorf("rate %.1f MiB/h, true %.1f", perHour, want)
	}
	tte, ok := found.evidenceFor(spec.HwGpuMemoryTimeToExhaustion)
	if !ok {
		t.Fatalf("no forecast: %s", found)
	}
	if got, truth := tte["value"].(float64), (limit-last)/rate; math.Abs(got-truth) > 0.2*truth {
		t.Errorf("forecast %.1fh, true %.1fh", got/3600, truth/3600)
	}
	if !strings.Contains(found.body, "MiB/day") || !strings.Contains(found.body, "full in ") {
		t.Errorf("body: %s", found.body)
	}
	// One incident for the process: the GPU it explains has none.
	for _, i := range incidents(t, backend) {
		if i.firing() && i.kind() == spec.IncidentKindGPUMemoryLeak && i.str(spec.IncidentID) != found.str(spec.IncidentID) {
			t.Errorf("a second leak incident: %s", i)
		}
	}
}

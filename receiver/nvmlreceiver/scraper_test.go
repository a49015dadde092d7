// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver/internal/metadata"
	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver/internal/metadatatest"
	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver/internal/podresources"
)

const (
	leakPid  = 4242
	otherPid = 5151
	podUID   = "0f1d2c3b-4a5e-6f70-8192-a3b4c5d6e7f8"
	ctrID    = "4c3b2a19f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170615243"
)

// writeProc creates a minimal /proc entry for pid under root.
func writeProc(t testing.TB, root string, pid int, comm, cgroup string, start int) {
	dir := filepath.Join(root, fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (%s) S 1 %d %d 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, comm, pid, pid, start)
	for name, body := range map[string]string{"comm": comm + "\n", "cgroup": cgroup, "stat": stat} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type fakePods map[string][]podresources.Pod

func (f fakePods) LookupAll(id string) []podresources.Pod { return f[id] }

// fixedClock is a settable clock for deterministic PCIe integration and
// retry intervals.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fixedClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type harness struct {
	t     testing.TB
	fleet *fleet
	s     *nvmlScraper
	clock *fixedClock
	host  *statusHost
}

type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []*componentstatus.Event
}

func (h *statusHost) Report(e *componentstatus.Event) {
	h.mu.Lock()
	h.events = append(h.events, e)
	h.mu.Unlock()
}
func (h *statusHost) last() *componentstatus.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.events) == 0 {
		return nil
	}
	return h.events[len(h.events)-1]
}

func newHarness(t testing.TB, lib nvml.Interface, mutate func(*Config)) *harness {
	cfg := createDefaultConfig().(*Config)
	cfg.ProcRoot = t.TempDir()
	cfg.XIDEvents = false
	if mutate != nil {
		mutate(cfg)
	}
	s, err := newScraper(cfg, receivertest.NewNopSettings(metadata.Type), func(string) nvml.Interface { return lib })
	if err != nil {
		t.Fatal(err)
	}
	clock := &fixedClock{t: time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)}
	s.now = clock.now
	h := &harness{t: t, s: s, clock: clock, host: &statusHost{Host: componenttest.NewNopHost()}}
	if f, ok := lib.(*fleet); ok {
		h.fleet = f
	}
	return h
}

func (h *harness) start() {
	if err := h.s.start(context.Background(), h.host); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = h.s.shutdown(context.Background()) })
}

func (h *harness) scrape() pmetric.Metrics {
	m, err := h.s.scrape(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return m
}

// points returns the data points of metric name for GPU uuid, keyed by a
// description of their attributes.
func points(m pmetric.Metrics, name, uuid string) map[string]float64 {
	out := map[string]float64{}
	rms := m.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		if id, _ := rm.Resource().Attributes().Get("hw.id"); id.Str() != uuid {
			continue
		}
		sms := rm.ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				mt := ms.At(k)
				if mt.Name() != name {
					continue
				}
				var dps pmetric.NumberDataPointSlice
				switch mt.Type() {
				case pmetric.MetricTypeGauge:
					dps = mt.Gauge().DataPoints()
				case pmetric.MetricTypeSum:
					dps = mt.Sum().DataPoints()
				}
				for p := 0; p < dps.Len(); p++ {
					dp := dps.At(p)
					key := ""
					dp.Attributes().Range(func(k string, v pcommon.Value) bool {
						if k != "hw.id" && k != "hw.type" {
							key += k + "=" + v.AsString() + ","
						}
						return true
					})
					v := dp.DoubleValue()
					if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
						v = float64(dp.IntValue())
					}
					out[key] = v
				}
			}
		}
	}
	return out
}

func uuidOf(f *fleet, i int) string { return f.gpus[i].dev.UUID }

// TestGoldenScrape compares two scrapes of a DGX A100 (with processes,
// attribution and throttling) with a committed golden file.
func TestGoldenScrape(t *testing.T) {
	f := newFleet()
	h := newHarness(t, f, func(c *Config) {})
	writeProc(t, h.s.cfg.ProcRoot, leakPid, "python3",
		"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"+
			"0f1d2c3b_4a5e_6f70_8192_a3b4c5d6e7f8.slice/cri-containerd-"+ctrID+".scope\n", 1000)
	f.set(0, func(g *fakeGPU) {
		g.procs = []nvml.ProcessInfo{{Pid: leakPid, UsedGpuMemory: 3 << 30}, {Pid: otherPid, UsedGpuMemory: ^uint64(0)}}
		g.util = []nvml.ProcessUtilizationSample{{Pid: leakPid, TimeStamp: 100, SmUtil: 10}}
		g.throttle = nvml.ClocksEventReasonSwPowerCap | nvml.ClocksThrottleReasonHwThermalSlowdown | 1<<20
	})
	h.s.pods = fakePods{uuidOf(f, 0): {{Name: "vllm-7b-2", Namespace: "inference", Container: "vllm"}}}
	h.start()
	h.scrape()
	h.clock.advance(10 * time.Second)
	f.set(0, func(g *fakeGPU) {
		// Two new samples since the last scrape: the newer one counts.
		g.util = append(g.util,
			nvml.ProcessUtilizationSample{Pid: leakPid, TimeStamp: 10_000_100, SmUtil: 20},
			nvml.ProcessUtilizationSample{Pid: leakPid, TimeStamp: 10_000_200, SmUtil: 35, EncUtil: 1, DecUtil: 2})
	})
	got := h.scrape()

	path := filepath.Join("testdata", "scrape", "expected.yaml")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := golden.WriteMetrics(t, path, got); err != nil {
			t.Fatal(err)
		}
	}
	want, err := golden.ReadMetrics(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if err := pmetrictest.CompareMetrics(want, got, pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
		// golden.WriteMetrics sorts what it writes; the order itself carries no meaning.
		pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()); err != nil {
		t.Fatal(err)
	}

	// Spot checks that do not depend on the golden file.
	id := uuidOf(f, 0)
	if v := points(got, "process.gpu.memory.usage", id); v[fmt.Sprintf("process.pid=%d,process.executable.name=python3,container.id=%s,k8s.pod.uid=%s,k8s.pod.name=vllm-7b-2,k8s.namespace.name=inference,k8s.container.name=vllm,", leakPid, ctrID, podUID)] != 3<<30 {
		t.Errorf("process memory with attribution: %v", v)
	}
	if v := points(got, "hw.gpu.io", id); v["network.io.direction=transmit,"] != 1000*1024*10 {
		t.Errorf("PCIe tx integrated over 10 s: %v", v)
	}
	if v := points(got, "hw.gpu.throttle", id); len(v) != 3 || v["hw.gpu.throttle.reason=hw_thermal_slowdown,"] != 1 || v["hw.gpu.throttle.reason=unknown_0x100000,"] != 1 {
		t.Errorf("throttle reasons: %v", v)
	}
	if v := points(got, "process.gpu.utilization", id); v[fmt.Sprintf("hw.gpu.task=general,process.pid=%d,process.executable.name=python3,container.id=%s,k8s.pod.uid=%s,k8s.pod.name=vllm-7b-2,k8s.namespace.name=inference,k8s.container.name=vllm,", leakPid, ctrID, podUID)] != 0.35 {
		t.Errorf("process utilization is the newest sample: %v", v)
	}
}

func TestEveryGPUHasHwIDOnEveryPoint(t *testing.T) {
	f := newFleet()
	h := newHarness(t, f, nil)
	h.start()
	m := h.scrape()
	if m.ResourceMetrics().Len() != 8 {
		t.Fatalf("got %d GPU resources, want 8", m.ResourceMetrics().Len())
	}
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		rid, _ := rm.Resource().Attributes().Get("hw.id")
		ms := rm.ScopeMetrics().At(0).Metrics()
		for k := 0; k < ms.Len(); k++ {
			mt := ms.At(k)
			var dps pmetric.NumberDataPointSlice
			if mt.Type() == pmetric.MetricTypeGauge {
				dps = mt.Gauge().DataPoints()
			} else {
				dps = mt.Sum().DataPoints()
			}
			for p := 0; p < dps.Len(); p++ {
				if id, ok := dps.At(p).Attributes().Get("hw.id"); !ok || id.Str() != rid.Str() {
					t.Fatalf("%s point without the GPU's hw.id", mt.Name())
				}
			}
		}
	}
}

func TestNoLibraryKeepsRunningAndRetries(t *testing.T) {
	var inits int
	var mu sync.Mutex
	working := false
	f := newFleet()
	lib := &mock.Interface{
		InitFunc: func() nvml.Return {
			mu.Lock()
			defer mu.Unlock()
			inits++
			if working {
				return f.Init()
			}
			return nvml.ERROR_LIBRARY_NOT_FOUND
		},
		ErrorStringFunc: func(nvml.Return) string { return "library not found" },
	}
	h := newHarness(t, lib, func(c *Config) { c.InitRetryInterval = time.Minute })
	h.start()
	if ev := h.host.last(); ev == nil || ev.Status() != componentstatus.StatusRecoverableError {
		t.Fatalf("want a recoverable error status, got %v", ev)
	} else if !strings.Contains(ev.Err().Error(), `library_path "libnvidia-ml.so.1"`) {
		t.Fatalf("status error does not name the library path: %v", ev.Err())
	}
	if m := h.scrape(); m.DataPointCount() != 0 {
		t.Fatal("points without NVML")
	}
	h.clock.advance(30 * time.Second)
	h.scrape()
	if inits != 1 {
		t.Fatalf("retried before init_retry_interval: %d inits", inits)
	}
	// The driver appears (e.g. after an upgrade): the next retry succeeds,
	// now delegating to the DGX mock.
	mu.Lock()
	working = true
	mu.Unlock()
	*lib = mock.Interface{InitFunc: lib.InitFunc, ErrorStringFunc: lib.ErrorStringFunc}
	h.s.newLib = func(string) nvml.Interface { return f }
	h.clock.advance(31 * time.Second)
	if m := h.scrape(); m.ResourceMetrics().Len() != 8 {
		t.Fatalf("after the driver appeared: %d GPUs", m.ResourceMetrics().Len())
	}
	if ev := h.host.last(); ev.Status() != componentstatus.StatusOK {
		t.Fatalf("status after recovery: %v", ev.Status())
	}
}

func TestLostGPUOnlyReportsFailedStatus(t *testing.T) {
	f := newFleet()
	h := newHarness(t, f, nil)
	h.start()
	// Losing the GPU surfaces on its very first query.
	f.set(2, func(g *fakeGPU) { g.fail = nvml.ERROR_GPU_IS_LOST })
	m := h.scrape()
	lost := uuidOf(f, 2)
	if st := points(m, "hw.status", lost); st["hw.state=failed,"] != 1 || st["hw.state=ok,"] != 0 {
		t.Fatalf("lost GPU status: %v", st)
	}
	if v := points(m, "hw.gpu.memory.usage", lost); len(v) != 0 {
		t.Fatalf("lost GPU still reports memory: %v", v)
	}
	if v := points(m, "hw.gpu.memory.usage", uuidOf(f, 3)); len(v) != 1 {
		t.Fatalf("other GPUs must keep reporting: %v", v)
	}
	if st := points(m, "hw.status", uuidOf(f, 3)); st["hw.state=ok,"] != 1 {
		t.Fatalf("healthy GPU status: %v", st)
	}
}

func TestUnknownErrorMidScrapeSkipsTheGPU(t *testing.T) {
	f := newFleet()
	h := newHarness(t, f, nil)
	h.start()
	f.set(1, func(g *fakeGPU) { g.fail = nvml.ERROR_UNKNOWN })
	f.gpus[1].dev.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
		return nvml.Memory_v2{Total: 1 << 30, Used: 1 << 20}, nvml.SUCCESS
	}
	m := h.scrape()
	id := uuidOf(f, 1)
	if v := points(m, "hw.gpu.memory.usage", id); len(v) != 0 {
		t.Fatalf("points sampled before the failure must be dropped too: %v", v)
	}
	if st := points(m, "hw.status", id); st["hw.state=failed,"] != 1 {
		t.Fatalf("status: %v", st)
	}
	// It recovers on the next scrape.
	f.set(1, func(g *fakeGPU) { g.fail = nvml.SUCCESS })
	m = h.scrape()
	if st := points(m, "hw.status", id); st["hw.state=ok,"] != 1 {
		t.Fatalf("status after recovery: %v", st)
	}
}

func TestNotSupportedIsAskedOnce(t *testing.T) {
	f := newFleet()
	h := newHarness(t, f, nil)
	f.set(1, func(g *fakeGPU) { g.unsupported["GetTemperature"] = true; g.unsupported["GetTotalEccErrors"] = true })
	h.start()
	var m pmetric.Metrics
	for range 3 {
		m = h.scrape()
	}
	if n := f.calls(1, "GetTemperature"); n != 1 {
		t.Fatalf("unsupported query asked %d times, want 1", n)
	}
	if n := f.calls(0, "GetTemperature"); n != 3 {
		t.Fatalf("supported query on another GPU asked %d times, want 3", n)
	}
	if v := points(m, "hw.temperature", uuidOf(f, 1)); len(v) != 0 {
		t.Fatalf("temperature reported although unsupported: %v", v)
	}
	if st := points(m, "hw.status", uuidOf(f, 1)); st["hw.state=ok,"] != 1 {
		t.Fatalf("an unsupported metric is not a failure: %v", st)
	}
}

func TestMemoryInfoFallsBackToV1(t *testing.T) {
	f := newFleet()
	h := newHarness(t, f, nil)
	f.set(0, func(g *fakeGPU) { g.unsupported["GetMemoryInfo_v2"] = true })
	h.start()
	h.scrape()
	m := h.scrape()
	id := uuidOf(f, 0)
	if v := points(m, "hw.gpu.memory.limit", id); v[""] != 40<<30 {
		t.Fatalf("v1 limit: %v", v)
	}
	if v := points(m, "hw.gpu.memory.usage", id); v[""] != 1<<30 {
		t.Fatalf("v1 usage: %v", v)
	}
	if n := f.calls(0, "GetMemoryInfo_v2"); n != 1 {
		t.Fatalf("v2 asked %d times", n)
	}
	if v := points(m, "hw.gpu.memory.limit", uuidOf(f, 1)); v[""] != 40<<30-512<<20 {
		t.Fatalf("v2 limit excludes the reserved memory: %v", v)
	}
}

func TestProcessUtilizationPassesLastSeenTimestamp(t *testing.T) {
	f := newFleet()
	h := newHarness(t, f, nil)
	f.set(0, func(g *fakeGPU) {
		g.procs = []nvml.ProcessInfo{{Pid: leakPid, UsedGpuMemory: 1 << 30}}
		g.util = []nvml.ProcessUtilizationSample{{Pid: leakPid, TimeStamp: 500, SmUtil: 60}}
	})
	h.start()
	h.scrape()
	m := h.scrape() // no newer sample: NOT_FOUND, no utilization point, no error
	f.mu.Lock()
	args := append([]uint64(nil), f.gpus[0].utilArgs...)
	f.mu.Unlock()
	if len(args) != 2 || args[0] != 0 || args[1] != 500 {
		t.Fatalf("lastSeenTimestamp arguments %v, want [0 500]", args)
	}
	if v := points(m, "process.gpu.utilization", uuidOf(f, 0)); len(v) != 0 {
		t.Fatalf("stale utilization re-reported: %v", v)
	}
	if v := points(m, "process.gpu.memory.usage", uuidOf(f, 0)); len(v) != 1 {
		t.Fatalf("memory still reported: %v", v)
	}
}

func TestXIDsAreMonotonicCounts(t *testing.T) {
	f := newFleet()
	h := newHarness(t, f, func(c *Config) { c.XIDEvents = true })
	h.start()
	dev := f.Devices[1]
	f.events <- nvml.EventData{Device: dev, EventType: nvml.EventTypeXidCriticalError, EventData: 79}
	f.events <- nvml.EventData{Device: dev, EventType: nvml.EventTypeXidCriticalError, EventData: 79}
	f.events <- nvml.EventData{Device: dev, EventType: nvml.EventTypeXidCriticalError, EventData: 13}
	f.events <- nvml.EventData{Device: dev, EventType: nvml.EventTypeSingleBitEccError}
	id := uuidOf(f, 1)
	deadline := time.Now().Add(10 * time.Second)
	var v map[string]float64
	for time.Now().Before(deadline) {
		v = points(h.scrape(), "hw.errors", id)
		if v["error.type=xid,hw.gpu.xid=79,"] == 2 && v["error.type=xid,hw.gpu.xid=13,"] == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if v["error.type=xid,hw.gpu.xid=79,"] != 2 || v["error.type=xid,hw.gpu.xid=13,"] != 1 {
		t.Fatalf("xid counts: %v", v)
	}
	// Counts persist across scrapes (a counter, not a last value).
	v = points(h.scrape(), "hw.errors", id)
	if v["error.type=xid,hw.gpu.xid=79,"] != 2 {
		t.Fatalf("xid count reset: %v", v)
	}
	if v := points(h.scrape(), "hw.errors", uuidOf(f, 0)); v["error.type=xid,hw.gpu.xid=79,"] != 0 {
		t.Fatalf("xid attributed to the wrong GPU: %v", v)
	}
}

func TestMIGDevicesReportedWithParent(t *testing.T) {
	f := newFleet()
	parent := f.gpus[0].dev
	parent.MigMode = nvml.DEVICE_MIG_ENABLE
	mig := make([]*mock.Device, 2)
	for i := range mig {
		mig[i] = &mock.Device{
			GetUUIDFunc: func() (string, nvml.Return) {
				return fmt.Sprintf("MIG-0000000%d-aaaa-bbbb-cccc-dddddddddddd", i), nvml.SUCCESS
			},
			GetNameFunc:              func() (string, nvml.Return) { return "NVIDIA A100-SXM4-40GB MIG 3g.20gb", nvml.SUCCESS },
			GetPciInfoFunc:           func() (nvml.PciInfo, nvml.Return) { return nvml.PciInfo{}, nvml.ERROR_NOT_SUPPORTED },
			GetGpuInstanceIdFunc:     func() (int, nvml.Return) { return 1 + i, nvml.SUCCESS },
			GetComputeInstanceIdFunc: func() (int, nvml.Return) { return 0, nvml.SUCCESS },
			GetMemoryInfo_v2Func: func() (nvml.Memory_v2, nvml.Return) {
				return nvml.Memory_v2{Total: 20 << 30, Used: uint64(i+1) << 30}, nvml.SUCCESS
			},
			GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
				return []nvml.ProcessInfo{{Pid: uint32(7000 + i), UsedGpuMemory: 1 << 29}}, nvml.SUCCESS
			},
		}
		notSupported := nvml.ERROR_NOT_SUPPORTED
		mig[i].GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, notSupported }
		mig[i].GetEncoderUtilizationFunc = func() (uint32, uint32, nvml.Return) { return 0, 0, notSupported }
		mig[i].GetDecoderUtilizationFunc = func() (uint32, uint32, nvml.Return) { return 0, 0, notSupported }
		mig[i].GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, notSupported }
		mig[i].GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, notSupported }
		mig[i].GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return 0, notSupported }
		mig[i].GetClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 0, notSupported }
		mig[i].GetPcieThroughputFunc = func(nvml.PcieUtilCounter) (uint32, nvml.Return) { return 0, notSupported }
		mig[i].GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return 0, notSupported }
		mig[i].GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) { return 0, notSupported }
		mig[i].GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) { return nil, notSupported }
	}
	parent.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	parent.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i < len(mig) {
			return mig[i], nvml.SUCCESS
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	h := newHarness(t, f, nil)
	h.start()
	h.scrape()
	m := h.scrape()
	if m.ResourceMetrics().Len() != 10 {
		t.Fatalf("%d resources, want 8 GPUs + 2 MIG devices", m.ResourceMetrics().Len())
	}
	found := 0
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		attrs := m.ResourceMetrics().At(i).Resource().Attributes()
		p, ok := attrs.Get("hw.parent")
		if !ok {
			continue
		}
		found++
		if p.Str() != parent.UUID {
			t.Errorf("MIG parent %q, want %q", p.Str(), parent.UUID)
		}
		gi, _ := attrs.Get("hw.gpu.mig.gpu_instance_id")
		id, _ := attrs.Get("hw.id")
		if gi.Int() < 1 {
			t.Errorf("%s: gpu instance id %d", id.Str(), gi.Int())
		}
	}
	if found != 2 {
		t.Fatalf("%d MIG resources", found)
	}
	migID := "MIG-00000001-aaaa-bbbb-cccc-dddddddddddd"
	if v := points(m, "process.gpu.memory.usage", migID); v["process.pid=7001,"] != 1<<29 {
		t.Fatalf("MIG process memory: %v", v)
	}
	if v := points(m, "hw.gpu.memory.usage", migID); v[""] != 2<<30 {
		t.Fatalf("MIG memory: %v", v)
	}
	if st := points(m, "hw.status", migID); st["hw.state=ok,"] != 1 {
		t.Fatalf("MIG device with unsupported metrics is healthy: %v", st)
	}
}

func TestShutdownWithoutStart(t *testing.T) {
	h := newHarness(t, dgxa100.New(), nil)
	if err := h.s.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestGPMActivityFromTheSecondScrape(t *testing.T) {
	f := newFleet()
	dev := f.gpus[0].dev
	dev.GpmQueryDeviceSupportFunc = func() (nvml.GpmSupport, nvml.Return) {
		return nvml.GpmSupport{IsSupportedDevice: 1}, nvml.SUCCESS
	}
	samples := 0
	dev.GpmSampleGetFunc = func(nvml.GpmSample) nvml.Return { samples++; return nvml.SUCCESS }
	f.GpmMetricsGetFunc = func(req *nvml.GpmMetricsGetType) nvml.Return {
		if req.Sample1 == nil || req.Sample2 == nil || req.Sample1 == req.Sample2 {
			t.Errorf("GpmMetricsGet needs two distinct samples")
		}
		for i := 0; i < int(req.NumMetrics); i++ {
			switch nvml.GpmMetricId(req.Metrics[i].MetricId) {
			case nvml.GPM_METRIC_SM_UTIL:
				req.Metrics[i].Value = 62.5
			case nvml.GPM_METRIC_ANY_TENSOR_UTIL:
				req.Metrics[i].Value = 41
			case nvml.GPM_METRIC_DRAM_BW_UTIL:
				req.Metrics[i].NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
			}
		}
		return nvml.SUCCESS
	}
	h := newHarness(t, f, func(c *Config) { c.GPM = true })
	h.start()
	id := uuidOf(f, 0)
	if v := points(h.scrape(), "hw.gpu.sm.utilization", id); len(v) != 0 {
		t.Fatalf("GPM needs two samples, got a value from one: %v", v)
	}
	m := h.scrape()
	if v := points(m, "hw.gpu.sm.utilization", id); v[""] != 0.625 {
		t.Fatalf("sm activity: %v", v)
	}
	if v := points(m, "hw.gpu.tensor.utilization", id); v[""] != 0.41 {
		t.Fatalf("tensor activity: %v", v)
	}
	if v := points(m, "hw.gpu.dram.utilization", id); len(v) != 0 {
		t.Fatalf("a metric GPM could not compute was reported: %v", v)
	}
	if v := points(m, "hw.gpu.sm.utilization", uuidOf(f, 1)); len(v) != 0 {
		t.Fatalf("GPM values on a GPU without GPM support: %v", v)
	}
	if samples != 2 {
		t.Fatalf("%d GPM samples taken, want one per scrape", samples)
	}
}

func TestLostGPUIsCountedInOwnTelemetry(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tt.Shutdown(context.Background()) })
	f := newFleet()
	cfg := createDefaultConfig().(*Config)
	cfg.ProcRoot = t.TempDir()
	cfg.XIDEvents = false
	s, err := newScraper(cfg, metadatatest.NewSettings(tt), func(string) nvml.Interface { return f })
	if err != nil {
		t.Fatal(err)
	}
	if err := s.start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.shutdown(context.Background()) })
	f.set(5, func(g *fakeGPU) { g.fail = nvml.ERROR_GPU_IS_LOST })
	for range 3 {
		if _, err := s.scrape(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	lost := attribute.NewSet(attribute.String("hw.id", uuidOf(f, 5)))
	// Lost once (not once per scrape), and each failed scrape is an error.
	metadatatest.AssertEqualNvmlGpusLost(t, tt, []metricdata.DataPoint[int64]{{Attributes: lost, Value: 1}},
		metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualNvmlScrapeErrors(t, tt, []metricdata.DataPoint[int64]{{Attributes: lost, Value: 3}},
		metricdatatest.IgnoreTimestamp())
}

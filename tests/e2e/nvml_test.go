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
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

const (
	fakeGPU0   = "GPU-8a6b0c2e-1f1e-4c8e-9a3b-000000000000"
	fakeGPU1   = "GPU-8a6b0c2e-1f1e-4c8e-9a3b-000000000001"
	leakingPid = 4242
	e2ePodUID  = "7d9c1f0e-2b3a-4c5d-8e6f-a1b2c3d4e5f6"
	e2eCtrID   = "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170615243c2b1a0f"
)

// fakeProc builds the /proc entries of the scenario's GPU processes, as a
// DaemonSet would see the host's /proc.
func fakeProc(t *testing.T) string {
	root := t.TempDir()
	for pid, cgroup := range map[int]string{
		leakingPid: "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7d9c1f0e_2b3a_4c5d_8e6f_a1b2c3d4e5f6.slice/cri-containerd-" + e2eCtrID + ".scope\n",
		5151:       "0::/user.slice/user-1000.slice/session-2.scope\n",
	} {
		dir := filepath.Join(root, fmt.Sprint(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := fmt.Sprintf("%d (python) S 1 %d %d 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 4711 0 0\n", pid, pid, pid)
		for name, body := range map[string]string{"comm": "python\n", "cgroup": cgroup, "stat": stat} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// TestNVMLThroughFakeLibrary runs the built binary with the nvml receiver on
// the fake NVML library (two A100s, a leaking process, an XID) and checks
// what reaches a real OTLP backend.
func TestNVMLThroughFakeLibrary(t *testing.T) {
	backend := harness.StartBackend(t)
	scenario := filepath.Join(harness.RepoRoot(t), "tests", "fakenvml", "scenarios", "e2e.scenario")
	health := harness.FreePort(t)
	cfg := backend.MetricsAgentConfig(fmt.Sprintf(`  nvml:
    collection_interval: 200ms
    library_path: %s
    proc_root: %s`, harness.FakeNVML(t), fakeProc(t)), []string{"nvml"}, health)
	harness.StartCollector(t, harness.Options{
		Name: "agent", Config: cfg, HealthPort: health,
		// 10 scenario seconds per second: the leak grows 10 MiB/s.
		Env: []string{"FAKE_NVML_SCENARIO=" + scenario, "FAKE_NVML_TIME_SCALE=10"},
	})

	var leak []int64
	harness.Eventually(t, 60*time.Second, func() (bool, string) {
		m := backend.Metrics(t)
		leak = processMemory(m, fakeGPU0, leakingPid)
		xid := xidCount(m, fakeGPU1, 79)
		msg := fmt.Sprintf("%d leak samples, xid79=%d", len(leak), xid)
		return len(leak) >= 5 && leak[len(leak)-1] > leak[0] && xid == 1, msg
	})
	for i := 1; i < len(leak); i++ {
		if leak[i] < leak[i-1] {
			t.Fatalf("leaking process memory went down: %v", leak)
		}
	}

	m := backend.Metrics(t)
	seen := map[string]bool{}
	rms := m.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		res := rm.Resource().Attributes()
		id := str(res, "hw.id")
		if id != fakeGPU0 && id != fakeGPU1 {
			t.Fatalf("unexpected GPU resource %q", id)
		}
		if str(res, "hw.model") != "NVIDIA A100-SXM4-80GB" || str(res, "hw.driver_version") != "550.54.15" || str(res, "hw.vendor") != "NVIDIA" {
			t.Errorf("resource attributes: %v", res.AsRaw())
		}
		if id == fakeGPU0 && str(res, "hw.gpu.pci_bus_id") != "00000000:07:00.0" {
			t.Errorf("pci bus id: %q", str(res, "hw.gpu.pci_bus_id"))
		}
		eachPoint(rm, func(mt pmetric.Metric, attrs pcommon.Map) {
			seen[mt.Name()] = true
			u, ok := spec.LookupMetric(mt.Name())
			if !ok {
				t.Errorf("%s is not a unified metric", mt.Name())
				return
			}
			if mt.Unit() != u.Unit {
				t.Errorf("%s: unit %q, spec says %q", mt.Name(), mt.Unit(), u.Unit)
			}
			if str(attrs, "hw.id") != id {
				t.Errorf("%s: point without its GPU's hw.id", mt.Name())
			}
			if mt.Name() == spec.ProcessGpuMemoryUsage && attrs.Len() > 0 {
				if pid, _ := attrs.Get("process.pid"); pid.Int() == leakingPid {
					if str(attrs, "process.executable.name") != "python" || str(attrs, "container.id") != e2eCtrID || str(attrs, "k8s.pod.uid") != e2ePodUID {
						t.Errorf("leaking process attribution: %v", attrs.AsRaw())
					}
				}
			}
		})
	}
	for _, name := range []string{spec.HwGpuMemoryUsage, spec.HwGpuMemoryLimit, spec.HwGpuUtilization, spec.HwGpuTemperature,
		spec.HwPower, spec.HwEnergy, spec.HwGpuClockFrequency, spec.HwGpuIo, spec.HwErrors, spec.HwStatus,
		spec.ProcessGpuMemoryUsage, spec.ProcessGpuUtilization} {
		if !seen[name] {
			t.Errorf("%s never reached the backend", name)
		}
	}
}

func str(m pcommon.Map, k string) string {
	v, ok := m.Get(k)
	if !ok {
		return ""
	}
	return v.AsString()
}

func eachPoint(rm pmetric.ResourceMetrics, fn func(pmetric.Metric, pcommon.Map)) {
	sms := rm.ScopeMetrics()
	for j := 0; j < sms.Len(); j++ {
		ms := sms.At(j).Metrics()
		for k := 0; k < ms.Len(); k++ {
			mt := ms.At(k)
			var dps pmetric.NumberDataPointSlice
			switch mt.Type() {
			case pmetric.MetricTypeGauge:
				dps = mt.Gauge().DataPoints()
			case pmetric.MetricTypeSum:
				dps = mt.Sum().DataPoints()
			default:
				continue
			}
			for p := 0; p < dps.Len(); p++ {
				fn(mt, dps.At(p).Attributes())
			}
		}
	}
}

// gpuPoints calls fn for every point of metric name on GPU gpu, in
// arrival order.
func gpuPoints(m pmetric.Metrics, gpu, name string, fn func(pmetric.NumberDataPoint)) {
	rms := m.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		if str(rm.Resource().Attributes(), "hw.id") != gpu {
			continue
		}
		sms := rm.ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if mt := ms.At(k); mt.Name() == name && mt.Type() == pmetric.MetricTypeSum {
					dps := mt.Sum().DataPoints()
					for p := 0; p < dps.Len(); p++ {
						fn(dps.At(p))
					}
				}
			}
		}
	}
}

// processMemory returns a process's memory samples in arrival order.
func processMemory(m pmetric.Metrics, gpu string, pid int64) []int64 {
	var out []int64
	gpuPoints(m, gpu, spec.ProcessGpuMemoryUsage, func(dp pmetric.NumberDataPoint) {
		if v, _ := dp.Attributes().Get("process.pid"); v.Int() == pid {
			out = append(out, dp.IntValue())
		}
	})
	return out
}

// xidCount returns the newest hw.errors{error.type=xid} count for a code.
func xidCount(m pmetric.Metrics, gpu string, code int64) int64 {
	var n int64
	gpuPoints(m, gpu, spec.HwErrors, func(dp pmetric.NumberDataPoint) {
		a := dp.Attributes()
		if x, ok := a.Get("hw.gpu.xid"); ok && x.Int() == code && str(a, "error.type") == "xid" {
			n = dp.IntValue()
		}
	})
	return n
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// BenchmarkScrape8GPUs16Procs measures the receiver's own cost of one scrape
// of 8 GPUs with 16 processes each: sampling through nvml.Interface (here
// go-nvml's in-process mock, so the library's time is close to zero),
// /proc attribution (cached) and building the pdata. Target: under 2 ms.
// BenchmarkScrapeFakeNVML (fakenvml_bench_test.go) measures the same scrape
// through cgo and the fake C library.
func BenchmarkScrape8GPUs16Procs(b *testing.B) {
	f := newFleet()
	h := newHarness(b, f, nil)
	pid := uint32(10000)
	for i := range f.gpus {
		f.set(i, func(g *fakeGPU) {
			for range 16 {
				writeProc(b, h.s.cfg.ProcRoot, int(pid), "python3",
					"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"+
						"0f1d2c3b_4a5e_6f70_8192_a3b4c5d6e7f8.slice/cri-containerd-"+ctrID+".scope\n", 1000)
				g.procs = append(g.procs, nvml.ProcessInfo{Pid: pid, UsedGpuMemory: uint64(pid) << 20})
				g.util = append(g.util, nvml.ProcessUtilizationSample{Pid: pid, TimeStamp: uint64(pid), SmUtil: 40})
				pid++
			}
			g.throttle = nvml.ClocksEventReasonSwPowerCap
		})
	}
	h.start()
	h.scrape()
	b.ReportAllocs()
	for b.Loop() {
		h.clock.advance(10 * time.Second)
		// New utilization samples every scrape, as on a busy GPU.
		for i := range f.gpus {
			g := f.gpus[i]
			for j := range g.util {
				g.util[j].TimeStamp += 10_000_000
			}
		}
		m, err := h.s.scrape(context.Background())
		if err != nil || m.DataPointCount() == 0 {
			b.Fatal(err)
		}
	}
}

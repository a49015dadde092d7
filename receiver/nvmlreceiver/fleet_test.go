// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver

import (
	"fmt"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// fleet is a DGX A100 from go-nvml's mock package (8 GPUs with real names,
// UUIDs and PCI ids) whose telemetry queries are filled in with
// deterministic values that tests can change per GPU.
type fleet struct {
	*dgxa100.Server
	mu   sync.Mutex
	gpus []*fakeGPU

	events chan nvml.EventData
}

type fakeGPU struct {
	dev   *server.Device
	used  uint64
	procs []nvml.ProcessInfo
	util  []nvml.ProcessUtilizationSample
	// fail makes every query after GetMemoryInfo_v2 return this code.
	fail nvml.Return
	// unsupported lists calls answered with ERROR_NOT_SUPPORTED.
	unsupported map[string]bool
	calls       map[string]int
	throttle    uint64
	utilArgs    []uint64
}

func newFleet() *fleet {
	f := &fleet{Server: dgxa100.New(), events: make(chan nvml.EventData, 16)}
	f.ErrorStringFunc = func(r nvml.Return) string { return fmt.Sprintf("nvml return %d", int32(r)) }
	f.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return &mock.EventSet{
			WaitFunc: func(timeout uint32) (nvml.EventData, nvml.Return) {
				select {
				case ev := <-f.events:
					return ev, nvml.SUCCESS
				case <-time.After(time.Duration(timeout) * time.Millisecond):
					return nvml.EventData{}, nvml.ERROR_TIMEOUT
				}
			},
			FreeFunc: func() nvml.Return { return nvml.SUCCESS },
		}, nvml.SUCCESS
	}
	f.GpmSampleAllocFunc = func() (nvml.GpmSample, nvml.Return) { return &mock.GpmSample{}, nvml.SUCCESS }
	f.GpmSampleFreeFunc = func(nvml.GpmSample) nvml.Return { return nvml.SUCCESS }
	for i, d := range f.Devices {
		g := &fakeGPU{dev: d.(*server.Device), used: uint64(i+1) << 30, unsupported: map[string]bool{}, calls: map[string]int{}}
		// The mock draws random UUIDs; fixed ones keep golden files stable.
		g.dev.UUID = fmt.Sprintf("GPU-a100%04d-0000-4000-8000-%012d", i, i)
		f.gpus = append(f.gpus, g)
		f.wire(i, g)
	}
	return f
}

// answer runs one query of one GPU: counts it and applies the GPU's
// configured failure or unsupported state.
func (f *fleet) answer(g *fakeGPU, name string) (nvml.Return, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g.calls[name]++
	if g.unsupported[name] {
		return nvml.ERROR_NOT_SUPPORTED, false
	}
	if g.fail != nvml.SUCCESS {
		return g.fail, false
	}
	return nvml.SUCCESS, true
}

func (f *fleet) wire(i int, g *fakeGPU) {
	d := g.dev
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
		if r, ok := f.answer(g, "GetMemoryInfo_v2"); !ok {
			return nvml.Memory_v2{}, r
		}
		const total, reserved = 40 << 30, 512 << 20
		return nvml.Memory_v2{Total: total, Reserved: reserved, Used: g.used, Free: total - reserved - g.used}, nvml.SUCCESS
	}
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		if r, ok := f.answer(g, "GetMemoryInfo"); !ok {
			return nvml.Memory{}, r
		}
		return nvml.Memory{Total: 40 << 30, Used: g.used, Free: 40<<30 - g.used}, nvml.SUCCESS
	}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		r, _ := f.answer(g, "GetUtilizationRates")
		return nvml.Utilization{Gpu: uint32(50 + i), Memory: 20}, r
	}
	d.GetEncoderUtilizationFunc = func() (uint32, uint32, nvml.Return) {
		r, _ := f.answer(g, "GetEncoderUtilization")
		return 3, 1000, r
	}
	d.GetDecoderUtilizationFunc = func() (uint32, uint32, nvml.Return) {
		r, _ := f.answer(g, "GetDecoderUtilization")
		return 4, 1000, r
	}
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) {
		r, _ := f.answer(g, "GetTemperature")
		return uint32(40 + i), r
	}
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) {
		r, _ := f.answer(g, "GetPowerUsage")
		return 250500, r
	}
	d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) {
		r, _ := f.answer(g, "GetTotalEnergyConsumption")
		return 123456789, r
	}
	d.GetClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
		r, _ := f.answer(g, "GetClockInfo")
		return map[nvml.ClockType]uint32{nvml.CLOCK_SM: 1410, nvml.CLOCK_MEM: 1215, nvml.CLOCK_GRAPHICS: 1410}[c], r
	}
	d.GetPcieThroughputFunc = func(c nvml.PcieUtilCounter) (uint32, nvml.Return) {
		r, _ := f.answer(g, "GetPcieThroughput")
		if c == nvml.PCIE_UTIL_TX_BYTES {
			return 1000, r
		}
		return 2000, r
	}
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) {
		r, _ := f.answer(g, "GetCurrentClocksEventReasons")
		return g.throttle, r
	}
	d.GetTotalEccErrorsFunc = func(t nvml.MemoryErrorType, _ nvml.EccCounterType) (uint64, nvml.Return) {
		r, _ := f.answer(g, "GetTotalEccErrors")
		if t == nvml.MEMORY_ERROR_TYPE_CORRECTED {
			return 7, r
		}
		return 0, r
	}
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		r, _ := f.answer(g, "GetComputeRunningProcesses")
		return append([]nvml.ProcessInfo(nil), g.procs...), r
	}
	d.GetProcessUtilizationFunc = func(last uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		r, ok := f.answer(g, "GetProcessUtilization")
		f.mu.Lock()
		g.utilArgs = append(g.utilArgs, last)
		f.mu.Unlock()
		if !ok {
			return nil, r
		}
		var out []nvml.ProcessUtilizationSample
		for _, s := range g.util {
			if s.TimeStamp > last {
				out = append(out, s)
			}
		}
		if len(out) == 0 {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return out, nvml.SUCCESS
	}
	d.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) {
		return nvml.EventTypeXidCriticalError | nvml.EventTypeSingleBitEccError | nvml.EventTypeDoubleBitEccError, nvml.SUCCESS
	}
	d.RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.SUCCESS }
	d.GpmQueryDeviceSupportFunc = func() (nvml.GpmSupport, nvml.Return) {
		return nvml.GpmSupport{IsSupportedDevice: 0}, nvml.SUCCESS
	}
}

func (f *fleet) calls(i int, name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gpus[i].calls[name]
}

func (f *fleet) set(i int, fn func(g *fakeGPU)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f.gpus[i])
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package registry

import (
	"fmt"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// gpuPid is the process the fake GPUs run (its /proc entry is written by
// the test, so the receiver attributes it).
const gpuPid = 4242

// fakeNVML is go-nvml's DGX A100 mock (8 GPUs with real names and PCI ids)
// with every telemetry query the nvml receiver makes answered, one process
// per GPU, and one XID event on GPU 0, so that every metric and attribute
// the receiver can emit on a healthy node appears.
func fakeNVML() nvml.Interface {
	s := dgxa100.New()
	events := make(chan nvml.EventData, 1)
	s.ErrorStringFunc = func(r nvml.Return) string { return fmt.Sprintf("nvml return %d", int32(r)) }
	s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return &mock.EventSet{
			WaitFunc: func(timeout uint32) (nvml.EventData, nvml.Return) {
				select {
				case ev := <-events:
					return ev, nvml.SUCCESS
				case <-time.After(time.Duration(timeout) * time.Millisecond):
					return nvml.EventData{}, nvml.ERROR_TIMEOUT
				}
			},
			FreeFunc: func() nvml.Return { return nvml.SUCCESS },
		}, nvml.SUCCESS
	}
	s.GpmSampleAllocFunc = func() (nvml.GpmSample, nvml.Return) { return &mock.GpmSample{}, nvml.SUCCESS }
	s.GpmSampleFreeFunc = func(nvml.GpmSample) nvml.Return { return nvml.SUCCESS }
	for i, dv := range s.Devices {
		d := dv.(*server.Device)
		d.UUID = fmt.Sprintf("GPU-a100%04d-0000-4000-8000-%012d", i, i)
		used := uint64(i+1) << 30
		d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
			const total, reserved = 40 << 30, 512 << 20
			return nvml.Memory_v2{Total: total, Reserved: reserved, Used: used, Free: total - reserved - used}, nvml.SUCCESS
		}
		d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: 40 << 30, Used: used, Free: 40<<30 - used}, nvml.SUCCESS
		}
		d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: uint32(50 + i), Memory: 20}, nvml.SUCCESS
		}
		d.GetEncoderUtilizationFunc = func() (uint32, uint32, nvml.Return) { return 3, 1000, nvml.SUCCESS }
		d.GetDecoderUtilizationFunc = func() (uint32, uint32, nvml.Return) { return 4, 1000, nvml.SUCCESS }
		d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return uint32(40 + i), nvml.SUCCESS }
		d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 250500, nvml.SUCCESS }
		d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return 123456789, nvml.SUCCESS }
		d.GetClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
			return map[nvml.ClockType]uint32{nvml.CLOCK_SM: 1410, nvml.CLOCK_MEM: 1215, nvml.CLOCK_GRAPHICS: 1410, nvml.CLOCK_VIDEO: 1275}[c], nvml.SUCCESS
		}
		d.GetPcieThroughputFunc = func(c nvml.PcieUtilCounter) (uint32, nvml.Return) {
			if c == nvml.PCIE_UTIL_TX_BYTES {
				return 1000, nvml.SUCCESS
			}
			return 2000, nvml.SUCCESS
		}
		// Power cap and thermal slowdown active: hw.gpu.throttle points.
		d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) {
			return nvml.ClocksEventReasonSwPowerCap | nvml.ClocksEventReasonSwThermalSlowdown, nvml.SUCCESS
		}
		d.GetTotalEccErrorsFunc = func(t nvml.MemoryErrorType, _ nvml.EccCounterType) (uint64, nvml.Return) {
			if t == nvml.MEMORY_ERROR_TYPE_CORRECTED {
				return 7, nvml.SUCCESS
			}
			return 1, nvml.SUCCESS
		}
		d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
			return []nvml.ProcessInfo{{Pid: gpuPid, UsedGpuMemory: used / 2}}, nvml.SUCCESS
		}
		d.GetProcessUtilizationFunc = func(last uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			now := uint64(time.Now().UnixMicro())
			if last >= now {
				return nil, nvml.ERROR_NOT_FOUND
			}
			return []nvml.ProcessUtilizationSample{{Pid: gpuPid, TimeStamp: now, SmUtil: 40, MemUtil: 10, EncUtil: 1, DecUtil: 2}}, nvml.SUCCESS
		}
		d.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) {
			return nvml.EventTypeXidCriticalError | nvml.EventTypeSingleBitEccError | nvml.EventTypeDoubleBitEccError, nvml.SUCCESS
		}
		d.RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.SUCCESS }
		d.GpmQueryDeviceSupportFunc = func() (nvml.GpmSupport, nvml.Return) { return nvml.GpmSupport{IsSupportedDevice: 0}, nvml.SUCCESS }
		if i == 0 {
			events <- nvml.EventData{Device: d, EventType: nvml.EventTypeXidCriticalError, EventData: 79}
		}
	}
	return s
}

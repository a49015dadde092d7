// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver"

import (
	"fmt"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// call names one NVML query of one device, so that a query the GPU does not
// support is remembered and not retried (or logged) every scrape.
type call uint8

const (
	callMemoryV2 call = iota
	callMemoryV1
	callUtilization
	callEncoder
	callDecoder
	callTemperature
	callPower
	callEnergy
	callClockSM
	callClockMem
	callClockGraphics
	callPcieTx
	callPcieRx
	callThrottle
	callEccCorrected
	callEccUncorrected
	callProcesses
	callProcessUtil
	callGPM
	numCalls
)

var callNames = [numCalls]string{
	"GetMemoryInfo_v2", "GetMemoryInfo", "GetUtilizationRates", "GetEncoderUtilization", "GetDecoderUtilization",
	"GetTemperature", "GetPowerUsage", "GetTotalEnergyConsumption", "GetClockInfo(SM)", "GetClockInfo(MEM)",
	"GetClockInfo(GRAPHICS)", "GetPcieThroughput(TX)", "GetPcieThroughput(RX)", "GetCurrentClocksEventReasons",
	"GetTotalEccErrors(corrected)", "GetTotalEccErrors(uncorrected)", "GetComputeRunningProcesses",
	"GetProcessUtilization", "GpmMetricsGet",
}

func (c call) String() string { return callNames[c] }

// gpu is one device the receiver reports: a physical GPU or a MIG device.
type gpu struct {
	handle nvml.Device

	uuid     string
	name     string
	index    int
	pciBusID string

	// MIG devices: the physical GPU's UUID and the instance ids.
	parentUUID        string
	gpuInstanceID     int
	computeInstanceID int

	unsupported [numCalls]bool

	// failed is set when the GPU answered GPU_IS_LOST or UNKNOWN during the
	// current scrape; wasFailed remembers the previous scrape, so a GPU that
	// stays lost is counted as lost once.
	failed, wasFailed bool

	// lastProcUtilTS is the newest process-utilization sample seen (µs),
	// passed back to NVML so that each scrape gets only newer samples.
	lastProcUtilTS uint64

	// PCIe byte counters, integrated from NVML's sampled KB/s throughput.
	ioTx, ioRx float64
	ioAt       time.Time

	// GPM samples, alternated between scrapes (nil when GPM is off or
	// unsupported on this device).
	gpmPrev, gpmCur nvml.GpmSample
	gpmPrimed       bool
}

func (g *gpu) isMIG() bool { return g.parentUUID != "" }

// throttleReasons maps NVML's clocks-event (throttle) reason bits to the
// names of the hw.gpu.throttle.reason attribute.
var throttleReasons = []struct {
	bit  uint64
	name string
}{
	{nvml.ClocksEventReasonGpuIdle, "gpu_idle"},
	{nvml.ClocksEventReasonApplicationsClocksSetting, "applications_clocks_setting"},
	{nvml.ClocksEventReasonSwPowerCap, "sw_power_cap"},
	{nvml.ClocksThrottleReasonHwSlowdown, "hw_slowdown"},
	{nvml.ClocksEventReasonSyncBoost, "sync_boost"},
	{nvml.ClocksEventReasonSwThermalSlowdown, "sw_thermal_slowdown"},
	{nvml.ClocksThrottleReasonHwThermalSlowdown, "hw_thermal_slowdown"},
	{nvml.ClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
	{nvml.ClocksEventReasonDisplayClockSetting, "display_clock_setting"},
	{nvml.ClocksEventReasonBoardLimit, "board_limit"},
	{nvml.ClocksEventReasonReliability, "reliability"},
}

// appendThrottleReasons appends the names of the active reasons in mask;
// bits this receiver does not know are reported by value rather than lost.
func appendThrottleReasons(dst []string, mask uint64) []string {
	for _, r := range throttleReasons {
		if mask&r.bit != 0 {
			dst = append(dst, r.name)
			mask &^= r.bit
		}
	}
	for bit := uint64(1); mask != 0 && bit != 0; bit <<= 1 {
		if mask&bit != 0 {
			dst = append(dst, fmt.Sprintf("unknown_0x%x", bit))
			mask &^= bit
		}
	}
	return dst
}

// pciBusID formats NVML's PCI info as domain:bus:device.function.
func pciBusID(p nvml.PciInfo) string {
	b := make([]byte, 0, len(p.BusIdLegacy))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	if len(b) > 0 {
		return strings.ToLower(string(b))
	}
	return fmt.Sprintf("%08x:%02x:%02x.0", p.Domain, p.Bus, p.Device)
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver"

import (
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver/internal/metadata"
)

// optional is a sampled value that may be absent (unsupported, failed).
type optional[T any] struct {
	v  T
	ok bool
}

func (o *optional[T]) set(v T) { o.v, o.ok = v, true }

// procSample is one process on one GPU.
type procSample struct {
	pid     uint32
	memory  optional[uint64]
	smUtil  optional[uint32]
	encUtil optional[uint32]
	decUtil optional[uint32]
}

// sample holds everything read from NVML for one GPU in one scrape, so that
// nothing is recorded for a GPU that fails half-way.
type sample struct {
	memUsed, memLimit, memReserved optional[uint64]
	util, memUtil, enc, dec        optional[uint32]
	temperature                    optional[uint32]
	powerMW                        optional[uint32]
	energyMJ                       optional[uint64]
	clockSM, clockMem, clockGfx    optional[uint32]
	throttle                       optional[uint64]
	eccCorrected, eccUncorrected   optional[uint64]
	ioTx, ioRx                     optional[float64]
	gpmSM, gpmTensor, gpmDRAM      optional[float64]
	procs                          []procSample
}

func (s *sample) reset() {
	procs := s.procs[:0]
	*s = sample{procs: procs}
}

// sampleGPU reads one GPU. It stops at the first sign that the GPU is lost.
func (s *nvmlScraper) sampleGPU(g *gpu, smp *sample, now time.Time) {
	g.wasFailed, g.failed = g.failed, false
	h := g.handle
	ok := func(c call, ret nvml.Return) bool { return s.check(g, c, ret) }

	// Memory first: it is supported everywhere, so a lost GPU shows here.
	if !g.unsupported[callMemoryV2] {
		m, ret := h.GetMemoryInfo_v2()
		if ok(callMemoryV2, ret) {
			smp.memUsed.set(m.Used)
			smp.memLimit.set(m.Total - m.Reserved)
			smp.memReserved.set(m.Reserved)
		}
	}
	if g.failed {
		return
	}
	if !smp.memUsed.ok && g.unsupported[callMemoryV2] && !g.unsupported[callMemoryV1] {
		m, ret := h.GetMemoryInfo()
		if ok(callMemoryV1, ret) {
			smp.memUsed.set(m.Used)
			smp.memLimit.set(m.Total)
		}
	}
	if g.failed {
		return
	}

	if !g.unsupported[callUtilization] {
		u, ret := h.GetUtilizationRates()
		if ok(callUtilization, ret) {
			smp.util.set(u.Gpu)
			smp.memUtil.set(u.Memory)
		}
	}
	if !g.unsupported[callEncoder] && !g.failed {
		v, _, ret := h.GetEncoderUtilization()
		if ok(callEncoder, ret) {
			smp.enc.set(v)
		}
	}
	if !g.unsupported[callDecoder] && !g.failed {
		v, _, ret := h.GetDecoderUtilization()
		if ok(callDecoder, ret) {
			smp.dec.set(v)
		}
	}
	if !g.unsupported[callTemperature] && !g.failed {
		v, ret := h.GetTemperature(nvml.TEMPERATURE_GPU)
		if ok(callTemperature, ret) {
			smp.temperature.set(v)
		}
	}
	if !g.unsupported[callPower] && !g.failed {
		v, ret := h.GetPowerUsage()
		if ok(callPower, ret) {
			smp.powerMW.set(v)
		}
	}
	if !g.unsupported[callEnergy] && !g.failed {
		v, ret := h.GetTotalEnergyConsumption()
		if ok(callEnergy, ret) {
			smp.energyMJ.set(v)
		}
	}
	for _, c := range [...]struct {
		call call
		typ  nvml.ClockType
		dst  *optional[uint32]
	}{{callClockSM, nvml.CLOCK_SM, &smp.clockSM}, {callClockMem, nvml.CLOCK_MEM, &smp.clockMem}, {callClockGraphics, nvml.CLOCK_GRAPHICS, &smp.clockGfx}} {
		if g.unsupported[c.call] || g.failed {
			continue
		}
		v, ret := h.GetClockInfo(c.typ)
		if ok(c.call, ret) {
			c.dst.set(v)
		}
	}
	s.samplePCIe(g, smp, now)
	if !g.unsupported[callThrottle] && !g.failed {
		v, ret := h.GetCurrentClocksEventReasons()
		if ok(callThrottle, ret) {
			smp.throttle.set(v)
		}
	}
	if !g.unsupported[callEccCorrected] && !g.failed {
		v, ret := h.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC)
		if ok(callEccCorrected, ret) {
			smp.eccCorrected.set(v)
		}
	}
	if !g.unsupported[callEccUncorrected] && !g.failed {
		v, ret := h.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
		if ok(callEccUncorrected, ret) {
			smp.eccUncorrected.set(v)
		}
	}
	if !g.failed {
		s.sampleGPM(g, smp)
	}
	if !g.failed {
		s.sampleProcesses(g, smp)
	}
}

// samplePCIe turns NVML's throughput (KiB/s over a short window) into byte
// counters by integrating over the time between scrapes. NVML has no
// cumulative PCIe byte counter, so hw.gpu.io is an estimate whose accuracy
// depends on the traffic being steady across the scrape interval.
func (s *nvmlScraper) samplePCIe(g *gpu, smp *sample, now time.Time) {
	if g.failed || (g.unsupported[callPcieTx] && g.unsupported[callPcieRx]) {
		return
	}
	var dt float64
	if !g.ioAt.IsZero() {
		dt = now.Sub(g.ioAt).Seconds()
	}
	g.ioAt = now
	if !g.unsupported[callPcieTx] {
		v, ret := g.handle.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES)
		if s.check(g, callPcieTx, ret) {
			g.ioTx += float64(v) * 1024 * dt
			smp.ioTx.set(g.ioTx)
		}
	}
	if !g.unsupported[callPcieRx] && !g.failed {
		v, ret := g.handle.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES)
		if s.check(g, callPcieRx, ret) {
			g.ioRx += float64(v) * 1024 * dt
			smp.ioRx.set(g.ioRx)
		}
	}
}

func (s *nvmlScraper) sampleProcesses(g *gpu, smp *sample) {
	if g.unsupported[callProcesses] {
		return
	}
	infos, ret := g.handle.GetComputeRunningProcesses()
	if !s.check(g, callProcesses, ret) {
		return
	}
	for _, p := range infos {
		ps := procSample{pid: p.Pid}
		// NVML reports "not available" (all ones) where it cannot account
		// a process's memory, e.g. without permission in some containers.
		if p.UsedGpuMemory != ^uint64(0) {
			ps.memory.set(p.UsedGpuMemory)
		}
		smp.procs = append(smp.procs, ps)
	}
	if g.unsupported[callProcessUtil] || len(smp.procs) == 0 {
		return
	}
	samples, ret := processUtilization(g.handle, g.lastProcUtilTS)
	if !s.check(g, callProcessUtil, ret) {
		return
	}
	// Several samples per process may come back; keep the newest of each.
	for _, u := range samples {
		if u.TimeStamp > g.lastProcUtilTS {
			g.lastProcUtilTS = u.TimeStamp
		}
	}
	for i := range smp.procs {
		var newest uint64
		for _, u := range samples {
			if u.Pid == smp.procs[i].pid && u.TimeStamp >= newest {
				newest = u.TimeStamp
				smp.procs[i].smUtil.set(u.SmUtil)
				smp.procs[i].encUtil.set(u.EncUtil)
				smp.procs[i].decUtil.set(u.DecUtil)
			}
		}
	}
}

const (
	mhz = 1e6
)

// record turns one GPU's sample into points and emits them under the GPU's
// resource.
func (s *nvmlScraper) record(g *gpu, smp *sample, ts pcommon.Timestamp) {
	mb := s.mb
	id := g.uuid
	if g.failed {
		recordStatus(mb, ts, id, metadata.AttributeHwStateFailed)
		s.emitResource(g)
		return
	}
	recordStatus(mb, ts, id, metadata.AttributeHwStateOk)
	if smp.memUsed.ok {
		mb.RecordHwGpuMemoryUsageDataPoint(ts, int64(smp.memUsed.v), id, metadata.AttributeHwTypeGpu)
		mb.RecordHwGpuMemoryLimitDataPoint(ts, int64(smp.memLimit.v), id, metadata.AttributeHwTypeGpu)
		if smp.memLimit.v > 0 {
			// semconv's hw.gpu.memory.utilization: the share of memory in use.
			mb.RecordHwGpuMemoryUtilizationDataPoint(ts, float64(smp.memUsed.v)/float64(smp.memLimit.v), id, metadata.AttributeHwTypeGpu)
		}
	}
	if smp.memReserved.ok {
		mb.RecordHwGpuMemoryReservedDataPoint(ts, int64(smp.memReserved.v), id, metadata.AttributeHwTypeGpu)
	}
	if smp.util.ok {
		mb.RecordHwGpuUtilizationDataPoint(ts, float64(smp.util.v)/100, id, metadata.AttributeHwTypeGpu, metadata.AttributeHwGpuTaskGeneral)
		mb.RecordHwGpuMemoryControllerUtilizationDataPoint(ts, float64(smp.memUtil.v)/100, id, metadata.AttributeHwTypeGpu)
	}
	if smp.enc.ok {
		mb.RecordHwGpuUtilizationDataPoint(ts, float64(smp.enc.v)/100, id, metadata.AttributeHwTypeGpu, metadata.AttributeHwGpuTaskEncoder)
	}
	if smp.dec.ok {
		mb.RecordHwGpuUtilizationDataPoint(ts, float64(smp.dec.v)/100, id, metadata.AttributeHwTypeGpu, metadata.AttributeHwGpuTaskDecoder)
	}
	if smp.temperature.ok {
		mb.RecordHwTemperatureDataPoint(ts, float64(smp.temperature.v), id, metadata.AttributeHwTypeGpu)
	}
	if smp.powerMW.ok {
		mb.RecordHwPowerDataPoint(ts, float64(smp.powerMW.v)/1000, id, metadata.AttributeHwTypeGpu)
	}
	if smp.energyMJ.ok {
		mb.RecordHwEnergyDataPoint(ts, float64(smp.energyMJ.v)/1000, id, metadata.AttributeHwTypeGpu)
	}
	if smp.clockSM.ok {
		mb.RecordHwGpuClockFrequencyDataPoint(ts, float64(smp.clockSM.v)*mhz, id, metadata.AttributeHwTypeGpu, metadata.AttributeHwGpuClockTypeSm)
	}
	if smp.clockMem.ok {
		mb.RecordHwGpuClockFrequencyDataPoint(ts, float64(smp.clockMem.v)*mhz, id, metadata.AttributeHwTypeGpu, metadata.AttributeHwGpuClockTypeMemory)
	}
	if smp.clockGfx.ok {
		mb.RecordHwGpuClockFrequencyDataPoint(ts, float64(smp.clockGfx.v)*mhz, id, metadata.AttributeHwTypeGpu, metadata.AttributeHwGpuClockTypeGraphics)
	}
	if smp.ioTx.ok {
		mb.RecordHwGpuIoDataPoint(ts, int64(smp.ioTx.v), id, metadata.AttributeHwTypeGpu, metadata.AttributeNetworkIoDirectionTransmit)
	}
	if smp.ioRx.ok {
		mb.RecordHwGpuIoDataPoint(ts, int64(smp.ioRx.v), id, metadata.AttributeHwTypeGpu, metadata.AttributeNetworkIoDirectionReceive)
	}
	if smp.throttle.ok {
		s.reasons = appendThrottleReasons(s.reasons[:0], smp.throttle.v)
		for _, r := range s.reasons {
			mb.RecordHwGpuThrottleDataPoint(ts, 1, id, metadata.AttributeHwTypeGpu, r)
		}
	}
	if smp.eccCorrected.ok {
		mb.RecordHwErrorsDataPoint(ts, int64(smp.eccCorrected.v), id, metadata.AttributeHwTypeGpu, metadata.AttributeErrorTypeCorrected)
	}
	if smp.eccUncorrected.ok {
		mb.RecordHwErrorsDataPoint(ts, int64(smp.eccUncorrected.v), id, metadata.AttributeHwTypeGpu, metadata.AttributeErrorTypeUncorrected)
	}
	if s.xid != nil {
		for _, c := range s.xid.counts(id) {
			mb.RecordHwErrorsDataPoint(ts, c.n, id, metadata.AttributeHwTypeGpu, metadata.AttributeErrorTypeXid,
				metadata.WithHwGpuXidMetricAttribute(int64(c.code)))
		}
	}
	if smp.gpmSM.ok {
		mb.RecordHwGpuSmUtilizationDataPoint(ts, smp.gpmSM.v/100, id, metadata.AttributeHwTypeGpu)
	}
	if smp.gpmTensor.ok {
		mb.RecordHwGpuTensorUtilizationDataPoint(ts, smp.gpmTensor.v/100, id, metadata.AttributeHwTypeGpu)
	}
	if smp.gpmDRAM.ok {
		mb.RecordHwGpuDramUtilizationDataPoint(ts, smp.gpmDRAM.v/100, id, metadata.AttributeHwTypeGpu)
	}
	s.recordProcesses(g, smp, ts)
	s.emitResource(g)
}

func recordStatus(mb *metadata.MetricsBuilder, ts pcommon.Timestamp, id string, current metadata.AttributeHwState) {
	for _, st := range [...]metadata.AttributeHwState{metadata.AttributeHwStateOk, metadata.AttributeHwStateDegraded, metadata.AttributeHwStateFailed} {
		var v int64
		if st == current {
			v = 1
		}
		mb.RecordHwStatusDataPoint(ts, v, id, metadata.AttributeHwTypeGpu, st)
	}
}

func (s *nvmlScraper) emitResource(g *gpu) {
	rb := s.mb.NewResourceBuilder()
	rb.SetHwID(g.uuid)
	if g.name != "" {
		rb.SetHwModel(g.name)
	}
	rb.SetHwVendor("NVIDIA")
	if s.driverVersion != "" {
		rb.SetHwDriverVersion(s.driverVersion)
	}
	rb.SetHwGpuIndex(int64(g.index))
	if g.pciBusID != "" {
		rb.SetHwGpuPciBusID(g.pciBusID)
	}
	if g.isMIG() {
		rb.SetHwParent(g.parentUUID)
		rb.SetHwGpuMigGpuInstanceID(int64(g.gpuInstanceID))
		rb.SetHwGpuMigComputeInstanceID(int64(g.computeInstanceID))
	}
	s.mb.EmitForResource(metadata.WithResource(rb.Emit()))
}

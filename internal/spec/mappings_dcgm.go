// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// dcgm-exporter's DCGM_FI_* names (its default counter set plus the
// profiling fields of the DCP set), recognised on any resource. Units are
// those of dcgm-exporter's counter descriptions.
//
// Deliberately unmapped:
//   - DCGM_FI_DEV_FB_FREE: hw.gpu.memory.limit is used + free, a sum no
//     mapping or ratio derivation can express; for the same reason
//     hw.gpu.memory.utilization (used / (used + free)) is not derived.
//   - DCGM_FI_DEV_FB_TOTAL (not default): includes the reserved memory the
//     limit excludes.
//   - DCGM_FI_DEV_XID_ERRORS: a gauge holding the last XID code, not a count.
//   - DCGM_FI_DEV_MEMORY_TEMP: memory, not core, temperature.
//   - DCGM_FI_DEV_CLOCK_THROTTLE_REASONS (DCGM_FI_DEV_CLOCKS_EVENT_REASONS):
//     a bit mask; hw.gpu.throttle needs one point per active reason.
//   - DCGM_FI_PROF_GR_ENGINE_ACTIVE: graphics-engine activity, a different
//     measure from hw.gpu.utilization (general), which DCGM_FI_DEV_GPU_UTIL
//     feeds.
//   - DCGM_FI_PROF_PCIE_{TX,RX}_BYTES: rates (bytes per second), not the
//     cumulative bytes hw.gpu.io counts.
//   - DCGM_FI_DEV_PCIE_REPLAY_COUNTER, the NVLink, remapped-row and vGPU
//     fields: no unified metric.
func init() {
	const e = SourceDCGM
	labels := map[string]string{
		"UUID":       AttrHwID,
		"modelName":  AttrHwModel,
		"gpu":        AttrHwGpuIndex,
		"pci_bus_id": AttrHwGpuPciBusID,
		"GPU_I_ID":   AttrHwGpuMigGI,
		"pod":        AttrK8sPodName,
		"namespace":  AttrK8sNamespaceName,
		"container":  AttrK8sContainerName,
	}
	gpu := map[string]string{AttrHwType: "gpu"}
	mappingTables[e] = []Mapping{
		{Engine: e, Source: "DCGM_FI_DEV_FB_USED", SourceType: "gauge", SourceUnit: "MiB", Target: HwGpuMemoryUsage, Labels: labels},
		{Engine: e, Source: "DCGM_FI_DEV_FB_RESERVED", SourceType: "gauge", SourceUnit: "MiB", Target: HwGpuMemoryReserved, Labels: labels},

		{Engine: e, Source: "DCGM_FI_DEV_GPU_UTIL", SourceType: "gauge", SourceUnit: "%", Target: HwGpuUtilization, Labels: labels,
			Set: map[string]string{AttrHwGpuTask: "general"}},
		{Engine: e, Source: "DCGM_FI_DEV_ENC_UTIL", SourceType: "gauge", SourceUnit: "%", Target: HwGpuUtilization, Labels: labels,
			Set: map[string]string{AttrHwGpuTask: "encoder"}},
		{Engine: e, Source: "DCGM_FI_DEV_DEC_UTIL", SourceType: "gauge", SourceUnit: "%", Target: HwGpuUtilization, Labels: labels,
			Set: map[string]string{AttrHwGpuTask: "decoder"}},
		{Engine: e, Source: "DCGM_FI_DEV_MEM_COPY_UTIL", SourceType: "gauge", SourceUnit: "%", Target: HwGpuMemoryControllerUtilization, Labels: labels,
			Note: "memory-controller busy time, not the share of memory in use (hw.gpu.memory.utilization)"},

		{Engine: e, Source: "DCGM_FI_PROF_SM_ACTIVE", SourceType: "gauge", SourceUnit: "1", Target: HwGpuSmUtilization, Labels: labels},
		{Engine: e, Source: "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", SourceType: "gauge", SourceUnit: "1", Target: HwGpuTensorUtilization, Labels: labels},
		{Engine: e, Source: "DCGM_FI_PROF_DRAM_ACTIVE", SourceType: "gauge", SourceUnit: "1", Target: HwGpuDramUtilization, Labels: labels},

		{Engine: e, Source: "DCGM_FI_DEV_GPU_TEMP", SourceType: "gauge", SourceUnit: "Cel", Target: HwGpuTemperature, Labels: labels},
		{Engine: e, Source: "DCGM_FI_DEV_SM_CLOCK", SourceType: "gauge", SourceUnit: "MHz", Target: HwGpuClockFrequency, Labels: labels,
			Set: map[string]string{AttrHwGpuClockType: "sm"}},
		{Engine: e, Source: "DCGM_FI_DEV_MEM_CLOCK", SourceType: "gauge", SourceUnit: "MHz", Target: HwGpuClockFrequency, Labels: labels,
			Set: map[string]string{AttrHwGpuClockType: "memory"}},

		{Engine: e, Source: "DCGM_FI_DEV_POWER_USAGE", SourceType: "gauge", SourceUnit: "W", Target: HwPower, Labels: labels, Set: gpu},
		{Engine: e, Source: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", SourceType: "counter", SourceUnit: "mJ", Target: HwEnergy, Labels: labels, Set: gpu,
			Note: "since boot, mJ → J"},

		{Engine: e, Source: "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", SourceType: "counter", SourceUnit: "{error}", Target: HwErrors, Labels: labels,
			Set: map[string]string{AttrHwType: "gpu", AttrErrorType: "corrected"}, Note: "single-bit (corrected) volatile ECC errors"},
		{Engine: e, Source: "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", SourceType: "counter", SourceUnit: "{error}", Target: HwErrors, Labels: labels,
			Set: map[string]string{AttrHwType: "gpu", AttrErrorType: "uncorrected"}, Note: "double-bit (uncorrected) volatile ECC errors"},
	}
	setGPUType(mappingTables[e])
}

// setGPUType adds hw.type=gpu to every mapping of a table that feeds a GPU
// metric: the spec has it on every GPU point.
func setGPUType(table []Mapping) {
	gpuMetric := map[string]bool{}
	for _, t := range metrics { // the index is not built yet at init
		gpuMetric[t.Name] = t.Group == GroupGPU
	}
	for i, m := range table {
		if !gpuMetric[m.Target] {
			continue
		}
		if _, has := m.Set[AttrHwType]; has {
			continue
		}
		set := map[string]string{AttrHwType: "gpu"}
		for k, v := range m.Set {
			set[k] = v
		}
		table[i].Set = set
	}
}

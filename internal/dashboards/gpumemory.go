// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// UIDGPUMemory is GPU memory and leaks.
const UIDGPUMemory = "llmops-gpu-memory"

// leakWindow is the window of the per-process growth panel: the rootcause
// connector's default leak.window, so the panel shows the slope the leak
// detector judges.
const leakWindow = "10m"

// memoryIncidentKinds are the incidents marked on the memory panels.
var memoryIncidentKinds = []string{spec.IncidentKindGPUMemoryLeak, spec.IncidentKindGPUOOM}

func gpuMemoryBoard() *board {
	d := newBoard(UIDGPUMemory, "LLMOps / GPU memory and leaks",
		"Where GPU memory goes, per GPU and per process, how fast it grows and when it runs out; red marks are the rootcause connector's memory incidents (gpu_memory_leak, gpu_oom).",
		append([]cogVariable{prometheusVar()}, labelVars()...)...)
	d.b.Annotation(dashboard.NewAnnotationQueryBuilder().
		Name("Memory incidents").
		Datasource(promDS).
		Enable(true).
		IconColor("red").
		Expr(activeIncidents(kindsMatch(memoryIncidentKinds...))).
		Step("60s").
		TitleFormat(legend(lKind, lSeverity)).
		TextFormat("{{" + lSubject + "}} {{" + lLayer + "}} (incident {{" + lIncidentID + "}})").
		TagKeys(lKind + "," + lHwID + "," + lPid).
		UseValueForTime(false))

	d.row("GPUs")
	d.add(12, 8, gpuMemory())
	d.add(12, 8, gpuMemoryRatio())

	d.row("Processes")
	d.add(12, 8, processMemory())
	d.add(12, 8, graph("GPU memory growth per process",
		"Per-second slope of process.gpu.memory.usage over "+leakWindow+" (PromQL deriv); a leak holds a steady positive slope.",
		"Bps",
		q(agg("sum", processBy, "deriv("+sel(spec.ProcessGpuMemoryUsage, nodeScope)+"["+leakWindow+"])"), processLegend)))

	d.row("Leak detection (rootcause)")
	d.add(12, 8, graph("GPU memory growth rate",
		"hw.gpu.memory.growth_rate: the rootcause connector's robust (Theil–Sen) slope of each GPU's memory over its leak window.",
		"Bps",
		q(agg("max", gpuBy, sel(spec.HwGpuMemoryGrowthRate, nodeScope)), gpuLegend)))
	d.add(12, 8, below(graph("Time to exhaustion",
		"hw.gpu.memory.time_to_exhaustion: when each GPU's memory is full at its current growth; only GPUs whose memory grows have a value. Shaded: below the alert threshold.",
		"s",
		q(agg("min", gpuBy, sel(spec.HwGpuMemoryTimeToExhaustion, nodeScope)), gpuLegend)).Min(0),
		TimeToExhaustionSeconds))

	d.row("Now")
	procCols := []column{
		{lNode, "Node"}, {lHwID, "GPU"}, {lPid, "PID"}, {lExe, "Executable"},
		{lNamespace, "Namespace"}, {lPod, "Pod"}, {"Value", "GPU memory"},
	}
	d.add(24, 8, tablePanel("GPU memory by process",
		"process.gpu.memory.usage now, largest first.",
		procCols,
		instant("sort_desc("+agg("sum", []string{lNode, lHwID, lPid, lExe, lNamespace, lPod},
			sel(spec.ProcessGpuMemoryUsage, nodeScope))+")")).
		OverrideByName("Value", []dashboard.DynamicConfigValue{{Id: "unit", Value: "bytes"}}))
	return d
}

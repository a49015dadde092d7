// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// UIDNode is the node overview: what a GPU inference node is doing now.
const UIDNode = "llmops-node"

func nodeOverview() *board {
	d := newBoard(UIDNode, "LLMOps / Node overview",
		"A GPU inference node: its GPUs, the processes on them, the inference engines and the incidents the rootcause connector found. Every query reads the unified metrics as the otelcol-llmops agent exports them.",
		append([]cogVariable{prometheusVar()}, labelVars()...)...)

	d.row("GPUs")
	d.add(12, 8, gpuMemory())
	d.add(12, 8, ratio("GPU utilization",
		"hw.gpu.utilization of the general (compute) engine: the share of time a kernel ran.",
		q(agg("max", gpuBy, sel(spec.HwGpuUtilization, nodeScope, eq(spec.AttrHwGpuTask, "general"))), gpuLegend)))
	d.add(8, 7, graph("GPU temperature",
		"hw.temperature of each GPU.", "celsius",
		q(agg("max", gpuBy, sel(spec.HwTemperature, nodeScope, eq(spec.AttrHwType, "gpu"))), gpuLegend)))
	d.add(8, 7, graph("GPU power",
		"hw.power drawn by each GPU.", "watt",
		q(agg("max", gpuBy, sel(spec.HwPower, nodeScope)), gpuLegend)).Min(0))
	throttled := agg("max", append(append([]string{}, gpuBy...), lThrottle), sel(spec.HwGpuThrottle, nodeScope))
	d.add(8, 7, graph("GPU clock throttle reasons",
		"hw.gpu.throttle: 1 for each reason the clocks are held back (hw.gpu.throttle.reason); a GPU running at full clocks shows 0.",
		"short",
		q(orZero(throttled, gpuBy, agg("max", gpuBy, sel(nodeAnchor, nodeScope))), legend(lNode, lHwID, lThrottle))).
		Min(0))
	d.add(24, 6, gpuErrors())

	d.row("Processes")
	d.add(12, 8, processMemory())
	podBy := []string{lNode, lNamespace, lPod}
	d.add(12, 8, stacked(graph("GPU memory per pod",
		"process.gpu.memory.usage summed per Kubernetes pod (processes outside a pod are one series with no pod).",
		"bytes",
		q(agg("sum", podBy, sel(spec.ProcessGpuMemoryUsage, nodeScope)), "{{"+lNamespace+"}}/{{"+lPod+"}}"))).Min(0))

	d.row("Engines")
	d.add(6, 8, singleStat("Engines up",
		"llm.engine.up of each scraped engine endpoint: 1 when its /metrics answered at the last scrape.",
		"none",
		q(agg("max", []string{lEngine, lTarget}, sel(spec.EngineUp, engineScope)), legend(lEngine, lTarget))).
		Mappings(valueText("1", "up", "green", "0", "down", "red")))
	d.add(6, 8, running())
	d.add(6, 8, waiting())
	d.add(6, 8, graph("Tokens per second",
		"Rate of llm.engine.tokens by gen_ai.token.type (input: prompt tokens processed; output: tokens generated).",
		"short",
		q(agg("sum", append(append([]string{}, engineBy...), lTokenType), rate(sel(spec.EngineTokens, engineScope))),
			legend(lEngine, lModel, lTokenType))).Min(0))

	d.row("Incidents")
	d.add(16, 8, incidentTable("Active incidents",
		"llm.incident.active: the incidents firing now, one row each. Click a row to open it in the drill-down dashboard.").
		DataLinks([]cogLink{dashboard.NewDashboardLinkBuilder("Drill down").
			Type(dashboard.DashboardLinkTypeLink).
			Url(fmt.Sprintf("/d/%s/?${__url_time_range}&${__all_variables}", UIDDrilldown))}))
	d.add(8, 8, singleStat("Incidents fired in the time range",
		"Increase of llm.incident.fired over the dashboard's time range, by severity.",
		"none",
		q(agg("sum", []string{lSeverity}, "increase("+sel(spec.IncidentFired, nodeScope)+"[$__range])"), legend(lSeverity)).
			Instant()).
		Thresholds(steps("green", 1, "orange")))
	return d
}

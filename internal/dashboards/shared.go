// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// Panels more than one dashboard shows.

var (
	gpuLegend     = legend(lNode, lHwID)
	processLegend = legend(lHwID, lExe) + " ({{" + lPid + "}})"
	engineLegend  = legend(lEngine, lModel)
)

// gpuMemory: used and total memory of each GPU.
func gpuMemory() *timeseries.PanelBuilder {
	p := graph("GPU memory used and limit",
		"hw.gpu.memory.usage per GPU; the dashed line of the same GPU is hw.gpu.memory.limit.",
		"bytes",
		q(agg("sum", gpuBy, sel(spec.HwGpuMemoryUsage, nodeScope)), gpuLegend+" used"),
		q(agg("sum", gpuBy, sel(spec.HwGpuMemoryLimit, nodeScope)), gpuLegend+" limit"),
	).Min(0)
	return dashedSeries(p, refID(1))
}

// gpuMemoryRatio: the share of each GPU's memory in use, against
// GPUMemoryUsedRatio.
func gpuMemoryRatio() *timeseries.PanelBuilder {
	return above(ratio("GPU memory used ratio",
		"hw.gpu.memory.usage / hw.gpu.memory.limit per GPU. Dashed line: the alert threshold.",
		q(agg("sum", gpuBy, sel(spec.HwGpuMemoryUsage, nodeScope))+" / "+
			agg("sum", gpuBy, sel(spec.HwGpuMemoryLimit, nodeScope)), gpuLegend),
	), GPUMemoryUsedRatio)
}

// gpuErrors: XID and ECC errors per interval. The ECC counters exist (at 0)
// on every GPU with ECC enabled, so a healthy GPU shows 0, not nothing.
func gpuErrors() *timeseries.PanelBuilder {
	by := append(append([]string{}, gpuBy...), lErrorType, lXid)
	return bars(graph("GPU errors (XID, ECC)",
		"Increase of hw.errors per interval, by error.type (corrected / uncorrected ECC, xid) and XID code.",
		"short",
		q(agg("sum", by, increase(sel(spec.HwErrors, nodeScope))), legend(lNode, lHwID, lErrorType, lXid)),
	)).Min(0)
}

// processMemory: GPU memory of each process.
func processMemory() *timeseries.PanelBuilder {
	return stacked(graph("GPU memory per process",
		"process.gpu.memory.usage, stacked per GPU process.",
		"bytes",
		q(agg("sum", processBy, sel(spec.ProcessGpuMemoryUsage, nodeScope)), processLegend),
	)).Min(0)
}

// kvCache: KV-cache utilization against KVCacheSaturation.
func kvCache() *timeseries.PanelBuilder {
	return above(ratio("KV-cache utilization",
		"llm.engine.kv_cache.utilization per engine and model (the fullest instance). Dashed line: the saturation threshold.",
		q(agg("max", engineBy, sel(spec.EngineKvCacheUtilization, engineScope)), engineLegend),
	), KVCacheSaturation)
}

// waiting: requests queued in the engines.
func waiting() *timeseries.PanelBuilder {
	return graph("Waiting requests",
		"llm.engine.requests.waiting: requests queued, not yet scheduled.",
		"short",
		q(agg("sum", engineBy, sel(spec.EngineRequestsWaiting, engineScope)), engineLegend),
	).Min(0)
}

// running: requests the engines are running.
func running() *timeseries.PanelBuilder {
	return graph("Running requests",
		"llm.engine.requests.running: requests in the running batch.",
		"short",
		q(agg("sum", engineBy, sel(spec.EngineRequestsRunning, engineScope)), engineLegend),
	).Min(0)
}

// p99 is a p99 latency panel of a histogram, per engine and model.
func p99(title, description, metric string) *timeseries.PanelBuilder {
	return graph(title, description, "s",
		q(quantile(0.99, metric, engineScope, engineBy), engineLegend),
	).Min(0)
}

func ttftP99() *timeseries.PanelBuilder {
	return above(p99("Time to first token p99",
		"p99 of gen_ai.server.time_to_first_token per engine and model. Dashed line: the latency alert's floor (it fires above the p99's 30-minute baseline and above this line).",
		spec.GenAIServerTimeToFirstToken), TTFTP99Seconds)
}

func tpotP99() *timeseries.PanelBuilder {
	return above(p99("Time per output token p99",
		"p99 of gen_ai.server.time_per_output_token (one value per request) per engine and model. Dashed line: the latency alert's floor (it fires above the p99's 30-minute baseline and above this line).",
		spec.GenAIServerTimePerOutputToken), TPOTP99Seconds)
}

func durationP99() *timeseries.PanelBuilder {
	return p99("Request duration p99",
		"p99 of gen_ai.server.request.duration (end to end, per request) per engine and model.",
		spec.GenAIServerRequestDuration)
}

// activeIncidents is llm.incident.active where it is 1: the incidents
// firing now.
func activeIncidents(extra ...string) string {
	return sel(spec.IncidentActive, incidentScope, extra...) + " == 1"
}

// incidentColumns are the incident table's columns.
var incidentColumns = []column{
	{lKind, "Kind"},
	{lSubject, "Subject"},
	{lSeverity, "Severity"},
	{lLayer, "Layer"},
	{lIncidentID, "Incident id"},
}

// incidentTable lists the firing incidents, critical ones in red.
func incidentTable(title, description string) *table.PanelBuilder {
	return tablePanel(title, description, incidentColumns, instant(activeIncidents())).
		NoValue("No incident is firing").
		OverrideByName(lSeverity, []dashboard.DynamicConfigValue{
			{Id: "mappings", Value: valueText(
				spec.SeverityCritical, spec.SeverityCritical, "red",
				spec.SeverityWarning, spec.SeverityWarning, "orange")},
			{Id: "custom.cellOptions", Value: map[string]any{"type": string(common.TableCellDisplayModeColorText)}},
		})
}

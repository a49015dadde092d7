// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// The variables every dashboard has: the Prometheus datasource, then
// cluster → node → engine → model, each narrowing the next one's values.
// Each is multi-valued with an All option whose value is .*, which also
// matches a series without the label (a node without k8s.cluster.name, an
// engine that names no model).

// allValue is what a variable's All option puts in its matchers.
const allValue = ".*"

// anchor metrics: the series a variable's values are read from. A GPU node
// always has GPU memory; an engine always has llm.engine.up (0 when its
// endpoint does not answer); the running-requests gauge carries the model
// where the engine names one.
var (
	nodeAnchor   = spec.HwGpuMemoryUsage
	engineAnchor = spec.EngineUp
	modelAnchor  = spec.EngineRequestsRunning
)

func prometheusVar() cog.Builder[dashboard.VariableModel] {
	return datasourceVar(dsPrometheusVar, "Prometheus", pluginPrometheus)
}

// tempoVar and lokiVar choose where the drill-down's links lead.
func tempoVar() cog.Builder[dashboard.VariableModel] {
	return datasourceVar(dsTempoVar, "Tempo (traces)", pluginTempo)
}

func lokiVar() cog.Builder[dashboard.VariableModel] {
	return datasourceVar(dsLokiVar, "Logs (incident records)", pluginLoki)
}

func datasourceVar(name, label, plugin string) *dashboard.DatasourceVariableBuilder {
	return dashboard.NewDatasourceVariableBuilder(name).
		Label(label).
		Type(plugin).
		Regex("").
		Multi(false).
		IncludeAll(false)
}

// labelVars are cluster, node, engine and model.
func labelVars() []cog.Builder[dashboard.VariableModel] {
	byCluster := varCluster.match()
	byNode := varNode.match()
	return []cog.Builder[dashboard.VariableModel]{
		labelVar(varCluster, "Cluster", labelValues(nodeAnchor, varCluster.label)),
		labelVar(varNode, "Node", labelValues(nodeAnchor, varNode.label, byCluster)),
		labelVar(varEngine, "Engine", labelValues(engineAnchor, varEngine.label, byCluster, byNode)),
		labelVar(varModel, "Model", labelValues(modelAnchor, varModel.label, byCluster, byNode, varEngine.match())),
	}
}

// labelValues is `label_values(metric{matchers}, label)`.
func labelValues(metric, label string, matchers ...string) string {
	s := prom(metric).Name
	if len(matchers) > 0 {
		s += "{" + strings.Join(matchers, ", ") + "}"
	}
	return "label_values(" + s + ", " + label + ")"
}

func labelVar(v variable, label, query string) *dashboard.QueryVariableBuilder {
	all, allText := "$__all", "All"
	selected := true
	return dashboard.NewQueryVariableBuilder(v.name).
		Label(label).
		Datasource(promDS).
		Query(dashboard.StringOrMap{String: &query}).
		Definition(query).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).
		IncludeAll(true).
		AllValue(allValue).
		Current(dashboard.VariableOption{
			Selected: &selected,
			Text:     dashboard.StringOrArrayOfString{ArrayOfString: []string{allText}},
			Value:    dashboard.StringOrArrayOfString{ArrayOfString: []string{all}},
		})
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// UIDDrilldown goes from a slow or full signal to the profiler span behind
// it: exemplars on the latency and memory panels, and the incidents with
// links to their spans and records.
const UIDDrilldown = "llmops-drilldown"

func drilldownBoard() *board {
	vars := []cogVariable{prometheusVar(), tempoVar(), lokiVar()}
	d := newBoard(UIDDrilldown, "LLMOps / Drill-down",
		"From a symptom to its cause. While an incident fires, the rootcause connector puts exemplars carrying the implicated profiler span on the engine's latency histograms, KV-cache points and the process's GPU memory: click an exemplar to open the span in Tempo (the Prometheus datasource's exemplar link). The incident table links each incident to its record in the logs and to the profiler spans of its layer.",
		append(vars, labelVars()...)...)

	d.row("Latency (exemplars)")
	d.add(12, 8, exemplars(ttftP99()))
	d.add(12, 8, exemplars(durationP99()))

	d.row("Memory (exemplars)")
	d.add(12, 8, exemplars(graph("GPU memory per process",
		"process.gpu.memory.usage per GPU process.",
		"bytes",
		q(agg("sum", processBy, sel(spec.ProcessGpuMemoryUsage, nodeScope)), processLegend)).Min(0)))
	d.add(12, 8, exemplars(kvCache()))

	d.row("Incidents")
	d.add(24, 10, incidentTable("Firing incidents",
		"llm.incident.active: the incidents firing now. Click a cell for the incident's record in the logs (by incident.id) or the profiler spans under its layer in Tempo.").
		DataLinks([]cogLink{
			dashboard.NewDashboardLinkBuilder("Incident record (logs)").
				Type(dashboard.DashboardLinkTypeLink).
				TargetBlank(true).
				Url(exploreURL(dsLokiVar, map[string]any{
					"refId":      "A",
					"datasource": dsRef(pluginLoki, dsLokiVar),
					"queryType":  "range",
					"expr":       `{service_name=~".+"} | ` + lIncidentID + ` = "` + field(lIncidentID) + `"`,
				})),
			dashboard.NewDashboardLinkBuilder("Profiler spans of the layer (Tempo)").
				Type(dashboard.DashboardLinkTypeLink).
				TargetBlank(true).
				Url(exploreURL(dsTempoVar, map[string]any{
					"refId":      "A",
					"datasource": dsRef(pluginTempo, dsTempoVar),
					"queryType":  "traceql",
					"limit":      20,
					"query": `{ resource.` + spec.AttrServiceName + ` = "` + spec.ProfileServiceName + `" && span.` +
						spec.AttrProfileModulePath + ` =~ "` + field(lLayer) + `.*" }`,
				})),
		}))
	return d
}

// exemplars turns on the exemplars of every Prometheus target of a panel.
func exemplars(p cog.Builder[dashboard.Panel]) cog.Builder[dashboard.Panel] { return withExemplars{p} }

type withExemplars struct{ p cog.Builder[dashboard.Panel] }

func (w withExemplars) Build() (dashboard.Panel, error) {
	panel, err := w.p.Build()
	if err != nil {
		return panel, err
	}
	on := true
	for i, t := range panel.Targets {
		switch pq := t.(type) {
		case prometheus.Dataquery:
			pq.Exemplar = &on
			panel.Targets[i] = pq
		case *prometheus.Dataquery:
			pq.Exemplar = &on
		}
	}
	return panel, nil
}

// field is a data link's reference to a column of the clicked row,
// percent-encoded (it ends up inside a URL).
func field(label string) string { return "${__data.fields." + label + ":percentencode}" }

// grafanaVar is a ${…} reference Grafana fills in when the link is
// followed; exploreURL leaves them as they are.
var grafanaVar = regexp.MustCompile(`\$\{[^}]*\}`)

// exploreURL opens one query in Explore over the dashboard's time range.
func exploreURL(dsVar string, query map[string]any) string {
	panes := map[string]any{"llmops": map[string]any{
		"datasource": "${" + dsVar + "}",
		"queries":    []any{query},
		"range":      map[string]any{"from": "${__from}", "to": "${__to}"},
	}}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(panes); err != nil {
		panic(err)
	}
	js := strings.TrimSuffix(b.String(), "\n")
	// Escape everything but the variables.
	var out strings.Builder
	last := 0
	for _, m := range grafanaVar.FindAllStringIndex(js, -1) {
		out.WriteString(url.QueryEscape(js[last:m[0]]))
		out.WriteString(js[m[0]:m[1]])
		last = m[1]
	}
	out.WriteString(url.QueryEscape(js[last:]))
	return "/explore?schemaVersion=1&orgId=${__org}&panes=" + out.String()
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// Datasource plugins and the variables that choose an instance of each.
const (
	pluginPrometheus = "prometheus"
	pluginTempo      = "tempo"
	pluginLoki       = "loki"

	dsPrometheusVar = "datasource"
	dsTempoVar      = "tempo"
	dsLokiVar       = "loki"
)

func dsRef(plugin, variable string) common.DataSourceRef {
	uid := "${" + variable + "}"
	return common.DataSourceRef{Type: &plugin, Uid: &uid}
}

var promDS = dsRef(pluginPrometheus, dsPrometheusVar)

// gridWidth is Grafana's grid: 24 columns.
const gridWidth = 24

// board is a dashboard being laid out: panels flow left to right in rows of
// 24 columns, each gets the next id.
type board struct {
	b      *dashboard.DashboardBuilder
	nextID uint32
	x, y   uint32
	lineH  uint32 // height of the tallest panel of the current line
}

// tag is on every dashboard: the dashboards' links list them by it.
const tag = "llmops"

func newBoard(uid, title, description string, vars ...cog.Builder[dashboard.VariableModel]) *board {
	b := dashboard.NewDashboardBuilder(title).
		Uid(uid).
		Description(description).
		Tags([]string{tag, "otelcol-llmops"}).
		Editable().
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Time("now-1h", "now").
		Refresh("30s").
		Timezone(common.TimeZoneBrowser).
		Link(dashboard.NewDashboardLinkBuilder("LLMOps dashboards").
			Type(dashboard.DashboardLinkTypeDashboards).
			Tags([]string{tag}).
			AsDropdown(true).
			IncludeVars(true).
			KeepTime(true))
	for _, v := range vars {
		b.WithVariable(v)
	}
	return &board{b: b, nextID: 1}
}

// row starts a (never collapsed) row below everything placed so far.
func (d *board) row(title string) {
	d.newline()
	id := d.id()
	d.b.WithRow(dashboard.NewRowBuilder(title).Id(id).Collapsed(false).
		GridPos(dashboard.GridPos{X: 0, Y: d.y, W: gridWidth, H: 1}))
	d.y++
}

// add places a panel w columns wide and h rows high.
func (d *board) add(w, h uint32, p cog.Builder[dashboard.Panel]) {
	if d.x+w > gridWidth {
		d.newline()
	}
	d.b.WithPanel(placed{p: p, id: d.id(), pos: dashboard.GridPos{X: d.x, Y: d.y, W: w, H: h}})
	d.x += w
	d.lineH = max(d.lineH, h)
}

func (d *board) newline() {
	if d.x > 0 {
		d.y += d.lineH
	}
	d.x, d.lineH = 0, 0
}

func (d *board) id() uint32 {
	id := d.nextID
	d.nextID++
	return id
}

func (d *board) build() (dashboard.Dashboard, error) { return d.b.Build() }

// placed gives a panel its id and position.
type placed struct {
	p   cog.Builder[dashboard.Panel]
	id  uint32
	pos dashboard.GridPos
}

func (pl placed) Build() (dashboard.Panel, error) {
	p, err := pl.p.Build()
	if err != nil {
		return p, err
	}
	id, pos := pl.id, pl.pos
	p.Id, p.GridPos = &id, &pos
	return p, nil
}

// Queries.

// q is a range query with a legend.
func q(expr, legendFormat string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		Datasource(promDS).
		Expr(expr).
		LegendFormat(legendFormat).
		Range()
}

// instant is an instant query returning a table.
func instant(expr string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		Datasource(promDS).
		Expr(expr).
		Instant().
		Format(prometheus.PromQueryFormatTable)
}

// refID names the i-th target of a panel: A, B, …
func refID(i int) string { return string(rune('A' + i)) }

func targets(qs []*prometheus.DataqueryBuilder) []cog.Builder[variants.Dataquery] {
	out := make([]cog.Builder[variants.Dataquery], len(qs))
	for i, t := range qs {
		out[i] = t.RefId(refID(i))
	}
	return out
}

// Panels.

// graph is a time series panel.
func graph(title, description, unit string, qs ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(promDS).
		Targets(targets(qs)).
		Unit(unit).
		LineWidth(1).
		FillOpacity(10).
		ShowPoints(common.VisibilityModeNever).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeList).
			Placement(common.LegendPlacementBottom).
			ShowLegend(true)).
		Tooltip(common.NewVizTooltipOptionsBuilder().
			Mode(common.TooltipDisplayModeMulti).
			Sort(common.SortOrderDescending))
}

// ratio is a graph of a 0..1 share.
func ratio(title, description string, qs ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	return graph(title, description, "percentunit", qs...).Min(0).Max(1)
}

// bars draws a graph as bars (counts per interval).
func bars(p *timeseries.PanelBuilder) *timeseries.PanelBuilder {
	return p.DrawStyle(common.GraphDrawStyleBars).FillOpacity(80).
		Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal))
}

// stacked stacks a graph's series.
func stacked(p *timeseries.PanelBuilder) *timeseries.PanelBuilder {
	return p.FillOpacity(30).Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal))
}

// above draws a dashed threshold line at v: values above it are bad.
func above(p *timeseries.PanelBuilder, v float64) *timeseries.PanelBuilder {
	return p.Thresholds(steps("green", v, "red")).
		ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeDashed))
}

// below draws a dashed threshold line at v and shades the region under it:
// values below it are bad.
func below(p *timeseries.PanelBuilder, v float64) *timeseries.PanelBuilder {
	return p.Thresholds(steps("red", v, "green")).
		ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeDashedAndArea))
}

func steps(base string, v float64, over string) *dashboard.ThresholdsConfigBuilder {
	return dashboard.NewThresholdsConfigBuilder().
		Mode(dashboard.ThresholdsModeAbsolute).
		Steps([]dashboard.Threshold{{Value: nil, Color: base}, {Value: &v, Color: over}})
}

// dashedSeries draws the series of one target as a dashed line without
// fill (a reference line computed by a query).
func dashedSeries(p *timeseries.PanelBuilder, ref string) *timeseries.PanelBuilder {
	return p.OverrideByQuery(ref, []dashboard.DynamicConfigValue{
		{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
		{Id: "custom.fillOpacity", Value: 0},
	})
}

// singleStat is a stat panel of the last value of each series.
func singleStat(title, description, unit string, qs ...*prometheus.DataqueryBuilder) *stat.PanelBuilder {
	return stat.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(promDS).
		Targets(targets(qs)).
		Unit(unit).
		GraphMode(common.BigValueGraphModeNone).
		ColorMode(common.BigValueColorModeBackground).
		TextMode(common.BigValueTextModeValueAndName).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Values(false))
}

// column is a table column: the label shown under a title.
type column struct{ label, title string }

// tablePanel shows an instant query's labels as columns, in order.
func tablePanel(title, description string, cols []column, qs ...*prometheus.DataqueryBuilder) *table.PanelBuilder {
	names := make([]string, len(cols))
	index := map[string]int{}
	for i, c := range cols {
		names[i] = c.label
		index[c.label] = i
	}
	p := table.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(promDS).
		Targets(targets(qs)).
		// No footer; an empty reducer list rather than the SDK's null,
		// which its own strict reader rejects.
		Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{}).CountRows(false)).
		WithTransformation(dashboard.DataTransformerConfig{Id: "filterFieldsByName",
			Options: map[string]any{"include": map[string]any{"names": names}}}).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize",
			Options: map[string]any{"indexByName": index}})
	for _, c := range cols {
		p.OverrideByName(c.label, []dashboard.DynamicConfigValue{{Id: "displayName", Value: c.title}})
	}
	return p
}

// valueText maps exact values to a text and a color.
func valueText(pairs ...string) []dashboard.ValueMapping {
	if len(pairs)%3 != 0 {
		panic(fmt.Sprintf("dashboards: valueText takes value, text, color triples, got %d strings", len(pairs)))
	}
	opts := map[string]dashboard.ValueMappingResult{}
	for i := 0; i < len(pairs); i += 3 {
		text, color, idx := pairs[i+1], pairs[i+2], int32(i/3)
		opts[pairs[i]] = dashboard.ValueMappingResult{Text: &text, Color: &color, Index: &idx}
	}
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{Type: dashboard.MappingTypeValueToText, Options: opts}}}
}

// Short names of the builder interfaces the dashboards pass around.
type (
	cogVariable = cog.Builder[dashboard.VariableModel]
	cogLink     = cog.Builder[dashboard.DashboardLink]
)

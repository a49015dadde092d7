// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmops-otel/otelcol-llmops/demo/internal/exported"
)

// Chart geometry. 960 px fits a 1000 px wide window with the page margins;
// the viewBox lets the browser scale it down on narrower ones.
const (
	chartW   = 960
	plotL    = 78 // room for y tick labels such as "1,024"
	plotR    = 20
	plotT    = 44 // room for two rows of incident labels
	plotH    = 230
	axisH    = 44 // x tick labels and the axis title
	legendRH = 20
)

var palette = []string{
	"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
	"#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
}

const (
	colorCritical = "#c62828"
	colorWarning  = "#ef8f00"
	colorResolved = "#5f7d8c"
)

type line struct {
	label  string
	color  string
	dashed bool
	pts    exported.Series
	scale  float64 // multiplies values: bytes → GiB, fraction → %
}

type marker struct {
	id, label, color string
	from, to         time.Time
	open             bool // still firing: shaded to the end of the data
}

type chart struct {
	key, title, yTitle string
	yMax               float64 // fixed maximum (0: from the data)
	lines              []line
	markers            []marker
}

// niceStep returns a 1, 2 or 5 × 10^k step giving about n intervals over span.
func niceStep(span float64, n int) float64 {
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

var timeSteps = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

func timeStep(span time.Duration) time.Duration {
	for _, s := range timeSteps {
		if span/s <= 10 {
			return s
		}
	}
	return 24 * time.Hour * time.Duration(int64(span/(10*24*time.Hour))+1)
}

func fmtTick(v, step float64) string {
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step)))
	}
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if dec == 0 && math.Abs(v) >= 1000 {
		// Thousands separators: token rates reach tens of thousands.
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimPrefix(s, "-")
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		s = b.String()
		if neg {
			s = "-" + s
		}
	}
	return s
}

type legendItem struct {
	label, color string
	dashed, area bool
}

// render writes the chart as inline SVG. t0..t1 is the common time range of
// all charts, so incident markers line up from chart to chart.
func (c *chart) render(b *strings.Builder, t0, t1 time.Time) {
	plotW := float64(chartW - plotL - plotR)
	hasData := false
	for _, l := range c.lines {
		if len(l.pts) > 0 {
			hasData = true
		}
	}
	var items []legendItem
	if hasData {
		for _, l := range c.lines {
			if len(l.pts) > 0 {
				items = append(items, legendItem{label: l.label, color: l.color, dashed: l.dashed})
			}
		}
	}
	sevSeen := map[string]bool{}
	for _, m := range c.markers {
		sevSeen[m.color] = true
	}
	for _, s := range []struct{ color, label string }{
		{colorCritical, "critical incident"}, {colorWarning, "warning incident"}, {colorResolved, "resolved incident"},
	} {
		if sevSeen[s.color] {
			items = append(items, legendItem{label: s.label, color: s.color, area: true})
		}
	}
	// Lay out the legend in rows below the axis.
	type placed struct {
		legendItem
		x, row int
	}
	var legend []placed
	x, row := plotL, 0
	for _, it := range items {
		w := 30 + int(float64(len([]rune(it.label)))*6.6) + 18
		if x+w > chartW-plotR && x > plotL {
			x, row = plotL, row+1
		}
		legend = append(legend, placed{it, x, row})
		x += w
	}
	rows := 0
	if len(legend) > 0 {
		rows = legend[len(legend)-1].row + 1
	}
	height := plotT + plotH + axisH + rows*legendRH + 8

	fmt.Fprintf(b, `<svg class="chart" data-chart="%s" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		c.key, chartW, height, chartW, height, html.EscapeString(c.title))
	fmt.Fprintf(b, `<title>%s</title>`, html.EscapeString(c.title))
	fmt.Fprintf(b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`, chartW, height)
	bottom := float64(plotT + plotH)
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.0f" height="%d" fill="#fafbfc" stroke="#c9d1d9"/>`, plotL, plotT, plotW, plotH)

	if t1.Sub(t0) < time.Second {
		// One instant (or nothing): widen so the axis has a scale.
		t0, t1 = t0.Add(-30*time.Second), t1.Add(30*time.Second)
	}
	span := t1.Sub(t0)
	xOf := func(t time.Time) float64 {
		return float64(plotL) + plotW*float64(t.Sub(t0))/float64(span)
	}

	yMax := c.yMax
	if yMax == 0 {
		for _, l := range c.lines {
			for _, p := range l.pts {
				if v := p.V * l.scale; v > yMax && !math.IsInf(v, 0) {
					yMax = v
				}
			}
		}
		if yMax <= 0 {
			yMax = 1
		}
		step := niceStep(yMax*1.05, 5)
		yMax = math.Ceil(yMax*1.05/step) * step
	}
	yStep := niceStep(yMax, 5)
	yOf := func(v float64) float64 {
		y := bottom - float64(plotH)*v/yMax
		return math.Max(float64(plotT)-2, math.Min(bottom+2, y))
	}

	// Grid and y ticks.
	b.WriteString(`<g font-family="sans-serif" font-size="12" fill="#444">`)
	for v := 0.0; v <= yMax*1.0001; v += yStep {
		y := yOf(v)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#e3e7eb"/>`, plotL, y, float64(plotL)+plotW, y)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#555"/>`, plotL-5, y, plotL, y)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, plotL-8, y, fmtTick(v, yStep))
	}
	fmt.Fprintf(b, `<text transform="translate(16 %.0f) rotate(-90)" text-anchor="middle">%s</text>`, float64(plotT)+float64(plotH)/2, html.EscapeString(c.yTitle))
	// X ticks on whole multiples of the step.
	step := timeStep(span)
	first := t0.Truncate(step)
	if first.Before(t0) {
		first = first.Add(step)
	}
	layout := "15:04:05"
	if span > 48*time.Hour {
		layout = "01-02 15:04"
	}
	for t := first; !t.After(t1); t = t.Add(step) {
		x := xOf(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.0f" stroke="#eef1f4"/>`, x, plotT, x, bottom)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#555"/>`, x, bottom, x, bottom+5)
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`, x, bottom+18, t.UTC().Format(layout))
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="middle">time (UTC)</text>`, float64(plotL)+plotW/2, bottom+36)
	fmt.Fprintf(b, `<line x1="%d" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#555"/>`, plotL, bottom, float64(plotL)+plotW, bottom)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%.0f" stroke="#555"/>`, plotL, plotT, plotL, bottom)
	b.WriteString(`</g>`)

	// Incident spans under the lines, so the data stays readable.
	for _, m := range c.markers {
		x0 := math.Max(float64(plotL), xOf(m.from))
		x1 := math.Min(float64(plotL)+plotW, xOf(m.to))
		if x1 > x0 {
			op := "0.13"
			if m.open {
				op = "0.07"
			}
			fmt.Fprintf(b, `<rect class="incident-span" data-incident="%s" x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="%s"/>`,
				html.EscapeString(m.id), x0, plotT, x1-x0, plotH, m.color, op)
		}
	}

	if !hasData {
		fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="middle" font-family="sans-serif" font-size="18" fill="#8a949e">no data yet</text>`,
			float64(plotL)+plotW/2, float64(plotT)+float64(plotH)/2)
	}
	// Clip the lines to the plot: a value above a fixed maximum (KV over
	// 100%) must not draw over the labels.
	fmt.Fprintf(b, `<clipPath id="clip-%s"><rect x="%d" y="%d" width="%.0f" height="%d"/></clipPath>`, c.key, plotL, plotT-2, plotW, plotH+4)
	fmt.Fprintf(b, `<g clip-path="url(#clip-%s)" fill="none" stroke-width="1.8" stroke-linejoin="round">`, c.key)
	for _, l := range c.lines {
		d := pathD(l.pts, l.scale, xOf, yOf, plotW, span)
		if d == "" {
			continue
		}
		dash := ""
		if l.dashed {
			dash = ` stroke-dasharray="7 4" stroke-width="2.4"`
		}
		fmt.Fprintf(b, `<path class="series" d="%s" stroke="%s"%s><title>%s</title></path>`, d, l.color, dash, html.EscapeString(l.label))
	}
	b.WriteString(`</g>`)

	// Marker lines and labels on top; labels alternate between two rows
	// above the plot so neighbours overlap less.
	b.WriteString(`<g font-family="sans-serif" font-size="11">`)
	for i, m := range c.markers {
		x := xOf(m.from)
		if x < float64(plotL) || x > float64(plotL)+plotW {
			continue
		}
		fmt.Fprintf(b, `<line class="incident-marker" data-incident="%s" x1="%.1f" y1="%d" x2="%.1f" y2="%.0f" stroke="%s" stroke-width="1.6"/>`,
			html.EscapeString(m.id), x, plotT-6-(i%2)*14+4, x, bottom, m.color)
		anchor, tx := "start", x+3
		if x > float64(plotL)+plotW-190 {
			anchor, tx = "end", x-3
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="%s" fill="%s">%s</text>`, tx, plotT-6-(i%2)*14, anchor, m.color, html.EscapeString(m.label))
	}
	b.WriteString(`</g>`)

	// Legend.
	b.WriteString(`<g font-family="sans-serif" font-size="12" fill="#333">`)
	for _, it := range legend {
		y := plotT + plotH + axisH + it.row*legendRH + 6
		if it.area {
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="22" height="10" fill="%s" fill-opacity="0.35" stroke="%s"/>`, it.x, y-5, it.color, it.color)
		} else {
			dash := ""
			if it.dashed {
				dash = ` stroke-dasharray="7 4"`
			}
			fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.4"%s/>`, it.x, y, it.x+22, y, it.color, dash)
		}
		fmt.Fprintf(b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`, it.x+28, y, html.EscapeString(it.label))
	}
	b.WriteString(`</g></svg>`)
}

// pathD draws a series as one path, broken where points are missing (an idle
// engine has no p99, a counter reset no rate) instead of bridging the gap
// with a misleading straight line. Series longer than twice the plot width
// are reduced to first/min/max/last per pixel column, which keeps spikes.
func pathD(s exported.Series, scale float64, xOf func(time.Time) float64, yOf func(float64) float64, plotW float64, span time.Duration) string {
	if len(s) == 0 {
		return ""
	}
	gap := span / 40
	if len(s) > 2 {
		dts := make([]time.Duration, 0, len(s)-1)
		for i := 1; i < len(s); i++ {
			dts = append(dts, s[i].T.Sub(s[i-1].T))
		}
		slices.Sort(dts)
		gap = max(gap, 5*dts[len(dts)/2])
	}
	type xy struct{ x, y float64 }
	var pts []xy
	var breaks []bool // a new subpath starts at this point
	emit := func(x, y float64, brk bool) {
		pts = append(pts, xy{x, y})
		breaks = append(breaks, brk)
	}
	reduce := len(s) > int(2*plotW)
	col := math.MinInt
	var cFirst, cMin, cMax, cLast float64
	var cX float64
	cBreak := false
	flushCol := func() {
		if col == math.MinInt {
			return
		}
		emit(cX, yOf(cFirst), cBreak)
		emit(cX, yOf(cMin), false)
		emit(cX, yOf(cMax), false)
		emit(cX, yOf(cLast), false)
	}
	for i, p := range s {
		v := p.V * scale
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		brk := i == 0 || p.T.Sub(s[i-1].T) > gap
		x := xOf(p.T)
		if !reduce {
			emit(x, yOf(v), brk)
			continue
		}
		c := int(x)
		if c != col || brk {
			flushCol()
			col, cX, cFirst, cMin, cMax, cLast, cBreak = c, x, v, v, v, v, brk
			continue
		}
		cMin, cMax, cLast = min(cMin, v), max(cMax, v), v
	}
	if reduce {
		flushCol()
	}
	var b strings.Builder
	for i, p := range pts {
		if breaks[i] || i == 0 {
			// A lone point after a gap would be invisible as "M": draw a
			// short horizontal tick for it.
			if i+1 >= len(pts) || breaks[i+1] {
				fmt.Fprintf(&b, "M%.1f,%.1fh2", p.x-1, p.y)
				continue
			}
			fmt.Fprintf(&b, "M%.1f,%.1f", p.x, p.y)
			continue
		}
		fmt.Fprintf(&b, "L%.1f,%.1f", p.x, p.y)
	}
	return b.String()
}

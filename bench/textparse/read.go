// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"

	"github.com/llmops-otel/otelcol-llmops/internal/promtext"
)

// An entry is one line of an exposition as both parsers can report it, in
// a form that compares with ==: metadata by family name, samples by their
// sorted label set (the metric name as __name__), value bits and timestamp
// in milliseconds. Comments and blank lines are left out: textparse skips
// blank lines and neither parser gives comments a meaning.
type entry struct {
	kind   string // "help", "type", "unit" or "sample"
	name   string // family name (metadata) or the label set (samples)
	text   string // help text, unit, or type keyword as textparse names it
	value  uint64 // math.Float64bits, with every NaN folded into one
	ts     int64  // milliseconds
	hasTS  bool
	exempl string // the exemplar, rendered; "" without one
}

func (e entry) String() string {
	switch e.kind {
	case "sample":
		s := fmt.Sprintf("sample %s %v", e.name, math.Float64frombits(e.value))
		if e.hasTS {
			s += fmt.Sprintf(" @%d", e.ts)
		}
		if e.exempl != "" {
			s += " # " + e.exempl
		}
		return s
	default:
		return fmt.Sprintf("%s %s %q", e.kind, e.name, e.text)
	}
}

func valueBits(v float64) uint64 {
	if math.IsNaN(v) {
		return math.Float64bits(math.NaN())
	}
	return math.Float64bits(v)
}

// canonicalBound writes a bucket bound or quantile the one way textparse
// writes it (it rewrites "1" to "1.0" for histograms and summaries), so a
// difference in how the exposition spelled a number is not reported as a
// difference between the parsers.
func canonicalBound(name, value string) string {
	if name != "le" && name != "quantile" {
		return value
	}
	f, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return value
	}
	return labels.FormatOpenMetricsFloat(f)
}

// renderLabels writes a label set sorted by name (textparse sorts a
// sample's labels but leaves an exemplar's as written).
func renderLabels(ls labels.Labels) string {
	var all []labels.Label
	ls.Range(func(l labels.Label) { all = append(all, l) })
	slices.SortStableFunc(all, func(a, c labels.Label) int { return strings.Compare(a.Name, c.Name) })
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range all {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", l.Name, canonicalBound(l.Name, l.Value))
	}
	b.WriteByte('}')
	return b.String()
}

// theirs reads body with Prometheus's own parser, as a Prometheus scrape
// would (start-time series kept, no type-and-unit labels).
func theirs(body []byte, openMetrics bool) ([]entry, error) {
	var p textparse.Parser
	if openMetrics {
		p = textparse.NewOpenMetricsParser(body, labels.NewSymbolTable())
	} else {
		p = textparse.NewPromParser(body, labels.NewSymbolTable(), false)
	}
	var out []entry
	var ls labels.Labels
	for {
		et, err := p.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		switch et {
		case textparse.EntryHelp:
			n, t := p.Help()
			out = append(out, entry{kind: "help", name: string(n), text: string(t)})
		case textparse.EntryType:
			n, t := p.Type()
			out = append(out, entry{kind: "type", name: string(n), text: string(t)})
		case textparse.EntryUnit:
			n, u := p.Unit()
			out = append(out, entry{kind: "unit", name: string(n), text: string(u)})
		case textparse.EntrySeries:
			_, ts, v := p.Series()
			p.Labels(&ls)
			e := entry{kind: "sample", name: renderLabels(ls), value: valueBits(v)}
			if ts != nil {
				e.ts, e.hasTS = *ts, true
			}
			var ex exemplar.Exemplar
			if p.Exemplar(&ex) {
				e.exempl = fmt.Sprintf("%s %v", renderLabels(ex.Labels), ex.Value)
				if ex.HasTs {
					e.exempl += fmt.Sprintf(" @%d", ex.Ts)
				}
			}
			out = append(out, e)
		case textparse.EntryComment:
		default:
			return out, fmt.Errorf("textparse returned entry type %d, which text formats do not have", et)
		}
	}
}

// typeKeyword names a promtext type the way textparse's model.MetricType
// does (both formats' "untyped" and "unknown" are "unknown" there).
var typeKeyword = map[promtext.Type]string{
	promtext.TypeUntyped:        "unknown",
	promtext.TypeCounter:        "counter",
	promtext.TypeGauge:          "gauge",
	promtext.TypeHistogram:      "histogram",
	promtext.TypeGaugeHistogram: "gaugehistogram",
	promtext.TypeSummary:        "summary",
	promtext.TypeInfo:           "info",
	promtext.TypeStateset:       "stateset",
}

func promLabels(b *labels.ScratchBuilder, name []byte, ls []promtext.Label) labels.Labels {
	b.Reset()
	if name != nil {
		b.Add(model.MetricNameLabel, string(name))
	}
	for _, l := range ls {
		b.Add(string(l.Name), string(l.Value))
	}
	b.Sort()
	return b.Labels()
}

// ours reads body with the module's parser, as the llmengine receiver
// does (opts.Strict false) or as fixtures are checked (true).
func ours(body []byte, opts promtext.Options) ([]entry, error) {
	var p promtext.Parser
	p.Reset(body, opts)
	var out []entry
	b := labels.NewScratchBuilder(8)
	for {
		et, err := p.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		switch et {
		case promtext.EntryHelp:
			n, _ := p.MetaName()
			out = append(out, entry{kind: "help", name: string(n), text: string(p.Text())})
		case promtext.EntryType:
			n, _ := p.MetaName()
			t, _ := p.Type()
			out = append(out, entry{kind: "type", name: string(n), text: typeKeyword[t]})
		case promtext.EntryUnit:
			n, _ := p.MetaName()
			out = append(out, entry{kind: "unit", name: string(n), text: string(p.Text())})
		case promtext.EntrySample:
			n, _ := p.Name()
			e := entry{kind: "sample", name: renderLabels(promLabels(&b, n, p.Labels())), value: valueBits(p.Value())}
			if ts, ok := p.Timestamp(); ok {
				e.ts, e.hasTS = ts/1e6, true
			}
			if ex, ok := p.Exemplar(); ok {
				e.exempl = fmt.Sprintf("%s %v", renderLabels(promLabels(&b, nil, ex.Labels)), ex.Value)
				if ex.HasTS {
					e.exempl += fmt.Sprintf(" @%d", ex.TS/1e6)
				}
			}
			out = append(out, e)
		}
	}
}

// firstDifference describes where two readings of one body part ways, or
// returns "" when they agree entry by entry.
func firstDifference(want, got []entry) string {
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			return fmt.Sprintf("entry %d: textparse %s, promtext %s", i+1, want[i], got[i])
		}
	}
	if len(want) != len(got) {
		n := min(len(want), len(got))
		extra := slices.Concat(want[n:], got[n:])
		return fmt.Sprintf("textparse read %d entries, promtext %d; the first extra: %s", len(want), len(got), extra[0])
	}
	return ""
}

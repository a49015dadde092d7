// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// t0 is the scrape time used by most tests: 1700000000 s.
var t0 = time.Unix(1700000000, 0)

const fixtureDir = "../../../../../shared/fixtures/engines/"

func readFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(fixtureDir + name)
	if err != nil {
		tb.Skipf("fixture not available: %v", err)
	}
	return b
}

// convert runs one Convert into a fresh MetricSlice.
func convert(tb testing.TB, c *Converter, body string, f Format, now time.Time) (pmetric.MetricSlice, Stats) {
	tb.Helper()
	ms := pmetric.NewMetricSlice()
	st, err := c.Convert([]byte(body), f, now, ms)
	if err != nil {
		tb.Fatalf("Convert: %v\nbody:\n%s", err, body)
	}
	return ms, st
}

// fmtTS renders a timestamp as Unix seconds with only the fractional digits
// that are needed.
func fmtTS(ts pcommon.Timestamp) string {
	ns := int64(ts)
	s := strconv.FormatInt(ns/1e9, 10)
	if f := ns % 1e9; f != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%09d", f), "0")
	}
	return s
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func fmtAttrs(m pcommon.Map) string {
	if m.Len() == 0 {
		return "{}"
	}
	var parts []string
	for k, v := range m.All() {
		parts = append(parts, fmt.Sprintf("%s=%q", k, v.Str()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func fmtExemplars(es pmetric.ExemplarSlice) string {
	if es.Len() == 0 {
		return ""
	}
	var parts []string
	for i := range es.Len() {
		e := es.At(i)
		s := fmt.Sprintf("%s@%s", fmtF(e.DoubleValue()), fmtTS(e.Timestamp()))
		if !e.TraceID().IsEmpty() {
			s += " trace=" + e.TraceID().String()
		}
		if !e.SpanID().IsEmpty() {
			s += " span=" + e.SpanID().String()
		}
		if e.FilteredAttributes().Len() > 0 {
			s += " " + fmtAttrs(e.FilteredAttributes())
		}
		parts = append(parts, s)
	}
	return " ex=[" + strings.Join(parts, "; ") + "]"
}

func fmtFlags(f pmetric.DataPointFlags) string {
	if f.NoRecordedValue() {
		return " norecorded"
	}
	return ""
}

// dump renders metrics in a compact, deterministic text form:
//
//	name type [help="..."] [unit="..."]
//	  {attrs} [start=S] ts=T <values> [norecorded] [ex=[...]]
func dump(ms pmetric.MetricSlice) string {
	var b strings.Builder
	for i := range ms.Len() {
		m := ms.At(i)
		b.WriteString(m.Name())
		switch m.Type() {
		case pmetric.MetricTypeGauge:
			b.WriteString(" gauge")
		case pmetric.MetricTypeSum:
			s := m.Sum()
			fmt.Fprintf(&b, " sum(%s,monotonic=%v)", s.AggregationTemporality(), s.IsMonotonic())
		case pmetric.MetricTypeHistogram:
			fmt.Fprintf(&b, " histogram(%s)", m.Histogram().AggregationTemporality())
		case pmetric.MetricTypeSummary:
			b.WriteString(" summary")
		default:
			b.WriteString(" " + m.Type().String())
		}
		if m.Description() != "" {
			fmt.Fprintf(&b, " help=%q", m.Description())
		}
		if m.Unit() != "" {
			fmt.Fprintf(&b, " unit=%q", m.Unit())
		}
		b.WriteByte('\n')
		switch m.Type() {
		case pmetric.MetricTypeGauge, pmetric.MetricTypeSum:
			var dps pmetric.NumberDataPointSlice
			if m.Type() == pmetric.MetricTypeSum {
				dps = m.Sum().DataPoints()
			} else {
				dps = m.Gauge().DataPoints()
			}
			for j := range dps.Len() {
				dp := dps.At(j)
				fmt.Fprintf(&b, "  %s", fmtAttrs(dp.Attributes()))
				if dp.StartTimestamp() != 0 {
					fmt.Fprintf(&b, " start=%s", fmtTS(dp.StartTimestamp()))
				}
				fmt.Fprintf(&b, " ts=%s", fmtTS(dp.Timestamp()))
				switch dp.ValueType() {
				case pmetric.NumberDataPointValueTypeDouble:
					fmt.Fprintf(&b, " v=%s", fmtF(dp.DoubleValue()))
				case pmetric.NumberDataPointValueTypeInt:
					fmt.Fprintf(&b, " int=%d", dp.IntValue())
				}
				b.WriteString(fmtFlags(dp.Flags()) + fmtExemplars(dp.Exemplars()) + "\n")
			}
		case pmetric.MetricTypeHistogram:
			dps := m.Histogram().DataPoints()
			for j := range dps.Len() {
				dp := dps.At(j)
				fmt.Fprintf(&b, "  %s start=%s ts=%s", fmtAttrs(dp.Attributes()), fmtTS(dp.StartTimestamp()), fmtTS(dp.Timestamp()))
				if !dp.Flags().NoRecordedValue() {
					fmt.Fprintf(&b, " count=%d", dp.Count())
					if dp.HasSum() {
						fmt.Fprintf(&b, " sum=%s", fmtF(dp.Sum()))
					} else {
						b.WriteString(" nosum")
					}
					var bs, cs []string
					for _, v := range dp.ExplicitBounds().All() {
						bs = append(bs, fmtF(v))
					}
					for _, v := range dp.BucketCounts().All() {
						cs = append(cs, strconv.FormatUint(v, 10))
					}
					fmt.Fprintf(&b, " bounds=[%s] counts=[%s]", strings.Join(bs, " "), strings.Join(cs, " "))
				}
				b.WriteString(fmtFlags(dp.Flags()) + fmtExemplars(dp.Exemplars()) + "\n")
			}
		case pmetric.MetricTypeSummary:
			dps := m.Summary().DataPoints()
			for j := range dps.Len() {
				dp := dps.At(j)
				fmt.Fprintf(&b, "  %s start=%s ts=%s", fmtAttrs(dp.Attributes()), fmtTS(dp.StartTimestamp()), fmtTS(dp.Timestamp()))
				if !dp.Flags().NoRecordedValue() {
					var qs []string
					for k := range dp.QuantileValues().Len() {
						q := dp.QuantileValues().At(k)
						qs = append(qs, fmtF(q.Quantile())+":"+fmtF(q.Value()))
					}
					fmt.Fprintf(&b, " count=%d sum=%s q=[%s]", dp.Count(), fmtF(dp.Sum()), strings.Join(qs, " "))
				}
				b.WriteString(fmtFlags(dp.Flags()) + "\n")
			}
		}
	}
	return b.String()
}

// trimDoc strips the common indentation of an inline expected dump or body
// written as a Go raw string, and its leading newline.
func trimDoc(s string) string {
	s = strings.TrimPrefix(s, "\n")
	lines := strings.Split(s, "\n")
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "\t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	for i, l := range lines {
		switch {
		case strings.TrimSpace(l) == "":
			lines[i] = ""
		case indent > 0:
			lines[i] = l[indent:]
		}
	}
	return strings.Join(lines, "\n")
}

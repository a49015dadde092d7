// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package enginereplay

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// This is a second, deliberately separate reading of the exposition formats,
// written from the format descriptions rather than sharing code with the
// server's parser, so that the tests do not only check the parser against
// itself.

var (
	reName   = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	reSample = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+(-?[0-9]+))?[ \t]*$`)
	reNumber = regexp.MustCompile(`^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$`)
	reLabel  = regexp.MustCompile(`^[ \t]*([a-zA-Z_][a-zA-Z0-9_]*)[ \t]*=[ \t]*"((?:[^"\\]|\\[\\"n])*)"[ \t]*(,|$)`)
)

const noFinalNewline = "does not end with a line feed"

type vSample struct {
	line   int
	name   string
	labels map[string]string
	value  float64
}

type vFamily struct {
	name, typ    string
	help         bool
	samples      []vSample
	declaredLine int
}

type exposed struct {
	families map[string]*vFamily
	order    []string
}

func (x *exposed) family(name string) *vFamily { return x.families[name] }

// parseLabels reads `a="x",b="y"` strictly.
func parseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for strings.TrimSpace(s) != "" {
		m := reLabel.FindStringSubmatch(s)
		if m == nil {
			return nil, fmt.Errorf("bad labels at %q", s)
		}
		if _, dup := out[m[1]]; dup {
			return nil, fmt.Errorf("label %s twice", m[1])
		}
		v := strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\n`, "\n").Replace(m[2])
		out[m[1]] = v
		s = s[len(m[0]):]
	}
	return out, nil
}

func vParseValue(s string) (float64, error) {
	switch s {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	if !reNumber.MatchString(s) {
		return 0, fmt.Errorf("bad number %q", s)
	}
	return strconv.ParseFloat(s, 64)
}

// familyOf finds the family a sample name belongs to given the declared
// types (text format: counters keep their full name).
func familyOf(name string, types map[string]string, om bool) string {
	if _, ok := types[name]; ok && !om {
		return name
	}
	for _, suf := range []string{"_bucket", "_count", "_sum", "_created", "_total"} {
		base := strings.TrimSuffix(name, suf)
		if base == name {
			continue
		}
		switch types[base] {
		case "histogram":
			if suf != "_total" {
				return base
			}
		case "summary":
			if suf == "_count" || suf == "_sum" || suf == "_created" {
				return base
			}
		case "counter":
			if om && (suf == "_total" || suf == "_created") {
				return base
			}
		}
	}
	if _, ok := types[name]; ok {
		return name
	}
	return ""
}

// validateExposition checks text format 0.0.4 (om=false) or OpenMetrics 1.0
// (om=true) and returns the problems found and what it read.
func validateExposition(data string, om bool) ([]string, *exposed) {
	var probs []string
	bad := func(n int, f string, a ...any) {
		probs = append(probs, fmt.Sprintf("line %d: %s", n, fmt.Sprintf(f, a...)))
	}
	x := &exposed{families: map[string]*vFamily{}}
	types := map[string]string{}
	ended := map[string]bool{}
	current := ""
	seen := map[string]bool{}
	if !strings.HasSuffix(data, "\n") {
		probs = append(probs, noFinalNewline)
	}
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	sawEOF := false
	get := func(n int, name string) *vFamily {
		f := x.families[name]
		if f == nil {
			f = &vFamily{name: name, typ: "untyped", declaredLine: n}
			if om {
				f.typ = "unknown"
			}
			x.families[name] = f
			x.order = append(x.order, name)
		}
		if current != name {
			if ended[name] {
				bad(n, "family %s resumes after another family", name)
			}
			if current != "" {
				ended[current] = true
			}
			current = name
		}
		return f
	}
	for i, ln := range lines {
		n := i + 1
		if sawEOF {
			bad(n, "text after # EOF")
			break
		}
		if ln == "" {
			if om {
				bad(n, "blank line (not allowed in OpenMetrics)")
			}
			continue
		}
		if om && ln == "# EOF" {
			sawEOF = true
			continue
		}
		if strings.HasPrefix(ln, "#") {
			parts := strings.SplitN(ln, " ", 4)
			if len(parts) >= 3 && (parts[1] == "HELP" || parts[1] == "TYPE") {
				name := parts[2]
				if !reName.MatchString(name) {
					bad(n, "bad metric name %q", name)
					continue
				}
				f := get(n, name)
				if len(f.samples) > 0 {
					bad(n, "%s for %s after its samples", parts[1], name)
				}
				if parts[1] == "HELP" {
					if f.help {
						bad(n, "second HELP for %s", name)
					}
					f.help = true
				} else {
					if len(parts) != 4 {
						bad(n, "TYPE without a type")
						continue
					}
					if _, dup := types[name]; dup {
						bad(n, "second TYPE for %s", name)
					}
					valid := "counter gauge histogram summary untyped"
					if om {
						valid = "counter gauge histogram gaugehistogram summary info stateset unknown"
						if parts[3] == "counter" && strings.HasSuffix(name, "_total") {
							bad(n, "OpenMetrics counter family %s must not end in _total", name)
						}
					}
					if !strings.Contains(" "+valid+" ", " "+parts[3]+" ") {
						bad(n, "unknown type %q", parts[3])
					}
					types[name] = parts[3]
					f.typ = parts[3]
				}
			} else if om {
				bad(n, "OpenMetrics allows only HELP, TYPE, UNIT and EOF comments")
			}
			continue
		}
		m := reSample.FindStringSubmatch(ln)
		if m == nil {
			bad(n, "not a sample line: %q", ln)
			continue
		}
		labels, err := parseLabels(m[2])
		if err != nil {
			bad(n, "%v", err)
			continue
		}
		v, err := vParseValue(m[3])
		if err != nil {
			bad(n, "%v", err)
			continue
		}
		fam := familyOf(m[1], types, om)
		if fam == "" {
			if om {
				bad(n, "sample %s has no TYPE", m[1])
				continue
			}
			fam = m[1]
		}
		f := get(n, fam)
		if om && f.typ == "counter" && m[1] != fam+"_total" && m[1] != fam+"_created" {
			bad(n, "counter sample %s must be %s_total or %s_created", m[1], fam, fam)
		}
		keys := make([]string, 0, len(labels))
		for k, v := range labels {
			keys = append(keys, k+"="+v)
		}
		sort.Strings(keys)
		id := m[1] + "{" + strings.Join(keys, ",") + "}"
		if seen[id] {
			bad(n, "duplicate sample %s", id)
		}
		seen[id] = true
		f.samples = append(f.samples, vSample{line: n, name: m[1], labels: labels, value: v})
	}
	if om && !sawEOF {
		probs = append(probs, "no # EOF")
	}
	for _, name := range x.order {
		probs = append(probs, checkSemantics(x.families[name])...)
	}
	return probs, x
}

func seriesKey(ls map[string]string, drop string) string {
	var keys []string
	for k, v := range ls {
		if k != drop {
			keys = append(keys, k+"="+v)
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// checkSemantics: counters non-negative; histograms with ascending le,
// cumulative buckets, +Inf equal to _count, a _sum.
func checkSemantics(f *vFamily) []string {
	var probs []string
	bad := func(f0 string, a ...any) { probs = append(probs, f.name+": "+fmt.Sprintf(f0, a...)) }
	switch f.typ {
	case "counter":
		for _, s := range f.samples {
			if strings.HasSuffix(s.name, "_created") {
				continue
			}
			if s.value < 0 || math.IsNaN(s.value) {
				bad("counter value %v on line %d", s.value, s.line)
			}
		}
	case "histogram":
		type hs struct {
			les    []float64
			counts []float64
			count  *float64
			hasSum bool
		}
		series := map[string]*hs{}
		var order []string
		for _, s := range f.samples {
			drop := ""
			if strings.HasSuffix(s.name, "_bucket") {
				drop = "le"
			}
			k := seriesKey(s.labels, drop)
			h := series[k]
			if h == nil {
				h = &hs{}
				series[k] = h
				order = append(order, k)
			}
			switch {
			case strings.HasSuffix(s.name, "_bucket"):
				le, err := vParseValue(s.labels["le"])
				if err != nil {
					bad("bucket without a valid le on line %d", s.line)
					continue
				}
				h.les = append(h.les, le)
				h.counts = append(h.counts, s.value)
			case strings.HasSuffix(s.name, "_count"):
				v := s.value
				h.count = &v
			case strings.HasSuffix(s.name, "_sum"):
				h.hasSum = true
			}
		}
		for _, k := range order {
			h := series[k]
			if len(h.les) == 0 {
				bad("{%s} has no buckets", k)
				continue
			}
			for i := 1; i < len(h.les); i++ {
				if !(h.les[i] > h.les[i-1]) {
					bad("{%s} le %v after %v", k, h.les[i], h.les[i-1])
				}
				if h.counts[i] < h.counts[i-1] {
					bad("{%s} bucket le=%v has %v, below le=%v with %v", k, h.les[i], h.counts[i], h.les[i-1], h.counts[i-1])
				}
			}
			if !math.IsInf(h.les[len(h.les)-1], 1) {
				bad("{%s} has no +Inf bucket", k)
			} else if h.count == nil || *h.count != h.counts[len(h.counts)-1] {
				bad("{%s} _count does not equal the +Inf bucket", k)
			}
			if !h.hasSum {
				bad("{%s} has no _sum", k)
			}
		}
	}
	return probs
}

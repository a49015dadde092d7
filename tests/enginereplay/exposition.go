// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package enginereplay

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/llmops-otel/otelcol-llmops/internal/promtext"
)

// This file holds the exposition model, read with internal/promtext in its
// strict mode (the parser the llmengine receiver uses, minus the leniency a
// scraper needs), and the two renderers (text 0.0.4 and OpenMetrics 1.0).
//
// The text renderer keeps every line of the fixture as it was written
// (comments, blank lines, label order, value spelling) and only re-spells the
// values that the scenario has changed, so that a fixture served without a
// scenario comes back byte for byte (plus a final line feed if the file
// lacks one).

// Metric types as written in "# TYPE" lines.
const (
	typeCounter   = "counter"
	typeGauge     = "gauge"
	typeHistogram = "histogram"
	typeSummary   = "summary"
	typeUntyped   = "untyped"
)

// valueStyle is how a fixture spells numbers; values the scenario changes are
// spelled the same way, so a replayed exposition looks like the engine's own.
type valueStyle int

const (
	// stylePlain: positional and shortest, no ".0" on integers ("3423",
	// "245.917"), exponents only for very large or small values (Rust and C++
	// exporters).
	stylePlain valueStyle = iota
	// stylePython: Python prometheus_client ("5.0", "8.128902e+06").
	stylePython
)

type labelPair struct{ name, value string }

type sample struct {
	idx    int
	fam    *family
	name   string
	labels []labelPair
	// role is what the sample is inside its family; RoleCreated also marks
	// the samples of a separate "<base>_created" gauge family.
	role promtext.Role
	le   float64 // upper bound, for promtext.RoleBucket
	// The sample's line is prefix + value + suffix; prefix and suffix are kept
	// verbatim from the fixture.
	prefix, raw, suffix string
	base                float64
	hasTS               bool
	tsMillis            int64
	seriesKey           string // labels without le/quantile, canonical
	createdFor          *family
}

type family struct {
	idx     int32
	name    string
	typ     string
	help    string
	hasHelp bool
	hasType bool
	line    int
	samples []*sample
	// createdFamily is the separate "<base>_created" gauge family that the
	// Python client writes next to counters and histograms in text format.
	createdFamily *family
	// createdOf is set on such a gauge family: the family it belongs to.
	createdOf *family
}

// base returns the family's name without the counter suffix "_total", the
// name OpenMetrics uses for the family.
func (f *family) base() string {
	if f.typ == typeCounter {
		return strings.TrimSuffix(f.name, "_total")
	}
	return f.name
}

type textLine struct {
	raw string
	s   *sample
}

// exposition is a parsed fixture.
type exposition struct {
	path     string
	lines    []textLine
	families []*family
	byName   map[string]*family
	samples  []*sample
	style    valueStyle
}

// Lookup makes the family table what promtext.Resolve looks families up in.
func (e *exposition) Lookup(name []byte) (int32, promtext.Type, bool) {
	f := e.byName[string(name)]
	if f == nil {
		return -1, promtext.TypeUntyped, false
	}
	t, _ := promtext.ParseType([]byte(f.typ), true)
	return f.idx, t, true
}

type parseError struct {
	path string
	line int
	msg  string
}

func (e *parseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.path, e.line, e.msg) }

// parseExposition parses data as Prometheus text format 0.0.4. It is strict:
// the syntax is promtext's strict reading, and on top of it a family's
// metadata must come once and before its samples, its samples together, no
// sample twice, histograms complete and cumulative. Errors name path:line.
func parseExposition(path string, data []byte) (*exposition, error) {
	e := &exposition{path: path, byName: map[string]*family{}}
	if len(data) == 0 {
		return nil, &parseError{path, 1, "empty exposition"}
	}
	var cur *family
	seen := map[string]int{} // series identity -> line
	sawDotZero := false
	fail := func(n int, format string, args ...any) error {
		return &parseError{path, n, fmt.Sprintf(format, args...)}
	}
	startFamily := func(n int, name string) (*family, error) {
		if f, ok := e.byName[name]; ok {
			if f == cur && len(f.samples) == 0 {
				return f, nil
			}
			return nil, fail(n, "metadata for %s after its samples or a second time", name)
		}
		f := &family{idx: int32(len(e.families)), name: name, typ: typeUntyped, line: n}
		e.families = append(e.families, f)
		e.byName[name] = f
		return f, nil
	}
	var p promtext.Parser
	p.Reset(data, promtext.Options{Strict: true})
	for {
		entry, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *promtext.Error
		if errors.As(err, &pe) {
			return nil, fail(pe.Line, "%s", pe.Msg)
		}
		n, ln := p.Line(), string(p.Raw())
		switch entry {
		case promtext.EntryHelp, promtext.EntryType:
			bname, quoted := p.MetaName()
			if quoted {
				return nil, fail(n, "quoted metric name %q: fixtures use legacy names", bname)
			}
			name := string(bname)
			f, err := startFamily(n, name)
			if err != nil {
				return nil, err
			}
			cur = f
			if entry == promtext.EntryHelp {
				if f.hasHelp {
					return nil, fail(n, "second HELP for %s", name)
				}
				f.help, f.hasHelp = string(p.Text()), true
			} else {
				if f.hasType {
					return nil, fail(n, "second TYPE for %s", name)
				}
				f.typ, f.hasType = string(p.Text()), true
			}
		case promtext.EntrySample:
			s, err := newSample(&p, ln)
			if err != nil {
				return nil, fail(n, "%v", err)
			}
			curIdx, curName, curType := int32(-1), "", promtext.TypeUntyped
			if cur != nil {
				curIdx, curName = cur.idx, cur.name
				curType, _ = promtext.ParseType([]byte(cur.typ), true)
			}
			fi, role, res := promtext.Resolve([]byte(s.name), curIdx, curName, curType, e)
			switch {
			case res == promtext.Conflict:
				f := e.families[fi]
				return nil, fail(n, "sample %s does not fit %s family %s", s.name, f.typ, f.name)
			case res == promtext.Resolved && fi != curIdx:
				return nil, fail(n, "sample %s is not next to the other samples of family %s", s.name, e.families[fi].name)
			case res == promtext.Unresolved:
				cur, _ = startFamily(n, s.name)
			}
			s.fam = cur
			s.role = role
			if err := classify(s); err != nil {
				return nil, fail(n, "%v", err)
			}
			id := s.name + "{" + canonicalLabels(s.labels, "") + "}"
			if prev, dup := seen[id]; dup {
				return nil, fail(n, "duplicate sample %s (first on line %d)", id, prev)
			}
			seen[id] = n
			if strings.HasSuffix(s.raw, ".0") {
				sawDotZero = true
			}
			s.idx = len(e.samples)
			e.samples = append(e.samples, s)
			cur.samples = append(cur.samples, s)
			e.lines = append(e.lines, textLine{s: s})
			continue
		}
		// Comments, blank lines and metadata are written back as they are.
		e.lines = append(e.lines, textLine{raw: ln})
	}
	if sawDotZero {
		e.style = stylePython
	}
	for _, f := range e.families {
		if err := checkFamily(f); err != nil {
			return nil, &parseError{path, f.line, err.Error()}
		}
	}
	linkCreated(e)
	return e, nil
}

// newSample copies the sample line the parser has just read; ln is the line.
func newSample(p *promtext.Parser, ln string) (*sample, error) {
	name, quoted := p.Name()
	if quoted {
		return nil, fmt.Errorf("quoted metric name %q: fixtures use legacy names", name)
	}
	s := &sample{name: string(name), base: p.Value()}
	for _, l := range p.Labels() {
		if l.Quoted {
			return nil, fmt.Errorf("quoted label name %q: fixtures use legacy names", l.Name)
		}
		s.labels = append(s.labels, labelPair{string(l.Name), string(l.Value)})
	}
	lo, hi := p.ValueSpan()
	s.prefix, s.raw, s.suffix = ln[:lo], ln[lo:hi], ln[hi:]
	if ts := p.TimestampBytes(); ts != nil {
		ms, err := strconv.ParseInt(string(ts), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid timestamp %q", ts)
		}
		s.hasTS, s.tsMillis = true, ms
	}
	return s, nil
}

// classify checks role-specific labels and fills le and seriesKey.
func classify(s *sample) error {
	var drop string
	switch s.role {
	case promtext.RoleBucket:
		drop = "le"
		v, ok := labelValue(s.labels, "le")
		if !ok {
			return fmt.Errorf("bucket %s has no le label", s.name)
		}
		le, ok := promtext.ParseBound(v, false)
		if !ok {
			return fmt.Errorf("bucket %s: invalid le %q", s.name, v)
		}
		s.le = le
	case promtext.RoleQuantile:
		drop = "quantile"
		v, ok := labelValue(s.labels, "quantile")
		if !ok {
			return fmt.Errorf("summary sample %s has no quantile label", s.name)
		}
		if _, ok := promtext.ParseBound(v, true); !ok {
			return fmt.Errorf("summary %s: invalid quantile %q", s.name, v)
		}
	}
	if s.role != promtext.RoleBucket {
		if _, ok := labelValue(s.labels, "le"); ok && s.fam.typ == typeHistogram {
			return fmt.Errorf("%s must not have an le label", s.name)
		}
	}
	counted := s.role == promtext.RoleBucket || s.role == promtext.RoleCount || (s.role == promtext.RoleValue && s.fam.typ == typeCounter)
	if counted && (s.base < 0 || math.IsNaN(s.base)) {
		return fmt.Errorf("%s has value %s; counts cannot be negative or NaN", s.name, s.raw)
	}
	s.seriesKey = canonicalLabels(s.labels, drop)
	return nil
}

// checkFamily validates a histogram's buckets: per series ascending le,
// cumulative counts, a +Inf bucket equal to _count.
func checkFamily(f *family) error {
	if f.typ != typeHistogram {
		return nil
	}
	type hs struct {
		buckets []*sample
		count   *sample
	}
	series := map[string]*hs{}
	var order []string
	for _, s := range f.samples {
		h := series[s.seriesKey]
		if h == nil {
			h = &hs{}
			series[s.seriesKey] = h
			order = append(order, s.seriesKey)
		}
		switch s.role {
		case promtext.RoleBucket:
			h.buckets = append(h.buckets, s)
		case promtext.RoleCount:
			h.count = s
		}
	}
	for _, k := range order {
		h := series[k]
		if len(h.buckets) == 0 {
			return fmt.Errorf("histogram %s{%s} has no buckets", f.name, k)
		}
		for i := 1; i < len(h.buckets); i++ {
			a, b := h.buckets[i-1], h.buckets[i]
			if !(b.le > a.le) {
				return fmt.Errorf("histogram %s{%s}: bucket le=%v after le=%v (must ascend)", f.name, k, b.le, a.le)
			}
			if b.base < a.base {
				return fmt.Errorf("histogram %s{%s}: bucket le=%v count %v is below le=%v count %v (must be cumulative)", f.name, k, b.le, b.base, a.le, a.base)
			}
		}
		last := h.buckets[len(h.buckets)-1]
		if !math.IsInf(last.le, 1) {
			return fmt.Errorf("histogram %s{%s} has no +Inf bucket", f.name, k)
		}
		if h.count != nil && h.count.base != last.base {
			return fmt.Errorf("histogram %s{%s}: _count %v differs from the +Inf bucket %v", f.name, k, h.count.base, last.base)
		}
	}
	return nil
}

// linkCreated ties "<base>_created" gauge families (what the Python client
// writes in text format), or untyped ones, to the counter, histogram or
// summary they describe.
func linkCreated(e *exposition) {
	bases := map[string]*family{}
	for _, f := range e.families {
		switch f.typ {
		case typeCounter, typeHistogram, typeSummary:
			bases[f.base()] = f
		}
	}
	for _, f := range e.families {
		if (f.typ != typeGauge && f.typ != typeUntyped) || !strings.HasSuffix(f.name, "_created") {
			continue
		}
		b := bases[strings.TrimSuffix(f.name, "_created")]
		if b == nil || b.createdFamily != nil {
			continue
		}
		b.createdFamily = f
		f.createdOf = b
		for _, s := range f.samples {
			s.role = promtext.RoleCreated
			s.createdFor = b
		}
	}
}

func labelValue(ls []labelPair, name string) (string, bool) {
	for _, l := range ls {
		if l.name == name {
			return l.value, true
		}
	}
	return "", false
}

// canonicalLabels is a sorted, escaped rendering of ls without the label
// named drop; it identifies a series.
func canonicalLabels(ls []labelPair, drop string) string {
	cp := make([]labelPair, 0, len(ls))
	for _, l := range ls {
		if l.name != drop {
			cp = append(cp, l)
		}
	}
	sort.Slice(cp, func(i, j int) bool { return cp[i].name < cp[j].name })
	var b strings.Builder
	for i, l := range cp {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.name)
		b.WriteString(`="`)
		b.WriteString(escapeLabel(l.value))
		b.WriteByte('"')
	}
	return b.String()
}

func escapeLabel(v string) string {
	if !strings.ContainsAny(v, "\\\"\n") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return r.Replace(v)
}

func escapeHelpOM(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return r.Replace(v)
}

// parseFloat reads a value as the exposition formats write it.
func parseFloat(s string) (float64, error) {
	v, ok := promtext.ParseValue([]byte(s))
	if !ok {
		return 0, fmt.Errorf("invalid number %q", s)
	}
	return v, nil
}

// formatValue spells v in the fixture's style.
func formatValue(v float64, style valueStyle) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	if style == stylePython {
		return pythonGoString(v)
	}
	if a := math.Abs(v); a < 1e15 && (a >= 1e-4 || v == 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// pythonRepr spells a finite float the way Python's repr() does: the
// shortest digits that round-trip, positional for exponents in [-4, 16),
// always with a decimal point.
func pythonRepr(v float64) string {
	if v == 0 {
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(v, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	f := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(f, ".") {
		f += ".0"
	}
	return f
}

// pythonGoString mirrors the Python client's conversion of repr() output to
// Go-like exponents for large values ("8128902.0" becomes "8.128902e+06").
func pythonGoString(v float64) string {
	s := pythonRepr(v)
	dot := strings.IndexByte(s, '.')
	if v > 0 && dot > 6 {
		mantissa := strings.TrimRight(s[:1]+"."+s[1:dot]+s[dot+1:], "0.")
		return mantissa + "e+0" + strconv.Itoa(dot-1)
	}
	return s
}

// renderText writes the exposition in text format 0.0.4 with the values vals
// (indexed by sample); unchanged values keep their original spelling.
func (e *exposition) renderText(vals []float64) []byte {
	var b strings.Builder
	b.Grow(len(e.lines) * 64)
	for i, l := range e.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if l.s == nil {
			b.WriteString(l.raw)
			continue
		}
		b.WriteString(l.s.prefix)
		b.WriteString(e.spell(l.s, vals[l.s.idx]))
		b.WriteString(l.s.suffix)
	}
	// Always end with a line feed, as the format requires, even when the
	// file does not (the recorded vLLM fixture lacks its last one).
	b.WriteByte('\n')
	return []byte(b.String())
}

func (e *exposition) spell(s *sample, v float64) string {
	if sameFloat(v, s.base) {
		return s.raw
	}
	return formatValue(v, e.style)
}

func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

// renderOpenMetrics writes the exposition as OpenMetrics 1.0: counter
// families are named without "_total" and their samples with it, the
// separate "_created" gauges of the Python text format are folded into the
// families they describe, the samples of one series are kept together, and
// the output ends with "# EOF".
func (e *exposition) renderOpenMetrics(vals []float64) []byte {
	var b strings.Builder
	b.Grow(len(e.lines) * 64)
	for _, f := range e.families {
		if f.createdOf != nil {
			continue // written inside its base family
		}
		name := f.base()
		typ := f.typ
		if typ == typeUntyped {
			typ = "unknown"
		}
		if f.hasHelp {
			fmt.Fprintf(&b, "# HELP %s %s\n", name, escapeHelpOM(f.help))
		}
		fmt.Fprintf(&b, "# TYPE %s %s\n", name, typ)
		// Group samples by series, in order of first appearance.
		var order []string
		groups := map[string][]*sample{}
		for _, s := range f.samples {
			if _, ok := groups[s.seriesKey]; !ok {
				order = append(order, s.seriesKey)
			}
			groups[s.seriesKey] = append(groups[s.seriesKey], s)
		}
		if f.createdFamily != nil {
			for _, s := range f.createdFamily.samples {
				if _, ok := groups[s.seriesKey]; ok {
					groups[s.seriesKey] = append(groups[s.seriesKey], s)
				}
			}
		}
		for _, k := range order {
			g := groups[k]
			sort.SliceStable(g, func(i, j int) bool { return omRank(g[i].role) < omRank(g[j].role) })
			for _, s := range g {
				e.writeOMSample(&b, f, s, vals[s.idx])
			}
		}
	}
	b.WriteString("# EOF\n")
	return []byte(b.String())
}

// omRank orders the samples of one series the way OpenMetrics wants them.
func omRank(r promtext.Role) int {
	switch r {
	case promtext.RoleValue, promtext.RoleQuantile, promtext.RoleBucket:
		return 0
	case promtext.RoleCount:
		return 1
	case promtext.RoleSum:
		return 2
	default: // promtext.RoleCreated
		return 3
	}
}

func (e *exposition) writeOMSample(b *strings.Builder, f *family, s *sample, v float64) {
	name := s.name
	switch {
	case s.role == promtext.RoleCreated:
		name = f.base() + "_created"
	case f.typ == typeCounter && s.role == promtext.RoleValue:
		name = f.base() + "_total"
	}
	b.WriteString(name)
	if len(s.labels) > 0 {
		b.WriteByte('{')
		for i, l := range s.labels {
			if i > 0 {
				b.WriteByte(',')
			}
			val := l.value
			if (l.name == "le" && s.role == promtext.RoleBucket) || (l.name == "quantile" && s.role == promtext.RoleQuantile) {
				if x, err := parseFloat(val); err == nil {
					val = formatValue(x, stylePython)
				}
			}
			b.WriteString(l.name)
			b.WriteString(`="`)
			b.WriteString(escapeLabel(val))
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(e.spell(s, v))
	if s.hasTS {
		b.WriteByte(' ')
		b.WriteString(strconv.FormatFloat(float64(s.tsMillis)/1000, 'f', -1, 64))
	}
	b.WriteByte('\n')
}

// baseValues returns a fresh copy of the fixture's values.
func (e *exposition) baseValues() []float64 {
	v := make([]float64, len(e.samples))
	for i, s := range e.samples {
		v[i] = s.base
	}
	return v
}

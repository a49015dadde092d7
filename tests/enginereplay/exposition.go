package enginereplay

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// This file holds the exposition model: a strict parser for the Prometheus
// text format 0.0.4, and the two renderers (text 0.0.4 and OpenMetrics 1.0).
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

// sampleRole says what a sample is inside its family.
type sampleRole int

const (
	roleValue    sampleRole = iota // counter/gauge/untyped value
	roleBucket                     // histogram _bucket
	roleCount                      // histogram or summary _count
	roleSum                        // histogram or summary _sum
	roleQuantile                   // summary sample with a quantile label
	roleCreated                    // _created, inline or in a "<base>_created" gauge family
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
	role   sampleRole
	le     float64 // upper bound, for roleBucket
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

type parseError struct {
	path string
	line int
	msg  string
}

func (e *parseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.path, e.line, e.msg) }

// parseExposition parses data as Prometheus text format 0.0.4. It is strict:
// anything a careful scraper would reject is an error naming path:line.
func parseExposition(path string, data []byte) (*exposition, error) {
	text := string(data)
	e := &exposition{path: path, byName: map[string]*family{}}
	if text == "" {
		return nil, &parseError{path, 1, "empty exposition"}
	}
	rawLines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
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
		f := &family{name: name, typ: typeUntyped, line: n}
		e.families = append(e.families, f)
		e.byName[name] = f
		return f, nil
	}
	for i, ln := range rawLines {
		n := i + 1
		if strings.ContainsRune(ln, '\r') {
			return nil, fail(n, "carriage return in line")
		}
		trimmed := strings.TrimLeft(ln, " \t")
		if trimmed == "" {
			e.lines = append(e.lines, textLine{raw: ln})
			continue
		}
		if strings.HasPrefix(trimmed, "#") {
			fields := strings.Fields(trimmed[1:])
			if len(fields) >= 2 && (fields[0] == "HELP" || fields[0] == "TYPE") {
				name := fields[1]
				if !validMetricName(name) {
					return nil, fail(n, "invalid metric name %q", name)
				}
				f, err := startFamily(n, name)
				if err != nil {
					return nil, err
				}
				cur = f
				if fields[0] == "HELP" {
					if f.hasHelp {
						return nil, fail(n, "second HELP for %s", name)
					}
					f.hasHelp = true
					// The docstring: the text after the name and its blanks.
					rest := strings.TrimLeft(trimmed[1:], " \t")
					rest = strings.TrimLeft(rest[len("HELP"):], " \t")
					rest = strings.TrimLeft(rest[len(name):], " \t")
					h, err := unescapeHelp(rest)
					if err != nil {
						return nil, fail(n, "HELP for %s: %v", name, err)
					}
					f.help = h
				} else {
					if f.hasType {
						return nil, fail(n, "second TYPE for %s", name)
					}
					if len(fields) != 3 {
						return nil, fail(n, "TYPE line needs exactly a name and a type")
					}
					switch fields[2] {
					case typeCounter, typeGauge, typeHistogram, typeSummary, typeUntyped:
					default:
						return nil, fail(n, "unknown metric type %q", fields[2])
					}
					f.typ = fields[2]
					f.hasType = true
				}
			}
			e.lines = append(e.lines, textLine{raw: ln})
			continue
		}
		s, err := parseSampleLine(ln)
		if err != nil {
			return nil, fail(n, "%v", err)
		}
		role, ok := roleIn(cur, s)
		if !ok {
			if f := earlierFamily(e, s); f != nil {
				return nil, fail(n, "sample %s is not next to the other samples of family %s", s.name, f.name)
			}
			f, _ := startFamily(n, s.name)
			cur = f
			role = roleValue
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

// earlierFamily returns the already declared family that s would belong to.
func earlierFamily(e *exposition, s *sample) *family {
	cands := []string{s.name}
	for _, suf := range []string{"_bucket", "_count", "_sum", "_created"} {
		if b, ok := strings.CutSuffix(s.name, suf); ok {
			cands = append(cands, b, b+"_total")
		}
	}
	for _, c := range cands {
		if f := e.byName[c]; f != nil {
			if _, ok := roleIn(f, s); ok {
				return f
			}
		}
	}
	return nil
}

// roleIn reports whether s belongs to family f, and as what.
func roleIn(f *family, s *sample) (sampleRole, bool) {
	if f == nil {
		return 0, false
	}
	name := s.name
	switch f.typ {
	case typeCounter:
		switch name {
		case f.name:
			return roleValue, true
		case f.base() + "_created":
			return roleCreated, true
		}
	case typeGauge, typeUntyped:
		if name == f.name {
			return roleValue, true
		}
	case typeHistogram:
		switch name {
		case f.name + "_bucket":
			return roleBucket, true
		case f.name + "_count":
			return roleCount, true
		case f.name + "_sum":
			return roleSum, true
		case f.name + "_created":
			return roleCreated, true
		}
	case typeSummary:
		switch name {
		case f.name:
			return roleQuantile, true
		case f.name + "_count":
			return roleCount, true
		case f.name + "_sum":
			return roleSum, true
		case f.name + "_created":
			return roleCreated, true
		}
	}
	return 0, false
}

// classify checks role-specific labels and fills le and seriesKey.
func classify(s *sample) error {
	var drop string
	switch s.role {
	case roleBucket:
		drop = "le"
		v, ok := labelValue(s.labels, "le")
		if !ok {
			return fmt.Errorf("bucket %s has no le label", s.name)
		}
		le, err := parseFloat(v)
		if err != nil || math.IsNaN(le) {
			return fmt.Errorf("bucket %s: invalid le %q", s.name, v)
		}
		s.le = le
	case roleQuantile:
		drop = "quantile"
		v, ok := labelValue(s.labels, "quantile")
		if !ok {
			return fmt.Errorf("summary sample %s has no quantile label", s.name)
		}
		q, err := parseFloat(v)
		if err != nil || q < 0 || q > 1 {
			return fmt.Errorf("summary %s: invalid quantile %q", s.name, v)
		}
	}
	if s.role != roleBucket {
		if _, ok := labelValue(s.labels, "le"); ok && s.fam.typ == typeHistogram {
			return fmt.Errorf("%s must not have an le label", s.name)
		}
	}
	counted := s.role == roleBucket || s.role == roleCount || (s.role == roleValue && s.fam.typ == typeCounter)
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
		case roleBucket:
			h.buckets = append(h.buckets, s)
		case roleCount:
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
// writes in text format) to the counter, histogram or summary they describe.
func linkCreated(e *exposition) {
	bases := map[string]*family{}
	for _, f := range e.families {
		switch f.typ {
		case typeCounter, typeHistogram, typeSummary:
			bases[f.base()] = f
		}
	}
	for _, f := range e.families {
		if f.typ != typeGauge || !strings.HasSuffix(f.name, "_created") {
			continue
		}
		b := bases[strings.TrimSuffix(f.name, "_created")]
		if b == nil || b.createdFamily != nil {
			continue
		}
		b.createdFamily = f
		f.createdOf = b
		for _, s := range f.samples {
			s.role = roleCreated
			s.createdFor = b
		}
	}
}

// parseSampleLine parses `name{labels} value [timestamp]`.
func parseSampleLine(ln string) (*sample, error) {
	s := &sample{}
	i := 0
	for i < len(ln) && (ln[i] == ' ' || ln[i] == '\t') {
		i++
	}
	start := i
	for i < len(ln) && isNameChar(ln[i], i == start) {
		i++
	}
	s.name = ln[start:i]
	if s.name == "" {
		return nil, fmt.Errorf("expected a metric name at column %d", start+1)
	}
	if i < len(ln) && ln[i] == '{' {
		i++
		names := map[string]bool{}
		for {
			for i < len(ln) && (ln[i] == ' ' || ln[i] == '\t') {
				i++
			}
			if i < len(ln) && ln[i] == '}' {
				i++
				break
			}
			ls := i
			for i < len(ln) && isLabelChar(ln[i], i == ls) {
				i++
			}
			lname := ln[ls:i]
			if lname == "" {
				return nil, fmt.Errorf("expected a label name at column %d", ls+1)
			}
			for i < len(ln) && (ln[i] == ' ' || ln[i] == '\t') {
				i++
			}
			if i >= len(ln) || ln[i] != '=' {
				return nil, fmt.Errorf("expected '=' after label %s", lname)
			}
			i++
			for i < len(ln) && (ln[i] == ' ' || ln[i] == '\t') {
				i++
			}
			val, n, err := readQuoted(ln[i:])
			if err != nil {
				return nil, fmt.Errorf("label %s: %v", lname, err)
			}
			i += n
			if names[lname] {
				return nil, fmt.Errorf("label %s appears twice", lname)
			}
			names[lname] = true
			s.labels = append(s.labels, labelPair{lname, val})
			for i < len(ln) && (ln[i] == ' ' || ln[i] == '\t') {
				i++
			}
			if i < len(ln) && ln[i] == ',' {
				i++
				continue
			}
			if i < len(ln) && ln[i] == '}' {
				i++
				break
			}
			return nil, fmt.Errorf("expected ',' or '}' at column %d", i+1)
		}
	}
	if i >= len(ln) || (ln[i] != ' ' && ln[i] != '\t') {
		return nil, fmt.Errorf("expected a blank and a value after %s", s.name)
	}
	for i < len(ln) && (ln[i] == ' ' || ln[i] == '\t') {
		i++
	}
	s.prefix = ln[:i]
	vs := i
	for i < len(ln) && ln[i] != ' ' && ln[i] != '\t' {
		i++
	}
	s.raw = ln[vs:i]
	s.suffix = ln[i:]
	v, err := parseFloat(s.raw)
	if err != nil {
		return nil, fmt.Errorf("invalid value %q", s.raw)
	}
	s.base = v
	rest := strings.TrimSpace(s.suffix)
	if rest != "" {
		if strings.ContainsAny(rest, " \t") {
			return nil, fmt.Errorf("unexpected text after the timestamp")
		}
		ts, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid timestamp %q", rest)
		}
		s.hasTS, s.tsMillis = true, ts
	}
	return s, nil
}

// readQuoted reads a double-quoted label value with the escapes \\ \" \n.
// It returns the value and the number of bytes consumed.
func readQuoted(s string) (string, int, error) {
	if s == "" || s[0] != '"' {
		return "", 0, fmt.Errorf("expected a double-quoted value")
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			if i+1 >= len(s) {
				return "", 0, fmt.Errorf("unterminated escape")
			}
			i++
			switch s[i] {
			case '\\':
				b.WriteByte('\\')
			case '"':
				b.WriteByte('"')
			case 'n':
				b.WriteByte('\n')
			default:
				return "", 0, fmt.Errorf("invalid escape \\%c", s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated quoted value")
}

func unescapeHelp(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			return "", fmt.Errorf("trailing backslash")
		}
		i++
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		default:
			// The text format only defines \\ and \n in HELP; other
			// backslashes are kept as written.
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

func isNameChar(c byte, first bool) bool {
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
}

func isLabelChar(c byte, first bool) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
}

func validMetricName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isNameChar(s[i], i == 0) {
			return false
		}
	}
	return true
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

// parseFloat accepts what the text format allows for values.
func parseFloat(s string) (float64, error) {
	switch s {
	case "+Inf", "Inf", "+inf", "inf":
		return math.Inf(1), nil
	case "-Inf", "-inf":
		return math.Inf(-1), nil
	case "NaN", "nan":
		return math.NaN(), nil
	}
	if strings.ContainsAny(s, "_xXpPiInN") {
		return 0, fmt.Errorf("invalid number %q", s)
	}
	return strconv.ParseFloat(s, 64)
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
func omRank(r sampleRole) int {
	switch r {
	case roleValue, roleQuantile, roleBucket:
		return 0
	case roleCount:
		return 1
	case roleSum:
		return 2
	default: // roleCreated
		return 3
	}
}

func (e *exposition) writeOMSample(b *strings.Builder, f *family, s *sample, v float64) {
	name := s.name
	switch {
	case s.role == roleCreated:
		name = f.base() + "_created"
	case f.typ == typeCounter && s.role == roleValue:
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
			if (l.name == "le" && s.role == roleBucket) || (l.name == "quantile" && s.role == roleQuantile) {
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

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
	"time"

	"github.com/llmops-otel/otelcol-llmops/internal/promtext"
)

// A scenario scripts how the fixture's series change over scenario time t
// (seconds). The format is described in README.md; in short, one record per
// line:
//
//	epoch unix=1718140000
//	counter   SELECTOR rate=R [rate_to=R2] [start=T0] [end=T1] [integer=BOOL]
//	gauge     SELECTOR set   value=V [start=T0] [end=T1]
//	gauge     SELECTOR ramp  from=A to=B start=T0 end=T1
//	gauge     SELECTOR step  at=T value=V
//	gauge     SELECTOR sine  mean=M amplitude=A period=P [phase=S] [start] [end]
//	histogram SELECTOR rate=R [rate_to=R2] median=M [median_to=M2] [factor=F] [start] [end]
//	restart   at=T
//	fault     start=T0 [end=T1] status=503 | delay=2s | body="..." | garbage=true | truncate=true | huge=10MiB
//
// Everything is a pure function of t, so the exposition at a given t is
// always the same bytes, whatever was rendered before.

// sliceWidth is the width, in scenario seconds, of the time slices over which
// histogram observations are integrated. Slices sit on a fixed grid, so the
// integral is the same whatever t was asked for before.
const sliceWidth = 0.25

type window struct{ start, end float64 }

func (w window) String() string { return fmt.Sprintf("[%g, %g)", w.start, w.end) }

// frac is where s lies in the window, 0..1, for ramps.
func (w window) frac(s float64) float64 {
	if math.IsInf(w.end, 1) || w.end <= w.start {
		return 0
	}
	f := (s - w.start) / (w.end - w.start)
	return math.Max(0, math.Min(1, f))
}

type scenario struct {
	path     string
	epoch    float64
	restarts []float64
	counters []*counterRule
	gauges   []*gaugeRule
	hists    []*histRule
	faults   []faultWindow
	resets   []*sample // samples that go to 0 on restart
	created  []*sample // _created samples, moved on restart
	starts   []*sample // process_start_time_seconds
}

type counterRule struct {
	line         int
	win          window
	rate, rateTo float64
	targets      []counterTarget
}

type counterTarget struct {
	s       *sample
	integer bool
}

type gaugeRule struct {
	line                           int
	mode                           string
	win                            window
	value, from, to                float64
	mean, amplitude, period, phase float64
	round                          bool
	min, max                       float64
	targets                        []*sample
}

type histRule struct {
	line               int
	win                window
	rate, rateTo       float64
	median, medianTo   float64
	factor             float64
	targets            []*histTarget
	sigma, meanPerUnit float64 // ln(factor), mean/median
}

// histSeries is one labelled series of a histogram family.
type histSeries struct {
	buckets    []*sample
	count, sum *sample
}

// histTarget is a histogram rule applied to one series, with the running
// integral of the slices completed so far.
type histTarget struct {
	series *histSeries
	// cache: integral from cacheFrom over the slices [firstSlice, nextSlice).
	valid     bool
	cacheFrom float64
	nextSlice int64
	cum       []float64 // per bucket; the last is +Inf, i.e. the count
	cumSum    float64
}

type faultWindow struct {
	line  int
	win   window
	fault Fault
}

// rate at scenario time s (inside the rule's window).
func (r *counterRule) rateAt(s float64) float64 {
	return r.rate + (r.rateTo-r.rate)*r.win.frac(s)
}

// increase is the integral of the rate over [a, b] (the rate is linear, so
// the trapezoid is exact).
func (r *counterRule) increase(a, b float64) float64 {
	if b <= a {
		return 0
	}
	return (b - a) * (r.rateAt(a) + r.rateAt(b)) / 2
}

// lastRestart is the time of the latest restart at or before t.
func (sc *scenario) lastRestart(t float64) (float64, bool) {
	r, ok := 0.0, false
	for _, x := range sc.restarts {
		if x <= t {
			r, ok = x, true
		}
	}
	return r, ok
}

// eval fills vals (the fixture's values) with the values at time t.
func (sc *scenario) eval(t float64, vals []float64) {
	from := 0.0
	if r, ok := sc.lastRestart(t); ok {
		from = r
		for _, s := range sc.resets {
			vals[s.idx] = 0
		}
		for _, s := range sc.created {
			vals[s.idx] = sc.epoch + r
		}
		for _, s := range sc.starts {
			vals[s.idx] = sc.epoch + r
		}
	}
	for _, r := range sc.counters {
		a := math.Max(r.win.start, from)
		b := math.Min(t, r.win.end)
		inc := r.increase(a, b)
		for _, tg := range r.targets {
			if tg.integer {
				vals[tg.s.idx] += math.Floor(inc)
			} else {
				vals[tg.s.idx] += inc
			}
		}
	}
	for _, r := range sc.hists {
		a := math.Max(r.win.start, from)
		b := math.Min(t, r.win.end)
		for _, tg := range r.targets {
			cum, sum := r.integrate(tg, a, b)
			hs := tg.series
			for i, s := range hs.buckets {
				vals[s.idx] += math.Floor(cum[i])
			}
			if hs.count != nil {
				vals[hs.count.idx] += math.Floor(cum[len(cum)-1])
			}
			if hs.sum != nil {
				vals[hs.sum.idx] += sum
			}
		}
	}
	for _, g := range sc.gauges {
		for _, s := range g.targets {
			vals[s.idx] = g.apply(t, vals[s.idx])
		}
	}
}

func (g *gaugeRule) apply(t, prev float64) float64 {
	var v float64
	switch g.mode {
	case "ramp":
		if t < g.win.start {
			return prev
		}
		v = g.from + (g.to-g.from)*g.win.frac(t)
	case "set", "step":
		if t < g.win.start || t >= g.win.end {
			return prev
		}
		v = g.value
	case "sine":
		if t < g.win.start || t >= g.win.end {
			return prev
		}
		v = g.mean + g.amplitude*math.Sin(2*math.Pi*(t-g.win.start+g.phase)/g.period)
	}
	if g.round {
		v = math.Round(v)
	}
	return math.Max(g.min, math.Min(g.max, v))
}

// probBelow is the probability that an observation is at most x, for a
// lognormal distribution with the given median and sigma = ln(factor).
func (r *histRule) probBelow(x, median float64) float64 {
	switch {
	case math.IsInf(x, 1):
		return 1
	case x <= 0:
		return 0
	case r.sigma == 0:
		if x >= median {
			return 1
		}
		return 0
	}
	z := (math.Log(x) - math.Log(median)) / r.sigma
	return 0.5 * math.Erfc(-z/math.Sqrt2)
}

// integrate returns, for observations between a and b, the expected
// cumulative count per bucket (the last entry is +Inf, the total count) and
// the expected sum. Each slice of the fixed grid contributes the rate and
// distribution at its midpoint times the part of it inside [a, b], so the
// result grows monotonically with b and every bucket stays below the next.
func (r *histRule) integrate(tg *histTarget, a, b float64) ([]float64, float64) {
	nb := len(tg.series.buckets)
	if b <= a {
		return make([]float64, nb), 0
	}
	first := int64(math.Floor(a / sliceWidth))
	if !tg.valid || tg.cacheFrom != a || float64(tg.nextSlice)*sliceWidth > b {
		tg.valid = true
		tg.cacheFrom = a
		tg.nextSlice = first
		tg.cum = make([]float64, nb)
		tg.cumSum = 0
	}
	add := func(cum []float64, sum *float64, k int64, hi float64) {
		lo := math.Max(a, float64(k)*sliceWidth)
		w := hi - lo
		if w <= 0 {
			return
		}
		mid := (float64(k) + 0.5) * sliceWidth
		mid = math.Max(r.win.start, math.Min(r.win.end, mid))
		f := r.win.frac(mid)
		rate := r.rate + (r.rateTo-r.rate)*f
		median := r.median + (r.medianTo-r.median)*f
		n := rate * w
		for i, s := range tg.series.buckets {
			cum[i] += n * r.probBelow(s.le, median)
		}
		*sum += n * median * r.meanPerUnit
	}
	for float64(tg.nextSlice+1)*sliceWidth <= b {
		add(tg.cum, &tg.cumSum, tg.nextSlice, float64(tg.nextSlice+1)*sliceWidth)
		tg.nextSlice++
	}
	cum := append([]float64(nil), tg.cum...)
	sum := tg.cumSum
	if float64(tg.nextSlice)*sliceWidth < b {
		add(cum, &sum, tg.nextSlice, b)
	}
	return cum, sum
}

// activeFault returns the scenario's fault at time t, if any.
func (sc *scenario) activeFault(t float64) (Fault, bool) {
	for _, f := range sc.faults {
		if t >= f.win.start && t < f.win.end {
			return f.fault, true
		}
	}
	return Fault{}, false
}

// ---- parsing ----

type scenarioError struct {
	path string
	line int
	msg  string
}

func (e *scenarioError) Error() string { return fmt.Sprintf("%s:%d: %s", e.path, e.line, e.msg) }

// emptyScenario is what a server without a scenario file plays: the fixture
// as recorded.
func emptyScenario(e *exposition) *scenario {
	sc := &scenario{epoch: defaultEpoch(e)}
	sc.collect(e)
	return sc
}

// defaultEpoch is the Unix time of t = 0 when the scenario does not say:
// the latest creation or process start time in the fixture, so that a
// restart moves those times forward; 1750000000 if there is none.
func defaultEpoch(e *exposition) float64 {
	ep := 0.0
	for _, s := range e.samples {
		if s.role == promtext.RoleCreated || s.fam.name == "process_start_time_seconds" {
			if !math.IsNaN(s.base) && !math.IsInf(s.base, 0) {
				ep = math.Max(ep, s.base)
			}
		}
	}
	if ep == 0 {
		ep = 1750000000
	}
	return ep
}

// collect finds the samples a restart touches.
func (sc *scenario) collect(e *exposition) {
	for _, s := range e.samples {
		switch {
		case s.role == promtext.RoleCreated:
			sc.created = append(sc.created, s)
		case s.fam.name == "process_start_time_seconds" && s.fam.typ != typeCounter:
			sc.starts = append(sc.starts, s)
		case s.role == promtext.RoleBucket || s.role == promtext.RoleCount || s.role == promtext.RoleSum || s.role == promtext.RoleQuantile:
			sc.resets = append(sc.resets, s)
		case s.fam.typ == typeCounter:
			sc.resets = append(sc.resets, s)
		}
	}
}

func parseScenario(path string, data []byte, e *exposition) (*scenario, error) {
	sc := &scenario{path: path, epoch: defaultEpoch(e)}
	sc.collect(e)
	epochLine := 0
	for i, raw := range strings.Split(string(data), "\n") {
		n := i + 1
		fail := func(format string, args ...any) error {
			return &scenarioError{path, n, fmt.Sprintf(format, args...)}
		}
		toks, err := tokenize(raw)
		if err != nil {
			return nil, fail("%v", err)
		}
		if len(toks) == 0 {
			continue
		}
		rec := toks[0]
		args := toks[1:]
		takeSelector := func() (*selector, error) {
			if len(args) == 0 || isKeyValue(args[0]) {
				return nil, fail("%s needs a series selector, e.g. %s vllm:num_requests_waiting{model_name=\"m\"}", rec, rec)
			}
			s, err := parseSelector(args[0])
			if err != nil {
				return nil, fail("selector %s: %v", args[0], err)
			}
			args = args[1:]
			return s, nil
		}
		switch rec {
		case "epoch":
			kv, err := parseKV(args, "unix")
			if err != nil {
				return nil, fail("%v", err)
			}
			if epochLine != 0 {
				return nil, fail("second epoch (first on line %d)", epochLine)
			}
			epochLine = n
			if sc.epoch, err = kv.float("unix", true, 0); err != nil {
				return nil, fail("%v", err)
			}
		case "restart":
			kv, err := parseKV(args, "at")
			if err != nil {
				return nil, fail("%v", err)
			}
			at, err := kv.float("at", true, 0)
			if err != nil {
				return nil, fail("%v", err)
			}
			if at < 0 {
				return nil, fail("restart at=%g is before t=0", at)
			}
			sc.restarts = append(sc.restarts, at)
		case "fault":
			fw, err := parseFault(args)
			if err != nil {
				return nil, fail("%v", err)
			}
			fw.line = n
			sc.faults = append(sc.faults, fw)
		case "counter":
			sel, err := takeSelector()
			if err != nil {
				return nil, err
			}
			r, err := parseCounterRule(args, sel, e)
			if err != nil {
				return nil, fail("%v", err)
			}
			r.line = n
			sc.counters = append(sc.counters, r)
		case "gauge":
			sel, err := takeSelector()
			if err != nil {
				return nil, err
			}
			r, err := parseGaugeRule(args, sel, e)
			if err != nil {
				return nil, fail("%v", err)
			}
			r.line = n
			sc.gauges = append(sc.gauges, r)
		case "histogram":
			sel, err := takeSelector()
			if err != nil {
				return nil, err
			}
			r, err := parseHistRule(args, sel, e)
			if err != nil {
				return nil, fail("%v", err)
			}
			r.line = n
			sc.hists = append(sc.hists, r)
		default:
			return nil, fail("unknown record %q (want epoch, counter, gauge, histogram, restart or fault)", rec)
		}
	}
	sort.Float64s(sc.restarts)
	return sc, nil
}

// tokenize splits a line into blank-separated tokens. Double quotes and
// braces group (so a selector's label values and quoted values may hold
// blanks); a '#' that starts a token begins a comment.
func tokenize(line string) ([]string, error) {
	var toks []string
	var cur strings.Builder
	inTok, inQuote, depth := false, false, 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		if inQuote {
			cur.WriteByte(c)
			if c == '\\' && i+1 < len(line) {
				i++
				cur.WriteByte(line[i])
			} else if c == '"' {
				inQuote = false
			}
			continue
		}
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			if depth > 0 {
				cur.WriteByte(c)
				continue
			}
			if inTok {
				toks = append(toks, cur.String())
				cur.Reset()
				inTok = false
			}
		case c == '#' && !inTok:
			i = len(line)
		default:
			inTok = true
			cur.WriteByte(c)
			switch c {
			case '"':
				inQuote = true
			case '{':
				depth++
			case '}':
				if depth == 0 {
					return nil, fmt.Errorf("unbalanced '}'")
				}
				depth--
			}
		}
	}
	if inQuote {
		return nil, fmt.Errorf("unterminated quoted string")
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced '{'")
	}
	if inTok {
		toks = append(toks, cur.String())
	}
	return toks, nil
}

// isKeyValue reports whether tok is key=value (an '=' before any brace).
func isKeyValue(tok string) bool {
	eq := strings.IndexByte(tok, '=')
	br := strings.IndexByte(tok, '{')
	return eq > 0 && (br < 0 || eq < br)
}

type kvArgs struct {
	m    map[string]string
	used map[string]bool
}

// parseKV parses key=value tokens; allowed lists the keys the record takes.
func parseKV(toks []string, allowed ...string) (*kvArgs, error) {
	kv := &kvArgs{m: map[string]string{}, used: map[string]bool{}}
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	for _, t := range toks {
		if !isKeyValue(t) {
			return nil, fmt.Errorf("expected key=value, got %q", t)
		}
		k, v, _ := strings.Cut(t, "=")
		if !ok[k] {
			return nil, fmt.Errorf("unknown key %q (this record takes %s)", k, strings.Join(allowed, ", "))
		}
		if _, dup := kv.m[k]; dup {
			return nil, fmt.Errorf("key %q given twice", k)
		}
		if strings.HasPrefix(v, `"`) {
			uv, n, err := promtext.Unquote(v)
			if err != nil || n != len(v) {
				return nil, fmt.Errorf("%s: bad quoted value %s", k, v)
			}
			v = uv
		}
		kv.m[k] = v
	}
	return kv, nil
}

func (kv *kvArgs) has(k string) bool { _, ok := kv.m[k]; return ok }

func (kv *kvArgs) float(k string, required bool, def float64) (float64, error) {
	v, ok := kv.m[k]
	if !ok {
		if required {
			return 0, fmt.Errorf("missing %s=", k)
		}
		return def, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Errorf("%s=%s is not a number", k, v)
	}
	return f, nil
}

func (kv *kvArgs) bool(k string, def bool) (bool, error) {
	v, ok := kv.m[k]
	if !ok {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%s is not true or false", k, v)
	}
	return b, nil
}

// window reads start= and end= (end defaults to forever).
func (kv *kvArgs) window() (window, error) {
	s, err := kv.float("start", false, 0)
	if err != nil {
		return window{}, err
	}
	e, err := kv.float("end", false, math.Inf(1))
	if err != nil {
		return window{}, err
	}
	if s < 0 {
		return window{}, fmt.Errorf("start=%g is before t=0", s)
	}
	if !(e > s) {
		return window{}, fmt.Errorf("end=%g must be after start=%g", e, s)
	}
	return window{s, e}, nil
}

// ---- selectors ----

type matcher struct {
	name, op, value string
	re              *regexp.Regexp
}

type selector struct {
	text     string
	name     string
	matchers []matcher
}

func parseSelector(text string) (*selector, error) {
	sel := &selector{text: text}
	br := strings.IndexByte(text, '{')
	name := text
	if br >= 0 {
		name = text[:br]
	}
	if !promtext.ValidMetricName(name) {
		return nil, fmt.Errorf("invalid metric name %q", name)
	}
	sel.name = name
	if br < 0 {
		return sel, nil
	}
	body := text[br+1:]
	if !strings.HasSuffix(body, "}") {
		return nil, fmt.Errorf("missing closing '}'")
	}
	body = body[:len(body)-1]
	i := 0
	skip := func() {
		for i < len(body) && (body[i] == ' ' || body[i] == '\t') {
			i++
		}
	}
	for {
		skip()
		if i >= len(body) {
			break
		}
		ls := i
		i = promtext.LabelNameEnd(body, i)
		lname := body[ls:i]
		if lname == "" {
			return nil, fmt.Errorf("expected a label name at %q", body[ls:])
		}
		skip()
		var op string
		for _, o := range []string{"!=", "=~", "!~", "="} {
			if strings.HasPrefix(body[i:], o) {
				op = o
				break
			}
		}
		if op == "" {
			return nil, fmt.Errorf("expected =, !=, =~ or !~ after %s", lname)
		}
		i += len(op)
		skip()
		val, n, err := promtext.Unquote(body[i:])
		if err != nil {
			return nil, fmt.Errorf("label %s: %w", lname, err)
		}
		i += n
		m := matcher{name: lname, op: op, value: val}
		if op == "=~" || op == "!~" {
			re, err := regexp.Compile("^(?:" + val + ")$")
			if err != nil {
				return nil, fmt.Errorf("label %s: %w", lname, err)
			}
			m.re = re
		}
		sel.matchers = append(sel.matchers, m)
		skip()
		if i < len(body) {
			if body[i] != ',' {
				return nil, fmt.Errorf("expected ',' at %q", body[i:])
			}
			i++
		}
	}
	return sel, nil
}

func (sel *selector) matches(ls []labelPair) bool {
	for _, m := range sel.matchers {
		v, _ := labelValue(ls, m.name)
		var ok bool
		switch m.op {
		case "=":
			ok = v == m.value
		case "!=":
			ok = v != m.value
		case "=~":
			ok = m.re.MatchString(v)
		case "!~":
			ok = !m.re.MatchString(v)
		}
		if !ok {
			return false
		}
	}
	return true
}

// family resolves the selector's name; for counters the name may be given
// with or without "_total".
func (sel *selector) family(e *exposition, want ...string) (*family, error) {
	f := e.byName[sel.name]
	if f == nil {
		if g := e.byName[sel.name+"_total"]; g != nil && g.typ == typeCounter {
			f = g
		} else if g := e.byName[strings.TrimSuffix(sel.name, "_total")]; g != nil && g.typ == typeCounter {
			f = g
		}
	}
	if f == nil {
		return nil, fmt.Errorf("selector %s matches nothing: %s has no metric family %s", sel.text, e.path, sel.name)
	}
	for _, w := range want {
		if f.typ == w {
			return f, nil
		}
	}
	return nil, fmt.Errorf("%s is a %s, this rule needs a %s", f.name, f.typ, strings.Join(want, " or "))
}

func (sel *selector) values(e *exposition, want ...string) ([]*sample, error) {
	f, err := sel.family(e, want...)
	if err != nil {
		return nil, err
	}
	var out []*sample
	for _, s := range f.samples {
		if s.role == promtext.RoleValue && sel.matches(s.labels) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("selector %s matches no series of %s", sel.text, f.name)
	}
	return out, nil
}

func (sel *selector) histSeries(e *exposition) ([]*histSeries, error) {
	f, err := sel.family(e, typeHistogram)
	if err != nil {
		return nil, err
	}
	var out []*histSeries
	byKey := map[string]*histSeries{}
	for _, s := range f.samples {
		if s.role == promtext.RoleCreated {
			continue
		}
		ls := s.labels
		if s.role == promtext.RoleBucket {
			ls = withoutLabel(ls, "le")
		}
		if !sel.matches(ls) {
			continue
		}
		hs := byKey[s.seriesKey]
		if hs == nil {
			hs = &histSeries{}
			byKey[s.seriesKey] = hs
			out = append(out, hs)
		}
		switch s.role {
		case promtext.RoleBucket:
			hs.buckets = append(hs.buckets, s)
		case promtext.RoleCount:
			hs.count = s
		case promtext.RoleSum:
			hs.sum = s
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("selector %s matches no series of %s", sel.text, f.name)
	}
	return out, nil
}

func withoutLabel(ls []labelPair, name string) []labelPair {
	out := make([]labelPair, 0, len(ls))
	for _, l := range ls {
		if l.name != name {
			out = append(out, l)
		}
	}
	return out
}

// ---- rules ----

func parseCounterRule(args []string, sel *selector, e *exposition) (*counterRule, error) {
	kv, err := parseKV(args, "rate", "rate_to", "start", "end", "integer")
	if err != nil {
		return nil, err
	}
	r := &counterRule{}
	if r.win, err = kv.window(); err != nil {
		return nil, err
	}
	if r.rate, err = kv.float("rate", true, 0); err != nil {
		return nil, err
	}
	if r.rateTo, err = rampTo(kv, "rate_to", r.rate, r.win); err != nil {
		return nil, err
	}
	if r.rate < 0 || r.rateTo < 0 {
		return nil, fmt.Errorf("a counter's rate cannot be negative (counters never go down; use restart)")
	}
	samples, err := sel.values(e, typeCounter)
	if err != nil {
		return nil, err
	}
	for _, s := range samples {
		integer := s.base == math.Trunc(s.base)
		if kv.has("integer") {
			if integer, err = kv.bool("integer", true); err != nil {
				return nil, err
			}
		}
		r.targets = append(r.targets, counterTarget{s: s, integer: integer})
	}
	return r, nil
}

// rampTo reads the end value of a ramp over the rule's window; a ramp needs
// a finite window.
func rampTo(kv *kvArgs, key string, from float64, w window) (float64, error) {
	if !kv.has(key) {
		return from, nil
	}
	if math.IsInf(w.end, 1) {
		return 0, fmt.Errorf("%s= ramps over the rule's window, which needs an end=", key)
	}
	return kv.float(key, true, 0)
}

func parseGaugeRule(args []string, sel *selector, e *exposition) (*gaugeRule, error) {
	if len(args) == 0 || isKeyValue(args[0]) {
		return nil, fmt.Errorf("gauge needs a mode after the selector: set, ramp, step or sine")
	}
	g := &gaugeRule{mode: args[0], min: math.Inf(-1), max: math.Inf(1)}
	args = args[1:]
	common := []string{"round", "min", "max"}
	var kv *kvArgs
	var err error
	switch g.mode {
	case "set":
		if kv, err = parseKV(args, append(common, "value", "start", "end")...); err != nil {
			return nil, err
		}
		if g.win, err = kv.window(); err != nil {
			return nil, err
		}
		if g.value, err = kv.float("value", true, 0); err != nil {
			return nil, err
		}
	case "step":
		if kv, err = parseKV(args, append(common, "at", "value")...); err != nil {
			return nil, err
		}
		at, err := kv.float("at", true, 0)
		if err != nil {
			return nil, err
		}
		if at < 0 {
			return nil, fmt.Errorf("at=%g is before t=0", at)
		}
		g.win = window{at, math.Inf(1)}
		if g.value, err = kv.float("value", true, 0); err != nil {
			return nil, err
		}
	case "ramp":
		if kv, err = parseKV(args, append(common, "from", "to", "start", "end")...); err != nil {
			return nil, err
		}
		if !kv.has("end") {
			return nil, fmt.Errorf("ramp needs end= (and start=, default 0)")
		}
		if g.win, err = kv.window(); err != nil {
			return nil, err
		}
		if g.from, err = kv.float("from", true, 0); err != nil {
			return nil, err
		}
		if g.to, err = kv.float("to", true, 0); err != nil {
			return nil, err
		}
	case "sine":
		if kv, err = parseKV(args, append(common, "mean", "amplitude", "period", "phase", "start", "end")...); err != nil {
			return nil, err
		}
		if g.win, err = kv.window(); err != nil {
			return nil, err
		}
		if g.mean, err = kv.float("mean", true, 0); err != nil {
			return nil, err
		}
		if g.amplitude, err = kv.float("amplitude", true, 0); err != nil {
			return nil, err
		}
		if g.period, err = kv.float("period", true, 0); err != nil {
			return nil, err
		}
		if g.period <= 0 {
			return nil, fmt.Errorf("period=%g must be positive", g.period)
		}
		if g.phase, err = kv.float("phase", false, 0); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown gauge mode %q (want set, ramp, step or sine)", g.mode)
	}
	if g.round, err = kv.bool("round", false); err != nil {
		return nil, err
	}
	if g.min, err = kv.float("min", false, math.Inf(-1)); err != nil {
		return nil, err
	}
	if g.max, err = kv.float("max", false, math.Inf(1)); err != nil {
		return nil, err
	}
	if g.min > g.max {
		return nil, fmt.Errorf("min=%g is above max=%g", g.min, g.max)
	}
	if g.targets, err = sel.values(e, typeGauge, typeUntyped); err != nil {
		return nil, err
	}
	return g, nil
}

func parseHistRule(args []string, sel *selector, e *exposition) (*histRule, error) {
	kv, err := parseKV(args, "rate", "rate_to", "median", "median_to", "factor", "start", "end")
	if err != nil {
		return nil, err
	}
	r := &histRule{}
	if r.win, err = kv.window(); err != nil {
		return nil, err
	}
	if r.rate, err = kv.float("rate", true, 0); err != nil {
		return nil, err
	}
	if r.rateTo, err = rampTo(kv, "rate_to", r.rate, r.win); err != nil {
		return nil, err
	}
	if r.rate < 0 || r.rateTo < 0 {
		return nil, fmt.Errorf("an observation rate cannot be negative")
	}
	if r.median, err = kv.float("median", true, 0); err != nil {
		return nil, err
	}
	if r.medianTo, err = rampTo(kv, "median_to", r.median, r.win); err != nil {
		return nil, err
	}
	if r.median <= 0 || r.medianTo <= 0 {
		return nil, fmt.Errorf("the median must be positive (observations are lognormal)")
	}
	if r.factor, err = kv.float("factor", false, 1.5); err != nil {
		return nil, err
	}
	if r.factor < 1 || math.IsInf(r.factor, 0) {
		return nil, fmt.Errorf("factor=%g must be at least 1 (1 puts every observation at the median)", r.factor)
	}
	r.sigma = math.Log(r.factor)
	r.meanPerUnit = math.Exp(r.sigma * r.sigma / 2)
	series, err := sel.histSeries(e)
	if err != nil {
		return nil, err
	}
	for _, hs := range series {
		r.targets = append(r.targets, &histTarget{series: hs})
	}
	return r, nil
}

func parseFault(args []string) (faultWindow, error) {
	kv, err := parseKV(args, "start", "end", "status", "delay", "body", "garbage", "truncate", "huge")
	if err != nil {
		return faultWindow{}, err
	}
	var fw faultWindow
	if !kv.has("start") {
		return fw, fmt.Errorf("fault needs start= (and end=, default forever)")
	}
	if fw.win, err = kv.window(); err != nil {
		return fw, err
	}
	f := &fw.fault
	if v, ok := kv.m["status"]; ok {
		st, err := strconv.Atoi(v)
		if err != nil || st < 100 || st > 599 {
			return fw, fmt.Errorf("status=%s is not an HTTP status", v)
		}
		f.Status = st
	}
	if v, ok := kv.m["delay"]; ok {
		if f.Delay, err = parseDelay(v); err != nil {
			return fw, err
		}
	}
	f.Body = kv.m["body"]
	garbage, err := kv.bool("garbage", false)
	if err != nil {
		return fw, err
	}
	if garbage {
		if f.Body != "" {
			return fw, fmt.Errorf("garbage=true and body= both set the body")
		}
		f.Body = garbageBody
	}
	if f.Truncate, err = kv.bool("truncate", false); err != nil {
		return fw, err
	}
	if v, ok := kv.m["huge"]; ok {
		if f.Huge, err = parseBytes(v); err != nil {
			return fw, err
		}
	}
	if f.isZero() {
		return fw, fmt.Errorf("fault does nothing: give status=, delay=, body=, garbage=, truncate= or huge=")
	}
	return fw, nil
}

// garbageBody is what garbage=true serves: not an exposition at all.
const garbageBody = "<html><body>502 upstream hiccup</body></html>\n\x00\x01 not { a metric\n"

func parseDelay(v string) (time.Duration, error) {
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return d, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && !math.IsInf(f, 0) {
		return time.Duration(f * float64(time.Second)), nil
	}
	return 0, fmt.Errorf("delay=%s is not a duration (2s, 500ms, or seconds)", v)
}

func parseBytes(v string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	num, mult := v, int64(1)
	for _, u := range units {
		if strings.HasSuffix(v, u.suffix) {
			num, mult = strings.TrimSuffix(v, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("huge=%s is not a byte count (e.g. 20MiB)", v)
	}
	return n * mult, nil
}

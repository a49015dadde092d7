// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package promtext

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
)

// dump renders every entry of body, one per line, for comparisons.
func dump(t *testing.T, body string, opts Options) (string, error) {
	t.Helper()
	return dumpWith(t, body, opts, false)
}

// dumpWith is dump; with skip, the parser is told it knows every series
// (SetKnown) and the labels are read afterwards with ReadSkippedLabels.
func dumpWith(t *testing.T, body string, opts Options, skip bool) (string, error) {
	t.Helper()
	var p Parser
	if skip {
		p.SetKnown(func([]byte) bool { return true })
	}
	p.Reset([]byte(body), opts)
	var b strings.Builder
	for {
		e, err := p.Next()
		if errors.Is(err, io.EOF) {
			return b.String(), nil
		}
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v is not an *Error with a line", err)
			}
			return b.String(), err
		}
		fmt.Fprintf(&b, "%d:", p.Line())
		switch e {
		case EntrySample:
			name, q := p.Name()
			fmt.Fprintf(&b, "sample %q", name)
			if q {
				b.WriteString("(quoted)")
			}
			labels := p.Labels()
			if skip {
				if labels, err = p.ReadSkippedLabels(); err != nil {
					return b.String(), err
				}
			}
			for _, l := range labels {
				fmt.Fprintf(&b, " %q=%q", l.Name, l.Value)
				if l.Quoted {
					b.WriteString("(quoted)")
				}
			}
			lo, hi := p.ValueSpan()
			fmt.Fprintf(&b, " v=%v(%s)", p.Value(), p.Raw()[lo:hi])
			if ts, ok := p.Timestamp(); ok {
				fmt.Fprintf(&b, " ts=%d(%s)", ts, p.TimestampBytes())
			}
			if ex, ok := p.Exemplar(); ok {
				b.WriteString(" ex{")
				for _, l := range ex.Labels {
					fmt.Fprintf(&b, "%q=%q ", l.Name, l.Value)
				}
				fmt.Fprintf(&b, "v=%v", ex.Value)
				if ex.HasTS {
					fmt.Fprintf(&b, " ts=%d", ex.TS)
				}
				b.WriteString("}")
			}
		case EntryHelp, EntryType, EntryUnit:
			name, q := p.MetaName()
			kind := map[Entry]string{EntryHelp: "help", EntryType: "type", EntryUnit: "unit"}[e]
			fmt.Fprintf(&b, "%s %q quoted=%v %q", kind, name, q, p.Text())
			if e == EntryType {
				typ, ok := p.Type()
				fmt.Fprintf(&b, " %s %v", typ, ok)
			}
		case EntryComment:
			fmt.Fprintf(&b, "comment %q", p.Raw())
		case EntryBlank:
			b.WriteString("blank")
		case EntryEOF:
			b.WriteString("eof")
		}
		b.WriteByte('\n')
	}
}

func TestParserEntries(t *testing.T) {
	body := "# HELP x a\\\\b\\nc \\q\n" +
		"# TYPE x counter\n" +
		"  \t\n" +
		"# just a comment\n" +
		"#nospace\n" +
		"x_total{a=\"1\",b = \"q\\\"\\\\\\n\\t\" , } 1.5 1700000000123\r\n" +
		"{\"my.metric\",\"l.x\"=\"v\"} -Inf\n" +
		"# UNIT x seconds\n" +
		"y\t\tNaN"
	got, err := dump(t, body, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `1:help "x" quoted=false "a\\b\nc \\q"
2:type "x" quoted=false "counter" counter true
3:blank
4:comment "# just a comment"
5:comment "#nospace"
6:sample "x_total" "a"="1" "b"="q\"\\\n\\t" v=1.5(1.5) ts=1700000000123000000(1700000000123)
7:sample "my.metric"(quoted) "l.x"="v"(quoted) v=-Inf(-Inf)
8:comment "# UNIT x seconds"
9:sample "y" v=NaN(NaN)
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	om := "# TYPE c counter\n# UNIT c seconds\n# HELP c say \\\"hi\\\"\n" +
		"c_total 1 1.5 # {trace_id=\"ab\",x=\"y\"} 2 1.25\n" +
		"c_created 1.5 # {} 3\n" +
		"# EOF\n"
	got, err = dump(t, om, Options{OpenMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	want = `1:type "c" quoted=false "counter" counter true
2:unit "c" quoted=false "seconds"
3:help "c" quoted=false "say \"hi\""
4:sample "c_total" v=1(1) ts=1500000000(1.5) ex{"trace_id"="ab" "x"="y" v=2 ts=1250000000}
5:sample "c_created" v=1.5(1.5) ex{v=3}
6:eof
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// The docstring starts after the one blank that ends the name, as
// Prometheus's parser reads it in both formats (bench/textparse checks that
// against it): further leading blanks are text, and a HELP line with nothing
// after the name has an empty docstring.
func TestHelpTextStartsAfterOneBlank(t *testing.T) {
	for _, c := range []struct {
		body string
		om   bool
		want string
	}{
		{"# HELP x  two\n", false, `1:help "x" quoted=false " two"` + "\n"},
		{"# HELP x  two\n# EOF\n", true, `1:help "x" quoted=false " two"` + "\n2:eof\n"},
		{"# HELP x\ttab \n", false, `1:help "x" quoted=false "tab "` + "\n"},
		{"# HELP x\n", false, `1:help "x" quoted=false ""` + "\n"},
		{"# HELP x   \n", false, `1:help "x" quoted=false ""` + "\n"},
	} {
		got, err := dump(t, c.body, Options{OpenMetrics: c.om})
		if err != nil || got != c.want {
			t.Errorf("%q: got %q, %v; want %q", c.body, got, err, c.want)
		}
	}
}

// "a+1" and "a-Inf" are read as Prometheus reads them: the name ends where
// its characters end.
func TestSignedValueRightAfterName(t *testing.T) {
	got, err := dump(t, "a+1\nb-Inf\n", Options{})
	want := "1:sample \"a\" v=1(+1)\n2:sample \"b\" v=-Inf(-Inf)\n"
	if err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// The default reading keeps a series whose label value or docstring is not
// UTF-8, with the invalid bytes replaced: the OTLP export of the batch would
// fail on them.
func TestInvalidUTF8Replaced(t *testing.T) {
	got, err := dump(t, "# HELP x a\xedb\nx{a=\"\xff\",b=\"\\\"\xc3\"} 1\n", Options{})
	want := "1:help \"x\" quoted=false \"a\ufffdb\"\n2:sample \"x\" \"a\"=\"\ufffd\" \"b\"=\"\\\"\ufffd\" v=1(1)\n"
	if err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// Names that a lenient reader skips are not syntax errors, but Strict
// refuses them, and the rest of what the default reading tolerates.
func TestParserErrors(t *testing.T) {
	for _, c := range []struct {
		body   string
		om     bool
		strict bool
		want   string // "" for no error
	}{
		{body: "x{a=\"b} 1\n", want: "line 1: unterminated quoted string"},
		{body: "x{a=\"b\" 1\n", want: "line 1: expected ',' or '}' after label \"a\""},
		{body: "x{a=\"b\",\n", want: "line 1: unterminated label set"},
		{body: "x{=\"b\"} 1\n", want: "expected a label name"},
		{body: "x{a} 1\n", want: "expected '=' after label name"},
		{body: "x{a=b} 1\n", want: "expected '\"' to start the value"},
		{body: "x\n", want: "line 1: missing value for \"x\""},
		{body: "x 0x1p3\n", want: "invalid value \"0x1p3\""},
		{body: "x 1_000\n", want: "invalid value"},
		{body: "x 1 2 3\n", want: "unexpected \"3\" after the value"},
		{body: "x 1 abc\n", want: "invalid timestamp \"abc\""},
		{body: "x 1 # {a=\"b\"} 1\n", want: "unexpected \"# {a=\\\"b\\\"} 1\""},
		{body: "{a=\"b\"} 1\n", want: "sample without a metric name"},
		{body: "{\"a\",\"b\"} 1\n", want: "metric name given twice"},
		{body: "# TYPE x\n", want: "TYPE line for \"x\" without a type"},
		{body: "# HELP\n"},
		{body: "# HELP \n", want: "HELP line without a metric name"},
		{body: "# HELP\n# EOF\n", om: true, want: "HELP line without a metric name"},
		{body: "# any comment\n# EOF\n", om: true},
		{body: "# any comment\n# EOF\n", om: true, strict: true, want: "comment line"},
		{body: "#\n# EOF\n", om: true, strict: true, want: "comment line"},
		{body: "x{a=\"\\t\"} 1\n"},
		{body: "x{a=\"\\t\"} 1\n", om: true, want: "invalid escape sequence \\t"},
		{body: "x 1\n", om: true, want: "line 2: missing \"# EOF\""},
		{body: "x 1\n# EOF\n\n", om: true, want: "line 3: content after # EOF"},
		{body: "x 1\n# EOF", om: true},
		{body: "x 1 # {a=\"b\"} 1 2 3\n# EOF\n", om: true, want: "unexpected \"3\" after the exemplar"},
		{body: "x 1 #{a=\"b\"} 1\n# EOF\n", om: true, want: "malformed exemplar"},
		{body: "x 1 # a\n# EOF\n", om: true, want: "malformed exemplar: expected a label set"},
		{body: "x 1 # {a=\"b\"} z\n# EOF\n", om: true, want: "invalid exemplar value"},
		{body: "9x{1a=\"b\",a=\"1\",a=\"2\"} 1 1.5\r\n# TYPE y info extra\n# HELP z \\\n"},
		{body: "9x 1\n", strict: true, want: "line 1: invalid metric name \"9x\""},
		{body: "x{1a=\"b\"} 1\n", strict: true, want: "invalid label name \"1a\""},
		{body: "x{a=\"1\",a=\"2\"} 1\n", strict: true, want: "label \"a\" appears twice"},
		{body: "x 1 1.5\n", strict: true, want: "invalid timestamp \"1.5\""},
		{body: "x 1\r\n", strict: true, want: "carriage return"},
		{body: "x{a=\"\\t\"} 1\n", strict: true, want: "invalid escape sequence \\t"},
		{body: "# TYPE y info\n", strict: true, want: "unknown metric type \"info\""},
		{body: "# TYPE y info\n# EOF\n", om: true, strict: true},
		{body: "# TYPE y gauge extra\n", strict: true, want: "unexpected \"extra\" after the type"},
		{body: "# HELP z \\\n", strict: true, want: "lone backslash"},
		{body: "# HELP 9z x\n", strict: true, want: "invalid metric name \"9z\" in HELP line"},
		{body: "{\"my.metric\",\"l.x\"=\"v\"} 1 5\n", strict: true},
		{body: "x 1\n\n# EOF\n", om: true},
		{body: "x{a=\"1\",} 1\n", strict: true, want: "trailing comma"},
		{body: "x  1\n", strict: true, want: "repeated space"},
		{body: "x{a=\"1\", b=\"2\"} 1\n", strict: true, want: "space inside the label set"},
		{body: "x{a=\"1 2\"} 1\n", strict: true},
		{body: "x\t1\n", strict: true, want: "tab between tokens"},
		{body: "x 1 \n", strict: true, want: "trailing"},
		{body: "# TYPE x  gauge\n", strict: true, want: "repeated space"},
		{body: "# HELP x  two leading blanks are text\n", strict: true},
		{body: "# HELP x\tb\n", strict: true, want: "tab after the name"},
		{body: "# HELP x\n# EOF\n", om: true, strict: true, want: "without a space and text"},
		{body: "# UNIT x_seconds seconds\n# EOF\n", om: true, strict: true},
		{body: "# UNIT x seconds\n# EOF\n", om: true, strict: true, want: "not the suffix"},
		{body: "x 1 -5\n", strict: true, want: "invalid timestamp"},
		{body: "x 1 -5\n"},
		{body: "x 1", strict: true},
		{body: "x+1 \n"},
		{body: "x+1\n", strict: true, want: "missing value"},
		{body: "x+y\n", want: "missing value"},
		{body: "x {a=\"b\"} 1\n"},
		{body: "x {a=\"b\"} 1\n", strict: true},
		{body: "x\t {} 1\n", strict: true, want: "tab"},
		{body: "x 1\n# EOF", om: true, strict: true},
		{body: "x{a=\"\xed\"} 1\n", strict: true, want: "invalid UTF-8"},
		{body: "x{a=\"\\n\xed\"} 1\n", strict: true, want: "invalid UTF-8"},
		{body: "# HELP x \xed\n", strict: true, want: "invalid UTF-8"},
		{body: "x 1 # {a=\"\xed\"} 1\n# EOF\n", om: true, strict: true, want: "invalid UTF-8"},
		{body: "x{a=\"é\"} 1\n", strict: true},
		{body: " # TYPE x gauge\n", strict: true, want: "blank before '#'"},
		{body: "x 1\n \n# EOF\n", om: true, strict: true, want: "line 2: blank line"},
	} {
		_, err := dump(t, c.body, Options{OpenMetrics: c.om, Strict: c.strict})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q (om=%v strict=%v): unexpected error %v", c.body, c.om, c.strict, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q (om=%v strict=%v): error %v, want %q", c.body, c.om, c.strict, err, c.want)
		}
	}
}

func TestTypeKeywords(t *testing.T) {
	for _, kw := range []string{"counter", "gauge", "histogram", "summary", "untyped"} {
		if _, ok := ParseType([]byte(kw), true); !ok {
			t.Errorf("%s refused in the text format", kw)
		}
	}
	for kw, want := range map[string]Type{"unknown": TypeUntyped, "info": TypeInfo, "stateset": TypeStateset, "gaugehistogram": TypeGaugeHistogram} {
		if got, ok := ParseType([]byte(kw), false); !ok || got != want {
			t.Errorf("%s: %v %v", kw, got, ok)
		}
		if _, ok := ParseType([]byte(kw), true); ok {
			t.Errorf("%s accepted as a text-format keyword", kw)
		}
	}
}

type famMap map[string]struct {
	i int32
	t Type
}

func (m famMap) Lookup(name []byte) (int32, Type, bool) {
	f, ok := m[string(name)]
	return f.i, f.t, ok
}

func TestResolve(t *testing.T) {
	fams := famMap{
		"c_total": {0, TypeCounter}, // text style
		"d":       {1, TypeCounter}, // OpenMetrics style
		"h":       {2, TypeHistogram},
		"s":       {3, TypeSummary},
		"i":       {4, TypeInfo},
		"g":       {5, TypeGauge},
	}
	for _, c := range []struct {
		name string
		cur  int32
		fam  int32
		role Role
		res  Resolution
	}{
		{"c_total", -1, 0, RoleValue, Resolved},
		{"c_created", -1, -1, RoleValue, Unresolved}, // a separate family (prometheus_client's X_created gauge)
		{"d_total", -1, 1, RoleValue, Resolved},
		{"d_created", -1, 1, RoleCreated, Resolved},
		{"h_bucket", -1, 2, RoleBucket, Resolved},
		{"h_count", 2, 2, RoleCount, Resolved},
		{"h", -1, 2, 0, Conflict},
		{"s", -1, 3, RoleQuantile, Resolved},
		{"s_sum", 5, 3, RoleSum, Resolved},
		{"i_info", -1, 4, RoleValue, Resolved},
		{"g", 2, 5, RoleValue, Resolved},
		{"g_total", -1, -1, RoleValue, Unresolved},
	} {
		curName, curType := "", TypeUntyped
		for n, f := range fams {
			if f.i == c.cur {
				curName, curType = n, f.t
			}
		}
		fi, r, res := Resolve([]byte(c.name), c.cur, curName, curType, fams)
		if fi != c.fam || r != c.role || res != c.res {
			t.Errorf("%s (current %d): got %d %d %d, want %d %d %d", c.name, c.cur, fi, r, res, c.fam, c.role, c.res)
		}
	}
}

func TestValues(t *testing.T) {
	for s, want := range map[string]float64{"1": 1, "-0.25": -0.25, "+Inf": math.Inf(1), "inf": math.Inf(1), "-INF": math.Inf(-1), "1e999": math.Inf(1), "1e3": 1000} {
		if got, ok := ParseValue([]byte(s)); !ok || got != want {
			t.Errorf("ParseValue(%q) = %v %v", s, got, ok)
		}
	}
	if v, ok := ParseValue([]byte("nan")); !ok || !math.IsNaN(v) {
		t.Errorf("nan: %v %v", v, ok)
	}
	for _, s := range []string{"", "0x10", "1_0", "1p3", "abc"} {
		if _, ok := ParseValue([]byte(s)); ok {
			t.Errorf("ParseValue(%q) accepted", s)
		}
	}
	for s, ok := range map[string]bool{"0.5": true, "1": true, "1.5": false, "-0.1": false, "NaN": false} {
		if _, got := ParseBound(s, true); got != ok {
			t.Errorf("quantile %q: %v", s, got)
		}
	}
	if v, ok := ParseBound("+Inf", false); !ok || !math.IsInf(v, 1) {
		t.Errorf("le +Inf: %v %v", v, ok)
	}
}

// Reading a body does not allocate once the buffers have grown.
func TestParserDoesNotAllocate(t *testing.T) {
	body := []byte("# HELP x a\\nb\n# TYPE x counter\nx_total{a=\"1\",b=\"q\\\"\"} 1.5 17\nx_total{a=\"2\"} 3\n")
	var p Parser
	run := func() {
		p.Reset(body, Options{})
		for {
			if _, err := p.Next(); err != nil {
				return
			}
			_ = p.Labels()
		}
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Errorf("%v allocations per body", n)
	}
}

// Unescaped strings stay right when the buffer holding them grows in the
// middle of a line.
func TestEscapesAcrossBufferGrowth(t *testing.T) {
	var b strings.Builder
	b.WriteString("x{")
	for i := range 200 {
		fmt.Fprintf(&b, `l%d="v\\%d\"%s",`, i, i, strings.Repeat("y", i))
	}
	b.WriteString("} 1\n")
	var p Parser
	p.Reset([]byte(b.String()), Options{})
	if _, err := p.Next(); err != nil {
		t.Fatal(err)
	}
	ls := p.Labels()
	if len(ls) != 200 {
		t.Fatalf("%d labels", len(ls))
	}
	for i, l := range ls {
		if want := fmt.Sprintf(`v\%d"%s`, i, strings.Repeat("y", i)); string(l.Value) != want || string(l.Name) != fmt.Sprintf("l%d", i) {
			t.Fatalf("label %d: %s=%q, want %q", i, l.Name, l.Value, want)
		}
	}
}

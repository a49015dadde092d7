// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo

import (
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

type convCase struct {
	name     string
	body     string
	want     string   // dump() of the output
	dup      int      // Stats.DuplicateSeries
	invalid  int      // Stats.InvalidSeries
	problems []string // each must be a substring of one of Stats.Problems
}

func runCases(t *testing.T, f Format, cases []convCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConverter(Options{})
			ms, st := convert(t, c, trimDoc(tc.body), f, t0)
			if got, want := dump(ms), trimDoc(tc.want); got != want {
				t.Errorf("output mismatch\n--- got\n%s--- want\n%s", got, want)
			}
			if st.DuplicateSeries != tc.dup || st.InvalidSeries != tc.invalid {
				t.Errorf("duplicates/invalid = %d/%d, want %d/%d (problems: %q)", st.DuplicateSeries, st.InvalidSeries, tc.dup, tc.invalid, st.Problems)
			}
			for _, p := range tc.problems {
				found := false
				for _, got := range st.Problems {
					found = found || strings.Contains(got, p)
				}
				if !found {
					t.Errorf("no problem containing %q in %q", p, st.Problems)
				}
			}
			if len(tc.problems) == 0 && tc.dup == 0 && tc.invalid == 0 && len(st.Problems) > 0 {
				t.Errorf("unexpected problems %q", st.Problems)
			}
			if st.Families != ms.Len() {
				t.Errorf("Stats.Families = %d, appended %d", st.Families, ms.Len())
			}
		})
	}
}

func TestFormatFromContentType(t *testing.T) {
	for ct, want := range map[string]Format{
		"application/openmetrics-text; version=1.0.0; charset=utf-8": FormatOpenMetrics,
		"application/openmetrics-text":                               FormatOpenMetrics,
		" Application/OpenMetrics-Text ;version=0.0.1":               FormatOpenMetrics,
		"text/plain; version=0.0.4; charset=utf-8":                   FormatText,
		"text/plain":       FormatText,
		"":                 FormatText,
		"application/json": FormatText,
	} {
		if got := FormatFromContentType(ct); got != want {
			t.Errorf("FormatFromContentType(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestConvertText(t *testing.T) {
	runCases(t, FormatText, []convCase{
		{
			name: "counter as prometheus_client exposes it",
			body: `
				# HELP x_total Requests.
				# TYPE x_total counter
				x_total{code="200"} 3.0
				x_total{code="500"} 1
			`,
			want: `
				x_total sum(Cumulative,monotonic=true) help="Requests."
				  {code="200"} start=1700000000 ts=1700000000 v=3
				  {code="500"} start=1700000000 ts=1700000000 v=1
			`,
		},
		{
			name: "counter without _total",
			body: `
				# TYPE tgi_request_count counter
				tgi_request_count 111
			`,
			want: `
				tgi_request_count sum(Cumulative,monotonic=true)
				  {} start=1700000000 ts=1700000000 v=111
			`,
		},
		{
			name: "gauge, untyped and samples without TYPE",
			body: `
				# TYPE g gauge
				g -1.5
				# TYPE u untyped
				u 2
				bare{a="b"} 3
			`,
			want: `
				g gauge
				  {} ts=1700000000 v=-1.5
				u gauge
				  {} ts=1700000000 v=2
				bare gauge
				  {a="b"} ts=1700000000 v=3
			`,
		},
		{
			name: "special values",
			body: `
				# TYPE g gauge
				g{v="nan"} NaN
				g{v="pinf"} +Inf
				g{v="ninf"} -Inf
				g{v="inf"} Inf
				g{v="exp"} 1.5e-3
				g{v="int"} -7
				g{v="huge"} 1e999
			`,
			want: `
				g gauge
				  {v="nan"} ts=1700000000 v=NaN
				  {v="pinf"} ts=1700000000 v=+Inf
				  {v="ninf"} ts=1700000000 v=-Inf
				  {v="inf"} ts=1700000000 v=+Inf
				  {v="exp"} ts=1700000000 v=0.0015
				  {v="int"} ts=1700000000 v=-7
				  {v="huge"} ts=1700000000 v=+Inf
			`,
		},
		{
			name: "escaping",
			body: `
				# HELP e Back\\slash and\nnewline, \"kept\" \t kept.
				# TYPE e gauge
				e{a="q\"uote",b="back\\slash",c="new\nline",d="tab\tkept"} 1
			`,
			want: `
				e gauge help="Back\\slash and\nnewline, \\\"kept\\\" \\t kept."
				  {a="q\"uote",b="back\\slash",c="new\nline",d="tab\\tkept"} ts=1700000000 v=1
			`,
		},
		{
			name: "label set forms",
			body: `
				x{a="1",} 1
				y{ a = "1" , b="2" } 2
				z{} 3
				w{__meta="dropped",a="1"} 4
				v{b="2",a="1",c=""} 5
				u{a="{},# \"x\""}6
			`,
			want: `
				x gauge
				  {a="1"} ts=1700000000 v=1
				y gauge
				  {a="1",b="2"} ts=1700000000 v=2
				z gauge
				  {} ts=1700000000 v=3
				w gauge
				  {a="1"} ts=1700000000 v=4
				v gauge
				  {a="1",b="2",c=""} ts=1700000000 v=5
				u gauge
				  {a="{},# \"x\""} ts=1700000000 v=6
			`,
		},
		{
			name: "timestamps in milliseconds",
			body: `
				x 1 1700000001500
				y{a="b"} 2 1600000000000
			`,
			want: `
				x gauge
				  {} ts=1700000001.5 v=1
				y gauge
				  {a="b"} ts=1600000000 v=2
			`,
		},
		{
			name: "comments, blank lines, tabs and CRLF",
			body: "# a comment\r\n\r\n#HELP not metadata\r\n  \t\r\n\tx\t1\t\r\n# TYPE y gauge trailing words\r\n# UNIT y seconds\r\ny 2\r\n# EOF\r\nz 3",
			want: `
				x gauge
				  {} ts=1700000000 v=1
				y gauge
				  {} ts=1700000000 v=2
				z gauge
				  {} ts=1700000000 v=3
			`,
		},
		{
			name: "histogram",
			body: `
				# HELP h Latency.
				# TYPE h histogram
				h_bucket{le="0.5",m="a"} 1
				h_bucket{le="0.1",m="a"} 0
				h_bucket{le="+Inf",m="a"} 4
				h_bucket{le="1",m="a"} 3
				h_sum{m="a"} 2.5
				h_count{m="a"} 4
				h_bucket{m="b",le="1.0"} 2
				h_bucket{m="b",le="+Inf"} 2
				h_count{m="b"} 2
				h_sum{m="b"} 0.75
			`,
			want: `
				h histogram(Cumulative) help="Latency."
				  {m="a"} start=1700000000 ts=1700000000 count=4 sum=2.5 bounds=[0.1 0.5 1] counts=[0 1 2 1]
				  {m="b"} start=1700000000 ts=1700000000 count=2 sum=0.75 bounds=[1] counts=[2 0]
			`,
		},
		{
			name: "histogram without _sum and _count",
			body: `
				# TYPE h histogram
				h_bucket{le="1"} 2
				h_bucket{le="+Inf"} 3
			`,
			want: `
				h histogram(Cumulative)
				  {} start=1700000000 ts=1700000000 count=3 nosum bounds=[1] counts=[2 1]
			`,
		},
		{
			name: "invalid histograms",
			body: `
				# TYPE h histogram
				h_bucket{le="1",s="noinf"} 2
				h_count{s="noinf"} 2
				h_bucket{le="1",s="decr"} 5
				h_bucket{le="+Inf",s="decr"} 3
				h_bucket{le="x",s="badle"} 1
				h_bucket{le="+Inf",s="badle"} 1
				h_bucket{s="nole"} 1
				h_bucket{le="+Inf",s="nole"} 1
				h_bucket{le="+Inf",s="ok"} 1
				h_bucket{le="1",s="neg"} -1
				h_bucket{le="+Inf",s="neg"} 1
			`,
			want: `
				h histogram(Cumulative)
				  {s="ok"} start=1700000000 ts=1700000000 count=1 nosum bounds=[] counts=[1]
			`,
			invalid:  5,
			problems: []string{`line 2: histogram without +Inf bucket: h{s="noinf"}`, `line 5: histogram buckets decrease: h{s="decr"}`, `line 6: histogram "h": invalid le "x"`, `line 8: histogram "h": sample "h_bucket" without le label`, "negative bucket count"},
		},
		{
			name: "histogram with _count different from +Inf and a repeated bucket",
			body: `
				# TYPE h histogram
				h_bucket{le="1"} 1
				h_bucket{le="1"} 7
				h_bucket{le="+Inf"} 2
				h_count 3
				h_sum 1
			`,
			want: `
				h histogram(Cumulative)
				  {} start=1700000000 ts=1700000000 count=2 sum=1 bounds=[1] counts=[1 1]
			`,
			dup:      1,
			problems: []string{"line 3: duplicate sample h{le=1} (first wins)", "line 2: histogram h: _count 3 differs from the +Inf bucket 2, using the bucket"},
		},
		{
			name: "summary",
			body: `
				# HELP s Sizes.
				# TYPE s summary
				s{quantile="0.5"} 1
				s{quantile="0.99"} NaN
				s{quantile="0.9"} 2
				s_sum 10
				s_count 4
				s_sum{k="only"} 1
				s_count{k="only"} 1
			`,
			want: `
				s summary help="Sizes."
				  {} start=1700000000 ts=1700000000 count=4 sum=10 q=[0.5:1 0.9:2 0.99:NaN]
				  {k="only"} start=1700000000 ts=1700000000 count=1 sum=1 q=[]
			`,
		},
		{
			name: "invalid summaries",
			body: `
				# TYPE s summary
				s{quantile="2"} 1
				s_count 1
				s{x="1"} 1
				s_count{x="1"} 1
			`,
			want:     ``,
			invalid:  2,
			problems: []string{`line 2: summary "s": invalid quantile "2"`, `line 4: summary "s": sample "s" without quantile label`},
		},
		{
			name: "prometheus_client _created families become start times",
			body: `
				# HELP c_total Reqs.
				# TYPE c_total counter
				c_total{m="a"} 5
				c_total{m="b"} 6
				# HELP c_created Reqs.
				# TYPE c_created gauge
				c_created{m="a"} 1.6999e9
				c_created{m="b"} 1.69999999925e+09
				# HELP h_created Lat.
				# TYPE h_created gauge
				h_created 1699999000.5
				# TYPE h histogram
				h_bucket{le="+Inf"} 1
				h_count 1
				h_sum 2
				# TYPE s summary
				s_count 3
				s_sum 4
				# TYPE s_created gauge
				s_created 1699999990
				# TYPE plain counter
				plain 1
				plain_created 1699999500
				# TYPE lonely_created gauge
				lonely_created 5
				# TYPE g gauge
				g 1
				# TYPE g_created gauge
				g_created 7
			`,
			want: `
				c_total sum(Cumulative,monotonic=true) help="Reqs."
				  {m="a"} start=1699900000 ts=1700000000 v=5
				  {m="b"} start=1699999999.25 ts=1700000000 v=6
				h histogram(Cumulative)
				  {} start=1699999000.5 ts=1700000000 count=1 sum=2 bounds=[] counts=[1]
				s summary
				  {} start=1699999990 ts=1700000000 count=3 sum=4 q=[]
				plain sum(Cumulative,monotonic=true)
				  {} start=1699999500 ts=1700000000 v=1
				lonely_created gauge
				  {} ts=1700000000 v=5
				g gauge
				  {} ts=1700000000 v=1
				g_created gauge
				  {} ts=1700000000 v=7
			`,
		},
		{
			name: "_created in the future or invalid is ignored",
			body: `
				# TYPE c_total counter
				c_total{k="future"} 1
				c_total{k="nan"} 1
				# TYPE c_created gauge
				c_created{k="future"} 1.8e9
				c_created{k="nan"} NaN
			`,
			want: `
				c_total sum(Cumulative,monotonic=true)
				  {k="future"} start=1700000000 ts=1700000000 v=1
				  {k="nan"} start=1700000000 ts=1700000000 v=1
			`,
		},
		{
			name: "invalid names",
			body: `
				foo-bar 1
				ok 2
				x{a-b="1"} 3
				y{a="1",a="2"} 4
				9lives 5
				z{"a.b"="1"} 6
			`,
			want: `
				ok gauge
				  {} ts=1700000000 v=2
				z gauge
				  {a.b="1"} ts=1700000000 v=6
			`,
			invalid:  4,
			problems: []string{`line 1: invalid metric name "foo-bar"`, `line 3: invalid label name "a-b" in "x"`, `line 4: duplicate label name "a" in "y"`, `line 5: invalid metric name "9lives"`},
		},
		{
			name: "duplicate series",
			body: `
				# TYPE c counter
				c{a="1"} 1
				c{a="1"} 2
				c{a="2"} 3
				# TYPE s summary
				s{quantile="0.5"} 1
				s{quantile="0.50"} 2
				s_count 1
				s_count 2
			`,
			want: `
				c sum(Cumulative,monotonic=true)
				  {a="1"} start=1700000000 ts=1700000000 v=1
				  {a="2"} start=1700000000 ts=1700000000 v=3
				s summary
				  {} start=1700000000 ts=1700000000 count=1 sum=0 q=[0.5:1]
			`,
			dup:      3,
			problems: []string{`line 3: duplicate sample "c" (first wins)`},
		},
		{
			name: "family split into two groups is merged",
			body: `
				# TYPE a gauge
				a{x="1"} 1
				# TYPE b gauge
				b 2
				a{x="2"} 3
				a{x="1"} 4
			`,
			want: `
				a gauge
				  {x="1"} ts=1700000000 v=1
				  {x="2"} ts=1700000000 v=3
				b gauge
				  {} ts=1700000000 v=2
			`,
			dup:      1,
			problems: []string{`line 5: samples of "a" are split into several groups (merged)`},
		},
		{
			name: "NaN counter, histogram and summary have no recorded value",
			body: `
				# TYPE c_total counter
				c_total NaN
				# TYPE h histogram
				h_bucket{le="1"} NaN
				h_bucket{le="+Inf"} NaN
				h_count NaN
				# TYPE s summary
				s_count NaN
				s_sum NaN
			`,
			want: `
				c_total sum(Cumulative,monotonic=true)
				  {} start=1700000000 ts=1700000000 norecorded
				h histogram(Cumulative)
				  {} start=1700000000 ts=1700000000 norecorded
				s summary
				  {} start=1700000000 ts=1700000000 norecorded
			`,
		},
		{
			name: "quoted UTF-8 names",
			body: `
				# HELP "my.metric" Dotted.
				# TYPE "my.metric" counter
				{"my.metric", "my.label"="v", plain="p"} 1
				{"my.gauge"} 2
				"my.bad" 3
			`,
			want: `
				my.metric sum(Cumulative,monotonic=true) help="Dotted."
				  {my.label="v",plain="p"} start=1700000000 ts=1700000000 v=1
				my.gauge gauge
				  {} ts=1700000000 v=2
			`,
			invalid: 1,
		},
		{
			name: "TYPE after samples and second TYPE are ignored",
			body: `
				x 1
				# TYPE x counter
				# TYPE y gauge
				# TYPE y counter
				y 2
				# TYPE z bogus
				z 3
			`,
			want: `
				x gauge
				  {} ts=1700000000 v=1
				y gauge
				  {} ts=1700000000 v=2
				z gauge
				  {} ts=1700000000 v=3
			`,
			problems: []string{`line 2: TYPE line for "x" after its samples ignored`, `line 4: second TYPE line for "y" (counter, already gauge) ignored`, `line 6: unknown type "bogus" for "z"`},
		},
		{
			name: "sample that does not fit its family",
			body: `
				# TYPE h histogram
				h 1
				h_bucket{le="+Inf"} 1
			`,
			want: `
				h histogram(Cumulative)
				  {} start=1700000000 ts=1700000000 count=1 nosum bounds=[] counts=[1]
			`,
			invalid:  1,
			problems: []string{`line 2: sample "h" does not fit histogram family "h"`},
		},
		{
			name: "families without samples are not emitted",
			body: `
				# HELP nothing No samples.
				# TYPE nothing counter
				# TYPE g gauge
				g 1
			`,
			want: `
				g gauge
				  {} ts=1700000000 v=1
			`,
		},
		{
			name: "negative timestamp",
			body: `
				x 1 -5
				y 2
			`,
			want: `
				y gauge
				  {} ts=1700000000 v=2
			`,
			invalid: 1,
		},
	})
}

func TestConvertOpenMetrics(t *testing.T) {
	runCases(t, FormatOpenMetrics, []convCase{
		{
			name: "counter with _total, _created, UNIT and HELP",
			body: `
				# TYPE req counter
				# HELP req Requests \"served\" \\ \n.
				req_total{code="200"} 10 1700000001.25
				req_created{code="200"} 1699999000
				req_total{code="500"} 1
				# TYPE lat_seconds gauge
				# UNIT lat_seconds seconds
				lat_seconds 0.5 1700000001.123456789
				# EOF
			`,
			want: `
				req_total sum(Cumulative,monotonic=true) help="Requests \"served\" \\ \n."
				  {code="200"} start=1699999000 ts=1700000001.25 v=10
				  {code="500"} start=1700000000 ts=1700000000 v=1
				lat_seconds gauge unit="seconds"
				  {} ts=1700000001.123456789 v=0.5
			`,
		},
		{
			name: "histogram with _created and exemplars",
			body: `
				# TYPE lat_seconds histogram
				# UNIT lat_seconds seconds
				lat_seconds_bucket{le="0.1"} 1 # {trace_id="4bf92f3577b34da6a3ce929d0e0e4736",span_id="00f067aa0ba902b7"} 0.05 1699999999.5
				lat_seconds_bucket{le="1"} 3 # {user="u1"} 0.7
				lat_seconds_bucket{le="+Inf"} 3
				lat_seconds_count 3
				lat_seconds_sum 1.2
				lat_seconds_created 1699990000
				# EOF
			`,
			want: `
				lat_seconds histogram(Cumulative) unit="seconds"
				  {} start=1699990000 ts=1700000000 count=3 sum=1.2 bounds=[0.1 1] counts=[1 2 0] ex=[0.05@1699999999.5 trace=4bf92f3577b34da6a3ce929d0e0e4736 span=00f067aa0ba902b7; 0.7@1700000000 {user="u1"}]
			`,
		},
		{
			name: "counter exemplar kept, gauge exemplar dropped",
			body: `
				# TYPE c counter
				c_total 5 # {trace_id="abc"} 1
				# TYPE g gauge
				g 1 # {a="b"} 1
				# EOF
			`,
			want: `
				c_total sum(Cumulative,monotonic=true)
				  {} start=1700000000 ts=1700000000 v=5 ex=[1@1700000000 {trace_id="abc"}]
				g gauge
				  {} ts=1700000000 v=1
			`,
		},
		{
			name: "info, stateset, unknown and gauge histogram",
			body: `
				# TYPE build info
				build_info{version="1.2",commit="abc"} 1
				# TYPE state stateset
				state{state="a"} 1
				state{state="b"} 0
				# TYPE other unknown
				other 3
				# TYPE q gaugehistogram
				q_bucket{le="1"} 2
				q_bucket{le="+Inf"} 5
				q_gcount 5
				q_gsum 3
				# TYPE q2 gaugehistogram
				q2_bucket{le="+Inf"} 4
				# EOF
			`,
			want: `
				build_info gauge
				  {commit="abc",version="1.2"} ts=1700000000 v=1
				state gauge
				  {state="a"} ts=1700000000 v=1
				  {state="b"} ts=1700000000 v=0
				other gauge
				  {} ts=1700000000 v=3
				q_gcount gauge
				  {} ts=1700000000 v=5
				q2_gcount gauge
				  {} ts=1700000000 v=4
			`,
		},
		{
			name: "summary with _created",
			body: `
				# TYPE rpc summary
				rpc{quantile="0.5"} 0.2
				rpc_sum 5
				rpc_count 10
				rpc_created 1699999999.5
				# EOF
			`,
			want: `
				rpc summary
				  {} start=1699999999.5 ts=1700000000 count=10 sum=5 q=[0.5:0.2]
			`,
		},
		{
			name: "EOF without trailing newline",
			body: "x 1\n# EOF",
			want: `
				x gauge
				  {} ts=1700000000 v=1
			`,
		},
		{
			name: "only EOF",
			body: "# EOF\n",
			want: ``,
		},
	})
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		f    Format
		body string
		line int
		msg  string
	}{
		{"unterminated label value", FormatText, "a 1\nx{a=\"b} 1\n", 2, "unterminated quoted string"},
		{"unterminated label set", FormatText, "x{a=\"b\" 1\n", 1, "expected ',' or '}'"},
		{"missing value", FormatText, "x{a=\"b\"}\n", 1, `missing value for "x"`},
		{"missing value after name", FormatText, "x\n", 1, `missing value for "x"`},
		{"bad float", FormatText, "x 1.2.3\n", 1, `invalid value "1.2.3"`},
		{"hex float", FormatText, "x 0x1p3\n", 1, "invalid value"},
		{"underscore", FormatText, "x 1_000\n", 1, "invalid value"},
		{"bad timestamp", FormatText, "x 1 abc\n", 1, `invalid timestamp "abc"`},
		{"trailing junk", FormatText, "x 1 2 3\n", 1, `unexpected "3"`},
		{"exemplar in text format", FormatText, "x_total 1 # {a=\"b\"} 1\n", 1, "unexpected"},
		{"missing =", FormatText, "x{a \"b\"} 1\n", 1, "expected '=' after label name \"a\""},
		{"missing quote", FormatText, "x{a=b} 1\n", 1, "expected '\"'"},
		{"empty label name", FormatText, "x{,} 1\n", 1, "expected a label name"},
		{"no metric name", FormatText, "{a=\"b\"} 1\n", 1, "sample without a metric name"},
		{"metric name twice", FormatText, "x{\"y\"} 1\n", 1, "metric name given twice"},
		{"TYPE without type", FormatText, "# TYPE x\n", 1, "without a type"},
		{"HELP without name", FormatText, "# HELP \n", 1, "without a metric name"},
		{"OM missing EOF", FormatOpenMetrics, "x 1\n", 2, "missing \"# EOF\""},
		{"OM truncated mid-line", FormatOpenMetrics, "# TYPE x counter\nx_total 1", 3, "missing \"# EOF\""},
		{"OM empty body", FormatOpenMetrics, "", 1, "missing \"# EOF\""},
		{"OM content after EOF", FormatOpenMetrics, "x 1\n# EOF\nx 2\n", 3, "content after # EOF"},
		{"OM blank line after EOF", FormatOpenMetrics, "# EOF\n\n", 2, "content after # EOF"},
		{"OM invalid escape", FormatOpenMetrics, "x{a=\"\\t\"} 1\n# EOF\n", 1, "invalid escape sequence"},
		{"OM exemplar without value", FormatOpenMetrics, "c_total 1 # {a=\"b\"}\n# EOF\n", 1, "invalid exemplar value"},
		{"OM exemplar without space", FormatOpenMetrics, "c_total 1 #{a=\"b\"} 1\n# EOF\n", 1, "malformed exemplar"},
		{"OM exemplar without labels", FormatOpenMetrics, "c_total 1 # 1\n# EOF\n", 1, "malformed exemplar"},
		{"OM exemplar trailing junk", FormatOpenMetrics, "c_total 1 # {} 1 2 3\n# EOF\n", 1, "after the exemplar"},
		{"OM bad timestamp", FormatOpenMetrics, "x 1 1.2.3\n# EOF\n", 1, "invalid timestamp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConverter(Options{})
			dst := pmetric.NewMetricSlice()
			st, err := c.Convert([]byte(tc.body), tc.f, t0, dst)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want *ParseError", err, err)
			}
			if pe.Line != tc.line || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("got %q, want line %d containing %q", pe.Error(), tc.line, tc.msg)
			}
			if !strings.HasPrefix(pe.Error(), "line ") {
				t.Errorf("Error() = %q", pe.Error())
			}
			if dst.Len() != 0 || st.Points != 0 || len(st.Problems) != 0 {
				t.Errorf("output or stats on error: %d metrics, %+v", dst.Len(), st)
			}
		})
	}
}

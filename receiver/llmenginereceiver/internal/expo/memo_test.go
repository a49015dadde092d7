// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
)

// memoScrape is one scrape of a sequence fed to two converters.
type memoScrape struct {
	name string
	body string
	f    Format
}

// runWithAndWithoutMemo converts every scrape with a converter that uses
// the line memo and one that does not (promtext then reads every label
// set), and fails at the first scrape where their outputs, statistics or
// errors differ. It returns how many labels sets the memo let the parser
// skip, so a test can check that the memo was used at all.
func runWithAndWithoutMemo(t *testing.T, seq []memoScrape) int {
	t.Helper()
	with, without := NewConverter(Options{}), NewConverter(Options{})
	without.p.SetKnown(nil)
	skipped := 0
	counting := func(s []byte) bool {
		k := with.memo.known(s)
		if k {
			skipped++
		}
		return k
	}
	with.p.SetKnown(counting)
	now := t0
	for i, sc := range seq {
		now = now.Add(15 * time.Second)
		a, b := pmetric.NewMetricSlice(), pmetric.NewMetricSlice()
		sa, ea := with.Convert([]byte(sc.body), sc.f, now, a)
		sb, eb := without.Convert([]byte(sc.body), sc.f, now, b)
		if fmt.Sprint(ea) != fmt.Sprint(eb) {
			t.Fatalf("scrape %d (%s): error with the memo %v, without %v", i, sc.name, ea, eb)
		}
		if fmt.Sprintf("%+v", sa) != fmt.Sprintf("%+v", sb) {
			t.Fatalf("scrape %d (%s): stats with the memo\n%+v\nwithout\n%+v", i, sc.name, sa, sb)
		}
		if da, db := dump(a), dump(b); da != db {
			t.Fatalf("scrape %d (%s): with the memo\n%s\nwithout\n%s", i, sc.name, da, db)
		}
	}
	return skipped
}

// TestMemoConvertsTheSame: what the line memo skips makes no difference to
// the output, through the changes a target's exposition goes through:
// values moving, a series added in the middle (every line after it moves),
// one gone, a label value changed to one of the same length, a histogram
// whose TYPE line goes away (its _bucket lines change role: le is then a
// label), buckets losing their le, duplicates, a failed scrape in between,
// and a switch to OpenMetrics and back.
func TestMemoConvertsTheSame(t *testing.T) {
	base := `# TYPE req_total counter
req_total{model="a",code="200"} 5
req_total{model="b",code="200"} 7
# TYPE lat_seconds histogram
lat_seconds_bucket{model="a",le="0.1"} 1
lat_seconds_bucket{model="a",le="1"} 2
lat_seconds_bucket{model="a",le="+Inf"} 3
lat_seconds_count{model="a"} 3
lat_seconds_sum{model="a"} 1.5
# TYPE q summary
q{model="a",quantile="0.5"} 0.2
q{model="a",quantile="0.99"} 0.9
q_count{model="a"} 9
q_sum{model="a"} 2
# TYPE g gauge
g{model="a"} 1
g{model="b"} 2
`
	moved := strings.NewReplacer(" 5\n", " 6\n", " 3\n", " 4\n", "} 1\n", "} 2\n").Replace(base)
	added := strings.Replace(base, "req_total{model=\"b\"", "req_total{model=\"c\",code=\"500\"} 1\nreq_total{model=\"b\"", 1)
	gone := strings.Replace(base, "lat_seconds_bucket{model=\"a\",le=\"1\"} 2\n", "", 1)
	relabeled := strings.ReplaceAll(base, `model="b"`, `model="z"`)
	untyped := strings.Replace(base, "# TYPE lat_seconds histogram\n", "", 1)
	noLe := strings.Replace(base, `lat_seconds_bucket{model="a",le="1"}`, `lat_seconds_bucket{model="a",lf="1"}`, 1)
	dup := strings.Replace(base, "g{model=\"b\"} 2\n", "g{model=\"b\"} 2\ng{model=\"b\"} 3\n", 1)
	broken := base + "g{model=\"c\"} not-a-number\n"
	seq := []memoScrape{
		{"base", base, FormatText}, {"base again", base, FormatText}, {"values moved", moved, FormatText},
		{"series added", added, FormatText}, {"added again", added, FormatText}, {"series gone", gone, FormatText},
		{"base", base, FormatText}, {"label value changed", relabeled, FormatText}, {"base", base, FormatText},
		{"histogram untyped", untyped, FormatText}, {"untyped again", untyped, FormatText}, {"base", base, FormatText},
		{"bucket without le", noLe, FormatText}, {"again", noLe, FormatText}, {"base", base, FormatText},
		{"duplicate", dup, FormatText}, {"duplicate again", dup, FormatText},
		{"failed scrape", broken, FormatText}, {"base after failure", base, FormatText},
		{"OpenMetrics", string(testutil.ToOpenMetrics([]byte(base))), FormatOpenMetrics},
		{"OpenMetrics again", string(testutil.ToOpenMetrics([]byte(base))), FormatOpenMetrics},
		{"text again", base, FormatText}, {"text", base, FormatText},
	}
	if skipped := runWithAndWithoutMemo(t, seq); skipped < 100 {
		t.Fatalf("the memo skipped only %d label sets: it is not being used", skipped)
	}
}

// TestMemoFixtures runs every engine fixture of the replay server three
// times (then as OpenMetrics), then the next.
func TestMemoFixtures(t *testing.T) {
	files, err := filepath.Glob("../../../../tests/enginereplay/fixtures/*.prom")
	if err != nil || len(files) < 5 {
		t.Fatalf("engine fixtures: %v %v", files, err)
	}
	var seq []memoScrape
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		b := string(raw)
		for range 3 {
			seq = append(seq, memoScrape{name, b, FormatText})
		}
		seq = append(seq, memoScrape{name + " as OpenMetrics", string(testutil.ToOpenMetrics([]byte(b))), FormatOpenMetrics})
	}
	seq = append(seq, memoScrape{"10k series", string(gen10kSeries()), FormatText}, memoScrape{"10k series", string(gen10kSeries()), FormatText})
	if skipped := runWithAndWithoutMemo(t, seq); skipped < 10000 {
		t.Fatalf("the memo skipped only %d label sets", skipped)
	}
}

// FuzzMemoConvertsTheSame converts the baseline, then a mutated body twice,
// then the baseline, with and without the memo.
func FuzzMemoConvertsTheSame(f *testing.F) {
	for _, b := range readSeeds(f) {
		f.Add(b, false)
	}
	f.Fuzz(func(t *testing.T, body []byte, om bool) {
		ff := FormatText
		if om {
			ff = FormatOpenMetrics
		}
		runWithAndWithoutMemo(t, []memoScrape{
			{"baseline", fuzzBaseline, FormatText}, {"input", string(body), ff},
			{"input again", string(body), ff}, {"baseline", fuzzBaseline, FormatText},
		})
	})
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package promtext

import (
	"os"
	"path/filepath"
	"testing"
)

// knownBodies are the bodies the skip of known series is checked on: the
// fuzz seeds, every engine fixture, and lines written to make the scan for
// the end of the label set go wrong (quotes, escapes and braces inside
// values, a quoted label name, blanks before the label set).
func knownBodies(t testing.TB) map[string][]byte {
	bodies := map[string][]byte{
		"tricky": []byte(`a{b="}",c="\"}",d="\\"} 1
a{e="x\\\"}y"} 2
a {f="g"} 3
a{"h.i"="j",k="{}"} 4
a{} 5
a{l="m",} 6 1700000000000
a 7
{"quoted.name",n="o"} 8
`),
	}
	for _, glob := range []string{"testdata/seeds/*", "../../tests/enginereplay/fixtures/*.prom"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			bodies[f] = b
		}
	}
	return bodies
}

// TestKnownSeriesReadTheSame: a parser told it knows every series, whose
// labels are then read with ReadSkippedLabels, gives exactly what reading
// the labels at once gives, on every body that reads without error. It
// fails if the scan for the end of a label set stops anywhere but where
// reading the labels does (the value would then be read from elsewhere).
func TestKnownSeriesReadTheSame(t *testing.T) {
	checked := 0
	for name, body := range knownBodies(t) {
		for _, opts := range []Options{{}, {OpenMetrics: true}} {
			want, err := dump(t, string(body), opts)
			if err != nil {
				continue // the skip is only for bytes read without error before
			}
			got, err := dumpWith(t, string(body), opts, true)
			if err != nil || got != want {
				t.Errorf("%s (OpenMetrics %v): skipping known series reads\n%s(err %v)\nwant\n%s", name, opts.OpenMetrics, got, err, want)
			}
			checked++
		}
	}
	if checked < 5 {
		t.Fatalf("only %d bodies read without error: the test checks nothing", checked)
	}
}

// TestKnownIsAskedTheSeriesBytes: the function sees the series from the
// name to the closing brace, and only for samples with a name before their
// label set; what it does not know is read as usual.
func TestKnownIsAskedTheSeriesBytes(t *testing.T) {
	var asked []string
	var p Parser
	p.SetKnown(func(s []byte) bool {
		asked = append(asked, string(s))
		return string(s) == `a{b="1"}`
	})
	p.Reset([]byte("a{b=\"1\"} 1\na {b=\"2\"} 2\nc 3\n{\"d\",e=\"f\"} 4\n"), Options{})
	var skipped []bool
	var labels []int
	for {
		if _, err := p.Next(); err != nil {
			break
		}
		skipped = append(skipped, p.LabelsSkipped())
		labels = append(labels, len(p.Labels()))
	}
	if len(asked) != 2 || asked[0] != `a{b="1"}` || asked[1] != `a {b="2"}` {
		t.Errorf("asked %q", asked)
	}
	if len(skipped) != 4 || !skipped[0] || skipped[1] || skipped[2] || skipped[3] {
		t.Errorf("skipped %v", skipped)
	}
	if labels[0] != 0 || labels[1] != 1 || labels[3] != 1 {
		t.Errorf("labels read %v", labels)
	}
	var strict Parser
	strict.SetKnown(func([]byte) bool { t.Error("asked under Strict"); return true })
	strict.Reset([]byte("a{b=\"1\"} 1\n"), Options{Strict: true})
	if _, err := strict.Next(); err != nil || strict.LabelsSkipped() {
		t.Errorf("strict: %v, skipped %v", err, strict.LabelsSkipped())
	}
}

// FuzzKnownSeriesReadTheSame is TestKnownSeriesReadTheSame on mutations.
func FuzzKnownSeriesReadTheSame(f *testing.F) {
	for _, b := range knownBodies(f) {
		f.Add(b, false)
		f.Add(b, true)
	}
	f.Fuzz(func(t *testing.T, body []byte, om bool) {
		opts := Options{OpenMetrics: om}
		want, err := dump(t, string(body), opts)
		if err != nil {
			return
		}
		if got, err := dumpWith(t, string(body), opts, true); err != nil || got != want {
			t.Fatalf("skipping known series reads\n%s(err %v)\nwant\n%s", got, err, want)
		}
	})
}

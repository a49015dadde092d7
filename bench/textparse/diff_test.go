// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llmops-otel/otelcol-llmops/bench/internal/benchutil"
	"github.com/llmops-otel/otelcol-llmops/internal/promtext"
	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
)

// body is one exposition of the corpus, in the format it is written in.
type body struct {
	name        string
	data        []byte
	openMetrics bool
}

// corpus is every exposition the repository holds: the engines' fixtures
// (the shared ones and the replay server's), each also rewritten as
// OpenMetrics, the fuzz seeds of the converter, and generated engine-shaped
// bodies. Seeds are read in both formats: that is how FuzzConvert uses them.
func corpus(t testing.TB) []body {
	t.Helper()
	var out []body
	add := func(name string, data []byte) {
		out = append(out, body{name, data, false}, body{name + " (as OpenMetrics)", testutil.ToOpenMetrics(data), true})
	}
	for _, name := range []string{"vllm.prom", "tgi.prom"} {
		add(name, readFile(t, testutil.SharedFixture(t, "../../../shared/fixtures/engines", name)))
	}
	replay, err := filepath.Glob("../../tests/enginereplay/fixtures/*.prom")
	if err != nil || len(replay) == 0 {
		t.Fatalf("no replay fixtures under tests/enginereplay/fixtures: %v", err)
	}
	for _, p := range replay {
		add("enginereplay/"+filepath.Base(p), readFile(t, p))
	}
	seeds, err := filepath.Glob("../../internal/promtext/testdata/seeds/*")
	if err != nil || len(seeds) == 0 {
		t.Fatalf("no fuzz seeds under internal/promtext/testdata/seeds: %v", err)
	}
	for _, p := range seeds {
		data := readFile(t, p)
		out = append(out, body{"seed " + filepath.Base(p), data, false}, body{"seed " + filepath.Base(p) + " (read as OpenMetrics)", data, true})
	}
	for _, n := range []int{1000, 10000} {
		if _, fuzzing := t.(*testing.F); fuzzing {
			break // seeds that large slow every mutation down
		}
		add("generated "+strconv.Itoa(n)+" series", benchutil.EngineExposition(n))
	}
	return out
}

func readFile(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAgreesWithTextparseOnCorpus is the differential test. On every body
// of the corpus:
//   - what promtext's strict mode accepts, Prometheus's parser accepts too,
//     and both read the same entries (names, labels, values, timestamps,
//     exemplars, metadata); the default reading gives the same entries;
//   - what Prometheus's parser accepts, promtext's default reading accepts:
//     a scrape Prometheus would take is never refused.
//
// Beyond that the readings of malformed bodies may differ: promtext's
// default reading takes engines' deviations that Prometheus refuses (its
// package documentation lists them), and Prometheus misreads some inputs
// that promtext's strict mode refuses (" a 1" is the series " a" to it;
// "# HELP a!" documents "a").
func TestAgreesWithTextparseOnCorpus(t *testing.T) {
	bodies := corpus(t)
	strict := 0
	for _, b := range bodies {
		t.Run(b.name, func(t *testing.T) {
			if compare(t, b.data, b.openMetrics) {
				strict++
			}
		})
	}
	// The corpus must exercise more than error paths.
	if strict < len(bodies)/2 {
		t.Fatalf("strict mode accepted only %d of %d bodies: the corpus is not what this test assumes", strict, len(bodies))
	}
}

// compare checks one body both ways and reports whether strict mode
// accepted it.
func compare(t *testing.T, data []byte, openMetrics bool) bool {
	t.Helper()
	want, theirErr := theirs(data, openMetrics)
	got, ourErr := ours(data, promtext.Options{OpenMetrics: openMetrics})
	strictGot, strictErr := ours(data, promtext.Options{OpenMetrics: openMetrics, Strict: true})
	// textparse's lexers take a NUL byte for the end of the input and
	// accept what comes before it, so its acceptance says nothing then.
	if theirErr == nil && ourErr != nil && bytes.IndexByte(data, 0) < 0 && !quoteRunsOverLine(data, ourErr) {
		t.Fatalf("textparse accepts the body, promtext refuses it: %v", ourErr)
	}
	if strictErr != nil {
		return false
	}
	if theirErr != nil {
		t.Fatalf("textparse refuses the body (%v), promtext accepts it in strict mode", theirErr)
	}
	if d := firstDifference(want, strictGot); d != "" {
		t.Fatalf("the parsers disagree: %s", d)
	}
	if d := firstDifference(strictGot, got); d != "" {
		t.Fatalf("promtext's strict and default readings disagree: %s", strings.Replace(d, "textparse", "strict", 1))
	}
	return true
}

// quoteRunsOverLine reports whether err is promtext refusing a quoted
// string left open at the end of its line. textparse lets a label value run
// over a raw line feed (a{b="1<LF>"} 1 is the value "1\n" to it); the
// format writes a line feed in a value as \n, and promtext, reading line by
// line, refuses the line. TestDocumentedDifferences pins it.
func quoteRunsOverLine(data []byte, err error) bool {
	var pe *promtext.Error
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "unterminated quoted string") {
		return false
	}
	lines := bytes.Split(data, []byte("\n"))
	if pe.Line < 1 || pe.Line > len(lines) {
		return false
	}
	open := false
	line := lines[pe.Line-1]
	for k := 0; k < len(line); k++ {
		switch {
		case open && line[k] == '\\':
			k++
		case line[k] == '"':
			open = !open
		}
	}
	return open && pe.Line < len(lines)
}

// FuzzAgreesWithTextparse runs the same comparison on mutations of the
// corpus: wherever Prometheus's parser reads a body, ours must read the
// same entries, and what strict mode accepts, Prometheus must accept.
func FuzzAgreesWithTextparse(f *testing.F) {
	for _, b := range corpus(f) {
		f.Add(b.data, b.openMetrics)
	}
	f.Fuzz(func(t *testing.T, data []byte, openMetrics bool) {
		compare(t, data, openMetrics)
	})
}

// TestDocumentedDifferences pins where the two readings of malformed
// bodies part ways, as the llmengine README and promtext's documentation
// describe them: if either parser changes, this says which line to update.
func TestDocumentedDifferences(t *testing.T) {
	render := func(es []entry, err error) string {
		if err != nil {
			return "refused"
		}
		var parts []string
		for _, e := range es {
			parts = append(parts, e.String())
		}
		return strings.Join(parts, "; ")
	}
	for _, c := range []struct {
		why          string
		body         string
		openMetrics  bool
		theirs, ours string
	}{
		{"textparse keeps blanks before a name in the name", " a 1\n", false,
			`sample {__name__=" a"} 1`, `sample {__name__="a"} 1`},
		{"textparse ends an invalid name in HELP early", "# HELP a! x\n", false,
			`help a " x"`, `help a! "x"`},
		{"textparse stops at a NUL byte", "a 1\n\x00b\n", false,
			`sample {__name__="a"} 1`, "refused"},
		{"a run of blanks before a TYPE keyword", "# TYPE a  counter\na 1\n", false,
			"refused", `type a "counter"; sample {__name__="a"} 1`},
		{"timestamps before 1970", "a 1 -5\n", false,
			"refused", `sample {__name__="a"} 1 @-5`},
		{"blank lines in OpenMetrics", "a 1\n\n# EOF\n", true,
			"refused", `sample {__name__="a"} 1`},
		{"comments in OpenMetrics", "# scraped by hand\na 1\n# EOF\n", true,
			"refused", `sample {__name__="a"} 1`},
		{"runs of blanks in OpenMetrics", "a  1\n# EOF\n", true,
			"refused", `sample {__name__="a"} 1`},
		{"a unit that is not the name's suffix", "# UNIT a s\na 1\n# EOF\n", true,
			"refused", `unit a "s"; sample {__name__="a"} 1`},
		{"a raw line feed inside a label value", "a{b=\"1\n\"} 1\n", false,
			`sample {__name__="a",b="1\n"} 1`, "refused"},
		{"invalid UTF-8 in a label value is replaced", "a{b=\"\xed\"} 1\n", false,
			"refused", `sample {__name__="a",b="` + "\uFFFD" + `"} 1`},
	} {
		t.Run(c.why, func(t *testing.T) {
			if got := render(theirs([]byte(c.body), c.openMetrics)); got != c.theirs {
				t.Errorf("textparse: %s, documented %s", got, c.theirs)
			}
			if got := render(ours([]byte(c.body), promtext.Options{OpenMetrics: c.openMetrics})); got != c.ours {
				t.Errorf("promtext: %s, documented %s", got, c.ours)
			}
			if _, err := ours([]byte(c.body), promtext.Options{OpenMetrics: c.openMetrics, Strict: true}); err == nil {
				t.Errorf("promtext's strict mode accepts it; the documentation says it refuses every one of these")
			}
		})
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command textparse compares, in one run, the module's exposition parser
// (internal/promtext, which the llmengine receiver scrapes with) and
// Prometheus's own (model/textparse, which contrib's prometheus receiver
// scrapes with) on the same bodies: generated engine-shaped expositions of
// 1,000, 10,000 and 100,000 series in the text format, the 10,000 one as
// OpenMetrics, and the real vLLM fixture. Both sides read every line and
// take each sample's name, labels and value:
//
//   - promtext: Next, then Name, Labels and Value (views of the body);
//   - textparse: Next, then Series (the bytes Prometheus's scrape cache is
//     keyed by: a scrape of an unchanged exposition does no more than that
//     per sample), and, as a second figure, also Labels (what a cache miss,
//     e.g. a target's first scrape, costs).
//
// The runs of both sides alternate, so a machine that slows down mid-run
// slows both; the median of the rounds is printed. The verdict is MET when
// promtext is faster than textparse's cheaper reading at every size. The
// differential test in this directory (go test .) proves they agree.
//
//	go run ./textparse [-rounds 5]   (from bench/; `make bench` runs it)
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"

	"github.com/llmops-otel/otelcol-llmops/bench/internal/benchutil"
	"github.com/llmops-otel/otelcol-llmops/internal/promtext"
	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
)

type input struct {
	name        string
	body        []byte
	openMetrics bool
	samples     int
}

type side struct {
	name string
	run  func(in input) func(b *testing.B)
}

func main() {
	rounds := flag.Int("rounds", 5, "alternating rounds of each measurement; the median is printed")
	flag.Parse()
	if err := run(*rounds); err != nil {
		fmt.Fprintln(os.Stderr, "textparse:", err)
		os.Exit(1)
	}
}

func run(rounds int) error {
	var inputs []input
	for _, n := range []int{1000, 10000, 100000} {
		inputs = append(inputs, input{name: fmt.Sprintf("%d series", n), body: benchutil.EngineExposition(n)})
	}
	inputs = append(inputs, input{name: "10000 series, OpenMetrics", body: testutil.ToOpenMetrics(benchutil.EngineExposition(10000)), openMetrics: true})
	root, err := benchutil.RepoRoot()
	if err != nil {
		return err
	}
	vllm, err := os.ReadFile(root + "/../shared/fixtures/engines/vllm.prom")
	if err != nil {
		return fmt.Errorf("the vLLM fixture (../shared/fixtures/engines/vllm.prom beside the repository): %w", err)
	}
	inputs = append(inputs, input{name: "vLLM fixture", body: vllm})

	sides := []side{
		{"promtext", promtextSide},
		{"textparse Series", textparseSide(false)},
		{"textparse Series+Labels", textparseSide(true)},
	}
	for i := range inputs {
		in := &inputs[i]
		// Count the samples once, and check that both sides read this body
		// without an error before timing them.
		got, err := ours(in.body, promtext.Options{OpenMetrics: in.openMetrics})
		if err != nil {
			return fmt.Errorf("%s: promtext: %w", in.name, err)
		}
		want, err := theirs(in.body, in.openMetrics)
		if err != nil {
			return fmt.Errorf("%s: textparse: %w", in.name, err)
		}
		if d := firstDifference(want, got); d != "" {
			return fmt.Errorf("%s: the parsers disagree: %s", in.name, d)
		}
		for _, e := range got {
			if e.kind == "sample" {
				in.samples++
			}
		}
	}

	fmt.Printf("Parsing an exposition, median of %d alternating rounds, GOMAXPROCS=%d\n\n", rounds, runtime.GOMAXPROCS(0))
	fmt.Printf("%-26s %-24s %12s %14s %10s %12s\n", "body", "parser", "ns/sample", "ms/body", "allocs", "bytes")
	met := true
	for _, in := range inputs {
		results := make([][]testing.BenchmarkResult, len(sides))
		for range rounds {
			for i, s := range sides {
				results[i] = append(results[i], testing.Benchmark(s.run(in)))
			}
		}
		perSample := make([]float64, len(sides))
		for i, s := range sides {
			r := median(results[i])
			perSample[i] = float64(r.NsPerOp()) / float64(in.samples)
			fmt.Printf("%-26s %-24s %12.1f %14.3f %10d %12d\n", in.name, s.name, perSample[i],
				float64(r.NsPerOp())/1e6, r.AllocsPerOp(), r.AllocedBytesPerOp())
		}
		ratio := perSample[0] / perSample[1]
		verdict := "MET"
		if ratio >= 1 {
			verdict, met = "NOT MET", false
		}
		fmt.Printf("%-26s promtext ÷ textparse Series = %.2f×, ÷ Series+Labels = %.2f× (%s)\n\n", in.name, ratio, perSample[0]/perSample[2], verdict)
	}
	if !met {
		fmt.Println("verdict: NOT MET — promtext is not faster than textparse at every size")
		return nil
	}
	fmt.Println("verdict: MET — promtext is faster than textparse at every size")
	return nil
}

// median is the result with the median time per operation.
func median(rs []testing.BenchmarkResult) testing.BenchmarkResult {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b testing.BenchmarkResult) int { return int(a.NsPerOp() - b.NsPerOp()) })
	return s[len(s)/2]
}

func promtextSide(in input) func(b *testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		var p promtext.Parser
		opts := promtext.Options{OpenMetrics: in.openMetrics}
		var sink float64
		for b.Loop() {
			p.Reset(in.body, opts)
			for {
				e, err := p.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				if e == promtext.EntrySample {
					name, _ := p.Name()
					sink += float64(len(name)+len(p.Labels())) + p.Value()
				}
			}
		}
		keep(sink)
	}
}

func textparseSide(withLabels bool) func(in input) func(b *testing.B) {
	return func(in input) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			// Prometheus keeps one symbol table per scrape loop.
			st := labels.NewSymbolTable()
			var ls labels.Labels
			var sink float64
			for b.Loop() {
				var p textparse.Parser
				if in.openMetrics {
					p = textparse.NewOpenMetricsParser(in.body, st)
				} else {
					p = textparse.NewPromParser(in.body, st, false)
				}
				for {
					e, err := p.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					if e == textparse.EntrySeries {
						series, _, v := p.Series()
						sink += float64(len(series)) + v
						if withLabels {
							p.Labels(&ls)
							sink += float64(ls.Len())
						}
					}
				}
			}
			keep(sink)
		}
	}
}

// keep stops the compiler from dropping a loop whose results are unused.
func keep(v float64) { runtime.KeepAlive(v) }

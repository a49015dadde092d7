// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command kinetoparse parses PyTorch profiler (Kineto) traces with the
// kineto package and prints, per file, a JSON summary: events by phase and
// category, the sum of |Bytes| of [memory] events, and the metadata. It is
// the measured side of bench/profileimport (which, living in another
// module, cannot import this internal package) and a debugging aid.
//
// With -floor it only reads each file (gunzipping a .gz) through the
// reader the parser uses and prints the byte count: the floor under any
// import of it.
//
//	go run ./internal/profiles/kineto/cmd/kinetoparse [-max-bytes N] [-import] [-workers N] [-floor] FILE...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kineto"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kinetobuild"
)

type summary struct {
	File        string           `json:"file"`
	Events      int64            `json:"events"`
	ByPhase     map[string]int64 `json:"by_phase,omitempty"`     // not with -import
	ByCategory  map[string]int64 `json:"by_category,omitempty"`  // with -import: as the builder counted them
	MemoryBytes int64            `json:"memory_bytes,omitempty"` // sum of |Bytes| of [memory] events; not with -import
	Metadata    kineto.Metadata  `json:"metadata"`
	// With -import: what the full import produced.
	Spans        int `json:"spans,omitempty"`
	MemoryPoints int `json:"memory_points,omitempty"`
	LeakSuspects int `json:"leak_suspects,omitempty"`
}

func main() { os.Exit(run()) }

// run is main but for the exit, so that the CPU profile's deferred stop
// runs (and flushes it) whatever the exit code.
func run() int {
	maxBytes := flag.Int64("max-bytes", 0, "fail past this many decompressed bytes (0: no limit)")
	full := flag.Bool("import", false, "also run the full import (the profile builder: spans, memory attribution, leak suspects), as the receiver does")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file (for tuning)")
	workers := flag.Int("workers", 2, "goroutines parsing traceEvents (the receiver's parse_workers; 1: sequential)")
	floor := flag.Bool("floor", false, "only read (and gunzip) each file, parsing nothing: the floor under the import")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "kinetoparse:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: kinetoparse [-max-bytes N] FILE...")
		return 2
	}
	enc := json.NewEncoder(os.Stdout)
	if *floor {
		for _, path := range flag.Args() {
			n, err := readOnly(path)
			if err != nil {
				fmt.Fprintln(os.Stderr, "kinetoparse:", err)
				return 1
			}
			if err := enc.Encode(map[string]any{"file": path, "bytes": n}); err != nil {
				fmt.Fprintln(os.Stderr, "kinetoparse:", err)
				return 1
			}
		}
		return 0
	}
	for _, path := range flag.Args() {
		s := summary{File: path, ByPhase: map[string]int64{}, ByCategory: map[string]int64{}}
		// Trivial work per event: count by phase and category, sum the
		// bytes of memory events.
		var phases [256]int64
		var b *kinetobuild.Builder
		if *full {
			b = kinetobuild.NewBuilder(kinetobuild.DefaultOptions())
		}
		var h kineto.Handler = kineto.HandlerFunc(func(e *kineto.Event) error {
			phases[e.Phase]++
			s.ByCategory[e.Cat]++
			if e.Name == "[memory]" {
				s.MemoryBytes += max(e.Args.Bytes, -e.Args.Bytes)
			}
			return nil
		})
		if b != nil {
			// The builder is the whole Handler, as in the receiver: the
			// counting above (a map update per event, ~7 ms of CPU on
			// the serial goroutine per import of hta-df_index_resolver)
			// is not part of an import. by_category is then the
			// builder's own count of the events it took; by_phase and
			// memory_bytes stay empty.
			h = b
		}
		md, err := kineto.ParseFile(path, kineto.Options{MaxDecompressed: *maxBytes, Workers: *workers, NoOtherArgs: *full}, h)
		if err == nil && b != nil {
			// Spans come in batches, as the receiver takes them: each is
			// counted and dropped before the next is built.
			var res kinetobuild.Result
			spans := 0
			if res, err = b.FinishBatches(md, path, 2000, func(td ptrace.Traces) error {
				spans += td.SpanCount()
				return nil
			}); err == nil {
				s.Spans, s.MemoryPoints, s.LeakSuspects = spans, res.Metrics.DataPointCount(), res.Logs.LogRecordCount()
				s.ByCategory = res.Stats.EventsByCategory
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "kinetoparse:", err)
			return 1
		}
		for ph, n := range phases {
			if n > 0 {
				s.ByPhase[string(rune(ph))] = n
			}
		}
		s.Events, s.Metadata = md.Events, md
		if err := enc.Encode(s); err != nil {
			fmt.Fprintln(os.Stderr, "kinetoparse:", err)
			return 1
		}
	}
	return 0
}

// readOnly reads path to its end the way ParseFile does (kineto.Open:
// gunzipped by magic) into a buffer of the parser's size, and returns the
// (decompressed) byte count.
func readOnly(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	r, err := kineto.Open(f)
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 64<<10)
	var n int64
	for {
		m, err := r.Read(buf)
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

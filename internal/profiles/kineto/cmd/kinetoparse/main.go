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
// With -repeat N it passes over each file N times in the one process and
// prints the wall and CPU time of each pass: the first pays for the process's
// first touch of its memory and a heap still growing, the later ones run
// as an import in the long-lived receiver does.
//
// With -floor -floor-spans N it also builds N spans the way the import
// hands them over, from nothing read: the floor under an import that
// hands over that many spans (see spansFloor).
//
//	go run ./internal/profiles/kineto/cmd/kinetoparse [-max-bytes N] [-import] [-workers N] [-floor [-floor-spans N]] [-repeat N] FILE...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kineto"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kinetobuild"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
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
	passTimes
}

// passTimes is what each pass over a file took (-repeat), in this process;
// both kinds of output line end with it.
type passTimes struct {
	// Seconds is the wall time of each pass.
	Seconds []float64 `json:"seconds"`
	// CPUSeconds is the CPU time (user and system, every goroutine) of
	// each pass: the cold first pass's page faults are in its system
	// part.
	CPUSeconds []float64 `json:"cpu_seconds"`
}

// add records a pass that started at wall time t0 and process CPU time cpu0.
func (p *passTimes) add(t0 time.Time, cpu0 time.Duration) {
	p.Seconds = append(p.Seconds, time.Since(t0).Seconds())
	p.CPUSeconds = append(p.CPUSeconds, (cpuTime() - cpu0).Seconds())
}

// setTimes gives an output line its passes' times.
func (p *passTimes) setTimes(t passTimes) { *p = t }

func main() { os.Exit(run()) }

// config is what the flags ask of each pass over a file.
type config struct {
	maxBytes    int64
	full        bool
	workers     int
	heapProfile string
}

// run is main but for the exit, so that the CPU profile's deferred stop
// runs (and flushes it) whatever the exit code.
func run() int {
	var c config
	flag.Int64Var(&c.maxBytes, "max-bytes", 0, "fail past this many decompressed bytes (0: no limit)")
	flag.BoolVar(&c.full, "import", false, "also run the full import (the profile builder: spans, memory attribution, leak suspects), as the receiver does")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file (for tuning)")
	flag.IntVar(&c.workers, "workers", 2, "goroutines parsing traceEvents (the receiver's parse_workers; 1: sequential)")
	flag.StringVar(&c.heapProfile, "heapprofile", "", "write the heap in use when a parse ends (before the import's Finish: what the builder holds) to this file, "+
		"and with -import the heap in use halfway through the spans (FILE.finish: what the finish holds while it hands spans over) (for tuning)")
	floor := flag.Bool("floor", false, "only read (and gunzip) each file, parsing nothing: the floor under the import")
	floorSpans := flag.Int("floor-spans", 0, "with -floor: after reading, build this many spans as the import hands them over "+
		"(in the receiver's batches, the attributes of the 54 MB fixture's import in its proportions), nothing parsed: "+
		"the floor under an import that hands over that many spans")
	repeat := flag.Int("repeat", 1, "pass over each file this many times in this process, timing each pass (seconds): "+
		"the passes after the first run as in the long-lived receiver, on a heap and page cache already warm")
	flag.Parse()
	if c.heapProfile != "" {
		runtime.MemProfileRate = 4 << 10 // every table and buffer, not a 512 KB sample
	}
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
	if flag.NArg() == 0 || *repeat < 1 || *floorSpans < 0 || (*floorSpans > 0 && !*floor) {
		fmt.Fprintln(os.Stderr, "usage: kinetoparse [-max-bytes N] [-import] [-workers N] [-floor [-floor-spans N >= 0]] [-repeat N >= 1] FILE...")
		return 2
	}
	enc := json.NewEncoder(os.Stdout)
	for _, path := range flag.Args() {
		var out interface{ setTimes(passTimes) }
		var times passTimes
		for range *repeat {
			t0, cpu0 := time.Now(), cpuTime()
			var err error
			if *floor {
				var n int64
				n, err = readOnly(path)
				fs := &floorSummary{File: path, Bytes: n}
				if err == nil && *floorSpans > 0 {
					fs.Spans = spansFloor(*floorSpans, path)
				}
				out = fs
			} else {
				var s summary
				s, err = c.pass(path)
				out = &s
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "kinetoparse:", err)
				return 1
			}
			times.add(t0, cpu0)
		}
		out.setTimes(times)
		if err := enc.Encode(out); err != nil {
			fmt.Fprintln(os.Stderr, "kinetoparse:", err)
			return 1
		}
	}
	return 0
}

// floorSummary is -floor's line for a file.
type floorSummary struct {
	File  string `json:"file"`
	Bytes int64  `json:"bytes"`
	// Spans is how many spans -floor-spans built.
	Spans int `json:"spans,omitempty"`
	passTimes
}

// cpuTime is the CPU time this process has used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0 // does not fail for RUSAGE_SELF on Linux; if it did, the passes would read 0 CPU, which the tracegen test refuses
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pass parses path once (and imports it with -import) and summarizes it.
func (c config) pass(path string) (summary, error) {
	s := summary{File: path, ByPhase: map[string]int64{}, ByCategory: map[string]int64{}}
	var phases [256]int64
	var b *kinetobuild.Builder
	var h kineto.Handler
	if c.full {
		// The builder is the whole Handler, as in the receiver: counting
		// besides it (a map update per event, ~7 ms of CPU on the serial
		// goroutine per import of hta-df_index_resolver) is not part of
		// an import. by_category is the builder's own count of the events
		// it took; by_phase and memory_bytes stay empty.
		b = kinetobuild.NewBuilder(kinetobuild.DefaultOptions())
		h = b
	} else {
		// The parser alone, with trivial work per event: count by phase
		// and category, sum the bytes of memory events.
		h = kineto.HandlerFunc(func(e *kineto.Event) error {
			phases[e.Phase]++
			s.ByCategory[e.Cat]++
			if e.Name == "[memory]" {
				s.MemoryBytes += max(e.Args.Bytes, -e.Args.Bytes)
			}
			return nil
		})
	}
	md, err := kineto.ParseFile(path, kineto.Options{MaxDecompressed: c.maxBytes, Workers: c.workers, NoOtherArgs: c.full}, h)
	if err != nil {
		return s, err
	}
	if c.heapProfile != "" {
		if err := writeHeapProfile(c.heapProfile); err != nil {
			return s, err
		}
	}
	if b != nil {
		// Spans come in batches, as the receiver takes them: each is
		// counted and dropped before the next is built.
		spans, finishProfiled := 0, false
		res, err := b.FinishBatches(md, path, signals.BatchSize, func(td ptrace.Traces) error {
			spans += td.SpanCount()
			// Halfway through the default span budget the finish holds
			// its tree, the memory side's output and a batch: its peak.
			if c.heapProfile != "" && !finishProfiled && spans >= kinetobuild.DefaultSpanBudget/2 {
				finishProfiled = true
				return writeHeapProfile(c.heapProfile + ".finish")
			}
			return nil
		})
		if err != nil {
			return s, err
		}
		s.Spans, s.MemoryPoints, s.LeakSuspects = spans, res.Metrics.DataPointCount(), res.Logs.LogRecordCount()
		s.ByCategory = res.Stats.EventsByCategory
	}
	for ph, n := range phases {
		if n > 0 {
			s.ByPhase[string(rune(ph))] = n
		}
	}
	s.Events, s.Metadata = md.Events, md
	return s, nil
}

// writeHeapProfile writes the heap in use (after a collection) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
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

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command tracegen writes a synthetic PyTorch profiler (Kineto) trace (see
// package tracegen) and prints what it wrote as one JSON line: the trace id,
// the window, the event count and the leaking module's path.
//
//	go run ./tests/tracegen/cmd/tracegen -o rank0.pt.trace.json.gz -pid 41001 \
//	    -layers 16 -steps 6 -leak-module LlamaAttention_12 -leak-bytes 67108864
//
// A file name ending in .gz is gzip-compressed. -start takes an RFC 3339 time
// or "now" (the default).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/llmops-otel/otelcol-llmops/tests/tracegen"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("tracegen", flag.ContinueOnError)
	out := fs.String("o", "", "file to write (.json or .json.gz); required")
	pid := fs.Int64("pid", 1, "profiled process id")
	tid := fs.Int64("tid", 0, "thread running the model (default: the pid)")
	name := fs.String("process-name", "", `process_name metadata (default "python3")`)
	start := fs.String("start", "now", `time of the first event: RFC 3339 or "now"`)
	model := fs.String("model", "", `top nn.Module class (default "LlamaForCausalLM")`)
	layers := fs.Int("layers", 0, "decoder layers (default 4)")
	steps := fs.Int("steps", 0, "profiler steps (default 4)")
	device := fs.Int("device", 0, "CUDA device index")
	leakModule := fs.String("leak-module", "", `module path fragment that leaks, e.g. "LlamaAttention_12" (default: no leak)`)
	leakBytes := fs.Int64("leak-bytes", 0, "bytes the leaking module keeps per step (default 64 MiB)")
	traceID := fs.String("trace-id", "", "trace_id, 32 hex digits (default derived from the other options)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: tracegen -o FILE [flags]")
		fs.PrintDefaults()
		return 2
	}
	o := tracegen.Options{Pid: *pid, Tid: *tid, ProcessName: *name, ModelClass: *model, Layers: *layers,
		Steps: *steps, Device: *device, TraceID: *traceID}
	if *start != "now" {
		t, err := time.Parse(time.RFC3339Nano, *start)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tracegen: -start:", err)
			return 2
		}
		o.Start = t
	}
	if *leakModule != "" {
		o.Leak = &tracegen.Leak{Module: *leakModule, BytesPerStep: *leakBytes}
	}
	info, err := tracegen.WriteFile(*out, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The module list is long and derivable; the summary leaves it out.
	info.ModulePaths = nil
	if err := json.NewEncoder(os.Stdout).Encode(info); err != nil {
		fmt.Fprintln(os.Stderr, "tracegen:", err)
		return 1
	}
	return 0
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command llmprof: PyTorch profiler (Kineto)
// traces, CUDA memory snapshots and Nsight Systems exports read at a
// terminal with the profileimport receiver's own import code, so that what
// it prints is what the collector would emit.
//
//	llmprof summary FILE [--json] [--top N]
//	llmprof diff BASE NEW [--json] [--top N] [--by gpu|memory]
//	llmprof export FILE --otlp ENDPOINT [--insecure] [--timeout 30s]
//	llmprof help
//
// summary prints the top module paths (llm.profile.module_path) by GPU time
// (kernel, memcpy and memset durations, each counted under the module path
// of the op that launched it; for traces recorded without with_modules, the
// outermost CPU op, the key the receiver's memory metrics use) and by GPU
// memory (allocated, peak and outstanding at the end of the window), the
// leak suspects, the ProfilerStep#N steps, GPU idle time per device (the
// window minus the union of the device's kernel/memcpy/memset intervals)
// and the trace's metadata. diff compares two files per module path. export
// sends the spans, metrics and leak-suspect logs the receiver would produce
// (its default options, spans in the receiver's batches of 2,000) to an OTLP/gRPC
// endpoint.
//
// Output: fixed-width tables (with ANSI styling only when stdout is a
// terminal), or with --json one JSON document whose shape is the Summary or
// Diff type of this package; its "schema" field ("llmprof.summary/v1",
// "llmprof.diff/v1") changes only if a field changes meaning or goes away.
// A file that takes more than a second to read shows a progress bar on
// stderr when stderr is a terminal.
//
// Exit codes:
//
//	0  success
//	1  a file could not be imported (missing, empty, none of the three
//	   formats, truncated or malformed: the message names the file, what it
//	   is, and the position)
//	2  usage error (unknown command or flag, missing argument)
//	3  export failed (endpoint unreachable, refused or rejected data)
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles"
)

// Exit codes (see the package documentation).
const (
	ExitOK           = 0
	ExitImportFailed = 1
	ExitUsage        = 2
	ExitExportFailed = 3
)

const usage = `llmprof — GPU profiles at the terminal: PyTorch profiler (Kineto) traces,
CUDA memory snapshots and Nsight Systems exports

Usage:
  llmprof summary FILE [--json] [--top N]
      Top module paths by GPU time and by GPU memory, leak suspects,
      profiler steps, GPU idle time per device and the trace's metadata.
  llmprof diff BASE NEW [--json] [--top N] [--by gpu|memory]
      Per module path: GPU time, allocated and outstanding memory before,
      after and Δ% ("new"/"gone" for a path on one side only), sorted by
      absolute change of GPU time (--by memory: of allocated memory).
  llmprof export FILE --otlp ENDPOINT [--insecure] [--timeout 30s]
      Send the spans, metrics and logs the profileimport receiver would
      emit to an OTLP/gRPC endpoint (host:port; http:// means plaintext).
  llmprof help
      This text.

FILE is any of the three formats the profileimport receiver reads, told
apart by content: a PyTorch profiler (Kineto) trace (.json or .json.gz), a
CUDA memory snapshot (.pickle, from torch.cuda.memory._dump_snapshot) or an
Nsight Systems SQLite export (nsys export --type sqlite). diff compares two
files of one format. Flags may come before or after the files. --top N
(default 10; 0 = all) bounds each table.

Exit codes:
  0  success
  1  a file could not be imported (missing, empty, none of the three
     formats, truncated)
  2  usage error
  3  export failed
`

// Main runs the command with args (without the program name) and returns
// its exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		// Terminal output (here and below in this file): a write to stdout or
		// stderr that fails has nowhere to be reported, so its error is dropped.
		_, _ = fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "help", "-h", "-help", "--help":
		_, _ = fmt.Fprint(stdout, usage)
		return ExitOK
	case "summary":
		return runSummary(rest, stdout, stderr)
	case "diff":
		return runDiff(rest, stdout, stderr)
	case "export":
		return runExport(rest, stdout, stderr)
	}
	_, _ = fmt.Fprintf(stderr, "llmprof: unknown command %q (want summary, diff, export or help)\n", cmd)
	return ExitUsage
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("llmprof "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(stderr, "usage: llmprof %s (llmprof help for all commands)\nflags:\n", synopsis[name])
		fs.PrintDefaults()
	}
	return fs
}

var synopsis = map[string]string{
	"summary": "summary FILE [--json] [--top N]",
	"diff":    "diff BASE NEW [--json] [--top N] [--by gpu|memory]",
	"export":  "export FILE --otlp ENDPOINT [--insecure] [--timeout 30s]",
}

// parseArgs parses flags wherever they are among the positional arguments
// (`summary FILE --json` as well as `summary --json FILE`), which the flag
// package alone does not. It returns the positional arguments.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue // fs.Parse reports it
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if err := fs.Parse(flags); err != nil {
		return nil, err
	}
	return pos, nil
}

func usageError(stderr io.Writer, fs *flag.FlagSet, format string, a ...any) int {
	_, _ = fmt.Fprintf(stderr, "llmprof: "+format+"\n", a...)
	fs.Usage()
	return ExitUsage
}

// fail prints err and maps it to its exit code.
func fail(stderr io.Writer, cmd string, err error) int {
	_, _ = fmt.Fprintf(stderr, "llmprof %s: %v\n", cmd, err)
	var ee *exportError
	if errors.As(err, &ee) {
		return ExitExportFailed
	}
	return ExitImportFailed
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func runSummary(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("summary", stderr)
	asJSON := fs.Bool("json", false, "print JSON (schema "+SummarySchema+") instead of tables")
	top := fs.Int("top", 10, "rows per table (0: all)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 1 {
		return usageError(stderr, fs, "summary takes one FILE, got %d", len(pos))
	}
	if *top < 0 {
		return usageError(stderr, fs, "--top must be >= 0")
	}
	l, err := load(pos[0], newProgress(stderr))
	if err != nil {
		return fail(stderr, "summary", err)
	}
	if l.res.Format == profiles.FormatSnapshot {
		ss := summarizeSnapshot(pos[0], l, *top)
		if *asJSON {
			if err := writeJSON(stdout, ss); err != nil {
				return fail(stderr, "summary", err)
			}
			return ExitOK
		}
		writeSnapshotSummary(stdout, ss, style{ansi: isTerminal(stdout)})
		return ExitOK
	}
	s := summarize(l.analysis(), *top)
	if *asJSON {
		if err := writeJSON(stdout, s); err != nil {
			return fail(stderr, "summary", err)
		}
		return ExitOK
	}
	writeSummary(stdout, s, style{ansi: isTerminal(stdout)})
	return ExitOK
}

func runDiff(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("diff", stderr)
	asJSON := fs.Bool("json", false, "print JSON (schema "+DiffSchema+") instead of a table")
	top := fs.Int("top", 10, "rows (0: all)")
	by := fs.String("by", "gpu", "sort by absolute change of: gpu (GPU time) or memory (allocated bytes)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 2 {
		return usageError(stderr, fs, "diff takes BASE and NEW, got %d files", len(pos))
	}
	if *by != "gpu" && *by != "memory" {
		return usageError(stderr, fs, "--by is gpu or memory, not %q", *by)
	}
	if *top < 0 {
		return usageError(stderr, fs, "--top must be >= 0")
	}
	prog := newProgress(stderr)
	base, err := analyze(pos[0], prog)
	if err != nil {
		return fail(stderr, "diff", err)
	}
	nw, err := analyze(pos[1], prog)
	if err != nil {
		return fail(stderr, "diff", err)
	}
	d := compare(base, nw, *by == "memory", *top)
	if *asJSON {
		if err := writeJSON(stdout, d); err != nil {
			return fail(stderr, "diff", err)
		}
		return ExitOK
	}
	writeDiff(stdout, d, style{ansi: isTerminal(stdout)})
	return ExitOK
}

func runExport(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("export", stderr)
	endpoint := fs.String("otlp", "", "OTLP/gRPC endpoint, host:port (http://host:port: plaintext); required")
	plain := fs.Bool("insecure", false, "plaintext gRPC (no TLS)")
	timeout := fs.Duration("timeout", 30*time.Second, "deadline for sending everything (0: none)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 1 {
		return usageError(stderr, fs, "export takes one FILE, got %d", len(pos))
	}
	if *endpoint == "" {
		return usageError(stderr, fs, "export needs --otlp ENDPOINT")
	}
	res, err := export(context.Background(), pos[0], *endpoint, *plain, *timeout, newProgress(stderr))
	if err != nil {
		return fail(stderr, "export", err)
	}
	_, _ = fmt.Fprintf(stdout, "sent %d spans in %d batches, %d metric data points, %d log records to %s\n",
		res.Spans, res.SpanBatches, res.DataPoints, res.LogRecords, *endpoint)
	return ExitOK
}

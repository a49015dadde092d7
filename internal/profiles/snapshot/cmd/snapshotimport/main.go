// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command snapshotimport imports CUDA memory snapshots with the snapshot
// package, as the profileimport receiver does, and prints each one's
// Summary as JSON. It is the measured side of bench/snapshot (which, in
// another module, cannot import this internal package) and a debugging aid.
//
//	go run ./internal/profiles/snapshot/cmd/snapshotimport [-max-bytes N] FILE...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/snapshot"
)

func main() { os.Exit(run()) }

// run is main but for the exit, so that the CPU profile's deferred stop
// runs (and flushes it) whatever the exit code.
func run() int {
	maxBytes := flag.Int64("max-bytes", 0, "fail past this many (decompressed) bytes (0: no limit)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file (for tuning)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: snapshotimport [-max-bytes N] FILE...")
		return 2
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "snapshotimport:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	enc := json.NewEncoder(os.Stdout)
	code := 0
	for _, path := range flag.Args() {
		res, err := snapshot.ImportFile(path, snapshot.Options{MaxBytes: *maxBytes})
		if err != nil {
			fmt.Fprintln(os.Stderr, "snapshotimport:", err)
			code = 1
			continue
		}
		out := struct {
			File string `json:"file"`
			snapshot.Summary
			LogRecords int `json:"log_records"`
		}{path, res.Summary, res.Logs.LogRecordCount()}
		_ = enc.Encode(out)
	}
	return code
}

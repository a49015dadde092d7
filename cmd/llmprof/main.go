// Command llmprof summarizes, compares and exports PyTorch profiler
// (Kineto) traces with the profileimport receiver's import code; see
// package llmprof (or `llmprof help`) for the commands and exit codes.
package main

import (
	"os"

	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/llmprof"
)

func main() {
	os.Exit(llmprof.Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command specdoc writes the documents generated from internal/spec: the
// unified metric specification, the per-engine mapping tables and the
// Prometheus names.
// `make generate` runs it; tests fail when the committed files are stale.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: specdoc <metric-spec.md> <engine-mappings.md> <prometheus-names.md>")
		os.Exit(2)
	}
	for path, write := range map[string]func(io.Writer) error{
		os.Args[1]: spec.WriteMarkdown,
		os.Args[2]: spec.WriteMappingsMarkdown,
		os.Args[3]: spec.WritePrometheusMarkdown,
	} {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			fmt.Fprintln(os.Stderr, "specdoc:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "specdoc:", err)
			os.Exit(1)
		}
	}
}

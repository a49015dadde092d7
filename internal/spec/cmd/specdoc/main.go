// Command specdoc writes the unified metric specification (docs/metric-spec.md)
// from the registry in internal/spec. `make generate` runs it.
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: specdoc <output.md>")
		os.Exit(2)
	}
	var buf bytes.Buffer
	if err := spec.WriteMarkdown(&buf); err != nil {
		fmt.Fprintln(os.Stderr, "specdoc:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[1], buf.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "specdoc:", err)
		os.Exit(1)
	}
}

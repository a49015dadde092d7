// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// formatsRead is what a file given to llmprof may be, for messages about a
// file that is none of them.
const formatsRead = "llmprof reads PyTorch profiler (Kineto) traces (.json, .json.gz), " +
	"CUDA memory snapshots (.pickle, from torch.cuda.memory._dump_snapshot) " +
	"and Nsight Systems SQLite exports (nsys export --type sqlite)"

// maxSniffJSON bounds how much of a file that failed to parse as a trace is
// read again to tell valid JSON of another shape from broken JSON: enough
// for any document a person mistakes for a trace, not a whole large trace.
const maxSniffJSON = 64 << 20

// jsonShape says what a valid JSON document that is not a trace is ("an
// array", "an object with keys a, b, c"), or "" when data is not valid JSON.
func jsonShape(data []byte) string {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return ""
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 8 {
			keys = append(keys[:8], "…")
		}
		if len(keys) == 0 {
			return "an empty JSON object"
		}
		return "a JSON object with keys " + strings.Join(keys, ", ")
	case []any:
		return fmt.Sprintf("a JSON array of %d elements", len(x))
	case string:
		return "a JSON string"
	case float64:
		return "a JSON number"
	case bool:
		return "a JSON boolean"
	}
	return "JSON null"
}

// sniffJSONShape reads path (when not larger than maxSniffJSON and not
// gzipped) and returns jsonShape of it.
func sniffJSONShape(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	data, err := io.ReadAll(io.LimitReader(f, maxSniffJSON+1))
	if err != nil || len(data) > maxSniffJSON || len(data) < 2 || (data[0] == 0x1f && data[1] == 0x8b) {
		return ""
	}
	return jsonShape(data)
}

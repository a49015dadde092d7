// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build race

package kineto

// raceEnabled lets the slowest tests (the 53 MB fixture) stay out of -race
// runs: the race detector slows the parser 20×; the
// parallel parser's goroutines run under -race on the other fixtures and on
// the small documents of parallel_test.go.
const raceEnabled = true

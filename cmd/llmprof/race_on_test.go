// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build race

package main

// raceEnabled skips the slowest tests under the race detector.
const raceEnabled = true

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build race

package expo

// raceEnabled: the race detector allocates and slows everything down, so
// allocation counts and long loops are skipped under it.
const raceEnabled = true

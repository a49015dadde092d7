// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !race

package expo

const raceEnabled = false

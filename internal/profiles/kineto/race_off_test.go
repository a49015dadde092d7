// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !race

package kineto

const raceEnabled = false

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package llmenginereceiver scrapes inference engines' Prometheus endpoints
// and knows their quirks: vLLM's `_created` series, TGI's missing model label
// (read from /info), NIM's unprefixed names at /v1/metrics, Triton's
// cumulative microsecond counters, llama.cpp's model from /props. It detects
// the engine and model of each target, converts the exposition faithfully
// (counters with start times and reset detection, histograms, summaries) and
// emits the engine's own names; the llmnormalize processor maps them onto
// the unified spec.
//
//go:generate ../../.tools/mdatagen metadata.yaml
package llmenginereceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver"

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package llmnormalizeprocessor makes every engine look the same downstream.
// Metrics named by vLLM (current names and renamed aliases), TGI, SGLang,
// TensorRT-LLM, Triton, NIM, llama.cpp and dcgm-exporter become the unified
// metrics of internal/spec, in the spec's units and with the spec's
// attributes; metrics an engine lacks but that follow exactly from two it
// has are derived; GenAI spans get current semantic-convention attributes
// and joinable W3C trace ids. The mapping tables are data in internal/spec.
//
//go:generate ../../.tools/mdatagen metadata.yaml
package llmnormalizeprocessor // import "github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor"

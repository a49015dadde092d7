// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package profileimportreceiver imports PyTorch profiler (Kineto) traces as
// the profiler writes them: it watches directories, waits until a file is
// complete, parses it as a stream, and emits spans with model-layer call
// stacks, per-layer GPU memory metrics and leak-suspect log records that the
// rootcause connector joins with GPU metrics. One instance serves the
// traces, metrics and logs pipelines; what it imported is remembered in a
// storage extension, so a restart neither re-imports nor skips a file.
//
//go:generate ../../.tools/mdatagen metadata.yaml
package profileimportreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver"

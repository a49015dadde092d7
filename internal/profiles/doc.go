// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package profiles imports GPU profiles — PyTorch profiler (Kineto)
// traces, CUDA memory snapshots and Nsight Systems SQLite exports — into
// OpenTelemetry spans, memory metrics and leak-suspect logs, through one
// entry point, Import, that the profileimport receiver and the llmprof
// command both call: what llmprof prints is what the collector emits.
//
// The packages below it each do one thing:
//
//	kineto       reads a Chrome-trace JSON document (the lexer in lex.go, the
//	             event decoding in decode.go, a parallel parse for large files)
//	kinetobuild  turns Kineto events into the span tree, memory attribution
//	             and leak suspects
//	snapshot     reads torch.cuda.memory._dump_snapshot pickles (and JSON)
//	nsys         reads `nsys export --type sqlite` databases
//	signals      the writer all three share: scope, span batches and ids,
//	             trace context in text, memory points, leak-suspect records
package profiles // import "github.com/llmops-otel/otelcol-llmops/internal/profiles"

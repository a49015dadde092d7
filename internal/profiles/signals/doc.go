// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package signals is the writer every profile format's importer shares: the
// instrumentation scope, the span batches and their root span, the span
// ids derived from a trace id, the request trace context found in text,
// the per-module memory points, and the leak-suspect log records, all in
// the one schema the rootcause connector and llmprof read whatever the
// file was (a Kineto trace, a CUDA memory snapshot, an Nsight Systems
// export). It knows no file format: the format packages depend on it,
// never the other way round.
package signals // import "github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"

// ScopeName is the instrumentation scope of everything a profile import
// emits. It stays the receiver's import path, which is what users filter
// on, although the code now lives here.
const ScopeName = "github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver"

const (
	// RootSpanCategory is the llm.profile.category of the span covering a
	// whole profile window, the parent of every top-level span.
	RootSpanCategory = "profile"
	// UnattributedPath is the module path of memory or GPU time no model
	// layer (module path or outermost CPU op) can be named for.
	UnattributedPath = "<unattributed>"
)

// BatchSize is the most spans an import hands its sink at once: a large
// profile's spans go downstream batch by batch rather than all held at
// once, and each batch is garbage once consumed. 2,000 rather than 10,000
// cut the peak RSS of a 15 MB trace's import from 23 MB to 15 MB at no
// measurable cost in time (downstream batching re-batches anyway). The
// receiver and llmprof use the same size, so an interrupted import resumes
// on the same batch boundaries whichever sent it.
const BatchSize = 2000

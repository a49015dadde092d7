// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// spanShapes are the names and attribute sets spansFloor gives its spans,
// one per spanShape index below. They follow what the import of the 54 MB fixture
// (hta-df_index_resolver) emits: CPU ops with a category, a thread and an
// External id; runtime calls with a correlation too; a few with a device
// as well; kernels with a device, a stream, grid and block.
var spanShapes = [...]struct {
	name     string
	category string
	ints     []string
	strs     []string
}{
	{"aten::linear", "cpu_op", []string{spec.AttrThreadID, spec.AttrProfileExternalID}, nil},
	{"cudaLaunchKernel", "cuda_runtime", []string{spec.AttrThreadID, spec.AttrProfileExternalID, spec.AttrProfileCorrelation}, nil},
	{"Memcpy HtoD (Pageable -> Device)", "gpu_memcpy",
		[]string{spec.AttrProfileDevice, spec.AttrProfileStream, spec.AttrProfileExternalID, spec.AttrProfileCorrelation}, nil},
	{"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
		"kernel", []string{spec.AttrProfileDevice, spec.AttrProfileStream, spec.AttrProfileExternalID, spec.AttrProfileCorrelation},
		[]string{spec.AttrProfileGrid, spec.AttrProfileBlock}},
}

// spanShape is the shape of the i-th span: of every 100, 55 CPU ops, 22
// runtime calls, 3 copies and 19 kernels, which makes 1.37 strings and
// 2.64 integers a span against the fixture's import's 1.39 and 2.67.
func spanShape(i int) int {
	switch r := i % 100; {
	case r < 55:
		return 0
	case r < 77:
		return 1
	case r < 80:
		return 2
	default:
		return 3
	}
}

// spansFloor builds n spans as the import hands them over, reading nothing:
// batches of signals.BatchSize under one resource, the first opening with
// the root span; each span with its ids derived from a trace id, a
// parent, a name, start and end, and the attributes of its shape. Each
// batch is let go when the next is built, as kinetoparse -import lets its
// batches go. What it costs is the floor under an import that hands over
// as many spans: no parsing, no span tree, no selection, only the pdata.
// One goroutine, as the import builds them: on two (each batch's second
// half on the other) the 100,000 spans took the same wall time (median
// 83.8 against 83.7 ms) for 16 ms more CPU.
func spansFloor(n int, file string) int {
	resource := pcommon.NewResource()
	ra := resource.Attributes()
	ra.PutStr(spec.AttrServiceName, spec.ProfileServiceName)
	ra.PutStr(spec.AttrProfileFile, file)
	built := 0
	for built < n {
		size := min(signals.BatchSize, n-built)
		floorBatch(resource, built, size, n, file)
		built += size
	}
	return built
}

// floorTraceID is the trace id of the spans floor's spans.
var floorTraceID = pcommon.TraceID([16]byte{'k', 'i', 'n', 'e', 't', 'o', 'p', 'a', 'r', 's', 'e', '-', 's', 'p', 'a', 'n'})

// floorBatch builds spans from to from+size-1 of the n of the spans floor
// as one batch under a copy of resource: span 0 is the root.
func floorBatch(resource pcommon.Resource, from, size, n int, file string) ptrace.Traces {
	const start = int64(1669783687464181000)
	ids := signals.NewSpanIDs(floorTraceID)
	td, spans := signals.NewSpanBatch(resource, size)
	for i := from; i < from+size; i++ {
		sp := spans.AppendEmpty()
		if i == 0 {
			signals.FillRoot(sp, floorTraceID, ids.ID(-1), file, start, start+int64(n)*1000)
			continue
		}
		shape := &spanShapes[spanShape(i)]
		ids.Link(sp, floorTraceID, int32(i), int32(i/2)-1)
		sp.SetName(shape.name)
		sp.SetStartTimestamp(pcommon.Timestamp(start + int64(i)*1000))
		sp.SetEndTimestamp(pcommon.Timestamp(start + int64(i)*1000 + 45000))
		a := sp.Attributes()
		a.EnsureCapacity(1 + len(shape.ints) + len(shape.strs))
		a.PutStr(spec.AttrProfileCategory, shape.category)
		for k, key := range shape.ints {
			a.PutInt(key, int64(i+k))
		}
		for _, key := range shape.strs {
			a.PutStr(key, "[128, 1, 1]")
		}
	}
	return td
}

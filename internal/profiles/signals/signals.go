// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package signals

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// NewSpanBatch starts one batch of spans: a copy of resource, the profile
// scope, and room for n spans.
func NewSpanBatch(resource pcommon.Resource, n int) (ptrace.Traces, ptrace.SpanSlice) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	resource.CopyTo(rs.Resource())
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(ScopeName)
	spans := ss.Spans()
	spans.EnsureCapacity(n)
	return td, spans
}

// FillRoot writes the span that covers a profile's whole window (start and
// end in Unix nanoseconds), named after the file: every top-level span of
// the profile is its child.
func FillRoot(sp ptrace.Span, tid pcommon.TraceID, id pcommon.SpanID, name string, start, end int64) {
	sp.SetTraceID(tid)
	sp.SetSpanID(id)
	sp.SetName(name)
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetStartTimestamp(pcommon.Timestamp(start))
	sp.SetEndTimestamp(pcommon.Timestamp(end))
	sp.Attributes().PutStr(spec.AttrProfileCategory, RootSpanCategory)
}

// NewScopeMetrics adds the profile scope to the first resource of md.
func NewScopeMetrics(md pmetric.Metrics) pmetric.MetricSlice {
	sm := md.ResourceMetrics().At(0).ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(ScopeName)
	return sm.Metrics()
}

// NewScopeLogs adds the profile scope to the first resource of ld.
func NewScopeLogs(ld plog.Logs) plog.ScopeLogs {
	sl := ld.ResourceLogs().At(0).ScopeLogs().AppendEmpty()
	sl.Scope().SetName(ScopeName)
	return sl
}

// MemoryRow is one module path's memory over a profile window.
type MemoryRow struct {
	Path   string
	Device int64
	// Pid, when HasPid, is the process (an Nsight capture may cover
	// several; a Kineto trace is one process's).
	Pid         int64
	HasPid      bool
	Allocated   int64 // bytes allocated during the window
	Outstanding int64 // of those, bytes not freed by its end
}

// MemoryDescriptions say what the two per-module metrics mean for one
// format (what "allocated" covers differs between a profiler's memory
// events and an nsys capture's cudaMalloc calls).
type MemoryDescriptions struct {
	Allocated, Outstanding string
}

// AppendModuleMemory writes llm.profile.memory.allocated and .outstanding:
// one point each per row (row(i) for i < n, taken by callback so a caller
// keeps its own row type), over [start, end], tagged with the file.
func AppendModuleMemory(ms pmetric.MetricSlice, desc MemoryDescriptions, n int, row func(i int) MemoryRow, start, end pcommon.Timestamp, file string) {
	if n == 0 {
		return
	}
	allocated := spec.AppendNumberMetric(ms, spec.ProfileMemoryAllocated, desc.Allocated)
	outstanding := spec.AppendNumberMetric(ms, spec.ProfileMemoryOutstanding, desc.Outstanding)
	allocated.EnsureCapacity(n)
	outstanding.EnsureCapacity(n)
	for i := range n {
		r := row(i)
		appendMemoryPoint(allocated, r, r.Allocated, start, end, file)
		appendMemoryPoint(outstanding, r, r.Outstanding, start, end, file)
	}
}

func appendMemoryPoint(dps pmetric.NumberDataPointSlice, r MemoryRow, v int64, start, end pcommon.Timestamp, file string) {
	dp := dps.AppendEmpty()
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(end)
	dp.SetIntValue(v)
	a := dp.Attributes()
	a.PutStr(spec.AttrProfileModulePath, r.Path)
	a.PutInt(spec.AttrProfileDevice, r.Device)
	if r.HasPid {
		a.PutInt(spec.AttrProcessPid, r.Pid)
	}
	a.PutStr(spec.AttrProfileFile, file)
}

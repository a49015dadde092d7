// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// TestSpansFloorHasTheImportsShape: the spans floor builds as many spans
// as asked, in batches of 2,000, the first opening with the root, and
// its spans carry the attributes of the 54 MB fixture's import in its
// proportions (1.39 strings and 2.67 integers a span there): the floor
// allocates what the import allocates, or its figure would mean nothing.
func TestSpansFloorHasTheImportsShape(t *testing.T) {
	for _, n := range []int{1, 1999, 2000, 4001} {
		if got := spansFloor(n, "f.json"); got != n {
			t.Errorf("spansFloor(%d) built %d", n, got)
		}
	}
	resource := pcommon.NewResource()
	td := floorBatch(resource, 0, signals.BatchSize, 100000, "f.json")
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	if spans.Len() != signals.BatchSize {
		t.Fatalf("a batch of %d spans, want %d", spans.Len(), signals.BatchSize)
	}
	if root := spans.At(0); root.Name() != "f.json" || !root.ParentSpanID().IsEmpty() {
		t.Errorf("first span %q (parent %v), want the root named after the file", root.Name(), root.ParentSpanID())
	}
	strs, ints := 0, 0
	seen := map[pcommon.SpanID]bool{}
	for i := 1; i < spans.Len(); i++ {
		sp := spans.At(i)
		if seen[sp.SpanID()] || sp.ParentSpanID().IsEmpty() || sp.TraceID() != floorTraceID {
			t.Fatalf("span %d: id %v seen before, parent %v, trace %v", i, sp.SpanID(), sp.ParentSpanID(), sp.TraceID())
		}
		seen[sp.SpanID()] = true
		if c, ok := sp.Attributes().Get(spec.AttrProfileCategory); !ok || c.Str() == "" {
			t.Fatalf("span %d has no category", i)
		}
		sp.Attributes().Range(func(_ string, v pcommon.Value) bool {
			switch v.Type() {
			case pcommon.ValueTypeStr:
				strs++
			case pcommon.ValueTypeInt:
				ints++
			}
			return true
		})
	}
	perSpan := func(n int) float64 { return float64(n) / float64(spans.Len()-1) }
	if s, i := perSpan(strs), perSpan(ints); s < 1.3 || s > 1.45 || i < 2.55 || i > 2.75 {
		t.Errorf("%.2f strings and %.2f integers a span, want about 1.39 and 2.67 (the import's)", s, i)
	}
}

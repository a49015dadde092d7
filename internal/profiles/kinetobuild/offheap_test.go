// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kinetobuild

import (
	"runtime"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/offheap"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kineto"
)

// offHeapFixture has 45k kept events: its tables fill several chunks past
// the first, which are the ones mapped off the heap.
const offHeapFixture = "hta-ns_resolution-rank0.pt.trace.json.gz"

// parseInto parses the fixture into a new Builder; onHeap keeps every
// chunk on the Go heap, as past the process's budget.
func parseInto(t *testing.T, onHeap bool) (*Builder, kineto.Metadata, string) {
	t.Helper()
	p := fixture(t, offHeapFixture)
	b := NewBuilder(DefaultOptions())
	if onHeap {
		b.nodes.arena, b.extras.arena, b.mems.arena, b.flows.arena = nil, nil, nil, nil
	}
	md, err := kineto.ParseFile(p, kineto.Options{}, b)
	if err != nil {
		t.Fatal(err)
	}
	return b, md, p
}

func TestTablesOffTheHeapBuildWhatTheHeapBuilds(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux maps off the heap")
	}
	start := offheap.InUse()
	b, md, p := parseInto(t, false)
	if b.arena.Mapped() == 0 || offheap.InUse() == start {
		t.Fatalf("no chunk mapped off the heap for %d nodes (%d chunks)", b.nodes.len(), len(b.nodes.chunks))
	}
	got, err := b.Finish(md, p)
	if err != nil {
		t.Fatal(err)
	}
	if b.arena.Mapped() != 0 || offheap.InUse() != start {
		t.Fatalf("Finish left %d bytes mapped (%d in the process, %d before)", b.arena.Mapped(), offheap.InUse(), start)
	}

	h, md, p := parseInto(t, true)
	if h.arena.Mapped() != 0 {
		t.Fatal("the heap-only builder mapped chunks")
	}
	want, err := h.Finish(md, p)
	if err != nil {
		t.Fatal(err)
	}
	if want.Traces.SpanCount() < 40000 {
		t.Fatalf("%d spans: the fixture no longer fills the tables", want.Traces.SpanCount())
	}
	same := func(what string, a, b []byte, errA, errB error) {
		t.Helper()
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if string(a) != string(b) {
			t.Errorf("%s differ: %d bytes off the heap, %d on it", what, len(a), len(b))
		}
	}
	var tm ptrace.ProtoMarshaler
	ta, errA := tm.MarshalTraces(got.Traces)
	tb, errB := tm.MarshalTraces(want.Traces)
	same("traces", ta, tb, errA, errB)
	var mm pmetric.ProtoMarshaler
	ma, errA := mm.MarshalMetrics(got.Metrics)
	mb, errB := mm.MarshalMetrics(want.Metrics)
	same("metrics", ma, mb, errA, errB)
	var lm plog.ProtoMarshaler
	la, errA := lm.MarshalLogs(got.Logs)
	lb, errB := lm.MarshalLogs(want.Logs)
	same("logs", la, lb, errA, errB)
}

func TestReleaseGivesTheTablesBackWithoutFinish(t *testing.T) {
	start := offheap.InUse()
	b, md, p := parseInto(t, false)
	b.Release()
	b.Release()
	if offheap.InUse() != start {
		t.Fatalf("%d bytes still mapped after Release (%d before)", offheap.InUse(), start)
	}
	if _, err := b.Finish(md, p); err == nil {
		t.Fatal("Finish after Release built something")
	}
}

func TestDroppedBuilderGivesTheTablesBack(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux maps off the heap")
	}
	start := offheap.InUse()
	func() {
		b, _, _ := parseInto(t, false)
		if b.arena.Mapped() == 0 {
			t.Fatal("no chunk mapped off the heap")
		}
	}()
	// The cleanup runs on its own goroutine after a collection finds the
	// Builder unreachable: collect until it has, or give up.
	for i := 0; i < 100 && offheap.InUse() != start; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if offheap.InUse() != start {
		t.Fatalf("%d bytes still mapped after the Builder was dropped (%d before)", offheap.InUse(), start)
	}
}

func TestSmallTraceMapsNothing(t *testing.T) {
	b := NewBuilder(DefaultOptions())
	defer b.Release()
	ops := evb{}
	for i := range int64(firstOnHeap + 1) {
		ops.op("aten::mm", i*10*us, 5*us)
	}
	for i := range ops.evs {
		if i == firstOnHeap {
			if m := b.arena.Mapped(); m != 0 {
				t.Fatalf("%d ops mapped %d bytes off the heap", i, m)
			}
		}
		if err := b.Event(&ops.evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if runtime.GOOS == "linux" && b.arena.Mapped() == 0 {
		t.Fatalf("%d ops, and the node table's first chunk is still on the heap", len(ops.evs))
	}
}

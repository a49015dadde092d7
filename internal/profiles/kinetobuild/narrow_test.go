// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kinetobuild

import (
	"strconv"
	"testing"
	"unsafe"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kineto"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

func TestNodeIs48Bytes(t *testing.T) {
	if s := unsafe.Sizeof(node{}); s != 48 {
		t.Fatalf("node is %d bytes; its comment, and the RSS figures behind it, say 48", s)
	}
}

// TestValuesPastTheNarrowFieldsKeepTheirMeaning: ids past 32 bits, a
// thread index and a category index past 16 bits and a device past int16
// are kept whole (Builder.wide) and link, nest and label as narrow ones.
func TestValuesPastTheNarrowFieldsKeepTheirMeaning(t *testing.T) {
	const (
		bigCorr   = int64(5_000_000_000)
		bigExt    = int64(1) << 40
		bigPy     = int64(3_000_000_000)
		bigDevice = int64(40_000) // a GPU row's pid, taken as its device
		threads   = 1<<16 + 10    // past uint16
	)
	var b evb
	// A distinct thread (and a distinct name) for each op: the thread
	// index and the string table pass 16 bits.
	for i := range int64(threads) {
		b.x("cpu_op", "op"+strconv.FormatInt(i, 10), cpu, 1000+i, i, 1, nil)
	}
	last := int64(1000 + threads - 1) // the last thread's tid: index past 16 bits
	base := int64(threads + 100)
	// "Operator" (legacy cpu_op) first appears now: its category index
	// is past 16 bits.
	b.x("Operator", "outer", cpu, last, base, 100, func(a *kineto.Args) { a.ExternalID = bigExt })
	b.x("cuda_runtime", "cudaLaunchKernel", cpu, last, base+10, 5, func(a *kineto.Args) { a.Correlation, a.ExternalID = bigCorr, bigExt })
	b.x("kernel", "big_gemm", bigDevice, 7, base+20, 30, func(a *kineto.Args) { a.Correlation, a.Stream = bigCorr, 7 })
	b.x("python_function", "nn.Module: Outer", cpu, last, base+200, 100, func(a *kineto.Args) { a.PythonID, a.PythonParentID = bigPy, -1 })
	// Not contained in time by its Python parent: only the wide ids can
	// make Outer its parent.
	b.x("python_function", "nn.Module: Inner", cpu, last, base+350, 10, func(a *kineto.Args) { a.PythonID, a.PythonParentID = bigPy+1, bigPy })
	b.mem(last, base+50, 0x1000, 4*MiB, 1)

	opts := DefaultOptions()
	opts.SpanBudget = 1 << 30
	opts.FoldPythonFrames = false
	res := build(t, opts, b.evs, noMeta(), "/tmp/wide.json")
	ix := indexSpans(res.Traces)

	outer, launch, kernel := ix.byName["outer"], ix.byName["cudaLaunchKernel"], ix.byName["big_gemm"]
	if got := strAttr(outer, spec.AttrProfileCategory); got != "Operator" {
		t.Errorf("outer's category %q, want Operator", got)
	}
	if v, _ := outer.Attributes().Get(spec.AttrProfileExternalID); v.Int() != bigExt {
		t.Errorf("outer's External id %d, want %d", v.Int(), bigExt)
	}
	if launch.ParentSpanID() != outer.SpanID() {
		t.Errorf("the launch is not nested in outer on the thread past 16 bits: chain %v", ix.chain(launch))
	}
	if kernel.ParentSpanID() != launch.SpanID() {
		t.Errorf("the kernel is not linked to its launch by the 33-bit correlation: chain %v", ix.chain(kernel))
	}
	if v, _ := kernel.Attributes().Get(spec.AttrProfileCorrelation); v.Int() != bigCorr {
		t.Errorf("kernel's correlation %d, want %d", v.Int(), bigCorr)
	}
	if v, _ := kernel.Attributes().Get(spec.AttrProfileDevice); v.Int() != bigDevice {
		t.Errorf("kernel's device %d, want %d", v.Int(), bigDevice)
	}
	if inner := ix.byName["nn.Module: Inner"]; inner.ParentSpanID() != ix.byName["nn.Module: Outer"].SpanID() {
		t.Errorf("Inner not parented by its 32-bit-plus Python parent id: chain %v", ix.chain(inner))
	}
	found := false
	for _, m := range res.Modules {
		if m.ModulePath != "" && m.AllocatedBytes == 4*MiB {
			found = true
		}
	}
	if res.Stats.UnattributedAllocs != 0 || !found {
		t.Errorf("the allocation on the thread past 16 bits was not attributed: %+v, unattributed %d", res.Modules, res.Stats.UnattributedAllocs)
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package offheap

import (
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"
)

type record struct {
	a, b   int64
	c      uint32
	d      [3]int16
	flag   bool
	nested struct{ x, y float64 }
}

func skipOffLinux(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("only Linux maps off the heap")
	}
}

func TestMakeGivesZeroedAlignedDisjointSlices(t *testing.T) {
	skipOffLinux(t)
	var a Arena
	defer a.Free()
	var slices [][]record
	for i := range 50 { // 50 × 96 KB: past one region
		s := Make[record](&a, 2000)
		if s == nil {
			t.Fatalf("Make %d returned nil", i)
		}
		if len(s) != 0 || cap(s) != 2000 {
			t.Fatalf("len %d cap %d, want 0 and 2000", len(s), cap(s))
		}
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(s))); p%align != 0 {
			t.Fatalf("slice at %#x is not %d-byte aligned", p, align)
		}
		s = s[:cap(s)]
		for j := range s {
			if s[j] != (record{}) {
				t.Fatalf("slice %d element %d not zeroed: %+v", i, j, s[j])
			}
			s[j] = record{a: int64(i), b: int64(j)}
		}
		slices = append(slices, s)
	}
	// Every write is still there: no two slices share memory.
	for i, s := range slices {
		for j := range s {
			if s[j].a != int64(i) || s[j].b != int64(j) {
				t.Fatalf("slice %d element %d overwritten: %+v", i, j, s[j])
			}
		}
	}
	if len(a.regions) < 2 {
		t.Fatalf("%d regions for 4 MB of records, want at least 2", len(a.regions))
	}
	for _, r := range a.regions {
		if uintptr(r.base)%hugePage != 0 {
			t.Fatalf("region at %p is not on a huge-page boundary", r.base)
		}
	}
	if got, want := a.Mapped(), int64(len(a.regions))*regionSize; got != want {
		t.Fatalf("Mapped %d, want %d", got, want)
	}
}

func TestMakeRefusesWhatTheCollectorMustSee(t *testing.T) {
	var a Arena
	defer a.Free()
	if Make[string](&a, 10) != nil {
		t.Error("string placed off the heap")
	}
	if Make[*int](&a, 10) != nil {
		t.Error("pointer placed off the heap")
	}
	if Make[struct {
		n int64
		s []byte
	}](&a, 10) != nil {
		t.Error("struct with a slice placed off the heap")
	}
	if Make[[2]map[int]int](&a, 10) != nil {
		t.Error("array of maps placed off the heap")
	}
	if Make[any](&a, 10) != nil {
		t.Error("interface placed off the heap")
	}
	if Make[uintptr](&a, 10) != nil {
		t.Error("uintptr placed off the heap")
	}
	if Make[record](nil, 10) != nil || Make[record](&a, 0) != nil || Make[struct{}](&a, 10) != nil {
		t.Error("nil arena, no elements or zero-size elements gave a slice")
	}
	if runtime.GOOS == "linux" && Make[record](&a, 10) == nil {
		t.Error("pointer-free struct refused")
	}
}

// drainPool unmaps the pooled regions before and after a test that counts
// what is mapped.
func drainPool(t *testing.T) {
	releasePooled(time.Time{})
	t.Cleanup(func() { releasePooled(time.Time{}) })
}

// withBudget runs a test (Linux only) with the pool drained and the budget
// set to budget, restored afterwards; it returns InUse at the start.
func withBudget(t *testing.T, budget int64) int64 {
	t.Helper()
	skipOffLinux(t)
	drainPool(t)
	saved := limit
	t.Cleanup(func() { limit = saved })
	limit = budget
	return InUse()
}

func TestBudgetIsSharedAndReturnedByFree(t *testing.T) {
	start := withBudget(t, 2*regionSize)
	var a, b Arena
	if Make[byte](&a, regionSize) == nil {
		t.Fatal("first region refused")
	}
	if Make[byte](&b, regionSize) == nil {
		t.Fatal("second region refused")
	}
	if Make[byte](&a, 1) != nil {
		t.Fatal("a third region was mapped past the budget")
	}
	if got := InUse() - start; got != 2*regionSize {
		t.Fatalf("InUse grew by %d, want %d", got, 2*regionSize)
	}
	b.Free()
	b.Free() // twice: nothing more to give back
	if InUse()-start != regionSize || Pooled() != regionSize {
		t.Fatalf("after b.Free: InUse +%d, Pooled %d; want +%d and %d", InUse()-start, Pooled(), regionSize, regionSize)
	}
	if Make[byte](&a, 1) == nil {
		t.Fatal("the region b gave back was not reused")
	}
	if Pooled() != 0 {
		t.Fatalf("Pooled %d after its region was reused", Pooled())
	}
	a.Free()
	if got := InUse(); got != start {
		t.Fatalf("InUse %d after both Free, want %d", got, start)
	}
	if a.Mapped() != 0 || len(a.regions) != 0 {
		t.Fatal("a still holds regions after Free")
	}
	// The pool holds budget no arena uses: a larger slice than a pooled
	// region can serve gets it back.
	if Pooled() != 2*regionSize {
		t.Fatalf("Pooled %d, want both regions", Pooled())
	}
	if Make[byte](&a, regionSize+1) == nil {
		t.Fatal("the pooled regions were not unmapped to make room")
	}
	a.Free()
	if Pooled() != 0 || InUse() != start {
		t.Fatalf("Pooled %d, InUse %d after the large region's Free (unmapped, not pooled)", Pooled(), InUse())
	}
}

func TestPooledRegionsAreReusedZeroedAndReleasedWhenIdle(t *testing.T) {
	skipOffLinux(t)
	drainPool(t)
	var a Arena
	s := Make[uint64](&a, 1000)[:1000]
	for i := range s {
		s[i] = ^uint64(0)
	}
	first := a.regions[0].base
	a.Free()
	s = Make[uint64](&a, 1000)[:1000]
	if a.regions[0].base != first {
		t.Fatal("a new region was mapped while one waited in the pool")
	}
	for i, v := range s {
		if v != 0 {
			t.Fatalf("reused region not cleared: element %d is %#x", i, v)
		}
	}
	a.Free()
	freed := time.Now()
	if releasePooled(freed.Add(-idleRelease)) || Pooled() != regionSize {
		t.Fatalf("a region freed just now was released (Pooled %d)", Pooled())
	}
	if !releasePooled(freed.Add(time.Second)) || Pooled() != 0 {
		t.Fatalf("a region idle past the cutoff was kept (Pooled %d)", Pooled())
	}
}

func TestLargeSliceGetsARegionOfItsOwn(t *testing.T) {
	skipOffLinux(t)
	var a Arena
	defer a.Free()
	n := regionSize + 1
	s := Make[byte](&a, n)
	if s == nil {
		t.Fatal("refused")
	}
	s = s[:n]
	s[0], s[n-1] = 1, 2
	if got, want := a.Mapped(), int64(regionSize+hugePage); got != want {
		t.Fatalf("Mapped %d, want %d (rounded up to a huge page)", got, want)
	}
}

func TestArenasInParallelStayWithinBudget(t *testing.T) {
	start := withBudget(t, 3*regionSize)
	var wg sync.WaitGroup
	got := make([]int, 8)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var a Arena
			for Make[int64](&a, 1<<16) != nil { // 512 KB each
				got[g]++
			}
			if m := a.Mapped(); m > limit {
				t.Errorf("one arena mapped %d past the budget %d", m, limit)
			}
			if m := mapped.Load(); m > limit {
				t.Errorf("%d bytes mapped, past the budget %d", m, limit)
			}
			a.Free()
		}()
	}
	wg.Wait()
	if InUse() != start {
		t.Fatalf("InUse %d after every Free, want %d", InUse(), start)
	}
}

func TestPoolTimerReleasesIdleRegions(t *testing.T) {
	skipOffLinux(t)
	drainPool(t)
	defer func(d time.Duration) { idleRelease, testHookTrimmed = d, nil }(idleRelease)
	trimmed := make(chan struct{}, 16)
	idleRelease = time.Millisecond
	testHookTrimmed = func() { trimmed <- struct{}{} }
	var a Arena
	if Make[int64](&a, 10) == nil {
		t.Fatal("refused")
	}
	a.Free()
	deadline := time.After(10 * time.Second)
	for Pooled() != 0 {
		select {
		case <-trimmed:
		case <-deadline:
			t.Fatalf("the pool's timer left %d bytes mapped", Pooled())
		}
	}
}

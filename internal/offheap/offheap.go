// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package offheap maps memory for large tables of pointer-free records
// outside the Go heap, within a small process-wide budget, and hands it
// back to the kernel as soon as its owner is done.
//
// Why: the Kineto import keeps one fixed-size record per trace event until
// the trace is built (12 MB for a 54 MB trace). On the Go heap those
// records are live data the collector lets the heap grow to twice of
// (GOGC=100), and every one of their pages is first touched one 4 KiB page
// at a time. Mapped here, they take no part in the collector's pacing and
// are advised onto transparent huge pages, one first touch per 2 MiB where
// the kernel allows it (transparent_hugepage "madvise" or "always").
//
// The cost is visibility: GOMEMLIMIT and the memory_limiter processor see
// only the Go heap. The budget (Budget, shared by every Arena of the
// process) keeps what they cannot see small and bounded: past it, Make
// returns nil and the caller allocates on the Go heap as before, where
// they do see it.
//
// Safety: only element types without pointers are placed here (Make
// refuses the others: the collector does not scan this memory), and Free
// unmaps it, so a slice from an Arena must not be used after its Free.
package offheap

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Budget is the most memory all arenas of the process hold mapped at
// once: 32 MiB, the records of a trace of about 150 MB, or of several
// smaller ones imported side by side. The Helm chart leaves a fifth of the
// container's memory limit (102 MiB of the default 512) outside
// GOMEMLIMIT, for memory the Go runtime does not manage: this fits in it
// beside the binary's resident pages.
const Budget = 32 << 20

// regionSize is the unit an Arena maps (and takes from the budget): two
// huge pages, so that a 54 MB trace's 10.5 MB of records take three.
const regionSize = 4 << 20

// hugePage is the size transparent huge pages come in on x86-64 and on
// arm64 with 4 KiB base pages; regions start on a multiple of it so that
// each can be backed by whole huge pages.
const hugePage = 2 << 20

// align is the alignment of every slice handed out: a cache line, more
// than any element type needs.
const align = 64

var (
	// limit is Budget; tests lower it.
	limit  = int64(Budget)
	inUse  atomic.Int64 // bytes mapped by all arenas, against limit
	refuse atomic.Bool  // the platform cannot map (set after a failure)
)

// InUse reports the bytes all arenas of the process hold mapped now.
func InUse() int64 { return inUse.Load() }

// Arena hands out slices of memory it maps outside the Go heap, region by
// region, and unmaps them all in Free. The zero value is ready to use. An
// Arena is used by one goroutine at a time.
type Arena struct {
	regions []region
	free    uintptr // unused bytes at the end of the newest region
	next    unsafe.Pointer
}

type region struct {
	base unsafe.Pointer
	size uintptr
}

// Make returns a slice of length 0 and capacity n whose elements live in
// memory a maps, zeroed. It returns nil, and the caller allocates on the
// Go heap instead, when a is nil, n is not positive, E holds pointers,
// mapping another region would take the process past Budget, or the
// platform does not map anonymous memory.
func Make[E any](a *Arena, n int) []E {
	var zero E
	size := unsafe.Sizeof(zero)
	if a == nil || n <= 0 || size == 0 || hasPointers(reflect.TypeFor[E]()) {
		return nil
	}
	if uintptr(n) > (1<<62)/size {
		return nil
	}
	p := a.alloc(uintptr(n) * size)
	if p == nil {
		return nil
	}
	return unsafe.Slice((*E)(p), n)[:0]
}

// alloc returns size bytes (zeroed: fresh anonymous memory is, and memory
// is never reused before Free) aligned to align, or nil.
func (a *Arena) alloc(size uintptr) unsafe.Pointer {
	size = (size + align - 1) &^ (align - 1)
	if size > a.free {
		want := max(uintptr(regionSize), (size+hugePage-1)&^(hugePage-1))
		if refuse.Load() || inUse.Add(int64(want)) > limit {
			inUse.Add(-int64(want))
			return nil
		}
		base, err := mapRegion(want)
		if err != nil {
			inUse.Add(-int64(want))
			refuse.Store(true)
			return nil
		}
		// The rest of the previous region stays unused: slices are
		// small next to a region, so little is lost.
		a.regions = append(a.regions, region{base, want})
		a.next, a.free = base, want
	}
	p := a.next
	a.next, a.free = unsafe.Add(a.next, size), a.free-size
	return p
}

// Mapped reports the bytes a holds mapped.
func (a *Arena) Mapped() int64 {
	var n int64
	for _, r := range a.regions {
		n += int64(r.size)
	}
	return n
}

// Free unmaps everything a handed out, which must not be used again, and
// returns it to the budget. a can be used again afterwards; Free on an
// empty Arena does nothing.
func (a *Arena) Free() {
	for _, r := range a.regions {
		unmapRegion(r.base, r.size)
		inUse.Add(-int64(r.size))
	}
	*a = Arena{}
}

// pointerFree caches hasPointers by type: Make is called once per table
// chunk, with a handful of types.
var pointerFree sync.Map // reflect.Type -> bool (true: holds pointers)

// hasPointers reports whether values of t hold anything the Go collector
// must see: pointers, slices, strings, maps, channels, functions,
// interfaces.
func hasPointers(t reflect.Type) bool {
	if v, ok := pointerFree.Load(t); ok {
		return v.(bool)
	}
	has := walkPointers(t)
	pointerFree.Store(t, has)
	return has
}

func walkPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && walkPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if walkPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	// Pointers, unsafe.Pointer, uintptr (may hide one), slices,
	// strings, maps, channels, functions, interfaces.
	return true
}

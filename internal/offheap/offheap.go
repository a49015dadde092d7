// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package offheap maps memory for large tables of pointer-free records
// outside the Go heap, within a small process-wide budget. What an owner
// gives back waits, mapped, for the next owner, and goes back to the
// kernel after idleRelease unused.
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
// refuses the others: the collector does not scan this memory), and after
// Free the memory is another Arena's or unmapped, so a slice from an
// Arena must not be used after its Free.
package offheap

import (
	"reflect"
	"sync"
	"sync/atomic"
	"time"
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
	mapped atomic.Int64 // bytes mapped, in arenas and in the pool, against limit
	pooled atomic.Int64 // of which in the pool
	refuse atomic.Bool  // the platform cannot map (set after a failure)
)

// InUse reports the bytes the arenas of the process hold now, not
// counting the regions kept for reuse (Pooled).
func InUse() int64 { return mapped.Load() - pooled.Load() }

// Held reports all the bytes the process holds mapped here: InUse and
// Pooled, what counts against Budget.
func Held() int64 { return mapped.Load() }

// Pooled reports the bytes of regions given back by Free and kept mapped
// for the next Arena.
func Pooled() int64 { return pooled.Load() }

// idleRelease is how long a region given back stays mapped for reuse.
//
// Why keep any: a long-lived collector imports one trace after another,
// and on the Go heap a later import writes to pages an earlier one
// faulted in; unmapped by every Free, each import's tables were faulted
// in again. Ten imports of the 54 MB trace in one process (kinetoparse
// -import -repeat 10, 3 runs each) took 50,124-52,172 first touches
// without the pool and 25,981-29,612 with it where huge pages are not
// used (system time 0.88-0.91 against 0.75-0.81 s); with huge pages,
// 22,676-26,466 against 21,484-24,544. Why not for long: an agent that
// imported one trace holds the memory until then, as the Go heap holds
// memory until its scavenger returns it.
var idleRelease = 30 * time.Second // a variable for tests

// pool holds the regions of regionSize given back by Free, newest last.
var pool struct {
	sync.Mutex
	regions []pooledRegion
	timer   *time.Timer // runs trimPool while regions wait
}

type pooledRegion struct {
	base    unsafe.Pointer
	freedAt time.Time
}

// Arena hands out slices of memory mapped outside the Go heap, region by
// region (from the pool when one waits there), and gives them all back in
// Free. The zero value is ready to use. An Arena is used by one goroutine
// at a time.
type Arena struct {
	regions []region
	free    uintptr // unused bytes at the end of the newest region
	next    unsafe.Pointer
	dirty   bool // the newest region came from the pool: clear what is handed out
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

// alloc returns size bytes aligned to align, zeroed (fresh anonymous
// memory is zero; what a pooled region hands out is cleared), or nil.
func (a *Arena) alloc(size uintptr) unsafe.Pointer {
	size = (size + align - 1) &^ (align - 1)
	if size > a.free {
		want := max(uintptr(regionSize), (size+hugePage-1)&^(hugePage-1))
		base, dirty := unsafe.Pointer(nil), false
		if want == regionSize {
			base = takePooled()
			dirty = base != nil
		}
		if base == nil {
			base = mapWithinBudget(want)
			if base == nil {
				return nil
			}
		}
		// The rest of the previous region stays unused: slices are
		// small next to a region, so little is lost.
		a.regions = append(a.regions, region{base, want})
		a.next, a.free, a.dirty = base, want, dirty
	}
	p := a.next
	a.next, a.free = unsafe.Add(a.next, size), a.free-size
	if a.dirty {
		clear(unsafe.Slice((*byte)(p), size))
	}
	return p
}

// mapWithinBudget maps size bytes if the budget has room (nil if not, or
// if the platform refuses).
func mapWithinBudget(size uintptr) unsafe.Pointer {
	if refuse.Load() {
		return nil
	}
	if mapped.Add(int64(size)) > limit {
		mapped.Add(-int64(size))
		// Regions waiting in the pool hold budget no Arena uses: give
		// them back and try once more.
		if !releasePooled(time.Time{}) {
			return nil
		}
		if mapped.Add(int64(size)) > limit {
			mapped.Add(-int64(size))
			return nil
		}
	}
	base, err := mapRegion(size)
	if err != nil {
		mapped.Add(-int64(size))
		refuse.Store(true)
		return nil
	}
	return base
}

// takePooled returns the region given back last (its pages most likely
// still resident), or nil.
func takePooled() unsafe.Pointer {
	pool.Lock()
	defer pool.Unlock()
	n := len(pool.regions)
	if n == 0 {
		return nil
	}
	r := pool.regions[n-1]
	pool.regions = pool.regions[:n-1]
	pooled.Add(-regionSize)
	return r.base
}

// releasePooled unmaps the pooled regions given back before cutoff (all
// of them for the zero time) and reports whether it unmapped any.
func releasePooled(cutoff time.Time) bool {
	pool.Lock()
	defer pool.Unlock()
	kept := pool.regions[:0]
	released := false
	for _, r := range pool.regions {
		if cutoff.IsZero() || r.freedAt.Before(cutoff) {
			unmapRegion(r.base, regionSize)
			pooled.Add(-regionSize)
			mapped.Add(-regionSize)
			released = true
			continue
		}
		kept = append(kept, r)
	}
	clear(pool.regions[len(kept):])
	pool.regions = kept
	if len(kept) > 0 && pool.timer != nil {
		pool.timer.Reset(time.Until(kept[0].freedAt.Add(idleRelease)))
	}
	return released
}

// trimPool unmaps the regions idle for idleRelease (the pool's timer).
func trimPool() {
	releasePooled(time.Now().Add(-idleRelease))
	if testHookTrimmed != nil {
		testHookTrimmed()
	}
}

// testHookTrimmed, when set (tests only), is called after each trimPool.
var testHookTrimmed func()

// Mapped reports the bytes a holds mapped.
func (a *Arena) Mapped() int64 {
	var n int64
	for _, r := range a.regions {
		n += int64(r.size)
	}
	return n
}

// Free gives back everything a handed out, which must not be used again:
// regions of the usual size wait, mapped, for the next Arena (for
// idleRelease at most), larger ones are unmapped. a can be used again
// afterwards; Free on an empty Arena does nothing.
func (a *Arena) Free() {
	now := time.Now()
	pool.Lock()
	defer pool.Unlock()
	for _, r := range a.regions {
		if r.size != regionSize {
			unmapRegion(r.base, r.size)
			mapped.Add(-int64(r.size))
			continue
		}
		pool.regions = append(pool.regions, pooledRegion{r.base, now})
		pooled.Add(regionSize)
		if pool.timer == nil {
			pool.timer = time.AfterFunc(idleRelease, trimPool)
		} else if len(pool.regions) == 1 {
			pool.timer.Reset(idleRelease)
		}
	}
	*a = Arena{}
}

// hasPointers reports whether values of t hold anything the Go collector
// must see: pointers, slices, strings, maps, channels, functions,
// interfaces. Make asks once per table chunk, so it is not cached.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	// Pointers, unsafe.Pointer, uintptr (may hide one), slices,
	// strings, maps, channels, functions, interfaces.
	return true
}

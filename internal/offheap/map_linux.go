// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package offheap

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapRegion maps size bytes (a multiple of hugePage) of private anonymous
// memory starting on a huge-page boundary and advises the kernel to back
// it with transparent huge pages.
func mapRegion(size uintptr) (unsafe.Pointer, error) {
	// Over-map by one huge page and trim both ends: mmap only promises a
	// base-page boundary, and a region off the 2 MiB grid could hold no
	// whole huge page.
	raw, err := unix.MmapPtr(-1, 0, nil, size+hugePage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	head := (hugePage - uintptr(raw)%hugePage) % hugePage
	if head > 0 {
		_ = unix.MunmapPtr(raw, head)
	}
	base := unsafe.Add(raw, head)
	if tail := hugePage - head; tail > 0 {
		_ = unix.MunmapPtr(unsafe.Add(base, size), tail)
	}
	// Advice only: a kernel without transparent huge pages, or with them
	// set to "never", answers EINVAL or ignores it, and the region is
	// backed by base pages as any other memory.
	_ = unix.Madvise(unsafe.Slice((*byte)(base), size), unix.MADV_HUGEPAGE)
	return base, nil
}

func unmapRegion(base unsafe.Pointer, size uintptr) {
	_ = unix.MunmapPtr(base, size)
}

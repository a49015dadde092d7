// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package offheap

import (
	"errors"
	"unsafe"
)

// Elsewhere than Linux (the agent ships for Linux only; other builds are
// for development) nothing is mapped: Make returns nil and tables stay on
// the Go heap.
func mapRegion(uintptr) (unsafe.Pointer, error) {
	return nil, errors.New("offheap: not mapped on this platform")
}

func unmapRegion(unsafe.Pointer, uintptr) {}

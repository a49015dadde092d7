// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver

import (
	"runtime"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// processUtilization reads a GPU's per-process utilization samples.
//
// go-nvml v0.13.4-1 asks NVML for the sample count, allocates that many, and
// asks again; when a new sample arrives between the two calls NVML answers
// INSUFFICIENT_SIZE with the larger count and go-nvml slices its buffer past
// its capacity, which panics. The scrape must not die of it: that panic is
// taken for what NVML said, INSUFFICIENT_SIZE, and the read is tried again
// (twice more; a sample a second cannot keep racing it).
func processUtilization(h nvml.Device, lastSeen uint64) (samples []nvml.ProcessUtilizationSample, ret nvml.Return) {
	for range 3 {
		samples, ret = tryProcessUtilization(h, lastSeen)
		if ret != nvml.ERROR_INSUFFICIENT_SIZE {
			return samples, ret
		}
	}
	return nil, ret
}

func tryProcessUtilization(h nvml.Device, lastSeen uint64) (samples []nvml.ProcessUtilizationSample, ret nvml.Return) {
	defer func() {
		if r := recover(); r != nil {
			if err, ok := r.(runtime.Error); ok && strings.Contains(err.Error(), "slice bounds out of range") {
				samples, ret = nil, nvml.ERROR_INSUFFICIENT_SIZE
				return
			}
			panic(r)
		}
	}()
	return h.GetProcessUtilization(lastSeen)
}

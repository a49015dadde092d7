// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// TestProcessUtilizationSurvivesGrowingCount: the slice-bounds panic
// go-nvml raises when NVML's sample count grows between its two calls is
// retried, not fatal; another panic is not swallowed.
func TestProcessUtilizationSurvivesGrowingCount(t *testing.T) {
	calls := 0
	d := &mock.Device{GetProcessUtilizationFunc: func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		calls++
		if calls == 1 {
			buf := make([]nvml.ProcessUtilizationSample, 2)
			n := 4
			return buf[:n], nvml.ERROR_INSUFFICIENT_SIZE // what go-nvml does: panics
		}
		return []nvml.ProcessUtilizationSample{{Pid: 7, SmUtil: 40}}, nvml.SUCCESS
	}}
	s, ret := processUtilization(d, 0)
	if ret != nvml.SUCCESS || len(s) != 1 || s[0].Pid != 7 || calls != 2 {
		t.Fatalf("got %v %v after %d calls", s, ret, calls)
	}

	other := &mock.Device{GetProcessUtilizationFunc: func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		panic("something else")
	}}
	defer func() {
		if r := recover(); r != "something else" {
			t.Fatalf("an unrelated panic was swallowed or changed: %v", r)
		}
	}()
	_, _ = processUtilization(other, 0)
}

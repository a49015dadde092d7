// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"sort"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kinetobuild"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/nsys"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// nsysAccount completes the analysis of an Nsight Systems export (its
// spans, kernels under launches under NVTX ranges, were taken as for a
// Kineto trace) with its event count, its clock and its memory per module
// path from the metrics, so summary and diff work on either format and
// across them.
func nsysAccount(a *analysis, sum nsys.Summary, md pmetric.Metrics) {
	a.clock = sum.Clock
	a.md.Events = sum.Kernels + sum.Memcpys + sum.Memsets + sum.RuntimeCalls + sum.NVTXRanges + sum.MemoryEvents
	type key struct {
		path   string
		device int64
	}
	mods := map[key]*kinetobuild.ModuleMemory{}
	eachPoint(md, func(name string, v float64, device int64, path string) {
		if path == "" || (name != spec.ProfileMemoryAllocated && name != spec.ProfileMemoryOutstanding) {
			return
		}
		m := mods[key{path, device}]
		if m == nil {
			m = &kinetobuild.ModuleMemory{ModulePath: path, Device: device}
			mods[key{path, device}] = m
		}
		if name == spec.ProfileMemoryAllocated {
			m.AllocatedBytes = int64(v)
		} else {
			m.OutstandingBytes = int64(v)
		}
	})
	for _, m := range mods {
		a.modules = append(a.modules, *m)
	}
	sort.Slice(a.modules, func(i, j int) bool {
		if a.modules[i].ModulePath != a.modules[j].ModulePath {
			return a.modules[i].ModulePath < a.modules[j].ModulePath
		}
		return a.modules[i].Device < a.modules[j].Device
	})
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
)

// SummarySchema names the version of the summary JSON; it changes only
// when a field changes meaning or goes away (new fields may be added).
const SummarySchema = "llmprof.summary/v1"

// Summary is the output of `llmprof summary --json`. Times are integer
// nanoseconds, sizes integer bytes, fractions in [0, 1] with 4 decimals.
type Summary struct {
	Schema string    `json:"schema"`
	File   string    `json:"file"`
	Trace  TraceInfo `json:"trace"`
	// GPUTimeTotalNs is the sum of all kernel/memcpy/memset durations, the
	// denominator of ModuleGPU.Share.
	GPUTimeTotalNs int64 `json:"gpu_time_total_ns"`
	// ModulesByGPUTime: the top N module paths by GPU time.
	ModulesByGPUTime []ModuleGPU `json:"modules_by_gpu_time"`
	// ModulesByMemory: the top N (module path, device) by peak outstanding
	// bytes.
	ModulesByMemory []ModuleMem `json:"modules_by_memory"`
	// LeakSuspects: the receiver's leak suspects (at most 5, at least 1 MiB
	// outstanding), largest first.
	LeakSuspects []LeakSuspect `json:"leak_suspects"`
	Steps        Steps         `json:"steps"`
	Devices      []DeviceIdle  `json:"gpu_idle"`
}

// TraceInfo is the trace's metadata.
type TraceInfo struct {
	// KinetoTraceID is "trace_id" as the file writes it ("" when absent);
	// TraceID the OTLP trace id the receiver gives the profile.
	KinetoTraceID string `json:"kineto_trace_id"`
	TraceID       string `json:"trace_id"`
	TraceName     string `json:"trace_name"`
	// Rank and WorldSize are null when the file has no distributedInfo.
	Rank      *int64 `json:"rank"`
	WorldSize *int64 `json:"world_size"`
	GPUs      []GPU  `json:"gpus"`
	Events    int64  `json:"events"`
	// Spans is the span count with no span budget (summary counts every
	// kernel); the receiver and export keep at most 100,000.
	Spans    int64   `json:"spans"`
	StartNs  int64   `json:"window_start_unix_ns"`
	WindowNs int64   `json:"window_ns"`
	Extra    []Extra `json:"metadata"`
	// Clock says which clock the times are on, when the file leaves a
	// choice (an Nsight Systems export: session start + offset, or
	// relative to the session start when the export has no start time).
	Clock string `json:"clock,omitempty"`
}

// GPU is one entry of deviceProperties.
type GPU struct {
	ID               int64  `json:"id"`
	Name             string `json:"name"`
	TotalMemoryBytes int64  `json:"total_memory_bytes"`
}

// Extra is one user/unknown top-level key of the trace.
type Extra struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ModuleMem is the GPU memory account of one (module path, device).
type ModuleMem struct {
	ModulePath             string `json:"module_path"`
	Device                 int64  `json:"device"`
	AllocatedBytes         int64  `json:"allocated_bytes"`
	Allocations            int64  `json:"allocations"`
	PeakBytes              int64  `json:"peak_bytes"`
	OutstandingBytes       int64  `json:"outstanding_bytes"`
	OutstandingAllocations int64  `json:"outstanding_allocations"`
}

// Steps are the ProfilerStep#N annotations.
type Steps struct {
	Count   int64  `json:"count"`
	TotalNs int64  `json:"total_ns"`
	MeanNs  int64  `json:"mean_ns"`
	MinNs   int64  `json:"min_ns"`
	MaxNs   int64  `json:"max_ns"`
	List    []Step `json:"list"`
}

// Step is one profiler step.
type Step struct {
	Name       string `json:"name"`
	StartNs    int64  `json:"start_unix_ns"`
	DurationNs int64  `json:"duration_ns"`
}

// summarize turns an analysis into a Summary with top rows per table.
func summarize(a *analysis, top int) *Summary {
	s := &Summary{Schema: SummarySchema, File: a.file}
	md := &a.md
	s.Trace = TraceInfo{KinetoTraceID: md.TraceID, TraceID: a.traceID, TraceName: md.TraceName,
		Events: md.Events, Spans: a.spans, StartNs: a.winStart, WindowNs: a.winEnd - a.winStart,
		GPUs: []GPU{}, Extra: []Extra{}, Clock: a.clock}
	if md.Rank >= 0 {
		r := md.Rank
		s.Trace.Rank = &r
	}
	if md.WorldSize >= 0 {
		w := md.WorldSize
		s.Trace.WorldSize = &w
	}
	for _, d := range md.Devices {
		s.Trace.GPUs = append(s.Trace.GPUs, GPU{ID: d.ID, Name: d.Name, TotalMemoryBytes: d.TotalGlobalMem})
	}
	for _, kv := range md.Extra {
		s.Trace.Extra = append(s.Trace.Extra, Extra{Key: kv.Key, Value: kv.Value})
	}

	gpu, total := a.gpuByModule()
	s.GPUTimeTotalNs = total
	s.ModulesByGPUTime = head(gpu, top)

	mem := make([]ModuleMem, 0, len(a.modules))
	for _, m := range a.modules {
		mem = append(mem, ModuleMem{ModulePath: m.ModulePath, Device: m.Device, AllocatedBytes: m.AllocatedBytes,
			Allocations: m.Allocations, PeakBytes: m.PeakOutstandingBytes, OutstandingBytes: m.OutstandingBytes,
			OutstandingAllocations: m.OutstandingAllocations})
	}
	slices.SortFunc(mem, func(x, y ModuleMem) int {
		if c := cmp.Compare(y.PeakBytes, x.PeakBytes); c != 0 {
			return c
		}
		if c := cmp.Compare(y.AllocatedBytes, x.AllocatedBytes); c != 0 {
			return c
		}
		if c := cmp.Compare(x.ModulePath, y.ModulePath); c != 0 {
			return c
		}
		return cmp.Compare(x.Device, y.Device)
	})
	s.ModulesByMemory = head(mem, top)
	s.LeakSuspects = a.leaks
	if s.LeakSuspects == nil {
		s.LeakSuspects = []LeakSuspect{}
	}

	s.Steps.List = slices.Clone(a.steps)
	if s.Steps.List == nil {
		s.Steps.List = []Step{}
	}
	slices.SortStableFunc(s.Steps.List, func(x, y Step) int { return cmp.Compare(x.StartNs, y.StartNs) })
	for i, st := range s.Steps.List {
		s.Steps.Count++
		s.Steps.TotalNs += st.DurationNs
		if i == 0 || st.DurationNs < s.Steps.MinNs {
			s.Steps.MinNs = st.DurationNs
		}
		s.Steps.MaxNs = max(s.Steps.MaxNs, st.DurationNs)
	}
	if s.Steps.Count > 0 {
		s.Steps.MeanNs = s.Steps.TotalNs / s.Steps.Count
	}
	s.Devices = a.idle()
	if s.Devices == nil {
		s.Devices = []DeviceIdle{}
	}
	return s
}

// head returns the first n rows (all when n <= 0), never nil so that the
// JSON has [] rather than null.
func head[T any](rows []T, n int) []T {
	if n > 0 && len(rows) > n {
		rows = rows[:n]
	}
	if rows == nil {
		return []T{}
	}
	return rows
}

// writeSummary prints the summary as fixed-width tables.
func writeSummary(w io.Writer, s *Summary, st style) {
	t := &s.Trace
	// Terminal output (here and below in this file): a write to stdout or
	// stderr that fails has nowhere to be reported, so its error is dropped.
	_, _ = fmt.Fprintf(w, "%s\n", st.bold(s.File))
	kv := [][2]string{
		{"trace id", orDash(t.TraceID)},
		{"kineto trace_id", orDash(t.KinetoTraceID)},
		{"rank / world size", optInt(t.Rank) + " / " + optInt(t.WorldSize)},
		{"window", formatDuration(t.WindowNs)},
	}
	if t.Clock != "" {
		kv = append(kv, [2]string{"times", t.Clock})
	}
	kv = append(kv, [][2]string{
		{"events / spans", strconv.FormatInt(t.Events, 10) + " / " + strconv.FormatInt(t.Spans, 10)},
		{"GPU time (all)", formatDuration(s.GPUTimeTotalNs)},
	}...)
	for _, g := range t.GPUs {
		kv = append(kv, [2]string{"GPU " + strconv.FormatInt(g.ID, 10), g.Name + " (" + signals.FormatBytes(g.TotalMemoryBytes) + ")"})
	}
	if len(t.GPUs) == 0 {
		kv = append(kv, [2]string{"GPUs", "-"})
	}
	kvWidth := 0
	for _, x := range kv {
		kvWidth = max(kvWidth, width(x[0]))
	}
	for _, x := range kv {
		_, _ = fmt.Fprintf(w, "  %s  %s\n", pad(x[0], kvWidth, false), x[1])
	}

	section(w, st, "Top modules by GPU time")
	if len(s.ModulesByGPUTime) == 0 {
		_, _ = fmt.Fprintln(w, "  (no kernels, memcpy or memset in this trace)")
	} else {
		tb := table{head: []string{"module path", "GPU time", "share", "kernels"}, right: []bool{false, true, true, true}}
		for _, m := range s.ModulesByGPUTime {
			tb.add(clip(m.ModulePath), formatDuration(m.GPUTimeNs), fmt.Sprintf("%.1f%%", m.Share*100), strconv.FormatInt(m.Kernels, 10))
		}
		tb.write(w, st)
	}

	section(w, st, "Top modules by GPU memory")
	if len(s.ModulesByMemory) == 0 {
		_, _ = fmt.Fprintln(w, "  (no GPU [memory] events: record with profile_memory=True)")
	} else {
		tb := table{head: []string{"module path", "dev", "allocated", "peak", "outstanding", "allocs"},
			right: []bool{false, true, true, true, true, true}}
		for _, m := range s.ModulesByMemory {
			tb.add(clip(m.ModulePath), strconv.FormatInt(m.Device, 10), signals.FormatBytes(m.AllocatedBytes),
				signals.FormatBytes(m.PeakBytes), signals.FormatBytes(m.OutstandingBytes), strconv.FormatInt(m.Allocations, 10))
		}
		tb.write(w, st)
	}

	section(w, st, "Outstanding allocations (leak suspects)")
	if len(s.LeakSuspects) == 0 {
		_, _ = fmt.Fprintln(w, "  (none at or above 1 MiB)")
	} else {
		tb := table{head: []string{"module path", "dev", "outstanding", "allocs", "allocated"}, right: []bool{false, true, true, true, true}}
		for _, l := range s.LeakSuspects {
			tb.add(st.warn(clip(l.ModulePath)), strconv.FormatInt(l.Device, 10), signals.FormatBytes(l.OutstandingBytes),
				strconv.FormatInt(l.OutstandingAllocations, 10), signals.FormatBytes(l.AllocatedBytes))
		}
		tb.write(w, st)
	}

	section(w, st, "Steps")
	if s.Steps.Count == 0 {
		_, _ = fmt.Fprintln(w, "  (no ProfilerStep#N annotations)")
	} else {
		_, _ = fmt.Fprintf(w, "  %d steps, mean %s, min %s, max %s\n", s.Steps.Count, formatDuration(s.Steps.MeanNs),
			formatDuration(s.Steps.MinNs), formatDuration(s.Steps.MaxNs))
		tb := table{head: []string{"step", "duration"}, right: []bool{false, true}}
		for _, x := range head(s.Steps.List, 20) {
			tb.add(x.Name, formatDuration(x.DurationNs))
		}
		tb.write(w, st)
		if len(s.Steps.List) > 20 {
			_, _ = fmt.Fprintf(w, "  … %d more (--json lists all)\n", len(s.Steps.List)-20)
		}
	}

	section(w, st, "GPU idle time")
	if len(s.Devices) == 0 {
		_, _ = fmt.Fprintln(w, "  (no GPU activity)")
	} else {
		tb := table{head: []string{"device", "busy", "idle", "idle %", "activities"}, right: []bool{true, true, true, true, true}}
		for _, d := range s.Devices {
			tb.add(strconv.FormatInt(d.Device, 10), formatDuration(d.BusyNs), formatDuration(d.IdleNs),
				fmt.Sprintf("%.1f%%", d.IdleFraction*100), strconv.FormatInt(d.Activities, 10))
		}
		tb.write(w, st)
	}
}

func optInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

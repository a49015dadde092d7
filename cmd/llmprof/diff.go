// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
)

// DiffSchema names the version of the diff JSON (see SummarySchema).
const DiffSchema = "llmprof.diff/v1"

// Diff is the output of `llmprof diff --json`.
type Diff struct {
	Schema string `json:"schema"`
	Base   string `json:"base"`
	New    string `json:"new"`
	// SortedBy is "gpu_time" or "memory".
	SortedBy string `json:"sorted_by"`
	// Total sums every module path (not only the rows listed).
	Total DiffRow `json:"total"`
	// Modules: the top N paths by absolute change (see SortedBy).
	Modules []DiffRow `json:"modules"`
	// ModulesCompared is the number of paths present on either side.
	ModulesCompared int `json:"modules_compared"`
}

// DiffRow compares one module path (memory summed over devices).
type DiffRow struct {
	ModulePath string `json:"module_path"`
	// Status is "both", "new" (only in NEW) or "gone" (only in BASE).
	Status           string `json:"status"`
	GPUTimeNs        Change `json:"gpu_time_ns"`
	AllocatedBytes   Change `json:"allocated_bytes"`
	OutstandingBytes Change `json:"outstanding_bytes"`
}

// Change is one figure before and after. DeltaPct is (new-base)/base*100
// rounded to 0.1, null when the path is new or gone or base is 0 (with new
// not 0).
type Change struct {
	Base     int64    `json:"base"`
	New      int64    `json:"new"`
	Delta    int64    `json:"delta"`
	DeltaPct *float64 `json:"delta_pct"`
}

type moduleFigures struct {
	gpu, alloc, outstanding int64
}

// figures sums one file's GPU time and memory per module path.
func figures(a *analysis) map[string]*moduleFigures {
	out := make(map[string]*moduleFigures)
	get := func(p string) *moduleFigures {
		f := out[p]
		if f == nil {
			f = &moduleFigures{}
			out[p] = f
		}
		return f
	}
	rows, _ := a.gpuByModule()
	for _, r := range rows {
		get(r.ModulePath).gpu += r.GPUTimeNs
	}
	for _, m := range a.modules {
		f := get(m.ModulePath)
		f.alloc += m.AllocatedBytes
		f.outstanding += m.OutstandingBytes
	}
	return out
}

func change(base, newer int64, status string) Change {
	c := Change{Base: base, New: newer, Delta: newer - base}
	switch {
	case status != "both":
	case base != 0:
		p := math.Round(float64(newer-base)/float64(base)*1000) / 10
		c.DeltaPct = &p
	case newer == 0:
		p := 0.0
		c.DeltaPct = &p
	}
	return c
}

func abs(v int64) int64 { return max(v, -v) }

// compare builds the diff of two analyses, sorted by absolute change of GPU
// time (byMemory: of allocated bytes, then of outstanding bytes), ties by
// path.
func compare(base, nw *analysis, byMemory bool, top int) *Diff {
	fb, fn := figures(base), figures(nw)
	paths := make([]string, 0, len(fb)+len(fn))
	for p := range fb {
		paths = append(paths, p)
	}
	for p := range fn {
		if fb[p] == nil {
			paths = append(paths, p)
		}
	}
	d := &Diff{Schema: DiffSchema, Base: base.file, New: nw.file, SortedBy: "gpu_time", ModulesCompared: len(paths)}
	if byMemory {
		d.SortedBy = "memory"
	}
	var tb, tn moduleFigures
	rows := make([]DiffRow, 0, len(paths))
	for _, p := range paths {
		b, n := fb[p], fn[p]
		status := "both"
		switch {
		case b == nil:
			status, b = "new", &moduleFigures{}
		case n == nil:
			status, n = "gone", &moduleFigures{}
		}
		tb.gpu, tb.alloc, tb.outstanding = tb.gpu+b.gpu, tb.alloc+b.alloc, tb.outstanding+b.outstanding
		tn.gpu, tn.alloc, tn.outstanding = tn.gpu+n.gpu, tn.alloc+n.alloc, tn.outstanding+n.outstanding
		rows = append(rows, DiffRow{ModulePath: p, Status: status,
			GPUTimeNs:        change(b.gpu, n.gpu, status),
			AllocatedBytes:   change(b.alloc, n.alloc, status),
			OutstandingBytes: change(b.outstanding, n.outstanding, status)})
	}
	d.Total = DiffRow{ModulePath: "(total)", Status: "both", GPUTimeNs: change(tb.gpu, tn.gpu, "both"),
		AllocatedBytes: change(tb.alloc, tn.alloc, "both"), OutstandingBytes: change(tb.outstanding, tn.outstanding, "both")}
	slices.SortFunc(rows, func(x, y DiffRow) int {
		var c int
		if byMemory {
			c = cmp.Compare(abs(y.AllocatedBytes.Delta), abs(x.AllocatedBytes.Delta))
			if c == 0 {
				c = cmp.Compare(abs(y.OutstandingBytes.Delta), abs(x.OutstandingBytes.Delta))
			}
		} else {
			c = cmp.Compare(abs(y.GPUTimeNs.Delta), abs(x.GPUTimeNs.Delta))
		}
		if c != 0 {
			return c
		}
		return cmp.Compare(x.ModulePath, y.ModulePath)
	})
	d.Modules = head(rows, top)
	return d
}

// pct renders Δ% for the table: new/gone for a path on one side only.
func pct(c Change, status string, st style) string {
	switch {
	case status == "new":
		return st.warn("new")
	case status == "gone":
		return st.green("gone")
	case c.DeltaPct == nil:
		return "n/a"
	case *c.DeltaPct > 0:
		return st.red(fmt.Sprintf("%+.1f%%", *c.DeltaPct))
	case *c.DeltaPct < 0:
		return st.green(fmt.Sprintf("%+.1f%%", *c.DeltaPct))
	}
	return "0.0%"
}

func writeDiff(w io.Writer, d *Diff, st style) {
	// Terminal output (here and below in this file): a write to stdout or
	// stderr that fails has nowhere to be reported, so its error is dropped.
	_, _ = fmt.Fprintf(w, "%s %s\n%s %s\n", st.dim("base:"), d.Base, st.dim("new: "), d.New)
	what := "GPU time"
	if d.SortedBy == "memory" {
		what = "allocated memory"
	}
	section(w, st, fmt.Sprintf("Module paths by change of %s (%d of %d)", what, len(d.Modules), d.ModulesCompared))
	tb := table{
		head:  []string{"module path", "GPU base", "GPU new", "Δ%", "alloc base", "alloc new", "Δ%", "outst. base", "outst. new", "Δ%"},
		right: []bool{false, true, true, true, true, true, true, true, true, true},
	}
	// A side where the path does not exist shows "-", not a zero that
	// would read as measured.
	side := func(status, absent string, s string) string {
		if status == absent {
			return "-"
		}
		return s
	}
	row := func(r DiffRow, name string) {
		tb.add(name,
			side(r.Status, "new", formatDuration(r.GPUTimeNs.Base)), side(r.Status, "gone", formatDuration(r.GPUTimeNs.New)),
			pct(r.GPUTimeNs, r.Status, st),
			side(r.Status, "new", signals.FormatBytes(r.AllocatedBytes.Base)), side(r.Status, "gone", signals.FormatBytes(r.AllocatedBytes.New)),
			pct(r.AllocatedBytes, r.Status, st),
			side(r.Status, "new", signals.FormatBytes(r.OutstandingBytes.Base)), side(r.Status, "gone", signals.FormatBytes(r.OutstandingBytes.New)),
			pct(r.OutstandingBytes, r.Status, st))
	}
	for _, r := range d.Modules {
		row(r, clip(r.ModulePath))
	}
	row(d.Total, st.bold("(total, all "+strconv.Itoa(d.ModulesCompared)+" paths)"))
	tb.write(w, st)
}

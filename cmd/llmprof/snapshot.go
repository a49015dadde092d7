// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"sort"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/pdatautil"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/snapshot"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// SnapshotSchema names the JSON of `llmprof summary --json` on a CUDA
// memory snapshot.
const SnapshotSchema = "llmprof.snapshot/v1"

// SnapshotSummary is `llmprof summary` of a CUDA memory snapshot: what the
// receiver would emit, arranged for a person. Bytes are integers.
type SnapshotSummary struct {
	Schema  string           `json:"schema"`
	File    string           `json:"file"`
	Counts  snapshot.Summary `json:"counts"`
	Devices []DeviceState    `json:"devices"`
	// Sites: outstanding bytes per allocation site and device, largest
	// first.
	Sites        []SiteBytes  `json:"sites"`
	LeakSuspects []SnapRecord `json:"leak_suspects"`
	OOMs         []SnapRecord `json:"ooms"`
}

// DeviceState is the caching allocator of one device at the snapshot.
type DeviceState struct {
	Device           int64   `json:"device"`
	Reserved         int64   `json:"reserved_bytes"`
	Allocated        int64   `json:"allocated_bytes"`
	LargestFreeBlock int64   `json:"largest_free_block_bytes"`
	Fragmentation    float64 `json:"fragmentation"`
}

// SiteBytes is one allocation site's outstanding memory.
type SiteBytes struct {
	Site        string `json:"site"`
	Device      int64  `json:"device"`
	Outstanding int64  `json:"outstanding_bytes"`
}

// SnapRecord is a leak suspect or an OOM, as its log record says.
type SnapRecord struct {
	Body    string `json:"summary"`
	Site    string `json:"site,omitempty"`
	TraceID string `json:"trace_id,omitempty"`
}

// summarizeSnapshot arranges a loaded memory snapshot's metrics and logs.
func summarizeSnapshot(path string, l *loaded, top int) *SnapshotSummary {
	s := &SnapshotSummary{Schema: SnapshotSchema, File: path, Counts: l.res.Snapshot}
	devs := map[int64]*DeviceState{}
	dev := func(d int64) *DeviceState {
		if devs[d] == nil {
			devs[d] = &DeviceState{Device: d}
		}
		return devs[d]
	}
	eachPoint(l.md, func(name string, v float64, device int64, site string) {
		switch name {
		case spec.ProfileMemoryOutstanding:
			s.Sites = append(s.Sites, SiteBytes{Site: site, Device: device, Outstanding: int64(v)})
		case spec.ProfileAllocatorFragmentation:
			dev(device).Fragmentation = v
		case spec.ProfileAllocatorLargestFreeBlock:
			dev(device).LargestFreeBlock = int64(v)
		case spec.ProfileMemoryTotalReserved:
			dev(device).Reserved = int64(v) // the last point: the state at the snapshot
		case spec.ProfileMemoryTotalAllocated:
			dev(device).Allocated = int64(v)
		}
	})
	for _, d := range devs {
		s.Devices = append(s.Devices, *d)
	}
	sort.Slice(s.Devices, func(i, j int) bool { return s.Devices[i].Device < s.Devices[j].Device })
	sort.SliceStable(s.Sites, func(i, j int) bool { return s.Sites[i].Outstanding > s.Sites[j].Outstanding })
	s.Sites = head(s.Sites, top)
	rls := l.ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				r := SnapRecord{Body: lr.Body().AsString(), Site: strAttr(lr.Attributes(), spec.AttrProfileModulePath)}
				if !lr.TraceID().IsEmpty() {
					r.TraceID = lr.TraceID().String()
				}
				if lr.SeverityNumber() >= plog.SeverityNumberError {
					s.OOMs = append(s.OOMs, r)
				} else {
					s.LeakSuspects = append(s.LeakSuspects, r)
				}
			}
		}
	}
	return s
}

// eachPoint visits every number point with its device and module path.
func eachPoint(md pmetric.Metrics, fn func(name string, v float64, device int64, site string)) {
	pdatautil.EachMetric(md, func(m pmetric.Metric) {
		dps, ok := pdatautil.NumberPoints(m)
		if !ok {
			return
		}
		for p := 0; p < dps.Len(); p++ {
			dp := dps.At(p)
			v := dp.DoubleValue()
			if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
				v = float64(dp.IntValue())
			}
			d := int64(-1)
			if dv, ok := dp.Attributes().Get(spec.AttrProfileDevice); ok {
				d = dv.Int()
			}
			fn(m.Name(), v, d, strAttr(dp.Attributes(), spec.AttrProfileModulePath))
		}
	})
}

func writeSnapshotSummary(w io.Writer, s *SnapshotSummary, st style) {
	c := s.Counts
	// Terminal output (here and below in this file): a write to stdout or
	// stderr that fails has nowhere to be reported, so its error is dropped.
	_, _ = fmt.Fprintf(w, "%s\n", st.bold(s.File))
	_, _ = fmt.Fprintf(w, "  CUDA memory snapshot (%s): %d segments, %d blocks (%d active), %d trace entries, %d OOM(s)\n",
		c.Format, c.Segments, c.Blocks, c.ActiveBlocks, c.TraceEntries, c.OOMs)
	_, _ = fmt.Fprintf(w, "  reserved %s, allocated %s, outstanding %s\n",
		signals.FormatBytes(c.ReservedBytes), signals.FormatBytes(c.AllocatedBytes), signals.FormatBytes(c.OutstandingBytes))
	section(w, st, "Allocator per device")
	t := &table{head: []string{"device", "reserved", "allocated", "largest free", "fragmentation"}, right: []bool{true, true, true, true, true}}
	for _, d := range s.Devices {
		t.add(fmt.Sprint(d.Device), signals.FormatBytes(d.Reserved), signals.FormatBytes(d.Allocated), signals.FormatBytes(d.LargestFreeBlock),
			fmt.Sprintf("%.1f%%", 100*d.Fragmentation))
	}
	t.write(w, st)
	section(w, st, "Outstanding memory by allocation site")
	t = &table{head: []string{"site", "dev", "outstanding"}, right: []bool{false, true, true}}
	for _, r := range s.Sites {
		t.add(clip(r.Site), fmt.Sprint(r.Device), signals.FormatBytes(r.Outstanding))
	}
	t.write(w, st)
	section(w, st, "Leak suspects")
	if len(s.LeakSuspects) == 0 {
		_, _ = fmt.Fprintln(w, "  none")
	}
	for _, r := range s.LeakSuspects {
		_, _ = fmt.Fprintln(w, "  "+st.warn(r.Body))
	}
	if len(s.OOMs) > 0 {
		section(w, st, "Out of memory")
		for _, r := range s.OOMs {
			line := "  " + st.red(r.Body)
			if r.TraceID != "" {
				line += st.dim(" (trace " + r.TraceID + ")")
			}
			_, _ = fmt.Fprintln(w, line)
		}
	}
}

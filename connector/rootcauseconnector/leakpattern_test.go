// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// snapshotProfileOf is what profileimport sends for a CUDA memory snapshot
// of pid (its resource given the pid downstream): the outstanding bytes of
// two allocation sites, and a leak suspect whose allocation history shows
// a pattern.
func snapshotProfileOf(pid int64, pattern bool) (pmetric.Metrics, plog.Logs) {
	const site = "blocks.py:57 forward"
	res := map[string]any{"process.pid": pid, "llm.profile.file": "/profiles/rank0.pickle"}
	md := batch(res, sec(1),
		pt{name: spec.ProfileMemoryOutstanding, v: 92 << 20, attrs: map[string]any{"llm.profile.module_path": site, "llm.profile.device": int64(0)}},
		pt{name: spec.ProfileMemoryOutstanding, v: 8 << 20, attrs: map[string]any{"llm.profile.module_path": "blocks.py:30 forward", "llm.profile.device": int64(0)}})
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	_ = rl.Resource().Attributes().FromRaw(res)
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTraceID(pcommon.TraceID{0xcd, 1})
	lr.SetSpanID(pcommon.SpanID{2, 3})
	a := lr.Attributes()
	a.PutStr(spec.IncidentKind, spec.IncidentKindLeakSuspect)
	a.PutStr(spec.AttrProfileModulePath, site)
	a.PutInt(spec.AttrProfileOutstandingBytes, 92<<20)
	if pattern {
		a.PutStr(spec.AttrProfileLeakPattern, spec.LeakPatternKeptAcrossSteps)
		a.PutStr(spec.AttrProfileLeakForwardFrame, "blocks.py:57 forward")
		a.PutInt(spec.AttrProfileLeakGrowthPerStep, 2<<20)
		a.PutInt(spec.AttrProfileLeakSteps, 46)
	}
	return md, ld
}

// TestLeakIncidentCarriesSuspectPattern: a leak incident whose drill-down
// cites a snapshot leak suspect with a pattern carries the pattern, the
// forward frame, the growth per step and the steps, and says them; one
// citing a suspect without a pattern carries none.
func TestLeakIncidentCarriesSuspectPattern(t *testing.T) {
	for _, withPattern := range []bool{true, false} {
		d := newTestDiagnoser(t, func(c *Config) { c.Leak.Window = time.Minute })
		md, ld := snapshotProfileOf(100, withPattern)
		d.consumeMetrics(md, true)
		d.drill.ingestLogs(ld)
		recs := run(d, 120, func(s float64) []pmetric.Metrics {
			return []pmetric.Metrics{gpuBatch(s, 8<<20, 0)}
		})
		leaks := firing(recs, spec.IncidentKindGPUMemoryLeak)
		if len(leaks) == 0 {
			t.Fatalf("no leak incident: %+v", recs)
		}
		l := leaks[0]
		if l.layer != "blocks.py:57 forward" {
			t.Fatalf("drill-down layer %q", l.layer)
		}
		if !withPattern {
			for _, k := range []string{spec.AttrProfileLeakPattern, spec.AttrProfileLeakForwardFrame, spec.AttrProfileLeakGrowthPerStep, spec.AttrProfileLeakSteps} {
				if v, ok := l.attrs[k]; ok {
					t.Errorf("suspect without a pattern, yet %s=%v", k, v)
				}
			}
			if strings.Contains(l.body, "steps") {
				t.Errorf("body names a pattern: %s", l.body)
			}
			continue
		}
		if l.attrs[spec.AttrProfileLeakPattern] != spec.LeakPatternKeptAcrossSteps ||
			l.attrs[spec.AttrProfileLeakForwardFrame] != "blocks.py:57 forward" ||
			l.attrs[spec.AttrProfileLeakGrowthPerStep] != int64(2<<20) || l.attrs[spec.AttrProfileLeakSteps] != int64(46) {
			t.Fatalf("pattern not carried: %v", l.attrs)
		}
		if want := "kept across steps: 2 MiB more each of 46 steps of blocks.py:57 forward"; !strings.Contains(l.body, want) {
			t.Fatalf("body lacks %q: %s", want, l.body)
		}
	}
}

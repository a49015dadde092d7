package llmprof

import (
	"math"
	"sort"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/kineto"
	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/nsys"
	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/profile"
)

// analyzeNsys reads an Nsight Systems export into the same analysis as a
// Kineto trace: its spans (kernels under launches under NVTX ranges, every
// span kept) and its memory per module path, so summary and diff work on
// either and across them.
func analyzeNsys(path string, prog *progress) (*analysis, error) {
	defer prog.stop()
	a := &analysis{file: path, md: kineto.Metadata{Rank: -1, WorldSize: -1}, cpu: make(map[pcommon.SpanID]cpuSpan)}
	res, err := nsys.ImportFile(path, nsys.Options{SpanBudget: math.MaxInt32}, spanBatchSize, func(td ptrace.Traces) error {
		if a.traceID == "" {
			for _, rs := range td.ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					if ss.Spans().Len() > 0 {
						a.traceID = ss.Spans().At(0).TraceID().String()
					}
				}
			}
		}
		a.take(td)
		return nil
	})
	if err != nil {
		return nil, &importError{err}
	}
	sum := res.Summary
	a.clock = sum.Clock
	a.md.Events = sum.Kernels + sum.Memcpys + sum.Memsets + sum.RuntimeCalls + sum.NVTXRanges + sum.MemoryEvents
	type key struct {
		path   string
		device int64
	}
	mods := map[key]*profile.ModuleMemory{}
	eachPoint(res.Metrics, func(name string, v float64, device int64, path string) {
		if path == "" || (name != spec.ProfileMemoryAllocated && name != spec.ProfileMemoryOutstanding) {
			return
		}
		m := mods[key{path, device}]
		if m == nil {
			m = &profile.ModuleMemory{ModulePath: path, Device: device}
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
	a.leaks = leakSuspects(res.Logs)
	return a, nil
}

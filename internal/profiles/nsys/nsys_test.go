// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nsys

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

const (
	sessionStart = int64(1_700_000_000_000_000_000)
	pidA         = int64(100)
	pidB         = int64(200)
	reqTrace     = "4bf92f3577b34da6a3ce929d0e0e4736"
	mib          = int64(1 << 20)
)

// makeDB writes an SQLite file with the given statements, as an nsys
// export would be laid out.
func makeDB(t *testing.T, stmts []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	for _, s := range stmts {
		if _, err := db.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path
}

// newSchema is a recent export (schema 3.x): NVTX, memory usage events,
// session start, enums, shortName.
func newSchema() []string {
	return []string{
		`CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT)`,
		// Recent nsys writes its export parameters here; timestamps are not
		// normalised by default, and are then relative to the session
		// start all the same.
		`INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.11.1'), ('EXPORT_PARAM_TIME_NORMALIZE', 'false')`,
		`CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT)`,
		`INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '2023-11-14T22:13:20.000Z', '')`,
		`CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)`,
		`INSERT INTO StringIds VALUES (1, 'Qwen2ForCausalLM'), (2, 'Qwen2DecoderLayer_0'), (3, 'Qwen2Attention_0'),
			(10, 'cudaLaunchKernel_v7000'), (11, 'cudaMemcpyAsync_v3020'), (12, 'cudaMalloc_v3020'), (13, 'cudaMemsetAsync_v3020'),
			(20, 'sgemm_128x64'), (21, 'void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64>(Params)'),
			(30, 'request trace_id=` + reqTrace + `')`,
		`CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT)`,
		`INSERT INTO PROCESSES VALUES (1677721600, 100, 'python3')`,
		`CREATE TABLE ENUM_CUDA_DEV_MEM_EVENT_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT)`,
		`INSERT INTO ENUM_CUDA_DEV_MEM_EVENT_OPER VALUES (0, 'CUDA_DEV_MEM_EVENT_OPR_ALLOCATION', 'Allocation'), (1, 'CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION', 'Deallocation')`,
		`CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT)`,
		`INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'), (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'), (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device')`,
		`CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT)`,
		`INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device')`,
		`CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
			category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
			domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
			int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT)`,
		// Thread 101 of process 100: request range > model > layer > attention
		// (the attention range by text, the others by textId), a mark and a
		// domain creation (no end) that are not ranges.
		`INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES
			(0, 1000, 59, NULL, 1677721701, 30),
			(10, 900, 59, NULL, 1677721701, 1),
			(20, 500, 59, NULL, 1677721701, 2),
			(30, 200, 59, 'Qwen2Attention_0', 1677721701, NULL),
			(50, NULL, 34, 'a mark', 1677721701, NULL),
			(5, NULL, 75, 'domain', 1677721701, NULL)`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
			globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER)`,
		`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
			(40, 60, 0, 1677721701, 1, 10, 0, NULL),
			(300, 320, 0, 1677721701, 2, 11, 0, NULL),
			(600, 610, 0, 1677721701, 3, 12, 0, NULL),
			(950, 960, 0, 1677721701, 4, 13, 0, NULL),
			(100, 110, 0, 3355443401, 1, 10, 0, NULL)`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
			contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
			demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER,
			cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
			gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
			staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL)`,
		// The same correlation id 1 in two processes: each kernel joins
		// its own process's launch.
		`INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
			(70, 170, 0, 1, 7, 1, 1677721600, 21, 20, NULL, 0, 0, 64, 128, 1, 1, 256, 1, 1, 0, 0, 0),
			(120, 130, 1, 1, 7, 1, 3355443200, 21, 20, NULL, 0, 0, 64, 4, 2, 1, 32, 1, 1, 0, 0, 0)`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
			contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
			bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER)`,
		`INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (330, 400, 0, 1, 7, 2, 1677721600, 4096, 1, NULL, 0, 2)`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
			contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
			value INTEGER NOT NULL, bytes INTEGER NOT NULL, memKind INTEGER NOT NULL)`,
		`INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (970, 980, 0, 1, 7, 4, 1677721600, 0, 4096, 2)`,
		`CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER, deviceId INTEGER,
			contextId INTEGER, address INTEGER NOT NULL, pc INTEGER, bytes INTEGER NOT NULL, memKind INTEGER NOT NULL,
			memoryOperationType INTEGER NOT NULL, name TEXT, correlationId INTEGER, streamId INTEGER)`,
		// Process 100, GPU 0: 2 MiB and 512 KiB from cudaMalloc (corr 3),
		// the 512 KiB freed. Process 200, GPU 1: 4 MiB never freed, no
		// correlation. A pinned host allocation is not device memory.
		`INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES
			(606, 1677721600, 0, 1, 8192, 0, 524288, 2, 0, NULL, 3, NULL),
			(605, 1677721600, 0, 1, 4096, 0, 2097152, 2, 0, NULL, 3, NULL),
			(700, 1677721600, 0, 1, 8192, 0, 524288, 2, 1, NULL, NULL, NULL),
			(105, 3355443200, 1, 1, 4096, 0, 4194304, 2, 0, NULL, NULL, NULL),
			(106, 3355443200, 1, 1, 65536, 0, 4194304, 1, 0, NULL, NULL, NULL)`,
	}
}

// oldSchema is an older export: no NVTX_EVENTS, no
// CUDA_GPU_MEMORY_USAGE_EVENTS, no META_DATA_EXPORT or session start, and
// kernels without shortName.
func oldSchema() []string {
	return []string{
		`CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)`,
		`INSERT INTO StringIds VALUES (10, 'cudaLaunchKernel_v7000'), (21, 'volta_sgemm_128x64_nn')`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
			globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL)`,
		`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1000, 1010, 0, 1677721701, 5, 10, 0), (2000, 2010, 0, 1677721701, 6, 10, 0)`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
			contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
			demangledName INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
			blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL)`,
		`INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1020, 1100, 0, 1, 7, 5, 1677721600, 21, 1, 1, 1, 32, 1, 1),
			(2020, 2100, 0, 1, 7, 99, 1677721600, 21, 1, 1, 1, 32, 1, 1)`,
	}
}

type imported struct {
	res     Result
	spans   []ptrace.Span
	byName  map[string]ptrace.Span
	batches int
}

func importDB(t *testing.T, path string, opts Options, batch int) imported {
	t.Helper()
	im := imported{byName: map[string]ptrace.Span{}}
	res, err := ImportFile(path, opts, batch, func(td ptrace.Traces) error {
		im.batches++
		if td.ResourceSpans().Len() != 1 {
			t.Fatalf("batch with %d resources", td.ResourceSpans().Len())
		}
		ss := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for i := 0; i < ss.Len(); i++ {
			im.spans = append(im.spans, ss.At(i))
			im.byName[ss.At(i).Name()] = ss.At(i)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	im.res = res
	return im
}

func modPath(s ptrace.Span) string {
	v, _ := s.Attributes().Get(spec.AttrProfileModulePath)
	return v.Str()
}

func TestNewSchema(t *testing.T) {
	path := makeDB(t, newSchema())
	im := importDB(t, path, Options{}, 0)
	sum := im.res.Summary
	if sum.SchemaVersion != "3.11.1" || sum.TimeBase != TimeSessionUTC || sum.SessionStartNs != sessionStart {
		t.Fatalf("meta: %+v", sum)
	}
	if sum.NVTXRanges != 4 || sum.RuntimeCalls != 5 || sum.Kernels != 2 || sum.Memcpys != 1 || sum.Memsets != 1 {
		t.Fatalf("counts: %+v", sum)
	}
	want := map[string]int64{"nvtx": 4, "runtime": 5, "kernel": 2, "memcpy": 1, "memset": 1}
	for k, v := range want {
		if sum.SpansByKind[k] != v {
			t.Errorf("spans of kind %s: %d, want %d (%v)", k, sum.SpansByKind[k], v, sum.SpansByKind)
		}
	}
	if sum.Spans != 14 || len(im.spans) != 14 || sum.Processes != 2 || sum.KernelsWithoutLauncher != 0 {
		t.Fatalf("spans %d/%d processes %d unlaunched %d", sum.Spans, len(im.spans), sum.Processes, sum.KernelsWithoutLauncher)
	}

	root := im.spans[0]
	ids := map[pcommon.SpanID]ptrace.Span{}
	for _, s := range im.spans {
		if s.TraceID() != root.TraceID() {
			t.Fatal("spans of one file in several traces")
		}
		ids[s.SpanID()] = s
	}
	parentName := func(s ptrace.Span) string { return ids[s.ParentSpanID()].Name() }

	// Kernel -> runtime -> innermost NVTX range, per process.
	var kernels []ptrace.Span
	for _, s := range im.spans {
		if s.Name() == "sgemm_128x64" {
			kernels = append(kernels, s)
		}
	}
	if len(kernels) != 2 {
		t.Fatalf("%d kernels named by shortName", len(kernels))
	}
	for _, k := range kernels {
		launch := ids[k.ParentSpanID()]
		if launch.Name() != "cudaLaunchKernel_v7000" {
			t.Fatalf("kernel parent %q", launch.Name())
		}
		dev, _ := k.Attributes().Get(spec.AttrProfileDevice)
		tidv, _ := launch.Attributes().Get(spec.AttrThreadID)
		switch dev.Int() {
		case 0:
			if parentName(launch) != "Qwen2Attention_0" || tidv.Int() != 101 {
				t.Errorf("process 100 launch under %q, thread %d", parentName(launch), tidv.Int())
			}
			if p := modPath(k); p != "Qwen2ForCausalLM/Qwen2DecoderLayer_0/Qwen2Attention_0" {
				t.Errorf("kernel module path %q", p)
			}
			if uint64(k.StartTimestamp()) != uint64(sessionStart+70) || uint64(k.EndTimestamp()) != uint64(sessionStart+170) {
				t.Errorf("kernel time %d..%d", k.StartTimestamp(), k.EndTimestamp())
			}
			g, _ := k.Attributes().Get(spec.AttrProfileGrid)
			if g.Str() != "[128, 1, 1]" {
				t.Errorf("grid %q", g.Str())
			}
		case 1:
			// Process 200's launch, same correlation id, no NVTX.
			if launch.StartTimestamp() != pcommon.Timestamp(sessionStart+100) || launch.ParentSpanID() != root.SpanID() {
				t.Errorf("process 200 kernel joined the wrong launch (start %d)", launch.StartTimestamp())
			}
			if modPath(k) != "" {
				t.Errorf("process 200 kernel has module path %q", modPath(k))
			}
		}
	}
	if p := parentName(im.byName["Memcpy Host-to-Device"]); p != "cudaMemcpyAsync_v3020" {
		t.Errorf("memcpy parent %q", p)
	}
	if p := modPath(im.byName["Memcpy Host-to-Device"]); p != "Qwen2ForCausalLM/Qwen2DecoderLayer_0" {
		t.Errorf("memcpy path %q", p)
	}
	if p := parentName(im.byName["cudaMalloc_v3020"]); p != "Qwen2ForCausalLM" {
		t.Errorf("cudaMalloc parent %q", p)
	}
	if p := parentName(im.byName["Memset"]); p != "cudaMemsetAsync_v3020" {
		t.Errorf("memset parent %q", p)
	}
	req := im.byName["request trace_id="+reqTrace]
	if parentName(im.byName["cudaMemsetAsync_v3020"]) != req.Name() || modPath(im.byName["cudaMemsetAsync_v3020"]) != "" {
		t.Errorf("memset launch: parent %q path %q", parentName(im.byName["cudaMemsetAsync_v3020"]), modPath(im.byName["cudaMemsetAsync_v3020"]))
	}
	if parentName(im.byName["Qwen2ForCausalLM"]) != req.Name() || modPath(im.byName["Qwen2ForCausalLM"]) != "Qwen2ForCausalLM" {
		t.Errorf("model range under %q, path %q (a request range is not a module)", parentName(im.byName["Qwen2ForCausalLM"]), modPath(im.byName["Qwen2ForCausalLM"]))
	}
	// The request range links to the request's trace.
	if sum.LinkedRequests != 1 || req.Links().Len() != 1 {
		t.Fatalf("links: %d, on the range %d", sum.LinkedRequests, req.Links().Len())
	}
	if got := req.Links().At(0).TraceID(); got.String() != reqTrace {
		t.Errorf("link to %s", got)
	}
	if root.StartTimestamp() != pcommon.Timestamp(sessionStart) || root.EndTimestamp() != pcommon.Timestamp(sessionStart+1000) {
		t.Errorf("root window %d..%d", root.StartTimestamp(), root.EndTimestamp())
	}

	// Memory.
	if sum.MemoryEvents != 5 || sum.OutstandingBytes != 6*mib || sum.UnmatchedFrees != 0 {
		t.Errorf("memory summary %+v", sum)
	}
	rm := im.res.Metrics.ResourceMetrics().At(0)
	if v, _ := rm.Resource().Attributes().Get(spec.AttrProcessPid); v.Int() != pidA {
		t.Errorf("resource pid %d", v.Int())
	}
	if v, _ := rm.Resource().Attributes().Get(spec.AttrProcessExecutableName); v.Str() != "python3" {
		t.Errorf("process name %q", v.Str())
	}
	metrics := map[string]pmetric.Metric{}
	ms := rm.ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		metrics[ms.At(i).Name()] = ms.At(i)
	}
	type key struct {
		pid, dev int64
		path     string
	}
	out := map[key]int64{}
	dps := metrics[spec.ProfileMemoryOutstanding].Sum().DataPoints()
	for i := 0; i < dps.Len(); i++ {
		a := dps.At(i).Attributes()
		p, _ := a.Get(spec.AttrProcessPid)
		d, _ := a.Get(spec.AttrProfileDevice)
		m, _ := a.Get(spec.AttrProfileModulePath)
		out[key{p.Int(), d.Int(), m.Str()}] = dps.At(i).IntValue()
	}
	wantOut := map[key]int64{{pidA, 0, "Qwen2ForCausalLM"}: 2 * mib, {pidB, 1, signals.UnattributedPath}: 4 * mib}
	if len(out) != len(wantOut) {
		t.Errorf("outstanding %v", out)
	}
	for k, v := range wantOut {
		if out[k] != v {
			t.Errorf("outstanding %v = %d, want %d (%v)", k, out[k], v, out)
		}
	}
	series := map[int64][]int64{}
	var firstTs pcommon.Timestamp
	gps := metrics[spec.ProfileMemoryTotalAllocated].Gauge().DataPoints()
	for i := 0; i < gps.Len(); i++ {
		p, _ := gps.At(i).Attributes().Get(spec.AttrProcessPid)
		series[p.Int()] = append(series[p.Int()], gps.At(i).IntValue())
		if i == 0 {
			firstTs = gps.At(i).Timestamp()
		}
	}
	if got := series[pidA]; len(got) != 3 || got[0] != 2*mib || got[1] != 2*mib+mib/2 || got[2] != 2*mib {
		t.Errorf("process 100 series %v", got)
	}
	if got := series[pidB]; len(got) != 1 || got[0] != 4*mib {
		t.Errorf("process 200 series %v", got)
	}
	if firstTs != pcommon.Timestamp(sessionStart+605) {
		t.Errorf("first memory point at %d", firstTs)
	}

	// Leak suspects: largest first, pointing at the allocating call.
	lrs := im.res.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	if lrs.Len() != 2 || sum.LeakSuspects != 2 {
		t.Fatalf("%d leak suspects", lrs.Len())
	}
	first, second := lrs.At(0), lrs.At(1)
	if first.SeverityNumber() != plog.SeverityNumberWarn {
		t.Error("leak suspect not WARN")
	}
	if k, _ := first.Attributes().Get(spec.IncidentKind); k.Str() != spec.IncidentKindLeakSuspect {
		t.Errorf("kind %q", k.Str())
	}
	if v, _ := first.Attributes().Get(spec.AttrProfileOutstandingBytes); v.Int() != 4*mib {
		t.Errorf("first suspect %d bytes", v.Int())
	}
	if second.SpanID() != im.byName["cudaMalloc_v3020"].SpanID() || second.TraceID() != root.TraceID() {
		t.Errorf("second suspect points at %s", ids[second.SpanID()].Name())
	}
	if first.SpanID() != root.SpanID() {
		t.Errorf("unattributed suspect points at %q", ids[first.SpanID()].Name())
	}

	// Same file, same ids; batches change nothing but the batching.
	again := importDB(t, path, Options{}, 3)
	if again.batches != 5 || len(again.spans) != len(im.spans) {
		t.Fatalf("%d batches, %d spans", again.batches, len(again.spans))
	}
	for i := range im.spans {
		a, b := im.spans[i], again.spans[i]
		if a.SpanID() != b.SpanID() || a.ParentSpanID() != b.ParentSpanID() || a.TraceID() != b.TraceID() {
			t.Fatalf("span %d (%s) differs between imports", i, a.Name())
		}
	}
}

func TestSpanBudget(t *testing.T) {
	path := makeDB(t, newSchema())
	im := importDB(t, path, Options{SpanBudget: 8}, 0)
	sum := im.res.Summary
	if sum.Spans != 8 || sum.SpansDropped != 6 {
		t.Fatalf("spans %d dropped %d", sum.Spans, sum.SpansDropped)
	}
	// The 4 NVTX ranges, then the launches with the most GPU time and
	// their activity: the process-100 kernel (100 ns) and the memcpy (70).
	if sum.SpansByKind["nvtx"] != 4 || sum.SpansByKind["kernel"] != 1 || sum.SpansByKind["memcpy"] != 1 {
		t.Fatalf("kept %v", sum.SpansByKind)
	}
	ids := map[pcommon.SpanID]bool{}
	for _, s := range im.spans {
		ids[s.SpanID()] = true
	}
	for _, s := range im.spans[1:] {
		if !ids[s.ParentSpanID()] {
			t.Errorf("%s has a parent that was not emitted", s.Name())
		}
	}
}

func TestOldSchema(t *testing.T) {
	im := importDB(t, makeDB(t, oldSchema()), Options{}, 0)
	sum := im.res.Summary
	if sum.SchemaVersion != "" || sum.TimeBase != TimeAsIs || sum.NVTXRanges != 0 || sum.MemoryEvents != 0 {
		t.Fatalf("summary %+v", sum)
	}
	if sum.SpansByKind["kernel"] != 2 || sum.SpansByKind["runtime"] != 2 || sum.KernelsWithoutLauncher != 1 {
		t.Fatalf("spans %v, unlaunched %d", sum.SpansByKind, sum.KernelsWithoutLauncher)
	}
	if len(sum.Notes) < 3 {
		t.Errorf("notes %q", sum.Notes)
	}
	var launched int
	for _, s := range im.spans {
		if s.Name() != "volta_sgemm_128x64_nn" { // demangledName: no shortName column
			continue
		}
		for _, p := range im.spans {
			if p.SpanID() == s.ParentSpanID() && p.Name() == "cudaLaunchKernel_v7000" {
				launched++
				if s.StartTimestamp() != 1020 {
					t.Errorf("time not used as-is: %d", s.StartTimestamp())
				}
			}
		}
	}
	if launched != 1 {
		t.Errorf("%d kernels under their launch", launched)
	}
	if im.res.Metrics.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().Len() != 0 {
		t.Error("memory metrics without memory events")
	}
}

// TestNVTXTextOnly: an export whose NVTX_EVENTS has text but neither
// textId nor eventType (older nsys).
func TestNVTXTextOnly(t *testing.T) {
	stmts := append(oldSchema(),
		`CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, text TEXT, globalTid INTEGER)`,
		`INSERT INTO NVTX_EVENTS VALUES (900, 1500, 'decode_step', 1677721701), (950, 1200, 'LlamaMLP', 1677721701), (990, NULL, 'mark', 1677721701)`)
	im := importDB(t, makeDB(t, stmts), Options{}, 0)
	if im.res.Summary.NVTXRanges != 2 {
		t.Fatalf("%d ranges", im.res.Summary.NVTXRanges)
	}
	for _, s := range im.spans {
		if s.Name() == "volta_sgemm_128x64_nn" && s.StartTimestamp() == 1020 {
			if p := modPath(s); p != "decode_step/LlamaMLP" {
				t.Errorf("module path %q", p)
			}
		}
	}
}

func TestNotAnExport(t *testing.T) {
	dir := t.TempDir()
	txt := filepath.Join(dir, "trace.json")
	if err := os.WriteFile(txt, []byte(`{"traceEvents": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ImportFile(txt, Options{}, 0, func(ptrace.Traces) error { return nil })
	if !errors.Is(err, errNotNsys) || !strings.Contains(err.Error(), txt) || !strings.Contains(err.Error(), "nsys export --type sqlite") {
		t.Errorf("text file: %v", err)
	}
	other := makeDB(t, []string{`CREATE TABLE users (id INTEGER, name TEXT)`})
	_, err = ImportFile(other, Options{}, 0, func(ptrace.Traces) error { return nil })
	if !errors.Is(err, errNotNsys) || !strings.Contains(err.Error(), other) {
		t.Errorf("other database: %v", err)
	}
	_, err = ImportFile(filepath.Join(dir, "missing.sqlite"), Options{}, 0, func(ptrace.Traces) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "missing.sqlite") {
		t.Errorf("missing file: %v", err)
	}
	if !IsNsysSQLite([]byte("SQLite format 3\x00rest")) || IsNsysSQLite([]byte("SQLite format")) {
		t.Error("IsNsysSQLite")
	}
}

// TestReadOnly: the import neither writes the export nor needs to.
func TestReadOnly(t *testing.T) {
	path := makeDB(t, newSchema())
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	importDB(t, path, Options{}, 0)
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("the export changed")
	}
	// The DSN the importer uses refuses writes even where permissions
	// would allow them (tests may run as root).
	d, err := dsn(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", d)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	if _, err := db.ExecContext(t.Context(), `CREATE INDEX k ON CUPTI_ACTIVITY_KIND_KERNEL(correlationId)`); err == nil {
		t.Error("the export was opened writable")
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("files next to the export: %d", len(ents))
	}
}

func TestParseRequest(t *testing.T) {
	for text, want := range map[string]string{
		"request trace_id=" + reqTrace:                    reqTrace,
		"00-" + reqTrace + "-00f067aa0ba902b7-01":         reqTrace,
		"req " + strings.ToUpper(reqTrace):                reqTrace,
		"Qwen2Attention_0":                                "",
		"00000000000000000000000000000000":                "",
		"x" + reqTrace + "ab":                             "",
		"aten::mm, seq = 12, op_id = 3, sizes = [[4, 8]]": "",
	} {
		l, ok := parseRequest(text)
		if ok {
			got := l.trace.String()
			if got != want {
				t.Errorf("%q: %s, want %s", text, got, want)
			}
		} else if want != "" {
			t.Errorf("%q: no trace id, want %s", text, want)
		}
	}
}

// firstSpanStart is the earliest start of the non-root spans.
func firstSpanStart(im imported) time.Time {
	first := im.spans[1].StartTimestamp()
	for _, s := range im.spans[1:] {
		first = min(first, s.StartTimestamp())
	}
	return first.AsTime().UTC()
}

// TestClock: the export's times (relative to the session start, whether
// EXPORT_PARAM_TIME_NORMALIZE is true or false) are placed on the wall
// clock from TARGET_INFO_SESSION_START_TIME, and the summary says which
// clock was used; without a session start the times stay relative, and
// the summary says so.
func TestClock(t *testing.T) {
	// The committed fixture, as the receiver's and llmprof's tests read it.
	im := importDB(t, filepath.Join("testdata", "recent.sqlite"), Options{}, 0)
	if y := firstSpanStart(im).Year(); y != 2023 {
		t.Errorf("first span in %d, want the capture's year 2023 (%v)", y, firstSpanStart(im))
	}
	want := "session start 2023-11-14T22:13:20Z + offset (EXPORT_PARAM_TIME_NORMALIZE=false)"
	if c := im.res.Summary.Clock; c != want {
		t.Errorf("clock %q, want %q", c, want)
	}

	replace := func(stmts []string, old, repl string) []string {
		out := slices.Clone(stmts)
		for i, s := range out {
			out[i] = strings.ReplaceAll(s, old, repl)
		}
		return out
	}
	for name, c := range map[string]struct {
		stmts []string
		first int64  // start of the earliest span, unix ns
		base  string // TimeBase
		clock string // prefix of Summary.Clock
	}{
		"normalised": {replace(newSchema(), "'EXPORT_PARAM_TIME_NORMALIZE', 'false'", "'EXPORT_PARAM_TIME_NORMALIZE', 'true'"),
			sessionStart, TimeSessionUTC, "session start 2023-11-14T22:13:20Z + offset (EXPORT_PARAM_TIME_NORMALIZE=true)"},
		"no flag": {replace(newSchema(), ", ('EXPORT_PARAM_TIME_NORMALIZE', 'false')", ""),
			sessionStart, TimeSessionUTC, "session start 2023-11-14T22:13:20Z + offset (the export does not say whether its times are normalised)"},
		// Times on another clock (since boot) with the session's start on
		// it in ANALYSIS_DETAILS: placed relative to that start.
		"analysis start": {append(shifted(newSchema(), 5_000_000_000),
			`CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER, duration INTEGER, startTime INTEGER, stopTime INTEGER)`,
			`INSERT INTO ANALYSIS_DETAILS VALUES (0, 1000, 5000000000, 5000001000)`),
			sessionStart, TimeSessionUTC, "session start 2023-11-14T22:13:20Z + offset"},
		// An ANALYSIS_DETAILS start after the first event is not on the
		// events' clock: not used.
		"analysis start after the events": {append(newSchema(),
			`CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER, duration INTEGER, startTime INTEGER, stopTime INTEGER)`,
			`INSERT INTO ANALYSIS_DETAILS VALUES (0, 1000, 5000000000, 5000001000)`),
			sessionStart, TimeSessionUTC, "session start 2023-11-14T22:13:20Z + offset"},
		"no start": {replace(newSchema(), "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '2023-11-14T22:13:20.000Z', '')", "SELECT 1"),
			0, TimeAsIs, "times relative to session start: no start time in export"},
		"already wall clock": {shifted(newSchema(), sessionStart),
			sessionStart, TimeAsIs, "as in the export: its times are already wall-clock"},
	} {
		t.Run(name, func(t *testing.T) {
			im := importDB(t, makeDB(t, c.stmts), Options{}, 0)
			sum := im.res.Summary
			if sum.TimeBase != c.base || !strings.HasPrefix(sum.Clock, c.clock) {
				t.Errorf("time base %q clock %q, want %q %q", sum.TimeBase, sum.Clock, c.base, c.clock)
			}
			if got := firstSpanStart(im).UnixNano(); got != c.first {
				t.Errorf("first span at %d, want %d", got, c.first)
			}
		})
	}
}

// shifted is stmts with every event time moved by d ns (an export on
// another clock).
func shifted(stmts []string, d int64) []string {
	out := slices.Clone(stmts)
	for _, t := range []string{"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL",
		"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"} {
		out = append(out, fmt.Sprintf("UPDATE %s SET start = start + %d, end = end + %d", t, d, d))
	}
	return append(out, fmt.Sprintf("UPDATE CUDA_GPU_MEMORY_USAGE_EVENTS SET start = start + %d", d))
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// hostileLists is a pickle of n empty lists: PROTO 2, then either MARK,
// n × EMPTY_LIST, LIST (all of them on the stack at once) or EMPTY_LIST
// and n × (EMPTY_LIST, APPEND) (one list growing), then STOP. Each empty
// list is one or two bytes of input and a few dozen bytes of decoder
// state, so without a memory budget a 20 MB file held about 1.4 GB.
func hostileLists(n int, marked bool) []byte {
	b := make([]byte, 0, 2*n+8)
	b = append(b, 0x80, 2)
	if marked {
		b = append(b, '(')
		b = append(b, bytes.Repeat([]byte{']'}, n)...)
		b = append(b, 'l')
	} else {
		b = append(b, ']')
		b = append(b, bytes.Repeat([]byte{']', 'a'}, n)...)
	}
	return append(b, '.')
}

// allocated runs fn and returns the bytes it allocated (TotalAlloc: every
// allocation counts, whether the GC has reclaimed it yet or not).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostilePickleMemory: a pickle built to make the decoder hold far
// more than the file (millions of empty lists) fails with ErrMemoryBudget,
// naming the limit and the byte offset, having allocated a small multiple
// of the file rather than ~70×.
func TestHostilePickleMemory(t *testing.T) {
	for _, marked := range []bool{true, false} {
		data := hostileLists(20<<20, marked)
		if !marked {
			data = hostileLists(10<<20, false) // 2 bytes per list: also ~20 MB
		}
		var err error
		got := allocated(func() {
			_, err = Import(bytes.NewReader(data), "lists.pickle", Options{})
		})
		t.Logf("marked=%v: %d-byte file, %d bytes allocated (%.1f× the file): %v", marked, len(data), got, float64(got)/float64(len(data)), err)
		require.Error(t, err)
		require.ErrorIs(t, err, ErrMemoryBudget, "%v", err)
		assert.Contains(t, err.Error(), "lists.pickle: byte ")
		assert.Contains(t, err.Error(), "MiB limit")
		assert.Less(t, got, uint64(4*len(data)), "allocated %d bytes for a %d-byte file", got, len(data))
	}
}

// TestFixturesWithinBudget: every real snapshot in the testdata imports
// under the budget (the hostile test above must not be passed by refusing
// real files).
func TestFixturesWithinBudget(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.pickle")
	gz, _ := filepath.Glob("testdata/*.json.gz")
	for _, f := range append(files, gz...) {
		if strings.HasPrefix(filepath.Base(f), "malicious") {
			continue
		}
		_, err := ImportFile(f, Options{})
		require.NoError(t, err, f)
	}
	if _, err := os.Stat("testdata/snapshot_p2.pickle"); err != nil {
		t.Fatal(err)
	}
}

type jFrame struct {
	File string `json:"filename"`
	Line int64  `json:"line"`
	Name string `json:"name"`
}

// snapJSON is a JSON snapshot of one device: one segment whose active
// blocks have the given stacks (2 MiB each), and a trace ring allocating
// each stack's block first (early, so a leak suspect) then allocating and
// freeing a 1 MiB block as many times, and an OOM at the first stack.
// time_us is set when withTime.
func snapJSON(t *testing.T, stacks [][]jFrame, withTime bool) []byte {
	t.Helper()
	const mib = 1 << 20
	var blocks, ring []map[string]any
	tm := int64(1_700_000_000_000_000)
	entry := func(action string, addr, size int64, frames []jFrame) {
		e := map[string]any{"action": action, "addr": addr, "size": size, "stream": 0, "frames": frames}
		if withTime {
			tm += 1000
			e["time_us"] = tm
		}
		if action == "oom" {
			e["device_free"] = 0
		}
		ring = append(ring, e)
	}
	for i, st := range stacks {
		addr := int64(i) * 2 * mib
		blocks = append(blocks, map[string]any{"address": addr, "size": 2 * mib, "requested_size": 2 * mib, "state": "active_allocated", "frames": st})
		entry("alloc", addr, 2*mib, st)
	}
	for i := range stacks {
		addr := int64(len(stacks)+i) * 2 * mib
		entry("alloc", addr, mib, stacks[0])
		entry("free_requested", addr, mib, stacks[0])
		entry("free_completed", addr, mib, stacks[0])
	}
	entry("oom", 0, 8*mib, stacks[0])
	doc := map[string]any{
		"segments": []map[string]any{{"device": 0, "address": 0, "total_size": int64(2*len(stacks)) * 2 * mib,
			"allocated_size": int64(len(stacks)) * 2 * mib, "active_size": int64(len(stacks)) * 2 * mib,
			"requested_size": int64(len(stacks)) * 2 * mib, "stream": 0, "segment_type": "large", "blocks": blocks}},
		"device_traces": [][]map[string]any{ring},
	}
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	return b
}

type imported struct {
	sites  map[string]int64 // outstanding bytes per site
	leaks  []plog.LogRecord
	ooms   []plog.LogRecord
	result Result
}

func importJSON(t *testing.T, b []byte) imported {
	t.Helper()
	res, err := Import(bytes.NewReader(b), "snap.json", Options{})
	require.NoError(t, err)
	im := imported{sites: map[string]int64{}, result: res}
	ms := res.Metrics.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Name() != spec.ProfileMemoryOutstanding {
			continue
		}
		dps := ms.At(i).Sum().DataPoints()
		for j := 0; j < dps.Len(); j++ {
			site, _ := dps.At(j).Attributes().Get(spec.AttrProfileModulePath)
			im.sites[site.Str()] += dps.At(j).IntValue()
		}
	}
	lrs := res.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i := 0; i < lrs.Len(); i++ {
		if lrs.At(i).SeverityNumber() >= plog.SeverityNumberError {
			im.ooms = append(im.ooms, lrs.At(i))
		} else {
			im.leaks = append(im.leaks, lrs.At(i))
		}
	}
	return im
}

// TestWindowsPaths: frames recorded on Windows (backslashes, drive
// letters) are recognised as library frames like their POSIX forms, so
// the site is the model's line and is named by its base name.
func TestWindowsPaths(t *testing.T) {
	st := []jFrame{
		{`D:\venv\Lib\site-packages\torch\functional.py`, 402, "split"},
		{`C:\Users\me\AppData\Local\Programs\Python\Python311\Lib\contextlib.py`, 81, "inner"},
		{`D:\venv\Lib\site-packages\transformers\modeling_utils.py`, 1200, "forward"},
		{`D:\work\llm\model.py`, 42, "forward"},
		{`D:\work\llm\serve.py`, 7, "main"},
	}
	im := importJSON(t, snapJSON(t, [][]jFrame{st}, true))
	assert.Equal(t, map[string]int64{"model.py:42 forward": 2 << 20}, im.sites)
	require.Len(t, im.leaks, 1)
	site, _ := im.leaks[0].Attributes().Get(spec.AttrProfileModulePath)
	assert.Equal(t, "model.py:42 forward", site.Str())
	for _, f := range []string{`D:\venv\Lib\site-packages\torch\functional.py`, `c:\python312\lib\json\decoder.py`, `D:\venv\lib\dist-packages\x.py`} {
		assert.True(t, isLibraryFrame(f), f)
	}
	for _, f := range []string{`D:\work\llm\model.py`, `C:\lib\model.py`} {
		assert.False(t, isLibraryFrame(f), f)
	}
}

// TestNoTimeRecorded: a ring whose entries carry no time_us gives leak
// suspects and OOMs without a time, not 1970-01-01.
func TestNoTimeRecorded(t *testing.T) {
	st := []jFrame{{"/app/model.py", 88, "remember"}}
	im := importJSON(t, snapJSON(t, [][]jFrame{st}, false))
	require.Len(t, im.leaks, 1)
	require.Len(t, im.ooms, 1)
	for _, lr := range append(im.leaks, im.ooms...) {
		body := lr.Body().Str()
		assert.NotContains(t, body, "1970")
		_, has := lr.Attributes().Get(spec.IncidentStartTime)
		assert.False(t, has, "incident.start_time on %q", body)
		assert.NotEqual(t, int64(0), int64(lr.ObservedTimestamp()))
	}
	assert.Contains(t, im.leaks[0].Body().Str(), "time not recorded in the snapshot")
	assert.Equal(t, int64(0), int64(im.ooms[0].Timestamp()), "an OOM without time_us has no event time")

	// With time_us the time is given, in the capture's year.
	im = importJSON(t, snapJSON(t, [][]jFrame{st}, true))
	require.Len(t, im.leaks, 1)
	assert.Contains(t, im.leaks[0].Body().Str(), "first at 2023-")
	v, _ := im.leaks[0].Attributes().Get(spec.IncidentStartTime)
	assert.True(t, strings.HasPrefix(v.Str(), "2023-"), v.Str())
}

// TestCppOnlyStacks: stacks recorded with C++ frames only are attributed
// to their first frame outside the unwinder, the caching allocator and
// libc/libpython, and say that no Python frame was recorded; a stack of
// such frames only has an unknown site. A stack whose Python frames are
// all library code is attributed to its innermost Python frame, not to
// the C++ frames below it.
func TestCppOnlyStacks(t *testing.T) {
	unwinder := []jFrame{
		{"??", 0, "torch::unwind::unwind()"},
		{"??", 0, "torch::CapturedTraceback::gather(bool, bool, bool)"},
		{"/pytorch/c10/cuda/CUDACachingAllocator.cpp", 1203, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)"},
		{"??", 0, "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)"},
		{"??", 0, "at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, c10::Allocator*, c10::DispatchKeySet, c10::ScalarType, std::optional<c10::MemoryFormat>)"},
		{"??", 0, "at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType, std::optional<c10::Device>, std::optional<c10::MemoryFormat>)"},
	}
	cpp := append(slices.Clone(unwinder),
		jFrame{"/pytorch/aten/src/ATen/native/cuda/Blas.cpp", 311, "at::native::structured_mm_out_cuda::impl(at::Tensor const&, at::Tensor const&, at::Tensor const&)"},
		jFrame{"??", 0, "at::_ops::mm::call(at::Tensor const&, at::Tensor const&)"},
		jFrame{"/usr/lib/libpython3.11.so.1.0", 0, "_PyEval_EvalFrameDefault"},
		jFrame{"??", 0, "__libc_start_main"},
	)
	onlyInternals := append(slices.Clone(unwinder),
		jFrame{"??", 0, "_PyObject_MakeTpCall"}, jFrame{"/lib/x86_64-linux-gnu/libc.so.6", 0, "__libc_start_call_main"}, jFrame{"??", 0, "_start"})
	torchPy := append(slices.Clone(unwinder),
		jFrame{"/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", 125, "forward"},
		jFrame{"/usr/lib/python3/dist-packages/torch/nn/modules/module.py", 1747, "_call_impl"})

	im := importJSON(t, snapJSON(t, [][]jFrame{cpp, onlyInternals, torchPy}, true))
	mmSite := "Blas.cpp:311 at::native::structured_mm_out_cuda::impl(at::Tensor const&, at::Tensor const&, at::Tensor const&)"
	assert.Equal(t, map[string]int64{mmSite: 2 << 20, UnknownSite: 2 << 20, "linear.py:125 forward": 2 << 20}, im.sites)
	require.Len(t, im.leaks, 3)
	bodies := map[string]string{}
	for _, lr := range im.leaks {
		site, _ := lr.Attributes().Get(spec.AttrProfileModulePath)
		bodies[site.Str()] = lr.Body().Str()
	}
	assert.Contains(t, bodies[mmSite], "no Python frames recorded (C++ stack only)")
	assert.Contains(t, bodies[UnknownSite], "site unknown")
	assert.NotContains(t, bodies["linear.py:125 forward"], "no Python frames")
	require.Len(t, im.ooms, 1)
	assert.Contains(t, im.ooms[0].Body().Str(), "at "+mmSite)
	assert.Contains(t, im.ooms[0].Body().Str(), "no Python frames recorded (C++ stack only)")
	for _, lr := range append(im.leaks, im.ooms...) {
		assert.NotContains(t, lr.Body().Str(), "torch::unwind")
	}
}

var updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/fuzz/FuzzImport from fuzzSeeds")

// fuzzSeeds are the bad inputs of this file, small, for FuzzImport's
// committed corpus: the hostile lists (a few thousand, under the budget's
// floor: the fuzzer grows them), and a snapshot each with Windows paths,
// without time_us, and with C++ frames only.
func fuzzSeeds(t *testing.T) map[string][]byte {
	cpp := []jFrame{{"??", 0, "torch::unwind::unwind()"}, {"??", 0, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)"},
		{"/pytorch/aten/src/ATen/native/cuda/Blas.cpp", 311, "at::native::structured_mm_out_cuda::impl(at::Tensor const&, at::Tensor const&, at::Tensor const&)"},
		{"/usr/lib/libpython3.11.so.1.0", 0, "_PyEval_EvalFrameDefault"}}
	win := []jFrame{{`D:\venv\Lib\site-packages\torch\functional.py`, 402, "split"}, {`D:\work\llm\model.py`, 42, "forward"}}
	return map[string][]byte{
		"hostile-lists-marked":   hostileLists(4096, true),
		"hostile-lists-appended": hostileLists(4096, false),
		"windows-paths":          snapJSON(t, [][]jFrame{win}, true),
		"no-time-us":             snapJSON(t, [][]jFrame{{{"/app/model.py", 88, "remember"}}}, false),
		"cpp-only":               snapJSON(t, [][]jFrame{cpp, cpp[:2]}, true),
	}
}

// TestFuzzSeeds keeps testdata/fuzz/FuzzImport equal to fuzzSeeds.
func TestFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzImport")
	for name, b := range fuzzSeeds(t) {
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n"
		path := filepath.Join(dir, name)
		if *updateSeeds {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "go test -run TestFuzzSeeds -update-seeds")
		assert.Equal(t, body, string(got), "%s is stale (go test -run TestFuzzSeeds -update-seeds)", path)
	}
}

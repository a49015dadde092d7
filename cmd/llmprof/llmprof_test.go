// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixtures is the shared Kineto fixture directory, relative to this package.
const fixtures = "../../../shared/fixtures/traces"

// Generated with tests/tracegen (see testdata/README.md): a 2-layer Llama,
// 3 profiler steps, with profile_memory; leak adds 32 MiB per step kept by
// LlamaAttention_1.
const (
	llamaBase = "testdata/llama-base.json.gz"
	llamaLeak = "testdata/llama-leak.json.gz"
	leakPath  = "LlamaForCausalLM_0/LlamaModel_0/LlamaDecoderLayer_1/LlamaAttention_1"
)

func fixture(t *testing.T, name string) string {
	return testutil.SharedFixture(t, fixtures, name)
}

// run calls Main and returns its exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update if the change is intended)\n--- got ---\n%s", p, got)
	}
}

func TestGoldens(t *testing.T) {
	cases := []struct {
		golden string
		args   []string
		files  []string // fixtures (skipped when absent); "" = testdata
	}{
		{"summary-llama-leak.txt", []string{"summary", llamaLeak}, nil},
		{"summary-llama-leak.json", []string{"summary", "--json", llamaLeak}, nil},
		{"summary-hta-simple_add.txt", []string{"summary", "FIXTURE0"}, []string{"hta-simple_add.json.gz"}},
		{"summary-hta-simple_add.json", []string{"summary", "FIXTURE0", "--json"}, []string{"hta-simple_add.json.gz"}},
		{"summary-sglang_qwen3_decode.txt", []string{"summary", "FIXTURE0", "--top", "8"}, []string{"tracelens-sglang_qwen3_decode.json.gz"}},
		{"summary-sglang_qwen3_decode.json", []string{"summary", "--top=8", "--json", "FIXTURE0"}, []string{"tracelens-sglang_qwen3_decode.json.gz"}},
		{"diff-llama.txt", []string{"diff", llamaBase, llamaLeak, "--top", "5"}, nil},
		{"diff-llama-memory.json", []string{"diff", llamaBase, llamaLeak, "--by", "memory", "--top", "3", "--json"}, nil},
		{"diff-hta-sglang.txt", []string{"diff", "FIXTURE0", "FIXTURE1"}, []string{"hta-simple_add.json.gz", "tracelens-sglang_qwen3_decode.json.gz"}},
		{"diff-hta-sglang.json", []string{"diff", "--json", "FIXTURE0", "FIXTURE1", "--top", "4"}, []string{"hta-simple_add.json.gz", "tracelens-sglang_qwen3_decode.json.gz"}},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			args := slices.Clone(c.args)
			for i, f := range c.files {
				p := fixture(t, f)
				for j := range args {
					if args[j] == "FIXTURE"+string(rune('0'+i)) {
						args[j] = p
					}
				}
			}
			code, out, errOut := run(t, args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if strings.Contains(out, "\x1b[") {
				t.Error("ANSI escapes in output that is not a terminal")
			}
			if strings.HasSuffix(c.golden, ".json") && !json.Valid([]byte(out)) {
				t.Errorf("not valid JSON:\n%s", out)
			}
			golden(t, c.golden, out)
		})
	}
}

// rawEvent is a traceEvents entry as encoding/json reads it, for the
// independent checks below (no code shared with the kineto parser).
type rawEvent struct {
	Ph   string          `json:"ph"`
	Cat  string          `json:"cat"`
	Name string          `json:"name"`
	Pid  json.RawMessage `json:"pid"`
	Tid  json.RawMessage `json:"tid"`
	Ts   float64         `json:"ts"`
	Dur  float64         `json:"dur"`
	Args map[string]any  `json:"args"`
}

func readEvents(t *testing.T, path string) []rawEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []rawEvent `json:"traceEvents"`
	}
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc.TraceEvents
}

func (e *rawEvent) num(k string) (float64, bool) {
	v, ok := e.Args[k].(float64)
	return v, ok
}

// independentGPUTime attributes every kernel/memcpy/memset of the file by
// hand: the runtime call with the same correlation id launched it; the
// nn.Module frames of that call's thread that contain it, outermost first,
// make its module path; without any, the outermost cpu_op containing it
// names it. It returns GPU time (ns) per key and in total.
func independentGPUTime(t *testing.T, path string) (map[string]int64, int64) {
	evs := readEvents(t, path)
	type thread struct{ pid, tid string }
	byThread := make(map[thread][]*rawEvent)
	launch := make(map[float64]*rawEvent)
	for i := range evs {
		e := &evs[i]
		if e.Ph != "X" {
			continue
		}
		th := thread{string(e.Pid), string(e.Tid)}
		switch e.Cat {
		case "cuda_runtime", "cuda_driver":
			if c, ok := e.num("correlation"); ok {
				launch[c] = e
			}
			byThread[th] = append(byThread[th], e)
		case "python_function", "cpu_op":
			byThread[th] = append(byThread[th], e)
		}
	}
	per := make(map[string]int64)
	var total int64
	for i := range evs {
		k := &evs[i]
		if k.Ph != "X" || (k.Cat != "kernel" && k.Cat != "gpu_memcpy" && k.Cat != "gpu_memset") {
			continue
		}
		d := int64(math.Round(k.Dur * 1000))
		total += d
		key := "<unattributed>"
		if c, ok := k.num("correlation"); ok && launch[c] != nil {
			rt := launch[c]
			var mods, ops []*rawEvent
			for _, e := range byThread[thread{string(rt.Pid), string(rt.Tid)}] {
				if e.Ts > rt.Ts || e.Ts+e.Dur < rt.Ts+rt.Dur || e == rt {
					continue
				}
				switch {
				case e.Cat == "python_function" && strings.HasPrefix(e.Name, "nn.Module: "):
					mods = append(mods, e)
				case e.Cat == "cpu_op":
					ops = append(ops, e)
				}
			}
			outerFirst := func(s []*rawEvent) {
				sort.SliceStable(s, func(a, b int) bool {
					if s[a].Ts != s[b].Ts {
						return s[a].Ts < s[b].Ts
					}
					return s[a].Dur > s[b].Dur
				})
			}
			switch {
			case len(mods) > 0:
				outerFirst(mods)
				var names []string
				for _, m := range mods {
					names = append(names, strings.TrimPrefix(m.Name, "nn.Module: "))
				}
				key = strings.Join(names, "/")
			case len(ops) > 0:
				outerFirst(ops)
				key = ops[0].Name
			}
		}
		per[key] += d
	}
	return per, total
}

// TestGPUTimeIndependent checks the GPU-time column against an attribution
// computed from the raw JSON.
func TestGPUTimeIndependent(t *testing.T) {
	files := []string{llamaLeak}
	for _, f := range []string{"hta-simple_add.json.gz", "tracelens-sglang_qwen3_decode.json.gz"} {
		if p := filepath.Join(fixtures, f); fileExists(p) {
			files = append(files, p)
		}
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			code, out, errOut := run(t, "summary", "--json", "--top", "0", path)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var s Summary
			if err := json.Unmarshal([]byte(out), &s); err != nil {
				t.Fatal(err)
			}
			per, total := independentGPUTime(t, path)
			if s.GPUTimeTotalNs != total {
				t.Errorf("total GPU time %d ns, independent sum over kernel events %d ns", s.GPUTimeTotalNs, total)
			}
			top := s.ModulesByGPUTime[0]
			if per[top.ModulePath] != top.GPUTimeNs {
				t.Errorf("top module %q: GPU time %d ns, independent sum %d ns", top.ModulePath, top.GPUTimeNs, per[top.ModulePath])
			}
			// Every row, not just the top one.
			for _, m := range s.ModulesByGPUTime {
				if per[m.ModulePath] != m.GPUTimeNs {
					t.Errorf("%q: %d ns, independent %d ns", m.ModulePath, m.GPUTimeNs, per[m.ModulePath])
				}
			}
			if len(s.ModulesByGPUTime) != len(per) {
				t.Errorf("%d module rows, independent attribution has %d keys", len(s.ModulesByGPUTime), len(per))
			}
			// Busy time cannot exceed the GPU time (overlaps count once) and
			// busy + idle is the window.
			for _, d := range s.Devices {
				if d.BusyNs > total || d.BusyNs+d.IdleNs != s.Trace.WindowNs {
					t.Errorf("device %d: busy %d idle %d, GPU time %d, window %d", d.Device, d.BusyNs, d.IdleNs, total, s.Trace.WindowNs)
				}
			}
		})
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestSummaryLeak checks the memory side against what the trace generator
// put in: 3 steps × 32 MiB kept by LlamaAttention_1.
func TestSummaryLeak(t *testing.T) {
	code, out, errOut := run(t, "summary", "--json", llamaLeak)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.LeakSuspects) != 1 || s.LeakSuspects[0].ModulePath != leakPath || s.LeakSuspects[0].OutstandingBytes != 3*32<<20 {
		t.Errorf("leak suspects %+v, want %s with 96 MiB", s.LeakSuspects, leakPath)
	}
	if m := s.ModulesByMemory[0]; m.ModulePath != leakPath || m.OutstandingBytes != 3*32<<20 || m.PeakBytes < m.OutstandingBytes {
		t.Errorf("top memory row %+v", m)
	}
	if s.Steps.Count != 3 || s.Steps.List[0].Name != "ProfilerStep#0" || s.Steps.MinNs <= 0 || s.Steps.MaxNs < s.Steps.MinNs {
		t.Errorf("steps %+v", s.Steps)
	}
	if s.Trace.TraceID != "fedcba9876543210fedcba9876543210" || *s.Trace.Rank != 0 || *s.Trace.WorldSize != 1 ||
		len(s.Trace.GPUs) != 1 || s.Trace.GPUs[0].Name != "NVIDIA A100-SXM4-80GB" {
		t.Errorf("trace info %+v", s.Trace)
	}

	// The base trace has no leak, so the diff sorted by memory puts the
	// leaking layer first with exactly the leaked bytes.
	code, out, errOut = run(t, "diff", llamaBase, llamaLeak, "--by", "memory", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d Diff
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	r := d.Modules[0]
	if r.ModulePath != leakPath || r.OutstandingBytes.Delta != 3*32<<20 || r.OutstandingBytes.DeltaPct != nil || r.Status != "both" {
		t.Errorf("first diff row %+v", r)
	}
	if d.Total.AllocatedBytes.Delta != 3*32<<20 {
		t.Errorf("total allocated delta %d", d.Total.AllocatedBytes.Delta)
	}
}

func TestDiffNewGone(t *testing.T) {
	a := &analysis{file: "a", gpu: []gpuSpan{{path: "X", start: 0, end: 100}, {path: "Y", start: 0, end: 50}}}
	b := &analysis{file: "b", gpu: []gpuSpan{{path: "X", start: 0, end: 150}, {path: "Z", start: 0, end: 10}}}
	d := compare(a, b, false, 0)
	got := map[string]DiffRow{}
	for _, r := range d.Modules {
		got[r.ModulePath] = r
	}
	if r := got["X"]; r.Status != "both" || r.GPUTimeNs.DeltaPct == nil || *r.GPUTimeNs.DeltaPct != 50 {
		t.Errorf("X %+v", r)
	}
	if r := got["Y"]; r.Status != "gone" || r.GPUTimeNs.DeltaPct != nil || r.GPUTimeNs.Delta != -50 {
		t.Errorf("Y %+v", r)
	}
	if r := got["Z"]; r.Status != "new" || r.GPUTimeNs.DeltaPct != nil {
		t.Errorf("Z %+v", r)
	}
	if d.Modules[0].ModulePath != "X" || d.Modules[1].ModulePath != "Y" || d.Modules[2].ModulePath != "Z" {
		t.Errorf("order by |Δ GPU time|: %v %v %v", d.Modules[0].ModulePath, d.Modules[1].ModulePath, d.Modules[2].ModulePath)
	}
	var buf bytes.Buffer
	writeDiff(&buf, d, style{})
	for _, want := range []string{"new", "gone", "+50.0%"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestIdleUnion(t *testing.T) {
	// Two streams overlapping on device 0: [10,30) and [20,40) busy 30 of a
	// 100 ns window; device 1 has [0,5).
	a := &analysis{winStart: 0, winEnd: 100, gpu: []gpuSpan{
		{device: 0, start: 10, end: 30}, {device: 0, start: 20, end: 40}, {device: 0, start: 25, end: 26},
		{device: 1, start: 0, end: 5}, {device: 0, start: 60, end: 70},
	}}
	got := a.idle()
	want := []DeviceIdle{{Device: 0, BusyNs: 40, IdleNs: 60, IdleFraction: 0.6, Activities: 4},
		{Device: 1, BusyNs: 5, IdleNs: 95, IdleFraction: 0.95, Activities: 1}}
	if !slices.Equal(got, want) {
		t.Errorf("idle %+v, want %+v", got, want)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	raw := decompress(t, llamaBase)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		path string
		want []string
	}{
		{"missing", filepath.Join(dir, "nope.json.gz"), []string{"nope.json.gz", "no such file"}},
		{"not json", write("notes.json", []byte("hello, world\n")), []string{"notes.json", "not a Kineto trace (not JSON)", "offset 0"}},
		{"no events", write("empty.json", []byte(`{"schemaVersion": 1}`)), []string{"empty.json", "not a Kineto trace: a JSON object with keys schemaVersion, no traceEvents", "Nsight Systems SQLite exports"}},
		// An interrupted export leaves an empty file: saying "not JSON"
		// of a .sqlite file sent people looking for a JSON problem.
		{"empty sqlite", write("report.sqlite", nil), []string{"report.sqlite", "empty file (0 bytes)", "Kineto", "CUDA memory snapshots", "Nsight Systems SQLite exports"}},
		// Valid JSON of another shape is not "malformed".
		{"json array", write("numbers.json", []byte("[1, 2, 3]\n")), []string{"numbers.json", "not a Kineto trace: a JSON array of 3 elements", "offset 1"}},
		{"traceEvents not an array", write("odd.json", []byte(`{"traceEvents": {"a": 1}, "deviceProperties": []}`)), []string{"odd.json", "not a Kineto trace: a JSON object with keys deviceProperties, traceEvents", "want an array"}},
		{"truncated json", write("cut.json", raw[:len(raw)/2]), []string{"cut.json", "truncated JSON", "offset ", "unexpected end of input"}},
		{"truncated gzip", write("cut.json.gz", gz.Bytes()[:gz.Len()/2]), []string{"cut.json.gz", "truncated file"}},
		{"malformed", write("bad.json", []byte(`{"traceEvents": [{"ph": "X",, }]}`)), []string{"bad.json", "malformed JSON", "offset 28 (line 1)"}},
		{"directory", dir, []string{dir, "is a directory"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, "summary", c.path)
			if code != ExitImportFailed || out != "" {
				t.Errorf("exit %d, stdout %q; want exit 1, nothing on stdout", code, out)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("error %q lacks %q", errOut, w)
				}
			}
		})
	}
	// diff names the file that failed.
	code, _, errOut := run(t, "diff", llamaBase, filepath.Join(dir, "gone.json"))
	if code != ExitImportFailed || !strings.Contains(errOut, "gone.json") {
		t.Errorf("diff: exit %d, %q", code, errOut)
	}
}

func decompress(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUsage(t *testing.T) {
	cases := [][]string{
		{},
		{"frobnicate"},
		{"summary"},
		{"summary", "a", "b"},
		{"summary", "--bogus", llamaBase},
		{"summary", "--top", "-1", llamaBase},
		{"summary", "--top", "x", llamaBase},
		{"diff", llamaBase},
		{"diff", llamaBase, llamaLeak, "--by", "speed"},
		{"export", llamaBase},
		{"export", "--otlp", "127.0.0.1:1"},
	}
	for _, args := range cases {
		code, out, errOut := run(t, args...)
		if code != ExitUsage || out != "" || errOut == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and a message", args, code, out, errOut)
		}
	}
	code, out, _ := run(t, "help")
	if code != ExitOK || !strings.Contains(out, "Exit codes:") || !strings.Contains(out, "3  export failed") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}

func TestParseArgsInterspersed(t *testing.T) {
	fs := newFlags("summary", io.Discard)
	j := fs.Bool("json", false, "")
	top := fs.Int("top", 10, "")
	pos, err := parseArgs(fs, []string{"a.json", "--json", "--top", "3", "--", "--weird-name.json"})
	if err != nil || !*j || *top != 3 || !slices.Equal(pos, []string{"a.json", "--weird-name.json"}) {
		t.Errorf("pos %q err %v json %v top %d", pos, err, *j, *top)
	}
}

func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{w: &buf, enabled: true, delay: 0, tick: time.Millisecond}
	var n atomic.Int64
	n.Store(512 << 10)
	p.start("/x/big.json.gz", 1<<20, &n)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		drawn := p.drawn
		p.mu.Unlock()
		if drawn {
			break
		}
		time.Sleep(time.Millisecond)
	}
	p.stop()
	out := buf.String()
	if !strings.Contains(out, "big.json.gz") || !strings.Contains(out, " 50% 512 KiB / 1 MiB") || !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("progress output %q", out)
	}
	// Not a terminal: nothing at all.
	var quiet bytes.Buffer
	q := newProgress(&quiet)
	q.start("f", 10, &n)
	q.stop()
	if quiet.Len() != 0 {
		t.Errorf("progress on a non-terminal wrote %q", quiet.String())
	}
}

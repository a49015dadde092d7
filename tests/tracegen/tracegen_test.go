// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package tracegen

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// doc is the part of a trace file the checks below read.
type doc struct {
	SchemaVersion    int               `json:"schemaVersion"`
	DeviceProperties []json.RawMessage `json:"deviceProperties"`
	DistributedInfo  struct {
		Rank      *int `json:"rank"`
		WorldSize *int `json:"world_size"`
	} `json:"distributedInfo"`
	TraceID  string      `json:"trace_id"`
	BaseTime int64       `json:"baseTimeNanoseconds"`
	Events   []jsonEvent `json:"traceEvents"`
}

// jsonEvent is one traceEvents entry as a JSON reader sees it.
type jsonEvent struct {
	Ph   string         `json:"ph"`
	Cat  string         `json:"cat"`
	Name string         `json:"name"`
	Pid  any            `json:"pid"`
	Tid  any            `json:"tid"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	ID   any            `json:"id"`
	Args map[string]any `json:"args"`
}

func (e jsonEvent) num(k string) int64 {
	v, ok := e.Args[k].(float64)
	if !ok {
		return -1
	}
	return int64(v)
}

func readDoc(t *testing.T, path string) doc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(zr); err != nil {
			t.Fatal(err)
		}
		data = buf.Bytes()
	}
	var d doc
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s is not valid JSON: %v", path, err)
	}
	return d
}

func leakOptions(start time.Time) Options {
	return Options{Pid: 41001, ProcessName: "vllm", Start: start, Layers: 16, Steps: 5,
		Leak: &Leak{Module: "LlamaAttention_12", BytesPerStep: 32 << 20}}
}

// TestTraceStructure checks the file against what Kineto writes and what
// the importer relies on: linked launches and kernels, flows in pairs, a
// consistent Python frame tree, and memory that balances except the leak.
func TestTraceStructure(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	path := filepath.Join(t.TempDir(), "rank0.pt.trace.json.gz")
	info, err := WriteFile(path, leakOptions(start))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left behind: %v", err)
	}
	const wantLeak = "LlamaForCausalLM_0/LlamaModel_0/LlamaDecoderLayer_12/LlamaAttention_12"
	if info.LeakModulePath != wantLeak {
		t.Errorf("leak module path %q, want %q", info.LeakModulePath, wantLeak)
	}
	if info.LeakBytes != 5*32<<20 {
		t.Errorf("leak bytes %d, want 5 steps x 32 MiB", info.LeakBytes)
	}
	if !info.Start.Equal(start) || !info.End.After(start) {
		t.Errorf("window %v .. %v, want it to start at %v", info.Start, info.End, start)
	}

	d := readDoc(t, path)
	if d.SchemaVersion != 1 || len(d.DeviceProperties) != 1 || d.DistributedInfo.Rank == nil || d.DistributedInfo.WorldSize == nil {
		t.Errorf("metadata: schema %d, %d devices, distributedInfo %+v", d.SchemaVersion, len(d.DeviceProperties), d.DistributedInfo)
	}
	if strings.ToLower(d.TraceID) != info.TraceID || len(d.TraceID) != 32 {
		t.Errorf("trace_id %q, info says %q", d.TraceID, info.TraceID)
	}
	if d.BaseTime != info.BaseTimeNanoseconds || d.BaseTime%int64(time.Second) != 0 {
		t.Errorf("baseTimeNanoseconds %d (info %d)", d.BaseTime, info.BaseTimeNanoseconds)
	}
	if len(d.Events) != info.Events {
		t.Errorf("%d events, info says %d", len(d.Events), info.Events)
	}

	launches := map[int64]int64{} // correlation -> External id
	kernels := map[int64]int64{}
	flows := map[string]map[int64]int{}
	pyIDs := map[int64]bool{0: true}
	var pyParents []int64
	modules := map[string]bool{}
	live := map[int64]int64{}
	phases := map[string]int{}
	firstTs := -1.0
	for _, e := range d.Events {
		phases[e.Ph]++
		switch {
		case e.Cat == "cuda_runtime":
			launches[e.num("correlation")] = e.num("External id")
		case e.Cat == "kernel" || e.Cat == "gpu_memcpy":
			kernels[e.num("correlation")] = e.num("External id")
			if e.num("device") != 0 || e.num("stream") != 7 || e.Pid != float64(0) {
				t.Errorf("kernel on device %d stream %d pid %v", e.num("device"), e.num("stream"), e.Pid)
			}
		case e.Cat == "ac2g":
			if flows[e.Ph] == nil {
				flows[e.Ph] = map[int64]int{}
			}
			flows[e.Ph][int64(e.ID.(float64))]++
		case e.Cat == "python_function":
			pyIDs[e.num("Python id")] = true
			pyParents = append(pyParents, e.num("Python parent id"))
			if m, ok := strings.CutPrefix(e.Name, "nn.Module: "); ok {
				modules[m] = true
			}
		case e.Name == "[memory]":
			if e.Cat != "cpu_instant_event" || e.Ph != "i" {
				t.Errorf("memory event %+v", e)
			}
			if e.num("Device Type") != 1 {
				continue
			}
			addr, b := e.num("Addr"), e.num("Bytes")
			switch {
			case b > 0:
				live[addr] = b
			case live[addr] != -b:
				t.Errorf("free of %d bytes at %x, which holds %d", -b, addr, live[addr])
			default:
				delete(live, addr)
			}
		}
		if e.Ph == "X" && e.Pid == float64(41001) && (firstTs < 0 || e.Ts < firstTs) {
			firstTs = e.Ts
		}
	}
	for _, ph := range []string{"X", "i", "s", "f", "M"} {
		if phases[ph] == 0 {
			t.Errorf("no %q events", ph)
		}
	}
	if got := time.Unix(0, d.BaseTime+int64(firstTs*1000+0.5)); got.Sub(start).Abs() > time.Microsecond {
		t.Errorf("first CPU event at %v, want %v", got, start)
	}
	if len(launches) == 0 || len(launches) != len(kernels) {
		t.Errorf("%d launches, %d kernels/memcpys", len(launches), len(kernels))
	}
	for c, ext := range kernels {
		if le, ok := launches[c]; !ok || le != ext {
			t.Errorf("kernel correlation %d (External id %d) has launch External id %d (found %v)", c, ext, le, ok)
		}
		if flows["s"][c] != 1 || flows["f"][c] != 1 {
			t.Errorf("correlation %d: %d flow starts, %d flow ends", c, flows["s"][c], flows["f"][c])
		}
	}
	for _, p := range pyParents {
		if !pyIDs[p] {
			t.Errorf("Python parent id %d is no frame's Python id", p)
		}
	}
	for _, m := range []string{"LlamaForCausalLM_0", "LlamaModel_0", "LlamaDecoderLayer_15", "LlamaAttention_12", "LlamaMLP_0", "LlamaRMSNorm_32", "Linear_112"} {
		if !modules[m] {
			t.Errorf("no nn.Module frame %q", m)
		}
	}
	var outstanding int64
	for _, b := range live {
		outstanding += b
	}
	if outstanding != info.LeakBytes {
		t.Errorf("%d bytes outstanding at the end, want the leak's %d", outstanding, info.LeakBytes)
	}
}

func TestOptionErrors(t *testing.T) {
	var buf bytes.Buffer
	if _, err := Write(&buf, Options{Layers: 4, Leak: &Leak{Module: "LlamaAttention_12"}}); err == nil || !strings.Contains(err.Error(), "matches no module") {
		t.Errorf("leak in a layer that does not exist: %v", err)
	}
	if _, err := Write(&buf, Options{TraceID: "xyz"}); err == nil {
		t.Error("a bad trace id was accepted")
	}
	// A fragment of several components works, and the caller's Leak is
	// left as it was.
	l := &Leak{Module: "/LlamaDecoderLayer_1/LlamaMLP_1"}
	info, err := Write(&buf, Options{Layers: 2, Leak: l})
	if err != nil || info.LeakModulePath != "LlamaForCausalLM_0/LlamaModel_0/LlamaDecoderLayer_1/LlamaMLP_1" {
		t.Errorf("leak path %q, err %v", info.LeakModulePath, err)
	}
	if l.BytesPerStep != 0 || l.Module != "/LlamaDecoderLayer_1/LlamaMLP_1" {
		t.Errorf("options modified: %+v", l)
	}
}

// importSummary is what kinetoparse -import prints per file.
type importSummary struct {
	Spans        int `json:"spans"`
	MemoryPoints int `json:"memory_points"`
	LeakSuspects int `json:"leak_suspects"`
	Metadata     struct {
		HasBaseTime bool
		TraceID     string
		Devices     []any
	} `json:"metadata"`
	ByCategory map[string]int `json:"by_category"`
	Seconds    []float64      `json:"seconds"`
	CPUSeconds []float64      `json:"cpu_seconds"`
}

// TestImportsWithTheReceiversBuilder runs the profile import receiver's own
// parser and builder (through its kinetoparse command: tests cannot import
// the receiver's internal packages) on generated traces.
func TestImportsWithTheReceiversBuilder(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "kinetoparse")
	build := exec.CommandContext(t.Context(), goBin, "build", "-o", bin, "./internal/profiles/kineto/cmd/kinetoparse")
	build.Dir = harness.RepoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building kinetoparse: %v\n%s", err, out)
	}
	now := time.Now()
	leaky := filepath.Join(dir, "leak.pt.trace.json.gz")
	if _, err := WriteFile(leaky, leakOptions(now)); err != nil {
		t.Fatal(err)
	}
	clean := filepath.Join(dir, "clean.pt.trace.json")
	if _, err := WriteFile(clean, Options{Pid: 41002, Start: now, Layers: 8, Steps: 3}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file  string
		leaks int
	}{{leaky, 1}, {clean, 0}} {
		out, err := exec.CommandContext(t.Context(), bin, "-import", c.file).Output()
		if err != nil {
			var stderr []byte
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				stderr = ee.Stderr
			}
			t.Fatalf("kinetoparse -import %s: %v\n%s", c.file, err, stderr)
		}
		var s importSummary
		if err := json.Unmarshal(out, &s); err != nil {
			t.Fatalf("kinetoparse output %q: %v", out, err)
		}
		if s.Spans == 0 || s.MemoryPoints == 0 || !s.Metadata.HasBaseTime || len(s.Metadata.Devices) != 1 || s.Metadata.TraceID == "" {
			t.Errorf("%s imported as %s", filepath.Base(c.file), out)
		}
		// Only the leaking module holds memory at the end: one suspect,
		// and none without a leak.
		if s.LeakSuspects != c.leaks {
			t.Errorf("%s: %d leak suspects, want %d", filepath.Base(c.file), s.LeakSuspects, c.leaks)
		}
		for _, cat := range []string{"python_function", "cpu_op", "cuda_runtime", "kernel", "ac2g", "cpu_instant_event", "user_annotation"} {
			if s.ByCategory[cat] == 0 {
				t.Errorf("%s: no %s events parsed", filepath.Base(c.file), cat)
			}
		}
		// -repeat (the bench's in-process passes) imports the file again
		// in the same process: each pass timed, the last pass's result
		// the same as a single pass's.
		out, err = exec.CommandContext(t.Context(), bin, "-import", "-repeat", "3", c.file).Output()
		if err != nil {
			t.Fatalf("kinetoparse -import -repeat 3 %s: %v", c.file, err)
		}
		var r importSummary
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("kinetoparse -repeat output %q: %v", out, err)
		}
		if len(r.Seconds) != 3 || slices.ContainsFunc(r.Seconds, func(v float64) bool { return v <= 0 }) {
			t.Errorf("%s: -repeat 3 timed %v, want 3 positive passes", filepath.Base(c.file), r.Seconds)
		}
		// Each pass's CPU time, which bench/profileimport holds against
		// the target's budget: a pass that parses uses some.
		if len(r.CPUSeconds) != 3 || slices.ContainsFunc(r.CPUSeconds, func(v float64) bool { return v <= 0 }) {
			t.Errorf("%s: -repeat 3 reported CPU %v, want 3 positive passes", filepath.Base(c.file), r.CPUSeconds)
		}
		r.Seconds, s.Seconds, r.CPUSeconds, s.CPUSeconds = nil, nil, nil, nil
		if !reflect.DeepEqual(r, s) {
			t.Errorf("%s: three passes ended in\n%+v\none pass in\n%+v", filepath.Base(c.file), r, s)
		}
	}
}

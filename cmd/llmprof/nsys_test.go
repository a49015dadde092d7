// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestSummaryOfAnNsightExport: summary reads an Nsight Systems export like
// a Kineto trace — GPU time per NVTX module path from its kernels, memory
// per module path, leak suspects — and diff compares two of them.
func TestSummaryOfAnNsightExport(t *testing.T) {
	file := filepath.Join("..", "..", "internal", "profiles", "nsys", "testdata", "recent.sqlite")
	var out, errb bytes.Buffer
	if code := Main([]string{"summary", "--json", file}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var s Summary
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	// The fixture's kernels: 100 ns launched inside the attention NVTX
	// range, 70 ns in its decoder layer, 20 ns without an NVTX range.
	want := map[string]int64{"Qwen2ForCausalLM/Qwen2DecoderLayer_0/Qwen2Attention_0": 100, "Qwen2ForCausalLM/Qwen2DecoderLayer_0": 70, "<unattributed>": 20}
	if len(s.ModulesByGPUTime) != len(want) {
		t.Fatalf("modules %+v", s.ModulesByGPUTime)
	}
	for _, m := range s.ModulesByGPUTime {
		if want[m.ModulePath] != m.GPUTimeNs {
			t.Errorf("%s: %d ns, want %d", m.ModulePath, m.GPUTimeNs, want[m.ModulePath])
		}
	}
	if len(s.LeakSuspects) == 0 {
		t.Error("no leak suspects from the export's outstanding cudaMalloc")
	}
	// The export's times count from the session start: the window is on
	// the wall clock, in the capture's year, and the summary says how.
	const clock = "session start 2023-11-14T22:13:20Z + offset (EXPORT_PARAM_TIME_NORMALIZE=false)"
	if y := time.Unix(0, s.Trace.StartNs).UTC().Year(); y != 2023 || s.Trace.Clock != clock {
		t.Errorf("window starts in %d, clock %q; want 2023, %q", y, s.Trace.Clock, clock)
	}
	out.Reset()
	if code := Main([]string{"summary", file}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !regexp.MustCompile(`(?m)^  times +` + regexp.QuoteMeta(clock) + `$`).Match(out.Bytes()) {
		t.Errorf("the text summary does not say which clock the times are on:\n%s", out.String())
	}
	out.Reset()
	if code := Main([]string{"diff", file, file}, &out, &errb); code != ExitOK {
		t.Fatalf("diff exit %d: %s", code, errb.String())
	}
}

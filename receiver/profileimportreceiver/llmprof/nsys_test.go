package llmprof

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestSummaryOfAnNsightExport: summary reads an Nsight Systems export like
// a Kineto trace — GPU time per NVTX module path from its kernels, memory
// per module path, leak suspects — and diff compares two of them.
func TestSummaryOfAnNsightExport(t *testing.T) {
	file := filepath.Join("..", "internal", "nsys", "testdata", "recent.sqlite")
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
	out.Reset()
	if code := Main([]string{"diff", file, file}, &out, &errb); code != ExitOK {
		t.Fatalf("diff exit %d: %s", code, errb.String())
	}
}

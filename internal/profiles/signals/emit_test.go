// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package signals

import (
	"strings"
	"testing"
)

func TestFormatBytes(t *testing.T) {
	const MiB = 1 << 20
	for n, w := range map[int64]string{0: "0 B", 512: "512 B", 1 << 20: "1 MiB", 1932735283: "1.8 GiB", 1000 * MiB: "1000 MiB", -3 << 10: "-3 KiB"} {
		if g := FormatBytes(n); g != w {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, g, w)
		}
	}
}

// TestFindTraceContext covers every form a profile names a request in:
// Kineto's trace_id metadata (32 hex or a UUID), a memory snapshot's
// user_metadata ("request_id=r1, trace_id=…"), an NVTX range's text, and
// the W3C traceparent, which wins over a bare id wherever it stands.
func TestFindTraceContext(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	const span = "00f067aa0ba902b7"
	uuid := id[:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:]
	for text, want := range map[string]string{
		id:                              id,
		strings.ToUpper(id):             id,
		uuid:                            id,
		"00-" + id + "-" + span + "-01": id + "/" + span,
		"request trace_id=" + id:        id,
		"request_id=r1, trace_id=" + id: id,
		"req-" + id:                     id,
		"[" + id + "]":                  id,
		"other=" + strings.Repeat("1", 32) + " tp=00-" + id + "-" + span + "-01": id + "/" + span,
		"trace_id=\"" + id + "\"": id,
		"x" + id + "ab":           "",
		id + "0":                  "",
		strings.Repeat("0", 32):   "",
		"00-" + strings.Repeat("0", 32) + "-" + span + "-01": "",
		"Qwen2Attention_0": "",
		"aten::mm, seq = 12, op_id = 3, sizes = [[4, 8]]": "",
		"not an id but long enough to be checked ....":    "",
		"": "",
	} {
		tc, ok := FindTraceContext(text)
		got := ""
		if ok {
			got = tc.Trace.String()
			if !tc.Span.IsEmpty() {
				got += "/" + tc.Span.String()
			}
		}
		if got != want {
			t.Errorf("FindTraceContext(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestSpanIDsDistinctAndStable(t *testing.T) {
	tc, _ := FindTraceContext("4bf92f3577b34da6a3ce929d0e0e4736")
	a, b := NewSpanIDs(tc.Trace), NewSpanIDs(tc.Trace)
	seen := map[[8]byte]bool{}
	for i := int32(-1); i < 100000; i++ {
		id := a.ID(i)
		if id != b.ID(i) {
			t.Fatalf("index %d: ids differ between two derivations", i)
		}
		if id.IsEmpty() || seen[id] {
			t.Fatalf("index %d: id %s empty or repeated", i, id)
		}
		seen[id] = true
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package signals

import (
	"encoding/binary"
	"encoding/hex"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// SpanIDs derives span ids from the trace id and a span's index (the root
// uses index -1): the same for the same input, so a re-imported file gets
// the same ids (an interrupted import resumes without duplicates), and
// distinct per index.
type SpanIDs struct{ seed uint64 }

// NewSpanIDs returns the span ids of trace tid.
func NewSpanIDs(tid pcommon.TraceID) SpanIDs {
	return SpanIDs{seed: binary.BigEndian.Uint64(tid[:8]) ^ binary.BigEndian.Uint64(tid[8:])}
}

// ID is the span id of index i.
func (s SpanIDs) ID(i int32) pcommon.SpanID {
	// splitmix64 finalizer over seed + index.
	z := s.seed + uint64(int64(i)+2)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	if z == 0 {
		z = 1
	}
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], z)
	return id
}

// TraceContext is a request's trace (and, from a traceparent, its span)
// named in a profile: a Kineto trace's trace_id metadata, a memory
// snapshot's user_metadata, an NVTX range's text.
type TraceContext struct {
	Trace pcommon.TraceID
	Span  pcommon.SpanID // zero unless the text held a W3C traceparent
}

// FindTraceContext finds a trace context in free text: a W3C traceparent
// ("00-<32 hex>-<16 hex>-<2 hex>") anywhere in it, else the first trace id
// written as 32 hex digits or as a UUID (8-4-4-4-12), case-insensitive.
// An id must stand alone: hex digits run on either side of it are part of
// something else (a longer hash), while any other character ("trace_id=",
// quotes, brackets, spaces) delimits it. An all-zero id is no id.
func FindTraceContext(text string) (TraceContext, bool) {
	var bare TraceContext
	found := false
	for i := 0; i < len(text); {
		if !isHexOrDash(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isHexOrDash(text[j]) {
			j++
		}
		run := strings.Trim(text[i:j], "-")
		i = j
		if tc, ok := parseTraceparent(run); ok {
			return tc, true
		}
		if !found {
			bare, found = parseBareTraceID(run)
		}
	}
	return bare, found
}

func isHexOrDash(c byte) bool {
	return c == '-' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// parseTraceparent reads a run of hex digits and dashes that is exactly a
// traceparent.
func parseTraceparent(run string) (TraceContext, bool) {
	var tc TraceContext
	if len(run) != 55 || run[2] != '-' || run[35] != '-' || run[52] != '-' {
		return tc, false
	}
	if !decodeHex(tc.Trace[:], run[3:35]) || !decodeHex(tc.Span[:], run[36:52]) || tc.Trace.IsEmpty() {
		return TraceContext{}, false
	}
	return tc, true
}

// parseBareTraceID reads a trace id from a run of hex digits and dashes:
// the whole run as 32 digits or a UUID, else a dash-separated part of
// exactly 32 digits ("req-<32 hex>").
func parseBareTraceID(run string) (TraceContext, bool) {
	var tc TraceContext
	if len(run) == 36 && run[8] == '-' && run[13] == '-' && run[18] == '-' && run[23] == '-' {
		run = run[:8] + run[9:13] + run[14:18] + run[19:23] + run[24:]
	}
	for part := range strings.SplitSeq(run, "-") {
		if decodeHex(tc.Trace[:], part) && !tc.Trace.IsEmpty() {
			return tc, true
		}
	}
	return TraceContext{}, false
}

// decodeHex fills dst from exactly 2·len(dst) hex digits.
func decodeHex(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	_, err := hex.Decode(dst, []byte(s))
	return err == nil
}

// Link gives span sp the ids of index i in trace tid, as a child of the
// span of index parent (of the root when parent < 0): every span of a
// profile hangs off the window's root.
func (s SpanIDs) Link(sp ptrace.Span, tid pcommon.TraceID, i, parent int32) {
	sp.SetTraceID(tid)
	sp.SetSpanID(s.ID(i))
	sp.SetParentSpanID(s.ID(max(parent, -1)))
	sp.SetKind(ptrace.SpanKindInternal)
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestSummaryOfASnapshot: `llmprof summary` on a CUDA memory snapshot
// reports the allocator per device, outstanding bytes by site, the leak
// suspect and the OOM — checked against the values the snapshot's Python
// generator computed independently (snapshot.expected.json).
func TestSummaryOfASnapshot(t *testing.T) {
	dir := filepath.Join("..", "..", "internal", "profiles", "snapshot", "testdata")
	var want struct {
		Allocator map[string]struct {
			Fragmentation float64 `json:"fragmentation"`
			Reserved      int64   `json:"reserved"`
			LargestFree   int64   `json:"largest_free"`
		} `json:"allocator"`
		LeaksBySite map[string]int64 `json:"leaks_by_site"`
		OOMTraceID  string           `json:"oom_trace_id"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "snapshot.expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"summary", "--json", filepath.Join(dir, "snapshot_p4.pickle")}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got SnapshotSummary
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Schema != SnapshotSchema || len(got.Devices) != len(want.Allocator) {
		t.Fatalf("schema %q, %d devices", got.Schema, len(got.Devices))
	}
	for _, d := range got.Devices {
		w := want.Allocator[jsonKey(d.Device)]
		if math.Abs(d.Fragmentation-w.Fragmentation) > 1e-9 || d.LargestFreeBlock != w.LargestFree || d.Reserved != w.Reserved {
			t.Errorf("device %d: %+v, want %+v", d.Device, d, w)
		}
	}
	if len(got.LeakSuspects) != 1 || got.LeakSuspects[0].Site != "model.py:88 remember" {
		t.Errorf("leak suspects %+v, want the site of %v", got.LeakSuspects, want.LeaksBySite)
	}
	if len(got.OOMs) != 1 || got.OOMs[0].TraceID != want.OOMTraceID {
		t.Errorf("OOMs %+v, want trace %s", got.OOMs, want.OOMTraceID)
	}
	if code := Main([]string{"summary", filepath.Join(dir, "malicious.pickle")}, &out, &errb); code != ExitImportFailed {
		t.Fatalf("a malicious pickle: exit %d", code)
	}
}

func jsonKey(d int64) string { b, _ := json.Marshal(d); return string(b) }

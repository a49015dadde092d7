// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ogorek "github.com/kisielk/og-rek"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// expectedFile is what gen_snapshot.py computed from the snapshot it wrote.
type expectedFile struct {
	OutstandingBySite map[string]int64 `json:"outstanding_by_site"`
	LeaksBySite       map[string]int64 `json:"leaks_by_site"`
	Allocator         map[string]struct {
		Reserved, Allocated int64
		LargestFree         int64   `json:"largest_free"`
		Fragmentation       float64 `json:"fragmentation"`
	} `json:"allocator"`
	Patterns map[string]struct {
		Pattern       string `json:"pattern"`
		Frame         string `json:"frame"`
		Steps         int64  `json:"steps"`
		GrowthPerStep int64  `json:"growth_per_step"`
	} `json:"patterns"`
	HealthySites    []string         `json:"healthy_sites"`
	OOMTraceID      string           `json:"oom_trace_id"`
	Segments        int64            `json:"segments"`
	Blocks          int64            `json:"blocks"`
	TraceEntries    int64            `json:"trace_entries"`
	EntriesByAction map[string]int64 `json:"entries_by_action"`
}

func loadExpected(t *testing.T) expectedFile {
	return loadExpectedFile(t, "testdata/snapshot.expected.json")
}

func loadExpectedFile(t *testing.T, name string) expectedFile {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	var e expectedFile
	require.NoError(t, json.Unmarshal(b, &e))
	return e
}

func gauges(md pmetric.Metrics, name string) map[int64][]pmetric.NumberDataPoint {
	out := map[int64][]pmetric.NumberDataPoint{}
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		if m.Name() != name {
			continue
		}
		dps := m.Gauge().DataPoints()
		for j := 0; j < dps.Len(); j++ {
			d, _ := dps.At(j).Attributes().Get(spec.AttrProfileDevice)
			out[d.Int()] = append(out[d.Int()], dps.At(j))
		}
	}
	return out
}

func TestImportMatchesGenerator(t *testing.T) {
	exp := loadExpected(t)
	for _, f := range []string{"snapshot_p2.pickle", "snapshot_p4.pickle", "snapshot_p5.pickle", "snapshot.json.gz"} {
		t.Run(f, func(t *testing.T) {
			res, err := ImportFile(filepath.Join("testdata", f), Options{})
			require.NoError(t, err)
			s := res.Summary
			assert.Equal(t, exp.Segments, s.Segments)
			assert.Equal(t, exp.Blocks, s.Blocks)
			assert.Equal(t, exp.TraceEntries, s.TraceEntries)
			assert.Equal(t, exp.EntriesByAction, s.EntriesByAction)
			assert.Equal(t, 2, s.Devices)
			assert.Equal(t, int64(1), s.OOMs)

			// Outstanding bytes by site.
			got := map[string]int64{}
			ms := res.Metrics.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
			for i := 0; i < ms.Len(); i++ {
				if ms.At(i).Name() != spec.ProfileMemoryOutstanding {
					continue
				}
				dps := ms.At(i).Sum().DataPoints()
				for j := 0; j < dps.Len(); j++ {
					a := dps.At(j).Attributes()
					site, _ := a.Get(spec.AttrProfileModulePath)
					dev, _ := a.Get(spec.AttrProfileDevice)
					got[dev.AsString()+"|"+site.Str()] = dps.At(j).IntValue()
				}
			}
			assert.Equal(t, exp.OutstandingBySite, got)

			// Allocator state.
			frag := gauges(res.Metrics, spec.ProfileAllocatorFragmentation)
			lfb := gauges(res.Metrics, MetricLargestFreeBlock)
			res2 := gauges(res.Metrics, spec.ProfileMemoryTotalReserved)
			all := gauges(res.Metrics, spec.ProfileMemoryTotalAllocated)
			for d, want := range exp.Allocator {
				dev := map[string]int64{"0": 0, "1": 1}[d]
				require.Len(t, frag[dev], 1)
				assert.InDelta(t, want.Fragmentation, frag[dev][0].DoubleValue(), 1e-12, "device %s", d)
				assert.Equal(t, want.LargestFree, lfb[dev][0].IntValue())
				// The last point of the series is the state at the snapshot.
				assert.Equal(t, want.Reserved, res2[dev][len(res2[dev])-1].IntValue())
				assert.Equal(t, want.Allocated, all[dev][len(all[dev])-1].IntValue())
				assert.Greater(t, len(all[dev]), 10, "history from the trace ring")
			}

			// Logs: the leak suspect and the OOM.
			var leaks, ooms []plog.LogRecord
			lrs := res.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
			for i := 0; i < lrs.Len(); i++ {
				k, _ := lrs.At(i).Attributes().Get(spec.IncidentKind)
				switch k.Str() {
				case "leak_suspect":
					leaks = append(leaks, lrs.At(i))
				case spec.IncidentKindGPUOOM:
					ooms = append(ooms, lrs.At(i))
				}
			}
			require.Len(t, leaks, len(exp.LeaksBySite))
			for _, lr := range leaks {
				site, _ := lr.Attributes().Get(spec.AttrProfileModulePath)
				dev, _ := lr.Attributes().Get(spec.AttrProfileDevice)
				b, _ := lr.Attributes().Get("llm.profile.memory.outstanding_bytes")
				assert.Equal(t, exp.LeaksBySite[dev.AsString()+"|"+site.Str()], b.Int())
				assert.Equal(t, plog.SeverityNumberWarn, lr.SeverityNumber())
				st, ok := lr.Attributes().Get(spec.AttrProfilePythonStack)
				require.True(t, ok)
				assert.Contains(t, st.Slice().At(2).Str(), "/app/model.py:88 remember")
				assert.False(t, lr.TraceID().IsEmpty(), "the leaking allocation was tagged with a request's trace id")
				// remember() is called from forward every 10th step and
				// each tensor it makes is kept.
				checkPattern(t, exp, lr)
			}
			require.Len(t, ooms, 1)
			o := ooms[0]
			assert.Equal(t, plog.SeverityNumberError, o.SeverityNumber())
			tid := o.TraceID()
			assert.Equal(t, exp.OOMTraceID, hex.EncodeToString(tid[:]))
			sid := o.SpanID()
			assert.Equal(t, "00f067aa0ba902b7", hex.EncodeToString(sid[:]))
			assert.Contains(t, o.Body().Str(), "CUDA out of memory on GPU 0 at model.py:212 forward: 6 GiB requested with 300 MiB free")
			req, _ := o.Attributes().Get(spec.AttrProfileRequestedBytes)
			assert.Equal(t, int64(6<<30), req.Int())
			_, ok := o.Attributes().Get(spec.AttrProfileAllocatorReservedBytes)
			assert.True(t, ok)
		})
	}
}

func TestLegacyBareSegments(t *testing.T) {
	exp := loadExpected(t)
	res, err := ImportFile("testdata/legacy_segments.pickle", Options{})
	require.NoError(t, err)
	assert.Equal(t, exp.Segments, res.Summary.Segments)
	assert.Equal(t, int64(0), res.Summary.TraceEntries)
	var sum int64
	for _, v := range exp.OutstandingBySite {
		sum += v
	}
	assert.Equal(t, sum, res.Summary.OutstandingBytes)
}

func TestUnsharedStacksAreInterned(t *testing.T) {
	res, err := ImportFile("testdata/snapshot_unshared.pickle", Options{})
	require.NoError(t, err)
	// Every entry has a list of its own, but only 6 distinct stacks exist.
	assert.Equal(t, 6, res.Summary.Stacks)
	assert.Equal(t, 13, res.Summary.Frames)
	assert.Equal(t, 1, res.Summary.LeakSuspects)
}

func TestRefusesCode(t *testing.T) {
	for f, op := range map[string]string{"malicious.pickle": "GLOBAL (posix.system)", "malicious_p4.pickle": "STACK_GLOBAL (posix.system)"} {
		_, err := ImportFile(filepath.Join("testdata", f), Options{})
		require.Error(t, err, f)
		require.ErrorIs(t, err, ErrRefused)
		assert.Contains(t, err.Error(), f)
		assert.Contains(t, err.Error(), op)
	}
	// Every refused opcode, alone after PROTO 2.
	for op, name := range refused {
		_, err := Import(bytes.NewReader([]byte{0x80, 2, op, '\n', '\n', '.'}), "x.pickle", Options{})
		require.Error(t, err)
		require.ErrorIs(t, err, ErrRefused, name)
		assert.Contains(t, err.Error(), name)
	}
}

func TestBadInput(t *testing.T) {
	data, err := os.ReadFile("testdata/snapshot_p2.pickle")
	require.NoError(t, err)
	for _, n := range []int{0, 1, 2, 100, len(data) / 2, len(data) - 1} {
		_, err := Import(bytes.NewReader(data[:n]), "cut.pickle", Options{})
		require.Error(t, err, "cut at %d", n)
		assert.Contains(t, err.Error(), "cut.pickle")
	}
	_, err = Import(bytes.NewReader(data), "big.pickle", Options{MaxBytes: 1000})
	require.ErrorContains(t, err, "limit")

	// A string claiming 2^60 bytes: refused without allocating it.
	huge := []byte{0x80, 4, 0x8d}
	huge = binary.LittleEndian.AppendUint64(huge, 1<<60)
	_, err = Import(bytes.NewReader(huge), "huge.pickle", Options{MaxBytes: 1 << 20})
	require.ErrorContains(t, err, "longer than")
	_, err = Import(bytes.NewReader(huge), "huge.pickle", Options{})
	require.ErrorContains(t, err, "truncated")

	for name, in := range map[string]string{
		"int.pickle":    "\x80\x02K\x05.",
		"dict.pickle":   "\x80\x02}q\x00.",
		"memo.pickle":   "\x80\x02h\x07.",
		"append.pickle": "\x80\x02K\x01K\x02a.",
		"kineto.json":   `{"traceEvents": []}`,
		"text.txt":      "hello",
		"bad.json":      `{"segments": [`,
		"segs.json":     `{"segments": [1, 2]}`,
	} {
		_, err := Import(strings.NewReader(in), name, Options{})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name)
	}
}

func TestIsSnapshotJSON(t *testing.T) {
	assert.True(t, IsSnapshotJSON([]byte(` {"segments": [`)))
	assert.True(t, IsSnapshotJSON([]byte("{\n  \"device_traces\"")))
	assert.False(t, IsSnapshotJSON([]byte(`{"schemaVersion": 1, "traceEvents": [`)))
	assert.False(t, IsSnapshotJSON([]byte("\x80\x02}")))
	gz, err := os.ReadFile("testdata/snapshot.json.gz")
	require.NoError(t, err)
	assert.True(t, IsSnapshotJSON(gz[:512]))
}

func TestFindTraceIDs(t *testing.T) {
	x, ok := findTraceIDs("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	require.True(t, ok)
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", hex.EncodeToString(x.trace[:]))
	_, ok = findTraceIDs("request_id=r1, trace_id=4BF92F3577B34DA6A3CE929D0E0E4736")
	assert.True(t, ok)
	_, ok = findTraceIDs("00000000000000000000000000000000")
	assert.False(t, ok)
	_, ok = findTraceIDs("not an id but long enough to be checked ....")
	assert.False(t, ok)
}

// TestAgreesWithOgrek decodes the same pickles with og-rek, an independent
// decoder, and compares the structure with what the importer counted.
func TestAgreesWithOgrek(t *testing.T) {
	for _, f := range []string{"snapshot_p2.pickle", "snapshot_p4.pickle"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		require.NoError(t, err)
		v, err := ogorek.NewDecoder(bytes.NewReader(b)).Decode()
		require.NoError(t, err)
		top := v.(map[any]any)
		segs := top["segments"].([]any)
		var blocks, active int64
		for _, sg := range segs {
			for _, bl := range sg.(map[any]any)["blocks"].([]any) {
				blocks++
				if bl.(map[any]any)["state"] == "active_allocated" {
					active += bl.(map[any]any)["size"].(int64)
				}
			}
		}
		var entries int64
		for _, dt := range top["device_traces"].([]any) {
			entries += int64(len(dt.([]any)))
		}
		res, err := ImportFile(filepath.Join("testdata", f), Options{})
		require.NoError(t, err)
		assert.Equal(t, int64(len(segs)), res.Summary.Segments)
		assert.Equal(t, blocks, res.Summary.Blocks)
		assert.Equal(t, active, res.Summary.OutstandingBytes)
		assert.Equal(t, entries, res.Summary.TraceEntries)
	}
}

func TestDecodeScalars(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want int64
	}{
		{[]byte{0x8a, 1, 0xff}, -1},
		{[]byte{0x8a, 2, 0x00, 0x80}, -0x8000},
		{[]byte{0x8a, 3, 0x00, 0x80, 0x00}, 0x8000},
		{[]byte{0x8a, 9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, -1},
	} {
		v := decodeLong(c.in[2:])
		assert.Equal(t, kInt, v.k)
		assert.Equal(t, c.want, v.n)
	}
	assert.Equal(t, kBigInt, decodeLong([]byte{0, 0, 0, 0, 0, 0, 0, 0, 1}).k)
	assert.Equal(t, math.MinInt64, int(decodeLong([]byte{0, 0, 0, 0, 0, 0, 0, 0x80}).n))
}

func FuzzImport(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.pickle")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte("\x80\x02}q\x00(X\x08\x00\x00\x00segmentsq\x01]q\x02X\x0d\x00\x00\x00device_tracesq\x03]q\x04]q\x05}q\x06(X\x06\x00\x00\x00actionq\x07X\x05\x00\x00\x00allocq\x08uaau."))
	f.Add([]byte(`{"segments": [], "device_traces": [[{"action": "alloc", "addr": 1, "size": 2, "time_us": 3, "frames": [{"filename": "a.py", "line": 1, "name": "f"}]}]]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := Import(bytes.NewReader(b), "fuzz.pickle", Options{MaxBytes: 1 << 20})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.pickle: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		s := res.Summary
		if s.ActiveBlocks > s.Blocks || s.LeakSuspects > 5 || s.Sites < 0 || s.Frames < 0 {
			t.Fatalf("inconsistent summary %+v", s)
		}
		if n := res.Logs.LogRecordCount(); int64(n) != int64(s.LeakSuspects)+s.OOMs {
			t.Fatalf("%d log records for %d leak suspects and %d OOMs", n, s.LeakSuspects, s.OOMs)
		}
		// Bounded output: per device, at most maxSitesPerDevice+1 sites
		// and ~2×maxSeriesPoints history points per series.
		if n := res.Metrics.DataPointCount(); n > max(s.Devices, 1)*(maxSitesPerDevice+1+4*(2*maxSeriesPoints+1)+2) {
			t.Fatalf("%d metric points for %d devices", n, s.Devices)
		}
	})
}

func BenchmarkImport(b *testing.B) {
	data, err := os.ReadFile("testdata/snapshot_p2.pickle")
	require.NoError(b, err)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Import(bytes.NewReader(data), "bench.pickle", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

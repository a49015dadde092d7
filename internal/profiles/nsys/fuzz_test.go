// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nsys

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
)

// FuzzRows fuzzes the layer above SQLite: the rows of the tables the
// importer reads, as a JSON document {"TABLE": {"cols": [...], "rows":
// [[...], ...]}}, mapped to spans, memory metrics and leak suspects. Whole
// SQLite files are not fuzzed: a mutated database page almost always fails
// SQLite's own checks ("database disk image is malformed"), which SQLite's
// fuzzing covers, and every input would cost a temporary file and a
// connection; the shapes that matter here (times, ids, nesting, missing
// columns, types) are reached directly through the rows.
//
// Properties: the mapping never fails nor panics on any rows; the spans
// are one trace with unique ids, each span's parent emitted before the
// batch ends (or the root), end >= start, inside the root's window;
// spans + dropped = events + root, within the span budget; leak suspects
// and memory points bounded; a clock is always described; the same rows
// give the same spans.
func FuzzRows(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzRows", "*"))
	if len(seeds) == 0 {
		f.Log("no committed seed corpus (go test -run TestFuzzSeeds -update-seeds writes it)")
	}
	for _, s := range seedDocs(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if len(doc) > 64<<10 {
			return
		}
		src, ok := decodeRows(doc)
		if !ok {
			return
		}
		opts := Options{SpanBudget: 40, LeakSuspects: 3}
		a := runRows(t, src, opts)
		b := runRows(t, src, opts)
		checkImport(t, a, opts)
		if len(a.spans) != len(b.spans) || a.res.Summary.Spans != b.res.Summary.Spans {
			t.Fatalf("two imports of the same rows differ: %d and %d spans", len(a.spans), len(b.spans))
		}
		for i := range a.spans {
			if a.spans[i].SpanID() != b.spans[i].SpanID() || a.spans[i].StartTimestamp() != b.spans[i].StartTimestamp() {
				t.Fatalf("span %d differs between two imports of the same rows", i)
			}
		}
	})
}

type memTable struct {
	cols []string
	rows [][]any
}

// memSource serves rows from memory, as sqlSource would from the file.
type memSource map[string]*memTable

func (m memSource) has(table string) bool { return m[table] != nil }

func (m memSource) col(table, c string) bool {
	return m[table] != nil && slices.Contains(m[table].cols, c)
}

func (m memSource) scan(table string, cols []string, fn func([]any) error) error {
	tb := m[table]
	if tb == nil {
		return fmt.Errorf("no table %s", table)
	}
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = slices.Index(tb.cols, c)
	}
	vals := make([]any, len(cols))
	for _, r := range tb.rows {
		for i, j := range idx {
			vals[i] = nil
			if j >= 0 && j < len(r) {
				vals[i] = r[j]
			}
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	return nil
}

// decodeRows reads the fuzz document: numbers become int64 (float64 when
// not integers), strings string (or []byte with a "b:" prefix, as SQLite
// BLOBs), null and anything else nil.
func decodeRows(doc []byte) (memSource, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var raw map[string]struct {
		Cols []string `json:"cols"`
		Rows [][]any  `json:"rows"`
	}
	if err := dec.Decode(&raw); err != nil {
		return nil, false
	}
	src := memSource{}
	for name, tb := range raw {
		mt := &memTable{cols: tb.Cols}
		for _, r := range tb.Rows {
			row := make([]any, len(r))
			for i, v := range r {
				switch x := v.(type) {
				case json.Number:
					if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
						row[i] = n
					} else if fl, err := strconv.ParseFloat(string(x), 64); err == nil {
						row[i] = fl
					}
				case string:
					if len(x) >= 2 && x[:2] == "b:" {
						row[i] = []byte(x[2:])
					} else {
						row[i] = x
					}
				case bool:
					row[i] = int64(0)
					if x {
						row[i] = int64(1)
					}
				}
			}
			mt.rows = append(mt.rows, row)
		}
		src[name] = mt
	}
	return src, true
}

func runRows(t *testing.T, src source, opts Options) imported {
	t.Helper()
	im := imported{byName: map[string]ptrace.Span{}}
	res, err := importSource(src, "fuzz.sqlite", opts.withDefaults(), 7, func(td ptrace.Traces) error {
		im.batches++
		ss := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for i := 0; i < ss.Len(); i++ {
			im.spans = append(im.spans, ss.At(i))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("rows that SQLite returned made the import fail: %v", err)
	}
	im.res = res
	return im
}

func checkImport(t *testing.T, im imported, opts Options) {
	t.Helper()
	sum := im.res.Summary
	if len(im.spans) == 0 || int64(len(im.spans)) != sum.Spans {
		t.Fatalf("%d spans emitted, summary says %d", len(im.spans), sum.Spans)
	}
	if sum.Spans > int64(opts.SpanBudget) {
		t.Fatalf("%d spans over the budget of %d", sum.Spans, opts.SpanBudget)
	}
	events := sum.Kernels + sum.Memcpys + sum.Memsets + sum.RuntimeCalls + sum.NVTXRanges
	if sum.Spans+sum.SpansDropped != events+1 {
		t.Fatalf("%d spans + %d dropped for %d events and the root", sum.Spans, sum.SpansDropped, events)
	}
	var byKind int64
	for _, n := range sum.SpansByKind {
		byKind += n
	}
	if byKind+1 != sum.Spans {
		t.Fatalf("spans by kind %v for %d spans", sum.SpansByKind, sum.Spans)
	}
	root := im.spans[0]
	seen := map[pcommon.SpanID]bool{}
	for i, s := range im.spans {
		if s.TraceID() != root.TraceID() {
			t.Fatalf("span %d in another trace", i)
		}
		if seen[s.SpanID()] {
			t.Fatalf("span id %s twice", s.SpanID())
		}
		seen[s.SpanID()] = true
		if s.EndTimestamp() < s.StartTimestamp() {
			t.Fatalf("span %q ends at %d before it starts at %d", s.Name(), s.EndTimestamp(), s.StartTimestamp())
		}
		if s.StartTimestamp() < root.StartTimestamp() || s.EndTimestamp() > root.EndTimestamp() {
			t.Fatalf("span %q (%d..%d) outside the root's window %d..%d", s.Name(), s.StartTimestamp(), s.EndTimestamp(), root.StartTimestamp(), root.EndTimestamp())
		}
	}
	for _, s := range im.spans[1:] {
		if !seen[s.ParentSpanID()] {
			t.Fatalf("span %q has a parent that was not emitted", s.Name())
		}
	}
	if sum.LeakSuspects > opts.LeakSuspects {
		t.Fatalf("%d leak suspects, at most %d asked", sum.LeakSuspects, opts.LeakSuspects)
	}
	if n := im.res.Metrics.DataPointCount(); int64(n) > 2*sum.MemoryEvents+int64(sum.Processes+1)*(signals.MaxMemoryPoints+1)*4 {
		t.Fatalf("%d metric points for %d memory events", n, sum.MemoryEvents)
	}
	if sum.Clock == "" {
		t.Fatal("no clock described")
	}
}

// Seeds: the committed fixture's rows and hostile shapes found while
// reading the mapping (see hostileDocs).
func seedDocs(tb testing.TB) [][]byte {
	tb.Helper()
	fixture, err := rowsOfFile(filepath.Join("testdata", "recent.sqlite"))
	if err != nil {
		tb.Fatal(err)
	}
	return append([][]byte{fixture}, hostileDocs()...)
}

// rowsOfFile turns an export into the fuzz document: every table the
// importer reads, every column.
func rowsOfFile(path string) ([]byte, error) {
	im := importDBRaw(path)
	if im.err != nil {
		return nil, im.err
	}
	out := map[string]any{}
	for table, cols := range im.s {
		var names []string
		for c := range cols {
			names = append(names, c)
		}
		slices.Sort(names)
		var rows [][]any
		err := scan(im.db, im.s, path, table, names, func(v []any) error {
			rows = append(rows, slices.Clone(v))
			return nil
		})
		if err != nil {
			return nil, err
		}
		out[table] = map[string]any{"cols": names, "rows": rows}
	}
	_ = im.db.Close() // opened read only
	return json.Marshal(out)
}

func hostileDocs() [][]byte {
	const minI, maxI = math.MinInt64, math.MaxInt64
	docs := []map[string]any{
		// Extreme and inverted times, a kernel spanning all of int64.
		{"CUPTI_ACTIVITY_KIND_KERNEL": tbl([]string{"start", "end", "deviceId", "correlationId", "globalPid", "shortName"},
			[]any{minI, maxI, 0, 1, 1 << 24, "k"}, []any{100, 50, 0, 2, 1 << 24, "inverted"}, []any{-5, -1, 0, 3, nil, nil}),
			"CUPTI_ACTIVITY_KIND_RUNTIME": tbl([]string{"start", "end", "globalTid", "correlationId", "nameId"},
				[]any{minI, minI, 1<<24 | 1, 1, "b:cudaLaunchKernel"}, []any{maxI, maxI, 1<<24 | 1, 2, 7})},
		// Session start near the top of int64 with times that would
		// overflow once it is added; an analysis start past every event.
		{"TARGET_INFO_SESSION_START_TIME": tbl([]string{"utcEpochNs"}, []any{int64(maxI - 10)}),
			"ANALYSIS_DETAILS":           tbl([]string{"startTime"}, []any{int64(1 << 62)}),
			"META_DATA_EXPORT":           tbl([]string{"name", "value"}, []any{"EXPORT_PARAM_TIME_NORMALIZE", "false"}),
			"CUPTI_ACTIVITY_KIND_MEMSET": tbl([]string{"start", "end", "correlationId"}, []any{0, 1000, 1}, []any{int64(maxI - 100), int64(maxI - 1), 2})},
		// NVTX ranges that overlap without nesting, on one thread, with
		// ids as strings, a request tag, and eventType as text.
		{"NVTX_EVENTS": tbl([]string{"start", "end", "globalTid", "text", "textId", "eventType"},
			[]any{0, 100, 5, "a", nil, 59}, []any{50, 150, 5, "b", nil, "59"}, []any{60, 70, 5, nil, 3, 60},
			[]any{10, 20, 5, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", nil, 59}, []any{1, 1, nil, nil, nil, nil}),
			"StringIds": tbl([]string{"id", "value"}, []any{3, "c"}, []any{"x", nil}),
			"CUPTI_ACTIVITY_KIND_RUNTIME": tbl([]string{"start", "end", "globalTid", "correlationId", "nameId"},
				[]any{61, 69, 5, 9, 3}, []any{61, 69, 6, 9, 3})},
		// Memory: frees before allocations, an address reused, duplicate
		// correlation ids across processes, kinds and operations unknown.
		{"CUDA_GPU_MEMORY_USAGE_EVENTS": tbl([]string{"start", "globalPid", "deviceId", "bytes", "memKind", "memoryOperationType", "address", "correlationId"},
			[]any{5, 1 << 24, 0, 100, 2, 1, 8, 1}, []any{6, 1 << 24, 0, 1 << 30, 2, 0, 8, 1}, []any{7, 1 << 24, 0, 1 << 21, 2, 0, 8, 1},
			[]any{8, 2 << 24, 0, maxI, 9, 0, 8, nil}, []any{9, 2 << 24, 0, minI, 2, 0, 16, 1}, []any{nil, nil, nil, nil, nil, nil, nil, nil}),
			"ENUM_CUDA_MEM_KIND":           tbl([]string{"id", "label"}, []any{2, "Device"}, []any{9, "Device static"}),
			"ENUM_CUDA_DEV_MEM_EVENT_OPER": tbl([]string{"id", "name"}, []any{0, "ALLOCATION"}, []any{1, "DEALLOCATION"}),
			"CUPTI_ACTIVITY_KIND_RUNTIME": tbl([]string{"start", "end", "globalTid", "correlationId", "nameId"},
				[]any{4, 5, 1<<24 | 1, 1, "cudaMalloc"}, []any{4, 5, 2<<24 | 1, 1, "cudaMalloc"})},
		// Tables present with none of the columns read.
		{"CUPTI_ACTIVITY_KIND_KERNEL": tbl([]string{"other"}, []any{1}), "NVTX_EVENTS": tbl(nil, []any{}),
			"CUPTI_ACTIVITY_KIND_MEMCPY": tbl([]string{"start", "end", "copyKind"}, []any{1.5, 2.5e3, 1e300}),
			"ENUM_CUDA_MEMCPY_OPER":      tbl([]string{"id"}, []any{1})},
	}
	var out [][]byte
	for _, d := range docs {
		b, _ := json.Marshal(d)
		out = append(out, b)
	}
	return out
}

func tbl(cols []string, rows ...[]any) map[string]any {
	return map[string]any{"cols": cols, "rows": rows}
}

type rawDB struct {
	db  *sql.DB
	s   schema
	err error
}

// importDBRaw opens an export as ImportFile does and probes its schema.
func importDBRaw(path string) rawDB {
	d, err := dsn(path)
	if err != nil {
		return rawDB{err: err}
	}
	db, err := sql.Open("sqlite", d)
	if err != nil {
		return rawDB{err: err}
	}
	s, err := probe(db, path)
	if err != nil {
		_ = db.Close() // opened read only; the probe's error is the one to report
		return rawDB{err: err}
	}
	return rawDB{db: db, s: s}
}

var updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/fuzz/FuzzRows from seedDocs")

// TestFuzzSeeds keeps the committed seed corpus equal to seedDocs (the
// fixture's rows and the hostile shapes) and runs the fuzz properties on
// each, so that they are checked by every go test, not only when fuzzing.
func TestFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzRows")
	docs := seedDocs(t)
	if *updateSeeds {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		names := []string{"fixture-recent"}
		for i := range docs[1:] {
			names = append(names, fmt.Sprintf("hostile-%d", i+1))
		}
		for i, d := range docs {
			body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(d)) + ")\n"
			if err := os.WriteFile(filepath.Join(dir, names[i]), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != len(docs) {
		t.Fatalf("%d committed seeds, %d in seedDocs (go test -run TestFuzzSeeds -update-seeds)", len(files), len(docs))
	}
	for _, d := range docs {
		src, ok := decodeRows(d)
		if !ok {
			t.Fatalf("seed does not decode: %s", d)
		}
		opts := Options{SpanBudget: 40, LeakSuspects: 3}
		checkImport(t, runRows(t, src, opts), opts)
	}
}

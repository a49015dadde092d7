// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kineto

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// outcome is everything a parse produces, for comparing the sequential
// parser with the parallel one.
type outcome struct {
	events []rec
	md     Metadata
	err    string
}

func parseAll(t testing.TB, r io.Reader, opts Options) outcome {
	t.Helper()
	var o outcome
	md, err := Parse(r, opts, HandlerFunc(func(e *Event) error {
		x := rec{e.Phase, e.Cat, e.Name, e.Pid, e.Tid, e.PidStr, e.TidStr, e.TsNs, e.DurNs, e.HasTs, e.HasDur, e.ID, e.BindPoint, e.Args}
		x.Args.Other = append([]KV(nil), e.Args.Other...)
		if len(x.Args.Other) == 0 {
			x.Args.Other = nil
		}
		o.events = append(o.events, x)
		return nil
	}))
	o.md = md
	if err != nil {
		o.err = err.Error()
	}
	return o
}

func sameOutcome(t *testing.T, what string, want, got outcome) {
	t.Helper()
	if want.err != got.err {
		t.Fatalf("%s: error %q, sequential %q", what, got.err, want.err)
	}
	if len(want.events) != len(got.events) {
		t.Fatalf("%s: %d events, sequential %d", what, len(got.events), len(want.events))
	}
	for i := range want.events {
		if !reflect.DeepEqual(want.events[i], got.events[i]) {
			t.Fatalf("%s: event %d differs:\n got %+v\nwant %+v", what, i, got.events[i], want.events[i])
		}
	}
	if !reflect.DeepEqual(want.md, got.md) {
		t.Fatalf("%s: metadata differs:\n got %+v\nwant %+v", what, got.md, want.md)
	}
}

// tinyParallel makes the parallel parser cut a small document into many
// jobs, so that every boundary case happens.
func tinyParallel(workers, block int, overrun int64) Options {
	return Options{Workers: workers, blockSize: block, overrun: overrun, firstBuf: 16}
}

// Documents where guesses go wrong: "},{" inside strings and in arrays of
// objects, events longer than a block, metadata after the array that looks
// like events, and errors after many events.
var trickyDocs = []string{
	smallDoc,
	`{"traceEvents": [` + strings.Repeat(`{"ph": "X", "name": "a},{b", "ts": 1, "args": {"x": [{"a": 1}, {"b": 2},{"c": 3}]}}, `, 40) + `{"ph": "i"}], "deviceProperties": [{"id": 0, "name": "A"}, {"id": 1}], "trace_id": "ABC"}`,
	`{"traceEvents": [` + strings.Repeat(`{"name": "`+strings.Repeat("},{", 50)+`", "ts": 2.5},`+"\n  ", 30) + `{"ph": "M"}]}`,
	`{"schemaVersion": 1, "traceEvents": [` + strings.Repeat(`{"ph": "X", "ts": 1, "dur": NaN}, `, 50) + `{"ph": "X", "ts": }]}`,
	`{"traceEvents": [` + strings.Repeat(`{"ph": "X", "ts": 1}, `, 50) + `{"ph": "X"} {"ph": "X"}]}`,
	`{"traceEvents": [` + strings.Repeat(`{"ph": "X", "ts": 1}, `, 50),
	`[` + strings.Repeat(`{"ph": "f", "id": 7, "bp": "e"},`, 60) + `{}]`,
	`{"traceEvents": [` + strings.Repeat(`{"ph": "X", "ts": 1}, `, 20) + `{"ph": "X", "args": {"Call stack": "` + strings.Repeat("x", 3000) + `"}}, ` + strings.Repeat(`{"ph": "i", "ts": 3}, `, 20) + `{}], "baseTimeNanoseconds": 5}`,
	`{"traceEvents": [` + strings.Repeat(`{"ph": "X", "ts": 1},{"ph":"X","ts":2},`, 30) + `{"ph": "X", "ts": 1}], "traceEvents": [{"ph": "i"}, {"ph": "i"}]}`,
	`{"traceEvents": [` + strings.Repeat(`{"ph": "X", "ts": 1}, `, 40) + `{"ph": "X", "name": "unterminated`,
}

func TestParallelMatchesSequential(t *testing.T) {
	// The documents must drive the parallel parser through every path.
	var used, reparsed, fellBack int
	testHookParallel = func(u, r int, f bool) {
		used += u
		reparsed += r
		if f {
			fellBack++
		}
	}
	defer func() { testHookParallel = nil }()
	defer func() {
		if !t.Failed() && (used < 1000 || reparsed < 50 || fellBack < 10) {
			t.Errorf("paths not exercised: %d jobs used, %d stretches parsed again, %d sequential fallbacks", used, reparsed, fellBack)
		}
		t.Logf("%d jobs used, %d stretches parsed again, %d sequential fallbacks", used, reparsed, fellBack)
	}()
	for d, doc := range trickyDocs {
		want := parseAll(t, strings.NewReader(doc), Options{})
		for _, workers := range []int{2, 3} {
			for _, block := range []int{7, 16, 64, 250, 1 << 20} {
				for _, overrun := range []int64{64, 4096} {
					what := fmt.Sprintf("doc %d, %d workers, block %d, overrun %d", d, workers, block, overrun)
					got := parseAll(t, strings.NewReader(doc), tinyParallel(workers, block, overrun))
					sameOutcome(t, what, want, got)
				}
			}
		}
	}
}

func TestParallelTruncatedAtEveryOffset(t *testing.T) {
	doc := trickyDocs[1]
	for n := 0; n <= len(doc); n += 3 {
		want := parseAll(t, strings.NewReader(doc[:n]), Options{})
		got := parseAll(t, strings.NewReader(doc[:n]), tinyParallel(2, 32, 256))
		sameOutcome(t, fmt.Sprintf("cut at %d", n), want, got)
	}
}

func TestParallelOneByteReader(t *testing.T) {
	doc := trickyDocs[2]
	want := parseAll(t, strings.NewReader(doc), Options{})
	got := parseAll(t, &oneByte{[]byte(doc)}, tinyParallel(2, 40, 1024))
	sameOutcome(t, "one-byte reader", want, got)
}

// On every fixture the parallel parser delivers exactly the sequential
// parser's events (compared by a hash of each event, in order).
func TestParallelFixtures(t *testing.T) {
	for name := range fixtures {
		t.Run(name, func(t *testing.T) {
			data := readFixture(t, name)
			if raceEnabled && len(data) > 4<<20 {
				t.Skip("too slow under the race detector; the parallel paths run under -race on the smaller fixtures and documents")
			}
			hash := func(opts Options) (uint64, Metadata, error) {
				h := fnv.New64a()
				md, err := Parse(bytes.NewReader(data), opts, HandlerFunc(func(e *Event) error {
					_, _ = fmt.Fprintf(h, "%+v\n", *e) // a hash.Hash's Write never fails
					return nil
				}))
				return h.Sum64(), md, err
			}
			want, wantMD, err := hash(Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, opts := range []Options{{Workers: 2}, tinyParallel(3, 4096, 1<<16)} {
				got, gotMD, err := hash(opts)
				if err != nil {
					t.Fatal(err)
				}
				if got != want || !reflect.DeepEqual(gotMD, wantMD) {
					t.Fatalf("workers %d block %d: events or metadata differ from the sequential parse", opts.Workers, opts.blockSize)
				}
			}
		})
	}
}

// Past MaxDecompressed the parallel parse fails with the sequential
// parser's ErrTooLarge, after the same events: those that ended before the
// limit, however the input was cut into reads.
func TestParallelMaxDecompressed(t *testing.T) {
	doc := trickyDocs[1]
	for _, limit := range []int64{10, 100, 1000, int64(len(doc)) - 1} {
		want := parseAll(t, strings.NewReader(doc), Options{MaxDecompressed: limit})
		o := tinyParallel(2, 64, 512)
		o.MaxDecompressed = limit
		if want.err == "" {
			t.Fatalf("limit %d: no error", limit)
		}
		sameOutcome(t, fmt.Sprintf("limit %d", limit), want, parseAll(t, strings.NewReader(doc), o))
		// However the input is cut into reads.
		sameOutcome(t, fmt.Sprintf("limit %d, one-byte reads", limit), want, parseAll(t, &oneByte{[]byte(doc)}, Options{MaxDecompressed: limit}))
	}
}

func TestParallelHandlerError(t *testing.T) {
	doc := trickyDocs[1]
	stopAfter := 17
	n := 0
	_, err := Parse(strings.NewReader(doc), tinyParallel(2, 64, 512), HandlerFunc(func(*Event) error {
		n++
		if n == stopAfter {
			return io.ErrShortBuffer
		}
		return nil
	}))
	if !errors.Is(err, io.ErrShortBuffer) || n != stopAfter {
		t.Fatalf("err %v after %d events, want the handler's error after %d", err, n, stopAfter)
	}
}

// NoOtherArgs changes nothing but Args.Other (left empty), on one
// goroutine and on several, on whole and on truncated documents.
func TestNoOtherArgs(t *testing.T) {
	check := func(what, doc string) {
		t.Helper()
		want := parseAll(t, strings.NewReader(doc), Options{})
		for i := range want.events {
			want.events[i].Args.Other = nil
		}
		seq := parseAll(t, strings.NewReader(doc), Options{NoOtherArgs: true})
		sameOutcome(t, what+", one goroutine", want, seq)
		par := tinyParallel(2, 64, 4096)
		par.NoOtherArgs = true
		sameOutcome(t, what+", parallel", want, parseAll(t, strings.NewReader(doc), par))
	}
	for d, doc := range trickyDocs {
		check(fmt.Sprintf("doc %d", d), doc)
	}
	doc := trickyDocs[1]
	for n := 0; n <= len(doc); n += 7 {
		check(fmt.Sprintf("cut at %d", n), doc[:n])
	}
	for name := range fixtures {
		data := readFixture(t, name)
		if len(data) > 4<<20 {
			continue // the large ones are TestParallelFixtures'
		}
		check(name, string(data))
	}
}

// failingReader returns its bytes and then err.
type failingReader struct {
	b   []byte
	err error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, r.err
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// A read error in the middle of traceEvents ends the parallel parse with
// that error (wrapped as the sequential parser wraps it), after a prefix
// of the sequential parser's events, wherever the read-ahead stands.
func TestParallelReadError(t *testing.T) {
	doc := trickyDocs[1]
	errDisk := errors.New("disk on fire")
	for n := 20; n < len(doc); n += 37 {
		want := parseAll(t, &failingReader{[]byte(doc[:n]), errDisk}, Options{})
		got := parseAll(t, &failingReader{[]byte(doc[:n]), errDisk}, tinyParallel(2, 32, 512))
		if !strings.Contains(want.err, errDisk.Error()) || got.err != want.err {
			t.Fatalf("cut at %d: error %q, sequential %q", n, got.err, want.err)
		}
		if len(got.events) < len(want.events) || !reflect.DeepEqual(got.events[:len(want.events)], want.events) {
			t.Fatalf("cut at %d: %d events, sequential delivered %d (a prefix of them expected)", n, len(got.events), len(want.events))
		}
	}
}

// Stopping the read-ahead at any point hands the stream back whole: what
// its goroutine read (sent, or read when told to quit) comes first, in
// order, then direct reads; every byte once, the limit kept, and the
// goroutine gone when stopReadAhead returns.
func TestReadAheadHandsBackEveryByte(t *testing.T) {
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, left := range []int64{-1, 0, 1, 333, 999, 1000, 5000} {
		for taken := 0; taken < 12; taken++ {
			what := fmt.Sprintf("left %d, %d blocks taken first", left, taken)
			first := &block{}
			s := &stream{r: bytes.NewReader(data), tail: first, left: left, blockSize: 64}
			s.readAhead(2)
			var got []byte
			b := first
			for range taken {
				nb, err := s.next(b)
				if nb == nil {
					if !errors.Is(err, io.EOF) {
						t.Fatalf("%s: %v", what, err)
					}
					break
				}
				got, b = append(got, nb.data...), nb
			}
			s.stopReadAhead()
			select {
			case <-s.aheadDone:
			default:
				t.Fatalf("%s: the read-ahead goroutine still runs", what)
			}
			for {
				nb, err := s.next(b)
				if nb == nil {
					if !errors.Is(err, io.EOF) {
						t.Fatalf("%s: %v", what, err)
					}
					break
				}
				got, b = append(got, nb.data...), nb
			}
			want := data
			if left >= 0 && left < int64(len(data)) {
				want = data[:left]
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: read %d bytes, want %d (or they differ)", what, len(got), len(want))
			}
		}
	}
}

// On documents of many lines the parallel parser's errors name the
// sequential parser's line, wherever the error falls: in a job, after a
// wrong guess, past the sequential fallback, after the array.
func TestParallelErrorLines(t *testing.T) {
	for d, doc := range trickyDocs {
		doc = strings.ReplaceAll(doc, ", ", ",\n  ")
		want := parseAll(t, strings.NewReader(doc), Options{})
		for _, block := range []int{16, 64, 250} {
			for _, overrun := range []int64{64, 4096} {
				got := parseAll(t, strings.NewReader(doc), tinyParallel(2, block, overrun))
				sameOutcome(t, fmt.Sprintf("doc %d, block %d, overrun %d", d, block, overrun), want, got)
			}
		}
	}
	doc := strings.ReplaceAll(trickyDocs[1], ", ", ",\n  ")
	for n := 0; n <= len(doc); n += 5 {
		for _, bad := range []string{"", "}", "x"} {
			cut := doc[:n] + bad
			want := parseAll(t, strings.NewReader(cut), Options{})
			sameOutcome(t, fmt.Sprintf("cut at %d + %q", n, bad), want, parseAll(t, strings.NewReader(cut), tinyParallel(2, 32, 256)))
		}
	}
}

// Documents larger than the parser's first buffer, with tokens longer
// than its own buffer (150 KB names, a 70 KB raw arg) in blocks of every
// size: the parallel parser reading blocks in place and copying what it
// keeps into its own buffer (growing it) gives the sequential outcome,
// whole and past MaxDecompressed at offsets inside the events array.
func TestParallelLargeDocuments(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"traceEvents": [` + "\n")
	for i := range 3000 {
		switch {
		case i%300 == 150:
			// A number (kept whole up to maxToken, where a string is
			// cut at MaxString) long enough that, starting anywhere in
			// the second half of a 256 KB block, it keeps more than the
			// parser's 64 KB buffer when the block ends; and a long name.
			fmt.Fprintf(&b, `  {"ph": "X", "name": "%s", "ts": %d, "dur": 1%s},`+"\n", strings.Repeat("n", 100<<10), i, strings.Repeat("0", 150<<10+i))
		case i%1000 == 700:
			fmt.Fprintf(&b, `  {"ph": "X", "name": "k", "ts": %d, "args": {"Input Dims": [%s1]}},`+"\n", i, strings.Repeat("12345, ", 10<<10))
		default:
			fmt.Fprintf(&b, `  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 9, "ts": %d, "dur": %d, "args": {"External id": %d, "x": "},{"}},`+"\n", 1000+i, i%7, i)
		}
	}
	b.WriteString(`  {"ph": "i"}], "traceName": "big"}`)
	doc := b.String()
	if len(doc) < 4*initialBuf {
		t.Fatalf("document of %d bytes: not larger than the buffers", len(doc))
	}
	opts := []Options{{Workers: 2}, tinyParallel(2, 4096, 1<<20), tinyParallel(3, 100_000, 4<<20), tinyParallel(2, 300_000, 4<<20)}
	want := parseAll(t, strings.NewReader(doc), Options{})
	if want.err != "" {
		t.Fatal(want.err)
	}
	for _, o := range opts {
		sameOutcome(t, fmt.Sprintf("block %d", o.blockSize), want, parseAll(t, strings.NewReader(doc), o))
	}
	for _, limit := range []int64{int64(len(doc)) / 3, int64(len(doc)) / 2, int64(len(doc)) - 100, int64(len(doc)) - 1} {
		want := parseAll(t, strings.NewReader(doc), Options{MaxDecompressed: limit})
		if want.err == "" {
			t.Fatalf("limit %d: no error", limit)
		}
		for _, o := range opts {
			o.MaxDecompressed = limit
			sameOutcome(t, fmt.Sprintf("limit %d, block %d", limit, o.blockSize), want, parseAll(t, strings.NewReader(doc), o))
		}
	}
}

// A .gz cut anywhere in its trailer (the CRC and length after a complete
// document) is a read error in both parsers: the gzip reader reports it
// as io.ErrUnexpectedEOF, the error io.ReadFull also uses for a short
// read, and taking it for the end of the input parsed a damaged file as
// whole in the parallel parser only.
func TestParallelGzipTrailerCut(t *testing.T) {
	doc := trickyDocs[1]
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	if _, err := zw.Write([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	z := zb.Bytes()
	for cut := 1; cut <= 8; cut++ {
		open := func() io.Reader {
			r, err := Open(bytes.NewReader(z[:len(z)-cut]))
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		want := parseAll(t, open(), Options{})
		if !strings.Contains(want.err, io.ErrUnexpectedEOF.Error()) {
			t.Fatalf("cut %d: sequential error %q, want an unexpected EOF", cut, want.err)
		}
		for _, block := range []int{32, 1 << 20} {
			got := parseAll(t, open(), tinyParallel(2, block, 512))
			if got.err != want.err {
				t.Fatalf("cut %d, block %d: error %q, sequential %q", cut, block, got.err, want.err)
			}
		}
	}
}

// TestLargeParallelParseLeavesNoGarbage: after a parallel parse of an
// events array of ParallelMinBytes or more, its working set is already
// collected (see events): with the collector's own pacing off, an explicit
// collection right after the parse frees only what the parser holds until
// it returns (its buffer, string table and current block: about 300 KiB
// here), not the 3.8 MiB of blocks, slots and worker state it freed
// before the collection was there. A small array is left to the
// collector.
func TestLargeParallelParseLeavesNoGarbage(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	event := `{"ph": "X", "cat": "kernel", "name": "void at::native::elementwise_kernel<128, 2>", "pid": 0, "tid": 7, "ts": 1669783687464181, "dur": 45, "args": {"External id": 3073, "correlation": 9}},` + "\n"
	garbageAfter := func(events int) (freed uint64, collections uint32) {
		doc := `{"traceEvents": [` + strings.Repeat(event, events) + `{}]}`
		var before, after, collected runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		n := 0
		if _, err := Parse(strings.NewReader(doc), Options{Workers: 2}, HandlerFunc(func(*Event) error { n++; return nil })); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		runtime.GC()
		runtime.ReadMemStats(&collected)
		if n != events+1 {
			t.Fatalf("%d events parsed, want %d", n, events+1)
		}
		runtime.KeepAlive(doc)
		if collected.HeapAlloc > after.HeapAlloc { // nothing was left to free
			return 0, after.NumGC - before.NumGC
		}
		return after.HeapAlloc - collected.HeapAlloc, after.NumGC - before.NumGC
	}
	large := ParallelMinBytes/len(event) + 1000
	freed, gcs := garbageAfter(large)
	if gcs != 1 || freed > 1<<20 {
		t.Errorf("%d events (%d MB) parsed in parallel: %d collections during the parse, %d KiB of garbage left, want 1 and under 1 MiB",
			large, large*len(event)>>20, gcs, freed>>10)
	}
	small := 2000
	if freed, gcs := garbageAfter(small); gcs != 0 {
		t.Errorf("%d events (%d KB) parsed in parallel forced %d collections (%d KiB left), want none", small, small*len(event)>>10, gcs, freed>>10)
	}
}

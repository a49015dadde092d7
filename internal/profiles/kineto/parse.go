// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kineto

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"

	// klauspost's inflate, rather than compress/gzip's: same format and
	// multistream reading, 25–45% less time gunzipping a trace (1.0–1.5 s
	// vs 0.76–0.81 s on the generated 541 MB trace's 29 MB .gz), which is
	// the floor of a .gz import.
	"github.com/klauspost/compress/gzip"
)

// Options tune Parse.
type Options struct {
	// MaxDecompressed bounds the bytes read from the (decompressed) stream;
	// beyond it the parse fails with ErrTooLarge (gzip bombs, 20 GB files),
	// when it needs the first byte past the limit: after every event that
	// ended before it. 0 = no limit.
	MaxDecompressed int64
	// Workers > 1 parses the events of traceEvents on that many goroutines
	// (see parallel.go); the Handler is still called from the goroutine
	// that called Parse, in file order, and the result is the same as with
	// one worker (events, Metadata, and the SyntaxError with its offset),
	// except that after a read error more of the events read before it may
	// have been delivered. ParseFile uses one worker for
	// files too small to gain from more (ParallelMinBytes).
	Workers int
	// NoOtherArgs leaves Args.Other empty: the remaining args are
	// validated and skipped, their keys and values not kept, for a
	// Handler that does not read them (the import's builder). On
	// hta-df_index_resolver, whose every op carries three or four such
	// args, this took 3% off the full import's CPU (3.84 → 3.73 s user
	// for 20 imports, BenchmarkImportDFIndexResolver).
	NoOtherArgs bool

	// Tests shrink the parallel parser's blocks and job overrun and the
	// top-level parser's first buffer (0: the defaults) to exercise every
	// boundary on small documents: with a first buffer smaller than the
	// document, the events array is read through the stream's blocks
	// (which jobs parse in place) rather than from bytes already buffered.
	blockSize int
	overrun   int64
	firstBuf  int
}

// ErrTooLarge is returned (wrapped) when the stream exceeds
// Options.MaxDecompressed.
var ErrTooLarge = errors.New("kineto: trace exceeds the maximum decompressed size")

// SyntaxError reports malformed or truncated JSON. Events delivered before
// it was detected have been delivered.
type SyntaxError struct {
	Offset int64 // byte offset in the decompressed stream
	Line   int   // 1-based line of Offset
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("offset %d (line %d): %s", e.Offset, e.Line, e.Msg)
}

// Bounds of what the parser keeps; everything beyond is scanned, not held.
const (
	// MaxString bounds a kept string (names, categories, pid/tid strings)
	// after unescaping; longer ones are truncated at a UTF-8 boundary.
	MaxString = 64 << 10
	// MaxRawArg bounds the raw JSON text of the structured args kept in
	// Args (Input Dims, grid, block) and of Args.Other values; a longer
	// value is left out ("").
	MaxRawArg = 64 << 10
	// MaxExtraValue bounds one Metadata.Extra value; a longer one is
	// truncated (at a UTF-8 boundary) and counted in ExtraTruncated.
	MaxExtraValue = 4 << 10
	// MaxExtra bounds the number of Metadata.Extra entries; further keys
	// are skipped and counted in ExtraDropped.
	MaxExtra = 64

	initialBuf = 64 << 10
	maxBuf     = 4 << 20 // holds a capture (markCap) plus a token
	maxToken   = 1 << 20 // a number's text longer than this is a SyntaxError
	maxDepth   = 10000   // nesting of skipped values

	maxSymbols     = 1 << 18 // interned strings before the table is flushed
	maxSymbolBytes = 64 << 20
	maxSymbolLen   = 1 << 10 // longer strings are not interned
	arenaChunk     = 32 << 10
)

var gzipMagic = []byte{0x1f, 0x8b}

// Open wraps r: if the data starts with the gzip magic it is decompressed
// (multistream files are read through), else it is read as is.
func Open(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if bytes.Equal(head, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("kineto: gzip: %w", err)
		}
		return zr, nil
	}
	return br, nil
}

// Gzipped reports whether r, from Open, decompresses its input.
func Gzipped(r io.Reader) bool {
	_, gz := r.(*gzip.Reader)
	return gz
}

// ParseFile opens path, decompresses it if it is gzipped (by magic, not by
// name) and parses it. Errors name the file.
func ParseFile(path string, opts Options, h Handler) (Metadata, error) {
	f, err := os.Open(path)
	if err != nil {
		return Metadata{Rank: -1, WorldSize: -1}, err
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	r, err := Open(f)
	if err != nil {
		return Metadata{Rank: -1, WorldSize: -1}, fmt.Errorf("%s: %w", path, err)
	}
	if opts.Workers > 1 {
		if st, err := f.Stat(); err == nil {
			opts.Workers = WorkersFor(st.Size(), Gzipped(r), opts.Workers)
		}
	}
	md, err := Parse(r, opts, h)
	if err != nil {
		return md, fmt.Errorf("%s: %w", path, err)
	}
	return md, nil
}

// Parse reads one trace document from r (already decompressed), calling h
// for every traceEvents entry in file order, and returns the Metadata found
// anywhere in the document. The document is a JSON object whose keys may
// come in any order (metadata before and/or after traceEvents); the Chrome
// "JSON array" form (a bare array of events) is accepted too.
//
// Format decisions:
//   - "ts"/"dur" (and every integer field) are converted from the decimal
//     text, never through float64: 1694039968955744.123 µs is
//     1694039968955744123 ns. Exponent forms (1.7e15) are exact too. Digits
//     below a nanosecond (below 1 for integer fields) are truncated toward
//     zero. A value out of the int64 range, NaN, Infinity or -Infinity
//     leaves the field absent (HasTs/HasDur false, args -1) and counts in
//     Metadata.NumberErrors; the event is still delivered. A quoted number
//     ("12.5") is accepted for these fields.
//   - NaN, Infinity and -Infinity are accepted wherever a value may be
//     (Args.Other and Metadata.Extra keep them as text). Unescaped control
//     characters in strings are kept verbatim; invalid UTF-8 is passed
//     through; lone UTF-16 surrogates in \u escapes become U+FFFD.
//   - Strings the parser keeps are unescaped and bounded (MaxString, raw
//     args MaxRawArg, Extra values MaxExtraValue); skipped values are
//     validated but never held, whatever their size. A UTF-8 byte order
//     mark is skipped.
//
// The error is a *SyntaxError for malformed or truncated input, wraps
// ErrTooLarge past Options.MaxDecompressed, is the read error of r, or is
// the Handler's error as returned. On error the Metadata holds what was read
// so far (Events counts the events delivered).
func Parse(r io.Reader, opts Options, h Handler) (md Metadata, err error) {
	p := &parser{
		r:     r,
		buf:   make([]byte, cmp.Or(opts.firstBuf, initialBuf)),
		mark:  -1,
		tok:   -1,
		limit: opts.MaxDecompressed,
		h:     h,
		tab:   newStrTab(),

		noOther: opts.NoOtherArgs,

		workers:   opts.Workers,
		stopAt:    -1,
		blockSize: cmp.Or(opts.blockSize, defaultBlock),
		overrun:   cmp.Or(opts.overrun, defaultOverrun),
	}
	p.md.Rank, p.md.WorldSize = -1, -1
	p.ev = &Event{Args: Args{Other: make([]KV, 0, MaxOtherArgs)}}
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(parseError)
			if !ok {
				panic(r)
			}
			md, err = p.md, pe.err
		}
	}()
	p.document()
	return p.md, nil
}

// parseError carries an error out of the recursive descent by panic; Parse
// recovers it (and only it).
type parseError struct{ err error }

type parser struct {
	r   io.Reader
	buf []byte
	// In a parallel job's parser: sr is r, and buf may be a block of the
	// stream itself (shared, read in place: see takeBlock), the parser's
	// own buffer then kept in own.
	sr     *streamReader
	shared bool
	own    []byte
	pos    int   // next byte to read
	end    int   // end of valid data in buf
	base   int64 // stream offset of buf[0]
	lines  int   // newlines in the stream before buf[0]
	read   int64 // bytes read from r
	limit  int64
	eof    bool

	// mark, when >= 0, is a position in buf whose bytes fill keeps (it is
	// moved along on compaction). markCap bounds what is kept: past it the
	// mark is dropped (markLost), after saving the first markCap bytes in
	// prefix when keepPrefix is set.
	mark       int
	markCap    int
	tok        int // start of the number or string being read, or -1
	markLost   bool
	keepPrefix bool
	prefix     []byte

	scratch []byte // unescaped strings
	h       Handler
	ev      *Event // the event being parsed
	// job, in a parallel job's parser, is that job: each event is parsed
	// in the job's own table (job.slot), where it is kept, rather than
	// parsed here and copied there.
	job   *job
	md    Metadata
	tab   *strTab
	depth int

	// Parallel parsing of traceEvents (parallel.go): workers > 1 enables
	// it in the top-level parser; a job's parser stops at stopAt (-1: no
	// stop) and sets arrayEnded when it consumed the closing ']'.
	noOther    bool // Options.NoOtherArgs
	workers    int
	stopAt     int64
	arrayEnded bool
	blockSize  int
	overrun    int64
}

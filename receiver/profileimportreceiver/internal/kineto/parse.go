package kineto

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf8"
)

// Options tune Parse.
type Options struct {
	// MaxDecompressed bounds the bytes read from the (decompressed) stream;
	// beyond it the parse fails with ErrTooLarge (gzip bombs, 20 GB files).
	// 0 = no limit.
	MaxDecompressed int64
	// Workers > 1 parses the events of traceEvents on that many goroutines
	// (see parallel.go); the Handler is still called from the goroutine
	// that called Parse, in file order, and the result is the same as with
	// one worker (events, Metadata, and the SyntaxError with its offset),
	// except that after a read error or ErrTooLarge more of the events read
	// before it may have been delivered. ParseFile uses one worker for
	// files too small to gain from more (ParallelMinBytes).
	Workers int

	// Tests shrink the parallel parser's blocks and job overrun (0: the
	// defaults) to exercise every boundary on small documents.
	blockSize int
	overrun   int64
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

// ParseFile opens path, decompresses it if it is gzipped (by magic, not by
// name) and parses it. Errors name the file.
func ParseFile(path string, opts Options, h Handler) (Metadata, error) {
	f, err := os.Open(path)
	if err != nil {
		return Metadata{Rank: -1, WorldSize: -1}, err
	}
	defer f.Close()
	r, err := Open(f)
	if err != nil {
		return Metadata{Rank: -1, WorldSize: -1}, fmt.Errorf("%s: %w", path, err)
	}
	if opts.Workers > 1 {
		if st, err := f.Stat(); err == nil {
			_, gz := r.(*gzip.Reader)
			opts.Workers = WorkersFor(st.Size(), gz, opts.Workers)
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
		buf:   make([]byte, initialBuf),
		mark:  -1,
		tok:   -1,
		limit: opts.MaxDecompressed,
		h:     h,
		tab:   newStrTab(),

		workers:   opts.Workers,
		stopAt:    -1,
		blockSize: cmp.Or(opts.blockSize, defaultBlock),
		overrun:   cmp.Or(opts.overrun, defaultOverrun),
	}
	p.md.Rank, p.md.WorldSize = -1, -1
	p.ev.Args.Other = make([]KV, 0, MaxOtherArgs)
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
	r     io.Reader
	buf   []byte
	pos   int   // next byte to read
	end   int   // end of valid data in buf
	base  int64 // stream offset of buf[0]
	lines int   // newlines in the stream before buf[0]
	read  int64 // bytes read from r
	limit int64
	eof   bool
	rerr  error // read error other than io.EOF

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
	ev      Event
	md      Metadata
	tab     *strTab
	depth   int

	// Parallel parsing of traceEvents (parallel.go): workers > 1 enables
	// it in the top-level parser; a job's parser stops at stopAt (-1: no
	// stop) and sets arrayEnded when it consumed the closing ']'.
	workers    int
	stopAt     int64
	arrayEnded bool
	blockSize  int
	overrun    int64
}

// fill reads more input, keeping buf[min(pos, mark, tok):]. It returns
// false at the end of the input.
func (p *parser) fill() bool {
	if p.eof {
		return false
	}
	keep := p.pos
	if p.mark >= 0 {
		if p.pos-p.mark > p.markCap {
			if p.keepPrefix {
				p.prefix = append(p.prefix[:0], p.buf[p.mark:p.mark+p.markCap]...)
			}
			p.mark, p.markLost = -1, true
		} else if p.mark < keep {
			keep = p.mark
		}
	}
	if p.tok >= 0 {
		if p.pos-p.tok > maxToken {
			p.failAt(p.tok, "token too long")
		}
		if p.tok < keep {
			keep = p.tok
		}
	}
	if keep > 0 {
		p.lines += bytes.Count(p.buf[:keep], nl)
		p.base += int64(keep)
		n := copy(p.buf, p.buf[keep:p.end])
		p.pos -= keep
		if p.mark >= 0 {
			p.mark -= keep
		}
		if p.tok >= 0 {
			p.tok -= keep
		}
		p.end = n
		p.buf[n] = 0
	}
	if p.end == len(p.buf)-1 {
		// Everything held is being kept (at most markCap+maxToken bytes):
		// grow, within maxBuf.
		if len(p.buf) >= maxBuf {
			p.fail("token too long")
		}
		nb := make([]byte, min(2*len(p.buf), maxBuf))
		copy(nb, p.buf[:p.end])
		p.buf = nb
	}
	for {
		want := len(p.buf) - 1 - p.end // keep room for the sentinel
		if p.limit > 0 && int64(want) > p.limit-p.read+1 {
			want = int(p.limit - p.read + 1)
		}
		n, err := p.r.Read(p.buf[p.end : p.end+want])
		p.end += n
		p.buf[p.end] = 0
		p.read += int64(n)
		if p.limit > 0 && p.read > p.limit {
			p.end -= n
			p.buf[p.end] = 0
			p.read -= int64(n)
			p.eof = true
			panic(parseError{fmt.Errorf("kineto: offset %d: %w (%d bytes)", p.base+int64(p.end), ErrTooLarge, p.limit)})
		}
		if err != nil {
			p.eof = true
			if err != io.EOF {
				panic(parseError{fmt.Errorf("kineto: reading at offset %d: %w", p.base+int64(p.end), err)})
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

var nl = []byte{'\n'}

// fail stops the parse with a SyntaxError at buf[at].
func (p *parser) failAt(at int, msg string) {
	if at > p.end {
		at = p.end
	}
	off := p.base + int64(at)
	line := p.lines + bytes.Count(p.buf[:at], nl) + 1
	panic(parseError{&SyntaxError{Offset: off, Line: line, Msg: msg}})
}

func (p *parser) fail(msg string) { p.failAt(p.pos, msg) }

func (p *parser) failUnexpected(what string) {
	if p.pos >= p.end {
		p.fail("unexpected end of input " + what)
	}
	p.fail(fmt.Sprintf("unexpected %s %s", quoteByte(p.buf[p.pos]), what))
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// ws skips whitespace and returns the next byte without consuming it;
// at the end of input it fails, naming what was expected.
func (p *parser) ws(what string) byte {
	// buf[end] is a 0 sentinel: no need to test pos < end here.
	if c := p.buf[p.pos]; c > ' ' {
		return c
	}
	return p.wsSlow(what)
}

func (p *parser) wsSlow(what string) byte {
	for {
		rest := p.buf[p.pos:p.end]
		for i, c := range rest {
			if c > ' ' || !isSpace(c) {
				p.pos += i
				return c
			}
		}
		p.pos = p.end
		if !p.fill() {
			p.fail("unexpected end of input " + what)
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// atEOF skips whitespace and reports whether the input ends there.
func (p *parser) atEOF() bool {
	for {
		for p.pos < p.end {
			if !isSpace(p.buf[p.pos]) {
				return false
			}
			p.pos++
		}
		if !p.fill() {
			return true
		}
	}
}

func (p *parser) expect(c byte, what string) {
	if p.ws(what) != c {
		p.failUnexpected(what)
	}
	p.pos++
}

// document parses the top level.
func (p *parser) document() {
	// A UTF-8 byte order mark is tolerated.
	if p.end-p.pos < 3 {
		p.fill()
		for p.end < 3 && p.fill() {
		}
	}
	if p.end >= 3 && p.buf[0] == 0xef && p.buf[1] == 0xbb && p.buf[2] == 0xbf {
		p.pos = 3
	}
	switch p.ws("(empty document)") {
	case '{':
		p.pos++
		p.topObject()
	case '[':
		p.pos++
		p.events()
	default:
		p.failUnexpected("at the start of the document (want a JSON object)")
	}
	if !p.atEOF() {
		p.fail(fmt.Sprintf("unexpected %s after the top-level value", quoteByte(p.buf[p.pos])))
	}
}

func (p *parser) topObject() {
	if p.ws("in the top-level object") == '}' {
		p.pos++
		return
	}
	for {
		p.expectKeyStart("in the top-level object")
		k := p.str()
		code := topKey(k)
		var name string
		if code == topExtra {
			name = string(k)
		}
		p.expect(':', "after a key")
		switch code {
		case topTraceEvents:
			if p.ws("for traceEvents") != '[' {
				if p.peekNull() {
					break
				}
				p.failUnexpected("for traceEvents (want an array)")
			}
			p.pos++
			p.events()
		case topSchemaVersion:
			if v, ok := p.intValue(0); ok {
				p.md.SchemaVersion = v
			}
		case topBaseTime:
			if v, ok := p.intValue(0); ok {
				p.md.BaseTimeNs, p.md.HasBaseTime = v, true
			}
		case topTraceID:
			p.md.TraceID = p.textValue()
		case topDisplayTimeUnit:
			p.md.DisplayTimeUnit = p.textValue()
		case topTraceName:
			p.md.TraceName = p.textValue()
		case topDeviceProperties:
			p.devices()
		case topDistributedInfo:
			p.distributed()
		default:
			p.extra(name)
		}
		if p.endOfMember("in the top-level object", '}') {
			return
		}
	}
}

// endOfMember consumes the ',' or the closing byte after a member; it
// reports whether it was the closing one.
func (p *parser) endOfMember(what string, closing byte) bool {
	c := p.ws(what)
	p.pos++
	if c == ',' {
		return false
	}
	if c == closing {
		return true
	}
	p.pos--
	p.failUnexpected(what)
	return false
}

func (p *parser) expectKeyStart(what string) {
	if p.ws(what) != '"' {
		p.failUnexpected(what + " (want a key)")
	}
}

const (
	topExtra = iota
	topTraceEvents
	topSchemaVersion
	topBaseTime
	topTraceID
	topDisplayTimeUnit
	topTraceName
	topDeviceProperties
	topDistributedInfo
)

func topKey(k []byte) int {
	switch string(k) {
	case "traceEvents":
		return topTraceEvents
	case "schemaVersion":
		return topSchemaVersion
	case "baseTimeNanoseconds":
		return topBaseTime
	case "trace_id":
		return topTraceID
	case "displayTimeUnit":
		return topDisplayTimeUnit
	case "traceName":
		return topTraceName
	case "deviceProperties":
		return topDeviceProperties
	case "distributedInfo":
		return topDistributedInfo
	}
	return topExtra
}

// peekNull consumes a null literal if one is next.
func (p *parser) peekNull() bool {
	if p.pos < p.end && p.buf[p.pos] == 'n' {
		p.lit("null")
		return true
	}
	return false
}

// extra records an unknown top-level key into Metadata.Extra: strings
// unescaped, other scalars and objects/arrays as raw JSON text.
func (p *parser) extra(name string) {
	if len(p.md.Extra) >= MaxExtra {
		p.md.ExtraDropped++
		p.skipValue()
		return
	}
	var v string
	truncated := false
	if p.ws("for a value") == '"' {
		s := p.str()
		if len(s) > MaxExtraValue {
			s, truncated = truncUTF8(s, MaxExtraValue), true
		}
		v = string(s)
	} else {
		raw, lost := p.capture(MaxExtraValue, true)
		if lost {
			raw, truncated = truncUTF8(p.prefix, MaxExtraValue), true
		} else if len(raw) > MaxExtraValue {
			raw, truncated = truncUTF8(raw, MaxExtraValue), true
		}
		v = string(raw)
	}
	if truncated {
		p.md.ExtraTruncated++
	}
	p.md.Extra = append(p.md.Extra, KV{Key: name, Value: v})
}

// truncUTF8 cuts b to at most n bytes without splitting a UTF-8 sequence.
func truncUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	i := n
	for i > 0 && i > n-utf8.UTFMax && !utf8.RuneStart(b[i]) {
		i--
	}
	return b[:i]
}

func (p *parser) devices() {
	c := p.ws("for deviceProperties")
	if c != '[' {
		p.skipValue()
		return
	}
	p.pos++
	if p.ws("in deviceProperties") == ']' {
		p.pos++
		return
	}
	for {
		if p.ws("in deviceProperties") != '{' {
			p.skipValue()
		} else {
			p.pos++
			d := DeviceProperty{ID: -1}
			p.object("in a device property", func(k []byte) func() {
				switch string(k) {
				case "id":
					return func() { d.ID = p.intOr(-1) }
				case "name":
					return func() { d.Name = p.textValue() }
				case "totalGlobalMem":
					return func() { d.TotalGlobalMem = p.intOr(0) }
				case "computeMajor":
					return func() { d.ComputeMajor = p.intOr(0) }
				case "computeMinor":
					return func() { d.ComputeMinor = p.intOr(0) }
				}
				return nil
			})
			p.md.Devices = append(p.md.Devices, d)
		}
		if p.endOfMember("in deviceProperties", ']') {
			return
		}
	}
}

func (p *parser) distributed() {
	if p.ws("for distributedInfo") != '{' {
		p.skipValue()
		return
	}
	p.pos++
	p.object("in distributedInfo", func(k []byte) func() {
		switch string(k) {
		case "backend":
			return func() { p.md.Backend = p.textValue() }
		case "rank":
			return func() { p.md.Rank = p.intOr(-1) }
		case "world_size":
			return func() { p.md.WorldSize = p.intOr(-1) }
		}
		return nil
	})
}

// object parses the members of an object whose '{' is consumed (slow path,
// for metadata). member returns the value reader for a key, nil to skip.
func (p *parser) object(what string, member func(k []byte) func()) {
	if p.ws(what) == '}' {
		p.pos++
		return
	}
	for {
		p.expectKeyStart(what)
		read := member(p.str())
		p.expect(':', "after a key")
		if read != nil {
			read()
		} else {
			p.skipValue()
		}
		if p.endOfMember(what, '}') {
			return
		}
	}
}

func (p *parser) intOr(def int64) int64 {
	if v, ok := p.intValue(0); ok {
		return v
	}
	return def
}

// textValue reads a value as text: a string unescaped, any other scalar as
// its JSON text, null as "", objects/arrays as raw JSON (bounded).
func (p *parser) textValue() string {
	switch p.ws("for a value") {
	case '"':
		return string(p.str())
	case 'n':
		p.lit("null")
		return ""
	}
	raw, lost := p.capture(MaxRawArg, false)
	if lost {
		return ""
	}
	return string(raw)
}

// events parses the traceEvents array whose '[' is consumed.
func (p *parser) events() {
	if p.ws("in traceEvents") == ']' {
		p.pos++
		return
	}
	if p.workers > 1 {
		p.eventsParallel()
		return
	}
	p.eventLoop()
}

// eventLoop parses the events of traceEvents from an event start to the
// closing ']', which it consumes. In a parallel job (stopAt >= 0) it also
// stops, without consuming anything, at the first event start at or past
// stopAt (see parallel.go).
func (p *parser) eventLoop() {
	for {
		c := p.ws("in traceEvents")
		if p.stopAt >= 0 && p.base+int64(p.pos) >= p.stopAt {
			return
		}
		if c != '{' {
			p.failUnexpected("in traceEvents (want an event object)")
		}
		p.pos++
		p.event()
		p.md.Events++
		if err := p.h.Event(&p.ev); err != nil {
			panic(parseError{err})
		}
		// Inline endOfMember for the hot loop.
		c = p.ws("in traceEvents")
		p.pos++
		if c == ',' {
			continue
		}
		if c == ']' {
			p.arrayEnded = true
			return
		}
		p.pos--
		p.failUnexpected("after an event (want ',' or ']')")
	}
}

// Reset clears the event for reuse, keeping Args.Other's storage.
func (e *Event) Reset() {
	args := e.Args
	*e = Event{}
	e.Args = args
	e.Args.Reset()
}

const (
	evSkip = iota
	evPh
	evCat
	evName
	evPid
	evTid
	evTs
	evDur
	evID
	evBp
	evArgs
)

func eventKey(k []byte) int {
	switch string(k) {
	case "ph":
		return evPh
	case "cat":
		return evCat
	case "name":
		return evName
	case "pid":
		return evPid
	case "tid":
		return evTid
	case "ts":
		return evTs
	case "dur":
		return evDur
	case "id":
		return evID
	case "bp":
		return evBp
	case "args":
		return evArgs
	}
	return evSkip
}

// event parses one event object whose '{' is consumed into p.ev.
func (p *parser) event() {
	e := &p.ev
	e.Reset()
	if p.ws("in an event") == '}' {
		p.pos++
		return
	}
	for {
		p.expectKeyStart("in an event")
		code := eventKey(p.str())
		p.colon()
		switch code {
		case evPh:
			e.Phase = 0
			if p.ws("for ph") == '"' {
				if s := p.str(); len(s) > 0 {
					e.Phase = s[0]
				}
			} else {
				p.skipValue()
			}
		case evCat:
			e.Cat = p.symbol()
		case evName:
			e.Name = p.symbol()
		case evPid:
			e.Pid, e.PidStr = p.idValue()
		case evTid:
			e.Tid, e.TidStr = p.idValue()
		case evTs:
			e.TsNs, e.HasTs = p.intValue(3)
		case evDur:
			e.DurNs, e.HasDur = p.intValue(3)
		case evID:
			e.ID = p.rawText(false)
		case evBp:
			e.BindPoint = p.symbol()
		case evArgs:
			if p.ws("for args") == '{' {
				p.pos++
				p.args()
			} else {
				p.skipValue()
			}
		default:
			p.skipValue()
		}
		c := p.ws("in an event")
		p.pos++
		if c == ',' {
			continue
		}
		if c == '}' {
			return
		}
		p.pos--
		p.failUnexpected("in an event (want ',' or '}')")
	}
}

// colon consumes the ':' after a key.
func (p *parser) colon() {
	if p.pos < p.end && p.buf[p.pos] == ':' {
		p.pos++
		return
	}
	p.expect(':', "after a key")
}

const (
	argOther = iota
	argExternalID
	argCorrelation
	argPythonID
	argPythonParentID
	argDevice
	argStream
	argAddr
	argBytes
	argTotalAllocated
	argTotalReserved
	argDeviceType
	argDeviceID
	argInputDims
	argGrid
	argBlock
	argCallStack
	argName
)

func argKey(k []byte) int {
	switch string(k) {
	case "External id", "external id":
		return argExternalID
	case "correlation":
		return argCorrelation
	case "Python id":
		return argPythonID
	case "Python parent id":
		return argPythonParentID
	case "device":
		return argDevice
	case "stream":
		return argStream
	case "Addr":
		return argAddr
	case "Bytes":
		return argBytes
	case "Total Allocated":
		return argTotalAllocated
	case "Total Reserved":
		return argTotalReserved
	case "Device Type":
		return argDeviceType
	case "Device Id":
		return argDeviceID
	case "Input Dims":
		return argInputDims
	case "grid":
		return argGrid
	case "block":
		return argBlock
	case "Call stack":
		return argCallStack
	case "name":
		return argName
	}
	return argOther
}

// args parses an args object whose '{' is consumed into p.ev.Args.
func (p *parser) args() {
	a := &p.ev.Args
	if p.ws("in args") == '}' {
		p.pos++
		return
	}
	for {
		p.expectKeyStart("in args")
		k := p.str()
		code := argKey(k)
		var key string
		if code == argOther && len(a.Other) < MaxOtherArgs {
			key = p.tab.sym(k)
		}
		p.colon()
		switch code {
		case argExternalID:
			a.ExternalID = p.intOr(-1)
		case argCorrelation:
			a.Correlation = p.intOr(-1)
		case argPythonID:
			a.PythonID = p.intOr(-1)
		case argPythonParentID:
			a.PythonParentID = p.intOr(-1)
		case argDevice:
			a.Device = p.intOr(-1)
		case argStream:
			a.Stream = p.intOr(-1)
		case argAddr:
			a.Addr = p.intOr(-1)
		case argBytes:
			a.Bytes = p.intOr(0)
		case argTotalAllocated:
			a.TotalAllocated = p.intOr(-1)
		case argTotalReserved:
			a.TotalReserved = p.intOr(-1)
		case argDeviceType:
			a.DeviceType = p.intOr(-1)
		case argDeviceID:
			a.DeviceID = p.intOr(-1)
		case argInputDims:
			a.InputDims = p.rawText(true)
		case argGrid:
			a.Grid = p.rawText(true)
		case argBlock:
			a.Block = p.rawText(true)
		case argCallStack:
			a.CallStack = p.symbol()
		case argName:
			a.MetaName = p.symbol()
		default:
			if key == "" {
				p.skipValue()
				break
			}
			switch p.ws("for a value") {
			case '{', '[':
				p.skipValue() // Other holds scalars only
			case '"':
				a.Other = append(a.Other, KV{Key: key, Value: p.rawText(true)})
			default:
				a.Other = append(a.Other, KV{Key: key, Value: p.rawText(false)})
			}
		}
		c := p.ws("in args")
		p.pos++
		if c == ',' {
			continue
		}
		if c == '}' {
			return
		}
		p.pos--
		p.failUnexpected("in args (want ',' or '}')")
	}
}

// symbol reads a string value unescaped and interned; other scalars give
// their JSON text, null "", objects/arrays their raw text (bounded).
func (p *parser) symbol() string {
	switch p.ws("for a value") {
	case '"':
		return p.tab.sym(p.str())
	case 'n':
		p.lit("null")
		return ""
	}
	return p.rawText(false)
}

// rawText reads any value and returns its raw JSON text, interned when
// intern is set (repetitive values) or else from the arena; "" when it is
// longer than MaxRawArg.
func (p *parser) rawText(intern bool) string {
	p.ws("for a value")
	raw, lost := p.capture(MaxRawArg, false)
	if lost || len(raw) > MaxRawArg {
		return ""
	}
	if intern {
		return p.tab.sym(raw)
	}
	return p.tab.val(raw)
}

// idValue reads a pid/tid: a number, or a string (kept in the string
// result, the number then 0).
func (p *parser) idValue() (int64, string) {
	if p.ws("for a value") == '"' {
		return 0, p.tab.sym(p.str())
	}
	v, _ := p.intValue(0)
	return v, ""
}

// capture skips one value and returns its raw text (valid until the next
// read). lost reports that it was longer than limit (then, with
// keepPrefix, p.prefix holds its first limit bytes).
func (p *parser) capture(limit int, keepPrefix bool) (raw []byte, lost bool) {
	p.mark, p.markCap, p.markLost, p.keepPrefix = p.pos, limit, false, keepPrefix
	p.skipValue()
	lost = p.markLost
	if !lost {
		raw = p.buf[p.mark:p.pos]
	}
	p.mark, p.markLost, p.keepPrefix = -1, false, false
	return raw, lost
}

// intValue reads a value as an integer in units of 10^-scale of the written
// number (scale 3: microseconds written, nanoseconds returned). ok is false
// for non-numbers, NaN/Infinity, and numbers out of the int64 range; the
// latter two are counted in Metadata.NumberErrors.
func (p *parser) intValue(scale int) (int64, bool) {
	switch c := p.ws("for a value"); {
	case c == '-' || (c >= '0' && c <= '9'):
		// Fast path: the number is whole in the buffer.
		rest := p.buf[p.pos:p.end]
		for i, c := range rest {
			if !numChar[c] {
				if v, ok, valid := parseDecimal(rest[:i], scale); valid {
					p.pos += i
					if !ok {
						p.md.NumberErrors++
					}
					return v, ok
				}
				break
			}
		}
		tok, special := p.number()
		if special {
			p.md.NumberErrors++
			return 0, false
		}
		v, ok, _ := parseDecimal(tok, scale)
		if !ok {
			p.md.NumberErrors++
		}
		return v, ok
	case c == 'N' || c == 'I':
		p.skipValue()
		p.md.NumberErrors++
		return 0, false
	case c == '"':
		// Some tools quote numbers; accept a quoted plain number.
		s := p.str()
		if v, ok, valid := parseDecimal(s, scale); valid {
			return v, ok
		}
		return 0, false
	}
	p.skipValue()
	return 0, false
}

var numChar = [256]bool{'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true,
	'7': true, '8': true, '9': true, '.': true, 'e': true, 'E': true, '+': true, '-': true}

// number reads a JSON number (or NaN, Infinity, -Infinity: special) at pos
// and returns its text, valid until the next read.
func (p *parser) number() (tok []byte, special bool) {
	p.tok = p.pos
	i := p.pos
	for {
		for i < p.end && numChar[p.buf[i]] {
			i++
		}
		if i < p.end || p.eof {
			break
		}
		p.pos = i
		more := p.fill()
		i = p.pos
		if !more {
			break
		}
	}
	start := p.tok
	p.tok = -1
	tok = p.buf[start:i]
	if len(tok) == 1 && tok[0] == '-' && i < p.end && p.buf[i] == 'I' {
		p.pos = i
		p.lit("Infinity")
		return nil, true
	}
	if !validNumber(tok) {
		p.pos = start
		p.fail("invalid number")
	}
	p.pos = i
	return tok, false
}

// validNumber checks the JSON number grammar.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return false
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	return i == len(b)
}

// decimalToInt converts a valid JSON number text to an integer count of
// 10^-scale units (see parseDecimal).
func decimalToInt(b []byte, scale int) (int64, bool) {
	v, ok, _ := parseDecimal(b, scale)
	return v, ok
}

// parseDecimal checks b against the JSON number grammar (valid) and
// converts it to an integer count of 10^-scale units, exactly, from the
// decimal digits (never through a float): digits below the unit are
// truncated toward zero. ok is false when the value does not fit an int64.
func parseDecimal(b []byte, scale int) (v int64, ok, valid bool) {
	neg := false
	i := 0
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	if i >= len(b) || b[i] < '0' || b[i] > '9' || (b[i] == '0' && i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '9') {
		return 0, false, false
	}
	var mant uint64
	exp := 0
	dropped := false // integer digits that did not fit the mantissa
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if mant < 1e18 {
			mant = mant*10 + uint64(b[i]-'0')
		} else {
			exp++
			dropped = true
		}
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if mant < 1e18 {
				mant = mant*10 + uint64(b[i]-'0')
				exp--
			}
		}
		if i == d {
			return 0, false, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		d := i
		e := 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if e < 1e6 {
				e = e*10 + int(b[i]-'0')
			}
		}
		if i == d {
			return 0, false, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(b) {
		return 0, false, false
	}
	if mant == 0 {
		return 0, true, true
	}
	exp += scale
	if exp < 0 {
		if exp < -19 {
			return 0, true, true
		}
		mant /= pow10[-exp]
	} else if exp > 0 {
		if dropped || exp > 19 || mant > (1<<64-1)/pow10[exp] {
			return 0, false, true
		}
		mant *= pow10[exp]
	}
	// With exp <= 0 the dropped digits weigh less than one unit: the
	// truncated result does not depend on them.
	if neg {
		if mant > 1<<63 {
			return 0, false, true
		}
		return -int64(mant), true, true
	}
	if mant > 1<<63-1 {
		return 0, false, true
	}
	return int64(mant), true, true
}

var pow10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// lit consumes the literal s (true, false, null, NaN, Infinity).
func (p *parser) lit(s string) {
	for i := 0; i < len(s); i++ {
		if p.pos >= p.end && !p.fill() {
			p.fail("unexpected end of input in a literal")
		}
		if p.buf[p.pos] != s[i] {
			p.fail("invalid literal (want " + s + ")")
		}
		p.pos++
	}
	if p.pos >= p.end {
		p.fill()
	}
	if p.pos < p.end {
		if c := p.buf[p.pos]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			p.fail("invalid literal")
		}
	}
}

// skipValue skips one JSON value (validating it) starting at the next
// non-space byte.
func (p *parser) skipValue() {
	switch c := p.ws("for a value"); c {
	case '"':
		p.skipString()
	case '{':
		p.depth++
		if p.depth > maxDepth {
			p.fail("nesting too deep")
		}
		p.pos++
		if p.ws("in an object") == '}' {
			p.pos++
		} else {
			for {
				p.expectKeyStart("in an object")
				p.skipString()
				p.colon()
				p.skipValue()
				if p.endOfMember("in an object", '}') {
					break
				}
			}
		}
		p.depth--
	case '[':
		p.depth++
		if p.depth > maxDepth {
			p.fail("nesting too deep")
		}
		p.pos++
		if p.ws("in an array") == ']' {
			p.pos++
		} else {
			for {
				p.skipValue()
				if p.endOfMember("in an array", ']') {
					break
				}
			}
		}
		p.depth--
	case 't':
		p.lit("true")
	case 'f':
		p.lit("false")
	case 'n':
		p.lit("null")
	case 'N':
		p.lit("NaN")
	case 'I':
		p.lit("Infinity")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			p.number()
			return
		}
		p.failUnexpected("(want a value)")
	}
}

// skipString skips the string whose opening quote is at pos.
func (p *parser) skipString() {
	p.pos++
	for {
		rest := p.buf[p.pos:p.end]
		q := bytes.IndexByte(rest, '"')
		if q < 0 {
			q = len(rest)
		}
		bs := bytes.IndexByte(rest[:q], '\\')
		if bs >= 0 {
			// Skip the escape: its letter (validated) and, for \u, four
			// more bytes which the scan treats as plain bytes.
			p.pos += bs + 1
			if p.pos >= p.end && !p.fill() {
				p.fail("unexpected end of input in a string")
			}
			if !validEscape[p.buf[p.pos]] {
				p.fail("invalid escape in a string")
			}
			p.pos++
			continue
		}
		if q < len(rest) {
			p.pos += q + 1
			return
		}
		p.pos = p.end
		if !p.fill() {
			p.fail("unexpected end of input in a string")
		}
	}
}

var validEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true, 'u': true}

// str reads the string whose opening quote is at pos and returns its
// unescaped content (at most MaxString bytes; truncated at a UTF-8
// boundary), valid until the next read. Control characters are kept as
// they are.
func (p *parser) str() []byte {
	p.pos++
	start := p.pos
	// Most strings (keys, names) are short: scan the first bytes in a loop,
	// then switch to IndexByte.
	rest := p.buf[p.pos:p.end]
	for i, c := range rest {
		if c == '"' {
			p.pos += i + 1
			return rest[:i]
		}
		if c == '\\' {
			p.pos += i
			return p.strSlow(start)
		}
		if i == 32 {
			break
		}
	}
	for {
		rest := p.buf[p.pos:p.end]
		q := bytes.IndexByte(rest, '"')
		if q >= 0 {
			if bytes.IndexByte(rest[:q], '\\') < 0 {
				p.pos += q + 1
				s := p.buf[start : p.pos-1]
				if len(s) > MaxString {
					s = truncUTF8(s, MaxString)
				}
				return s
			}
			return p.strSlow(start)
		}
		if bytes.IndexByte(rest, '\\') >= 0 || p.end-start > MaxString {
			return p.strSlow(start)
		}
		p.pos = p.end
		p.tok = start
		more := p.fill()
		start, p.tok = p.tok, -1
		if !more {
			p.fail("unexpected end of input in a string")
		}
	}
}

// strSlow continues str from buf[start:pos] (plain bytes) decoding escapes
// into p.scratch.
func (p *parser) strSlow(start int) []byte {
	out := append(p.scratch[:0], p.buf[start:p.pos]...)
	for {
		for p.pos < p.end {
			c := p.buf[p.pos]
			if c == '"' {
				p.pos++
				p.scratch = out
				if len(out) > MaxString {
					out = truncUTF8(out, MaxString)
				}
				return out
			}
			if c != '\\' {
				// Copy the run of plain bytes.
				rest := p.buf[p.pos:p.end]
				n := len(rest)
				if q := bytes.IndexByte(rest, '"'); q >= 0 {
					n = q
				}
				if b := bytes.IndexByte(rest[:n], '\\'); b >= 0 {
					n = b
				}
				if len(out) <= MaxString {
					out = append(out, rest[:n]...)
				}
				p.pos += n
				continue
			}
			p.pos++
			e := p.byteOrFail()
			p.pos++
			var r rune
			switch e {
			case '"', '\\', '/':
				r = rune(e)
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			case 'u':
				r = p.hex4()
				if utf16IsHigh(r) {
					// A low surrogate must follow for a pair.
					if p.peekByte() == '\\' && p.peekByteAt(1) == 'u' {
						p.pos += 2
						r2 := p.hex4()
						if utf16IsLow(r2) {
							r = (r-0xd800)<<10 + (r2 - 0xdc00) + 0x10000
						} else {
							// Unpaired: both become U+FFFD unless the
							// second is a plain code point.
							if len(out) <= MaxString {
								out = utf8.AppendRune(out, utf8.RuneError)
							}
							r = r2
							if utf16IsHigh(r2) {
								r = utf8.RuneError
							}
						}
					} else {
						r = utf8.RuneError
					}
				} else if utf16IsLow(r) {
					r = utf8.RuneError
				}
			default:
				p.pos--
				p.fail("invalid escape in a string")
			}
			if len(out) <= MaxString {
				out = utf8.AppendRune(out, r)
			}
		}
		if !p.fill() {
			p.fail("unexpected end of input in a string")
		}
	}
}

func utf16IsHigh(r rune) bool { return r >= 0xd800 && r < 0xdc00 }
func utf16IsLow(r rune) bool  { return r >= 0xdc00 && r < 0xe000 }

func (p *parser) byteOrFail() byte {
	if p.pos >= p.end && !p.fill() {
		p.fail("unexpected end of input in a string")
	}
	return p.buf[p.pos]
}

// peekByte returns the byte at pos (0 at the end of input).
func (p *parser) peekByte() byte { return p.peekByteAt(0) }

// peekByteAt returns the byte at pos+i (0 past the end of input), reading
// more as needed; positions stay valid since pos is kept by fill.
func (p *parser) peekByteAt(i int) byte {
	for p.pos+i >= p.end {
		if !p.fill() {
			return 0
		}
	}
	return p.buf[p.pos+i]
}

func (p *parser) hex4() rune {
	var r rune
	for i := 0; i < 4; i++ {
		c := p.byteOrFail()
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			p.fail("invalid \\u escape in a string")
		}
		r = r<<4 | rune(d)
		p.pos++
	}
	return r
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kineto

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// The reader and lexer of the parser: the buffer over the input (fill,
// with the marks that keep a token's bytes across refills), whitespace,
// literals, numbers, strings and skipping unwanted values, each in one
// pass over the bytes with no allocation on the common path. What the
// tokens mean in a trace is decode.go's.

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
	if keep == p.end && p.sr != nil && p.takeBlock() {
		return true
	}
	if p.shared {
		// The bytes kept move to the parser's own buffer: a block of the
		// stream is read by other goroutines and never written.
		if need := p.end - keep + 1; len(p.own) < need {
			p.own = make([]byte, max(need, 2*len(p.own)))
		}
		p.lines += bytes.Count(p.buf[:keep], nl)
		p.base += int64(keep)
		n := copy(p.own, p.buf[keep:p.end])
		p.buf, p.shared = p.own, false
		p.pos -= keep
		if p.mark >= 0 {
			p.mark -= keep
		}
		if p.tok >= 0 {
			p.tok -= keep
		}
		p.end = n
		p.buf[n] = 0
	} else if keep > 0 {
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
		if p.limit > 0 {
			// Reads stop at the limit, then one byte more is asked for
			// only when the parse needs it: the parse fails exactly when
			// it needs the byte at offset limit, after every event that
			// ended before it, however the input was cut into reads (a
			// read crossing the limit used to fail at once, losing the
			// events of its first part, and more or fewer of them in
			// the parallel parser than in the sequential one).
			if p.read >= p.limit {
				want = 1
			} else if int64(want) > p.limit-p.read {
				want = int(p.limit - p.read)
			}
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
			panic(parseError{fmt.Errorf("kineto: offset %d: %w (%d bytes)", p.limit, ErrTooLarge, p.limit)})
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

// takeBlock makes the rest of the stream's current block the buffer, in
// place, when a job's parser keeps nothing of its buffer (all of it
// parsed, no token open): copying every block into the parser's buffer
// was 2.4% of the CPU of the 541 MB .gz import (40 ms of 1.67 s, the
// memmove of streamReader.Read). It reports false, having read nothing,
// where the copying path must read instead: at an error or the end, past
// the job's overrun, a block without a sentinel, or where the bytes could
// cross the parse's limit.
func (p *parser) takeBlock() bool {
	maxLen := int64(-1)
	if p.limit > 0 {
		maxLen = p.limit - p.read
	}
	d, ok := p.sr.span(maxLen)
	if !ok {
		return false
	}
	if !p.shared {
		p.own = p.buf
	}
	p.lines += bytes.Count(p.buf[:p.end], nl)
	p.base += int64(p.end)
	p.pos -= p.end
	if p.mark >= 0 {
		p.mark -= p.end
	}
	if p.tok >= 0 {
		p.tok -= p.end
	}
	n := len(d) - 1 // d[n] is the block's 0 sentinel
	p.buf, p.shared, p.end = d, true, n
	p.read += int64(n)
	return true
}

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
	// One space then a token: how Kineto writes every ", " and ": ", so
	// most calls; taking it before the loop cut the CPU of 20 parses of
	// hta-df_index_resolver (BenchmarkParseDFIndexResolver) from 2.14–2.18
	// to 1.96–2.02 s user. p.pos+1 is within buf: buf[pos] == ' ' means
	// pos < end, and buf[end] exists. (ws cannot take this itself: it
	// would no longer be inlined.)
	if p.buf[p.pos] == ' ' {
		if c := p.buf[p.pos+1]; c > ' ' {
			p.pos++
			return c
		}
	}
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

// intValue reads a value as an integer in units of 10^-scale of the written
// number (scale 3: microseconds written, nanoseconds returned). ok is false
// for non-numbers, NaN/Infinity, and numbers out of the int64 range; the
// latter two are counted in Metadata.NumberErrors.
func (p *parser) intValue(scale int) (int64, bool) {
	switch c := p.ws("for a value"); {
	case c == '-' || (c >= '0' && c <= '9'):
		rest := p.buf[p.pos:p.end]
		// Fastest path: a plain integer of at most 18 digits, whole in
		// the buffer (ts, dur, ids, pids, Bytes: nearly every number of
		// a trace), converted in the one pass that finds its end, where
		// the path below scans it twice (numChar, then parseDecimal).
		// parseDecimal gives the same value for it. Cut the CPU of 20
		// parses of hta-df_index_resolver from 2.00–2.05 to 1.92–1.95 s
		// user (BenchmarkParseDFIndexResolver).
		if v, n := plainInt(rest, scale); n > 0 {
			p.pos += n
			return v, true
		}
		// Fast path: the number is whole in the buffer.
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

// plainInt converts the plain number that b starts with (-?[0-9]{1,18},
// no leading zero, then optionally '.' and 1 to scale digits) to 10^-scale
// units, when a byte that cannot continue a number follows it in b and
// the result fits an int64; n is its length, 0 when it is not such a
// number (the caller takes the general path, parseDecimal, which gives the
// same value for every number taken here).
//
// Older Kineto writes ts and dur as integers, newer with three decimals
// (1694039968955744.123): both are taken here, in one pass. The integer
// part's digits are converted eight at a time while eight follow (a ts
// has 16): with the digit loop alone this function was the largest item
// of a sequential parse's profile (14%).
func plainInt(b []byte, scale int) (v int64, n int) {
	i := 0
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		i = 1
	}
	start := i
	var m uint64
	for i+8 <= len(b) && i-start <= 10 {
		w := binary.LittleEndian.Uint64(b[i:])
		if !eightDigits(w) {
			break
		}
		m = m*1e8 + eightDigitsValue(w)
		i += 8
	}
	for i < len(b) && i-start < 18 {
		d := b[i] - '0'
		if d > 9 {
			break
		}
		m = m*10 + uint64(d)
		i++
	}
	if i == start || i >= len(b) || (b[start] == '0' && i-start > 1) || m > maxScaled[scale] {
		return 0, 0
	}
	m *= pow10[scale]
	if b[i] == '.' {
		// Up to scale fraction digits: more would be truncated, which
		// the general path does.
		i++
		f, digits := uint64(0), 0
		for i < len(b) && digits <= scale {
			d := b[i] - '0'
			if d > 9 {
				break
			}
			f = f*10 + uint64(d)
			digits++
			i++
		}
		if digits == 0 || digits > scale || i >= len(b) {
			return 0, 0
		}
		m += f * pow10[scale-digits]
		if m > 1<<63-1 {
			return 0, 0
		}
	}
	if numChar[b[i]] {
		return 0, 0
	}
	if neg {
		return -int64(m), i
	}
	return int64(m), i
}

// maxScaled[s] is the largest integer part that, times 10^s, fits an
// int64: precomputed, as a division per number cost a fifth of plainInt.
var maxScaled = func() (t [len(pow10)]uint64) {
	for s, p := range pow10 {
		t[s] = (1<<63 - 1) / p
	}
	return t
}()

// eightDigits reports whether the eight bytes of w (little-endian, as
// read from the text) are all ASCII digits: each byte's high nibble is 3,
// and adding 6 does not carry out of its low nibble (it would above '9').
func eightDigits(w uint64) bool {
	const hi, three, six = 0xF0F0F0F0F0F0F0F0, 0x3030303030303030, 0x0606060606060606
	return w&hi == three && (w+six)&hi == three
}

// eightDigitsValue is the value of the eight ASCII digits in w, the first
// in its lowest byte: adjacent digits are combined pairwise, then the
// pairs, then the quadruples, each step one multiply-add across all lanes.
func eightDigitsValue(w uint64) uint64 {
	w -= 0x3030303030303030
	w = (w*10 + w>>8) & 0x00FF00FF00FF00FF
	w = (w*100 + w>>16) & 0x0000FFFF0000FFFF
	return (w*10000 + w>>32) & 0xFFFFFFFF
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
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
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
	out := p.scratch[:0]
	out = append(out, p.buf[start:p.pos]...)
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

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// reader is a buffered reader that counts bytes and enforces the limit.
type reader struct {
	r        io.Reader
	buf      []byte
	pos, end int
	off      int64 // input offset of buf[0]
	limit    int64 // 0: none
	err      error
	name     string
}

func newReader(r io.Reader, name string, limit int64) *reader {
	return &reader{r: r, buf: make([]byte, 256<<10), limit: limit, name: name}
}

// offset is the input offset of the next byte.
func (r *reader) offset() int64 { return r.off + int64(r.pos) }

func (r *reader) fill() bool {
	if r.err != nil {
		return false
	}
	if r.pos > 0 {
		n := copy(r.buf, r.buf[r.pos:r.end])
		r.off += int64(r.pos)
		r.pos, r.end = 0, n
	}
	for range 100 {
		n, err := r.r.Read(r.buf[r.end:])
		r.end += n
		if r.limit > 0 && r.off+int64(r.end) > r.limit {
			r.err = fmt.Errorf("%s: larger than the %d-byte limit (max_file_size / MaxBytes); raise the limit or record a shorter memory history (torch.cuda.memory._record_memory_history(max_entries=...))", r.name, r.limit)
			return false
		}
		if err != nil {
			if err == io.EOF {
				r.err = io.ErrUnexpectedEOF
			} else {
				r.err = fmt.Errorf("%s: reading: %w", r.name, err)
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	r.err = fmt.Errorf("%s: reading: %w", r.name, io.ErrNoProgress)
	return false
}

func (r *reader) byte() (byte, error) {
	if r.pos == r.end && !r.fill() {
		return 0, r.failure()
	}
	b := r.buf[r.pos]
	r.pos++
	return b, nil
}

func (r *reader) failure() error {
	if r.err == nil || errors.Is(r.err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: truncated at byte %d (the pickle ends before its STOP opcode): the file is incomplete; was the process killed while writing it?", r.name, r.offset())
	}
	return r.err
}

// bytes returns the next n bytes, valid until the next read. n ≤ len(buf)
// (callers ask for at most 64 KiB + 8).
func (r *reader) bytes(n int) ([]byte, error) {
	for r.end-r.pos < n {
		if !r.fill() {
			return nil, r.failure()
		}
	}
	b := r.buf[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

// str reads n bytes into a new string. A length the input cannot hold
// fails before anything that large is allocated: long strings are read in
// pieces, so a lying length costs at most what the file holds.
func (r *reader) str(n uint64) (string, error) {
	if r.limit > 0 && n > uint64(r.limit) {
		return "", fmt.Errorf("%s: byte %d: a string of %d bytes is longer than the %d-byte limit; the file is corrupt", r.name, r.offset(), n, r.limit)
	}
	if n <= uint64(len(r.buf)) {
		b, err := r.bytes(int(n))
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	var sb strings.Builder
	for left := n; left > 0; {
		if r.pos == r.end && !r.fill() {
			return "", r.failure()
		}
		k := min(uint64(r.end-r.pos), left)
		sb.Write(r.buf[r.pos : r.pos+int(k)])
		r.pos += int(k)
		left -= k
	}
	return sb.String(), nil
}

// line reads up to '\n' (text opcodes of protocols 0 and 1).
func (r *reader) line() (string, error) {
	var sb strings.Builder
	for {
		c, err := r.byte()
		if err != nil {
			return "", err
		}
		if c == '\n' {
			return sb.String(), nil
		}
		if sb.Len() > 1<<20 {
			return "", fmt.Errorf("%s: byte %d: a text opcode's line is over 1 MiB; the file is corrupt", r.name, r.offset())
		}
		sb.WriteByte(c)
	}
}

// Refused opcodes: each makes the unpickler import, call or construct
// Python objects (or look them up by extension code / persistent id).
var refused = map[byte]string{
	'c':  "GLOBAL",
	0x93: "STACK_GLOBAL",
	'R':  "REDUCE",
	'i':  "INST",
	'o':  "OBJ",
	0x81: "NEWOBJ",
	0x92: "NEWOBJ_EX",
	'b':  "BUILD",
	0x82: "EXT1",
	0x83: "EXT2",
	0x84: "EXT4",
	'P':  "PERSID",
	'Q':  "BINPERSID",
	0x97: "NEXT_BUFFER",
	0x98: "READONLY_BUFFER",
}

// ErrRefused is wrapped by the error for a pickle that asks for code.
var ErrRefused = errors.New("refused: the pickle imports, calls or builds Python objects")

// decoder runs the subset of the pickle machine that builds plain data.
type decoder struct {
	r     *reader
	s     *store
	stack []value
	marks []int
	memo  []value
	// sparse holds memo slots beyond the dense memo's end + 16 (never written by
	// Python's pickler, which numbers them in order; kept so that an odd
	// index costs a map entry, not a huge slice).
	sparse map[uint64]value
}

func (d *decoder) errf(format string, args ...any) error {
	return fmt.Errorf("%s: byte %d: %s", d.r.name, d.r.offset(), fmt.Sprintf(format, args...))
}

func (d *decoder) push(v value) { d.stack = append(d.stack, v) }

func (d *decoder) pop() (value, error) {
	floor := 0
	if len(d.marks) > 0 {
		floor = d.marks[len(d.marks)-1]
	}
	if len(d.stack) <= floor {
		return value{}, d.errf("pickle stack underflow; the file is corrupt")
	}
	v := d.stack[len(d.stack)-1]
	d.stack = d.stack[:len(d.stack)-1]
	return v, nil
}

func (d *decoder) top() (value, error) {
	floor := 0
	if len(d.marks) > 0 {
		floor = d.marks[len(d.marks)-1]
	}
	if len(d.stack) <= floor {
		return value{}, d.errf("pickle stack underflow; the file is corrupt")
	}
	return d.stack[len(d.stack)-1], nil
}

// popMark returns the items pushed since the last MARK (a view into the
// stack, valid until the next push) and removes them and the mark.
func (d *decoder) popMark() ([]value, error) {
	if len(d.marks) == 0 {
		return nil, d.errf("pickle opcode needs a MARK and there is none; the file is corrupt")
	}
	m := d.marks[len(d.marks)-1]
	d.marks = d.marks[:len(d.marks)-1]
	items := d.stack[m:]
	d.stack = d.stack[:m]
	return items, nil
}

func (d *decoder) memoPut(idx uint64, v value) error {
	switch {
	case idx < uint64(len(d.memo)):
		d.memo[idx] = v
	case idx == uint64(len(d.memo)):
		d.memo = append(d.memo, v)
	case idx < uint64(len(d.memo))+16:
		for uint64(len(d.memo)) < idx {
			d.memo = append(d.memo, value{})
		}
		d.memo = append(d.memo, v)
	default:
		if d.sparse == nil {
			d.sparse = make(map[uint64]value)
		}
		if len(d.sparse) > 1<<20 {
			return d.errf("pickle memo indexes are scattered beyond reason; the file is corrupt")
		}
		d.sparse[idx] = v
	}
	return nil
}

func (d *decoder) memoGet(idx uint64) error {
	var v value
	if idx < uint64(len(d.memo)) {
		v = d.memo[idx]
	} else {
		v = d.sparse[idx]
	}
	if v.k == kUndef {
		return d.errf("pickle memo slot %d is read before it is written; the file is corrupt", idx)
	}
	d.push(v)
	return nil
}

func (d *decoder) container(v value, want ...uint8) bool {
	if v.k == kCont {
		k := d.s.conts[v.ref].kind
		for _, w := range want {
			if k == w {
				return true
			}
		}
	}
	return false
}

func (d *decoder) intValue(n int64) { d.push(value{k: kInt, n: n}) }

// decodeLong decodes LONG1/LONG4's little-endian two's complement.
func decodeLong(b []byte) value {
	if len(b) == 0 {
		return value{k: kInt}
	}
	if len(b) > 8 {
		// Beyond int64 unless it is sign extension.
		ext := byte(0)
		if b[len(b)-1]&0x80 != 0 {
			ext = 0xff
		}
		for _, c := range b[8:] {
			if c != ext {
				return value{k: kBigInt}
			}
		}
		if (b[7]&0x80 != 0) != (ext == 0xff) {
			return value{k: kBigInt}
		}
		b = b[:8]
	}
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	if len(b) < 8 && b[len(b)-1]&0x80 != 0 {
		u |= ^uint64(0) << (8 * len(b))
	}
	return value{k: kInt, n: int64(u)}
}

// run decodes one pickle up to STOP and returns its value.
func (d *decoder) run() (value, error) {
	r := d.r
	for {
		// Checked before every opcode: none allocates more than a few
		// slots at once except the string readers, whose bytes are input.
		if err := overBudget(r.name, r.offset(), d.footprint()); err != nil {
			return value{}, err
		}
		op, err := r.byte()
		if err != nil {
			if r.offset() == 0 {
				return value{}, fmt.Errorf("%s: empty file: not a pickle", r.name)
			}
			return value{}, err
		}
		switch op {
		case 0x80: // PROTO
			p, err := r.byte()
			if err != nil {
				return value{}, err
			}
			if p > 5 {
				return value{}, d.errf("pickle protocol %d is newer than the 5 this reader knows; save the snapshot with protocol ≤ 5", p)
			}
		case 0x95: // FRAME: a length hint only; the stream is read as it comes
			if _, err := r.bytes(8); err != nil {
				return value{}, err
			}
		case '.': // STOP
			v, err := d.pop()
			if err != nil {
				return value{}, err
			}
			return v, nil
		case '(': // MARK
			d.marks = append(d.marks, len(d.stack))
		case '0': // POP
			if _, err := d.pop(); err != nil {
				if _, err2 := d.popMark(); err2 != nil {
					return value{}, err
				}
			}
		case '1': // POP_MARK
			if _, err := d.popMark(); err != nil {
				return value{}, err
			}
		case '2': // DUP
			v, err := d.top()
			if err != nil {
				return value{}, err
			}
			d.push(v)
		case 'N':
			d.push(value{k: kNone})
		case 0x88:
			d.push(value{k: kBool, n: 1})
		case 0x89:
			d.push(value{k: kBool})
		case 'J': // BININT
			b, err := r.bytes(4)
			if err != nil {
				return value{}, err
			}
			d.intValue(int64(int32(binary.LittleEndian.Uint32(b))))
		case 'K': // BININT1
			c, err := r.byte()
			if err != nil {
				return value{}, err
			}
			d.intValue(int64(c))
		case 'M': // BININT2
			b, err := r.bytes(2)
			if err != nil {
				return value{}, err
			}
			d.intValue(int64(binary.LittleEndian.Uint16(b)))
		case 0x8a: // LONG1
			c, err := r.byte()
			if err != nil {
				return value{}, err
			}
			b, err := r.bytes(int(c))
			if err != nil {
				return value{}, err
			}
			d.push(decodeLong(b))
		case 0x8b: // LONG4
			b, err := r.bytes(4)
			if err != nil {
				return value{}, err
			}
			n := int32(binary.LittleEndian.Uint32(b))
			if n < 0 || n > 1<<16 {
				return value{}, d.errf("LONG4 of %d bytes: no snapshot number is that long; the file is corrupt", n)
			}
			b, err = r.bytes(int(n))
			if err != nil {
				return value{}, err
			}
			d.push(decodeLong(b))
		case 'I', 'L': // INT, LONG (text)
			ln, err := r.line()
			if err != nil {
				return value{}, err
			}
			ln = strings.TrimSuffix(strings.TrimSpace(ln), "L")
			switch {
			case op == 'I' && ln == "01":
				d.push(value{k: kBool, n: 1})
			case op == 'I' && ln == "00":
				d.push(value{k: kBool})
			default:
				n, err := strconv.ParseInt(ln, 10, 64)
				if err != nil {
					if !isDecimal(ln) {
						return value{}, d.errf("INT/LONG %q is not a number; the file is corrupt", ln)
					}
					d.push(value{k: kBigInt})
					continue
				}
				d.intValue(n)
			}
		case 'F': // FLOAT (text)
			ln, err := r.line()
			if err != nil {
				return value{}, err
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(ln), 64)
			if err != nil {
				return value{}, d.errf("FLOAT %q is not a number; the file is corrupt", ln)
			}
			d.push(value{k: kFloat, n: int64(math.Float64bits(f))})
		case 'G': // BINFLOAT
			b, err := r.bytes(8)
			if err != nil {
				return value{}, err
			}
			d.push(value{k: kFloat, n: int64(binary.BigEndian.Uint64(b))})
		case 'X', 'B', 'T': // BINUNICODE, BINBYTES, BINSTRING: 4-byte length
			b, err := r.bytes(4)
			if err != nil {
				return value{}, err
			}
			n := binary.LittleEndian.Uint32(b)
			if op == 'T' && int32(n) < 0 {
				return value{}, d.errf("BINSTRING with a negative length; the file is corrupt")
			}
			if err := d.pushStr(uint64(n), op == 'X'); err != nil {
				return value{}, err
			}
		case 0x8c, 'C', 'U': // SHORT_BINUNICODE, SHORT_BINBYTES, SHORT_BINSTRING
			c, err := r.byte()
			if err != nil {
				return value{}, err
			}
			if err := d.pushStr(uint64(c), op == 0x8c); err != nil {
				return value{}, err
			}
		case 0x8d, 0x8e, 0x96: // BINUNICODE8, BINBYTES8, BYTEARRAY8
			b, err := r.bytes(8)
			if err != nil {
				return value{}, err
			}
			if err := d.pushStr(binary.LittleEndian.Uint64(b), op == 0x8d); err != nil {
				return value{}, err
			}
		case 'S': // STRING (text, a Python repr)
			ln, err := r.line()
			if err != nil {
				return value{}, err
			}
			s, ok := unrepr(strings.TrimSpace(ln))
			if !ok {
				return value{}, d.errf("STRING %q is not a quoted string; the file is corrupt", ln)
			}
			d.push(d.s.str(s))
		case 'V': // UNICODE (text, raw-unicode-escape)
			ln, err := r.line()
			if err != nil {
				return value{}, err
			}
			d.push(d.s.str(unrawUnicode(ln)))
		case ']':
			d.push(d.s.newCont(cList))
		case '}':
			d.push(d.s.newCont(cDict))
		case ')':
			d.push(d.s.newCont(cTuple))
		case 'l', 't': // LIST, TUPLE (from MARK)
			items, err := d.popMark()
			if err != nil {
				return value{}, err
			}
			kind := cList
			if op == 't' {
				kind = cTuple
			}
			c := d.s.newCont(kind)
			d.s.appendItems(c, items)
			d.push(c)
		case 0x85, 0x86, 0x87: // TUPLE1..3
			n := int(op - 0x84)
			if len(d.stack) < n || (len(d.marks) > 0 && len(d.stack)-n < d.marks[len(d.marks)-1]) {
				return value{}, d.errf("pickle stack underflow; the file is corrupt")
			}
			items := d.stack[len(d.stack)-n:]
			d.stack = d.stack[:len(d.stack)-n]
			c := d.s.newCont(cTuple)
			d.s.appendItems(c, items)
			d.push(c)
		case 'd': // DICT (from MARK)
			items, err := d.popMark()
			if err != nil {
				return value{}, err
			}
			if len(items)%2 != 0 {
				return value{}, d.errf("DICT with an odd number of items; the file is corrupt")
			}
			c := d.s.newCont(cDict)
			d.s.setItems(c, items)
			d.push(c)
		case 'a': // APPEND
			v, err := d.pop()
			if err != nil {
				return value{}, err
			}
			l, err := d.top()
			if err != nil {
				return value{}, err
			}
			if err := d.appendTo(l, []value{v}); err != nil {
				return value{}, err
			}
		case 'e': // APPENDS
			items, err := d.popMark()
			if err != nil {
				return value{}, err
			}
			l, err := d.top()
			if err != nil {
				return value{}, err
			}
			if err := d.appendTo(l, items); err != nil {
				return value{}, err
			}
		case 's': // SETITEM
			if len(d.stack) < 3 || (len(d.marks) > 0 && len(d.stack)-2 <= d.marks[len(d.marks)-1]) {
				return value{}, d.errf("pickle stack underflow; the file is corrupt")
			}
			items := d.stack[len(d.stack)-2:]
			d.stack = d.stack[:len(d.stack)-2]
			if err := d.setIn(d.stack[len(d.stack)-1], items); err != nil {
				return value{}, err
			}
		case 'u': // SETITEMS
			items, err := d.popMark()
			if err != nil {
				return value{}, err
			}
			if len(items)%2 != 0 {
				return value{}, d.errf("SETITEMS with an odd number of items; the file is corrupt")
			}
			dv, err := d.top()
			if err != nil {
				return value{}, err
			}
			if err := d.setIn(dv, items); err != nil {
				return value{}, err
			}
		case 'p': // PUT (text)
			ln, err := r.line()
			if err != nil {
				return value{}, err
			}
			idx, err := strconv.ParseUint(strings.TrimSpace(ln), 10, 64)
			if err != nil {
				return value{}, d.errf("PUT %q is not an index; the file is corrupt", ln)
			}
			if err := d.putTop(idx); err != nil {
				return value{}, err
			}
		case 'q': // BINPUT
			c, err := r.byte()
			if err != nil {
				return value{}, err
			}
			if err := d.putTop(uint64(c)); err != nil {
				return value{}, err
			}
		case 'r': // LONG_BINPUT
			b, err := r.bytes(4)
			if err != nil {
				return value{}, err
			}
			if err := d.putTop(uint64(binary.LittleEndian.Uint32(b))); err != nil {
				return value{}, err
			}
		case 0x94: // MEMOIZE
			if err := d.putTop(uint64(len(d.memo))); err != nil {
				return value{}, err
			}
		case 'g': // GET (text)
			ln, err := r.line()
			if err != nil {
				return value{}, err
			}
			idx, err := strconv.ParseUint(strings.TrimSpace(ln), 10, 64)
			if err != nil {
				return value{}, d.errf("GET %q is not an index; the file is corrupt", ln)
			}
			if err := d.memoGet(idx); err != nil {
				return value{}, err
			}
		case 'h': // BINGET
			c, err := r.byte()
			if err != nil {
				return value{}, err
			}
			if err := d.memoGet(uint64(c)); err != nil {
				return value{}, err
			}
		case 'j': // LONG_BINGET
			b, err := r.bytes(4)
			if err != nil {
				return value{}, err
			}
			if err := d.memoGet(uint64(binary.LittleEndian.Uint32(b))); err != nil {
				return value{}, err
			}
		default:
			if name, ok := refused[op]; ok {
				return value{}, d.refuse(op, name)
			}
			return value{}, d.errf("unknown or unsupported pickle opcode 0x%02x; this is not a CUDA memory snapshot (or it is corrupt)", op)
		}
	}
}

// refuse builds the error for an opcode that would run code. For GLOBAL
// the module and name it asks for are read (they are plain text) so that
// the message says what the file wanted.
func (d *decoder) refuse(op byte, name string) error {
	at := d.r.offset() - 1
	what := ""
	switch op {
	case 'c', 'i':
		mod, err1 := d.r.line()
		nm, err2 := d.r.line()
		if err1 == nil && err2 == nil {
			what = fmt.Sprintf(" (%s.%s)", strings.TrimSpace(mod), strings.TrimSpace(nm))
		}
	case 0x93:
		if len(d.stack) >= 2 {
			mod, ok1 := d.s.strOf(d.stack[len(d.stack)-2])
			nm, ok2 := d.s.strOf(d.stack[len(d.stack)-1])
			if ok1 && ok2 {
				what = fmt.Sprintf(" (%s.%s)", mod, nm)
			}
		}
	}
	if len(what) > 200 {
		what = what[:200] + "…)"
	}
	return fmt.Errorf("%s: byte %d: pickle opcode %s%s %w; a CUDA memory snapshot holds only dicts, lists, tuples, strings, numbers, booleans and None, so this file is not one (or was tampered with) and is not imported",
		d.r.name, at, name, what, ErrRefused)
}

func (d *decoder) pushStr(n uint64, utf bool) error {
	s, err := d.r.str(n)
	if err != nil {
		return err
	}
	if utf && !utf8.ValidString(s) {
		// Python writes surrogates as-is ("surrogatepass"); keep the text
		// readable instead of failing the whole file.
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	d.push(d.s.str(s))
	return nil
}

func (d *decoder) putTop(idx uint64) error {
	v, err := d.top()
	if err != nil {
		return err
	}
	return d.memoPut(idx, v)
}

func (d *decoder) appendTo(l value, items []value) error {
	if ok := d.container(l, cList, cStack, cTrace); !ok {
		return d.errf("APPEND to something that is not a list; the file is corrupt")
	}
	d.s.appendItems(l, items)
	return nil
}

func (d *decoder) setIn(dv value, items []value) error {
	if ok := d.container(dv, cDict, cEntry, cBlock, cSegment, cFrame); !ok {
		return d.errf("SETITEM on something that is not a dict; the file is corrupt")
	}
	d.s.setItems(dv, items)
	return nil
}

// isDecimal tells a well-formed integer too large for int64 from garbage.
func isDecimal(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if s == "" || len(s) > 10000 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// unrepr decodes the Python 2 repr of a str written by the STRING opcode.
func unrepr(s string) (string, bool) {
	if len(s) < 2 || (s[0] != '\'' && s[0] != '"') || s[len(s)-1] != s[0] {
		return "", false
	}
	s = s[1 : len(s)-1]
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			sb.WriteByte('\n')
		case 't':
			sb.WriteByte('\t')
		case 'r':
			sb.WriteByte('\r')
		case 'x':
			var b [1]byte
			if i+2 < len(s) {
				if _, err := hex.Decode(b[:], []byte(s[i+1:i+3])); err == nil {
					sb.WriteByte(b[0])
					i += 2
					continue
				}
			}
			sb.WriteString(`\x`)
		default:
			sb.WriteByte(s[i])
		}
	}
	return sb.String(), true
}

// unrawUnicode decodes raw-unicode-escape (\uXXXX, \UXXXXXXXX).
func unrawUnicode(s string) string {
	if !strings.Contains(s, `\u`) && !strings.Contains(s, `\U`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') {
			n := 4
			if s[i+1] == 'U' {
				n = 8
			}
			if i+2+n <= len(s) {
				if r, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32); err == nil {
					sb.WriteRune(rune(r))
					i += 1 + n
					continue
				}
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// ErrMemoryBudget is wrapped by the error for input that would make the
// decoder hold more than its memory budget.
var ErrMemoryBudget = errors.New("over the decoder's memory budget")

// The memory budget of a decode: budgetFloor plus budgetFactor bytes per
// input byte read so far. Real snapshots hold 1.4-3.3× the bytes read
// (measured on testdata: the generator's pickles and JSON), while a byte or
// two of pickle can ask for a few dozen bytes of state (an EMPTY_LIST is
// one byte, a container and a stack slot), so a file made of such opcodes
// is refused after a few MiB instead of holding ~70× its size. Counting
// the bytes read so far rather than the file's size bounds memory at every
// point of the decode, and works for gzip and readers of unknown size.
const (
	budgetFactor = 8
	budgetFloor  = 4 << 20
)

// overBudget returns the error for a decode holding held bytes after read
// input bytes, or nil while it is within the budget.
func overBudget(name string, read, held int64) error {
	limit := budgetFloor + budgetFactor*read
	if held <= limit {
		return nil
	}
	mib := func(n int64) int64 { return (n + 1<<20 - 1) >> 20 }
	return fmt.Errorf("%s: byte %d: decoding would hold about %d MiB, over the %d MiB limit for this much input (%d× the %d bytes read + %d MiB): %w; a real CUDA memory snapshot decodes to a few times its size at most, so this file is crafted or corrupt and is not imported",
		name, read, mib(held), mib(limit), budgetFactor, read, budgetFloor>>20, ErrMemoryBudget)
}

// footprint estimates the bytes the decoder holds: the store, the stack,
// the marks and the memo.
func (d *decoder) footprint() int64 {
	return d.s.footprint() + int64(cap(d.stack)+cap(d.memo))*sizeValue + int64(cap(d.marks))*8 +
		int64(len(d.sparse))*sizeMapEntry
}

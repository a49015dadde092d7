// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package promtext

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Entry is the kind of line Next has read.
type Entry uint8

const (
	EntrySample  Entry = iota + 1 // a sample: Name, Labels, Value, Timestamp, Exemplar
	EntryHelp                     // # HELP: MetaName, Text (unescaped)
	EntryType                     // # TYPE: MetaName, Type, Text (the keyword)
	EntryUnit                     // # UNIT (OpenMetrics): MetaName, Text
	EntryComment                  // any other line starting with '#'
	EntryBlank                    // an empty or all-blank line
	EntryEOF                      // OpenMetrics "# EOF"
)

// Options configures a Parser.
type Options struct {
	// OpenMetrics reads OpenMetrics 1.0 text; otherwise the text format
	// 0.0.4.
	OpenMetrics bool
	// Strict refuses what the default reading tolerates (the package
	// documentation lists it): what it accepts, Prometheus's own parser
	// accepts too. For fixtures and test expectations, not for scraping.
	Strict bool
}

// Error is a syntax error; Line is 1-based.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func perr(line int, msg string) *Error { return &Error{Line: line, Msg: msg} }

func perrf(line int, format string, args ...any) *Error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Label is one label of a sample or exemplar. Name and Value are unescaped.
type Label struct {
	Name, Value []byte
	// Quoted: the name was written in quotes, so UTF-8 naming rules apply
	// (ValidName).
	Quoted bool
}

// Exemplar is the OpenMetrics exemplar of a sample.
type Exemplar struct {
	Labels []Label
	Value  float64
	TS     int64 // Unix nanoseconds, when HasTS
	HasTS  bool
}

// Parser reads one body line by line. The zero value is not usable: call
// Reset first. It is not safe for concurrent use; reuse one per goroutine.
type Parser struct {
	body []byte
	pos  int
	line int
	opts Options
	eof  bool // "# EOF" seen
	// ascii: the body has no byte >= 0x80, so no string needs its UTF-8
	// checked.
	ascii bool

	raw []byte // current line, without the line end
	// esc holds the unescaped strings of the current line. Views into it
	// stay valid when it grows: append moves it to a new array and never
	// writes to the old one again, which the views keep alive.
	esc []byte

	// Metadata lines.
	metaName   []byte
	metaQuoted bool
	text       []byte

	// Sample lines.
	name       []byte
	nameQuoted bool
	labels     []Label
	valLo      int
	valHi      int
	value      float64
	ts         int64
	hasTS      bool
	tsLo, tsHi int

	hasEx    bool
	ex       Exemplar
	exLabels []Label

	// known and what it skipped: see SetKnown.
	known   func(series []byte) bool
	skipped bool
	skipLo  int // where the skipped label set starts in raw, after its '{'
}

// Reset starts reading body, keeping the buffers grown so far.
func (p *Parser) Reset(body []byte, opts Options) {
	p.body, p.pos, p.line, p.opts, p.eof = body, 0, 0, opts, false
	p.ascii = isASCII(body)
}

// isASCII reports whether b has no byte >= 0x80, eight bytes at a time.
// Engines' expositions nearly always are ASCII: one pass over the body
// then spares checking the UTF-8 of every label value.
func isASCII(b []byte) bool {
	const high = 0x8080808080808080
	var acc uint64
	for len(b) >= 8 {
		acc |= binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	for _, ch := range b {
		acc |= uint64(ch)
	}
	return acc&high == 0
}

// SetKnown gives the parser a question to ask about each sample before it
// reads its labels: known(series), with series the line's bytes from the
// metric name to the '}' closing its label set. When known returns true the
// labels are not read: Labels is empty and LabelsSkipped reports true.
//
// It is for a reader that remembers what it made of a line: the same bytes
// under the same Options always read to the same labels, and an engine's
// exposition repeats nearly all of its lines from one scrape to the next, so
// the label set, the most expensive part of a sample, need not be read
// again. The series bytes are found by a scan that only tracks quoting, so
// for bytes known (that is, read without error before) they end exactly
// where reading the labels would. It is asked only for samples whose name
// precedes the label set, and never when Strict (whose checks need the
// labels). nil turns it off; it survives Reset.
func (p *Parser) SetKnown(known func(series []byte) bool) { p.known = known }

// LabelsSkipped reports whether the labels of the sample read last were
// skipped because SetKnown's function knew its series.
func (p *Parser) LabelsSkipped() bool { return p.skipped }

// ReadSkippedLabels reads the labels of the sample read last after all,
// when they were skipped (for a reader whose memory of the line does not
// fit after all), and returns them as Labels then does.
func (p *Parser) ReadSkippedLabels() ([]Label, error) {
	if !p.skipped {
		return p.labels, nil
	}
	p.skipped = false
	if _, err := p.parseLabelSet(p.raw, p.skipLo, &p.labels, &p.name, &p.nameQuoted); err != nil {
		return nil, err
	}
	return p.labels, nil
}

// labelSetEnd returns the index after the '}' that closes the label set
// starting at l[i] (just after its '{'), tracking only quoted strings and
// their backslash escapes, or -1 when there is none.
func labelSetEnd(l []byte, i int) int {
	for ; i < len(l); i++ {
		switch l[i] {
		case '}':
			return i + 1
		case '"':
			for i++; i < len(l) && l[i] != '"'; i++ {
				if l[i] == '\\' {
					i++
				}
			}
			if i >= len(l) {
				return -1
			}
		}
	}
	return -1
}

// Line is the 1-based number of the line read last.
func (p *Parser) Line() int { return p.line }

// Raw is the line read last, without its line end (nor a CR before it).
func (p *Parser) Raw() []byte { return p.raw }

// MetaName is the metric name of a HELP, TYPE or UNIT line, and whether it
// was quoted.
func (p *Parser) MetaName() ([]byte, bool) { return p.metaName, p.metaQuoted }

// Text is the unescaped docstring of a HELP line, the keyword of a TYPE
// line, the unit of a UNIT line.
func (p *Parser) Text() []byte { return p.text }

// Type is the type a TYPE line declares; ok is false for an unknown
// keyword (then Type is TypeUntyped).
func (p *Parser) Type() (Type, bool) {
	return ParseType(p.text, p.opts.Strict && !p.opts.OpenMetrics)
}

// Name is a sample's metric name and whether it was quoted inside the
// label set (`{"my.metric"}`).
func (p *Parser) Name() ([]byte, bool) { return p.name, p.nameQuoted }

// Labels are a sample's labels in the order written, "__"-prefixed ones
// included.
func (p *Parser) Labels() []Label { return p.labels }

// Value is a sample's value.
func (p *Parser) Value() float64 { return p.value }

// ValueSpan gives where the value is written in Raw: Raw()[lo:hi].
func (p *Parser) ValueSpan() (lo, hi int) { return p.valLo, p.valHi }

// Timestamp is a sample's timestamp in Unix nanoseconds, if it has one.
func (p *Parser) Timestamp() (int64, bool) { return p.ts, p.hasTS }

// TimestampBytes is the timestamp as written (nil without one).
func (p *Parser) TimestampBytes() []byte {
	if !p.hasTS {
		return nil
	}
	return p.raw[p.tsLo:p.tsHi]
}

// Exemplar is a sample's exemplar (OpenMetrics only), if it has one.
func (p *Parser) Exemplar() (*Exemplar, bool) {
	if !p.hasEx {
		return nil, false
	}
	return &p.ex, true
}

// Next reads the next line. At the end of the body it returns io.EOF, or,
// for an OpenMetrics body without "# EOF", an *Error. After an error the
// Parser must be Reset before it is used again.
func (p *Parser) Next() (Entry, error) {
	if p.pos >= len(p.body) {
		if p.opts.OpenMetrics && !p.eof {
			return 0, perr(p.line+1, `missing "# EOF": the OpenMetrics body is incomplete (truncated?)`)
		}
		return 0, io.EOF
	}
	if n := bytes.IndexByte(p.body[p.pos:], '\n'); n >= 0 {
		p.raw = p.body[p.pos : p.pos+n]
		p.pos += n + 1
	} else {
		p.raw = p.body[p.pos:]
		p.pos = len(p.body)
	}
	p.line++
	if p.eof {
		return 0, perr(p.line, "content after # EOF")
	}
	if n := len(p.raw); n > 0 && p.raw[n-1] == '\r' {
		if p.opts.Strict {
			return 0, perr(p.line, "carriage return at the end of the line: write plain line feeds")
		}
		p.raw = p.raw[:n-1]
	}
	p.esc = p.esc[:0]
	l := p.raw
	i := skipBlank(l, 0)
	if i == len(l) {
		if p.opts.OpenMetrics && p.opts.Strict {
			return 0, perr(p.line, "blank line: OpenMetrics has none")
		}
		return EntryBlank, nil
	}
	if l[i] == '#' {
		return p.parseComment(l, i)
	}
	if p.opts.Strict {
		if err := p.checkSpacing(l, len(l)); err != nil {
			return 0, err
		}
	}
	return EntrySample, p.parseSample(l, i)
}

// checkSpacing refuses, for Strict, blanks other than one space between
// tokens in l[:end]: a tab, a run of blanks, a blank at the start or end, or
// a blank inside a label set (outside its quoted strings). Both formats are
// written that way by every client library, and Prometheus's own parser
// refuses some of the variants (a run of blanks in OpenMetrics, or before a
// TYPE keyword).
func (p *Parser) checkSpacing(l []byte, end int) error {
	inQuote, inBraces := false, false
	for k := 0; k < end; k++ {
		ch := l[k]
		switch {
		case inQuote:
			switch ch {
			case '\\':
				k++
			case '"':
				inQuote = false
			}
			continue
		case ch == '"':
			inQuote = true
		case ch == '{':
			inBraces = true
		case ch == '}':
			inBraces = false
		}
		if !isBlank(ch) {
			continue
		}
		switch {
		case ch == '\t':
			return perr(p.line, "tab between tokens: separate them with one space")
		case k == 0 || k == end-1 || l[k+1] == ' ':
			return perr(p.line, "leading, trailing or repeated space: separate tokens with one space")
		case inBraces:
			return perr(p.line, "space inside the label set: write {a=\"1\",b=\"2\"}")
		}
	}
	return nil
}

// parseComment handles a line starting with '#' at l[i]: HELP, TYPE, UNIT
// (OpenMetrics) and EOF (OpenMetrics) lines; anything else is a comment.
func (p *Parser) parseComment(l []byte, i int) (Entry, error) {
	line := p.line
	if p.opts.OpenMetrics && i == 0 && string(l) == "# EOF" {
		p.eof = true
		return EntryEOF, nil
	}
	j := i + 1
	if j >= len(l) || !isBlank(l[j]) {
		return p.comment(line)
	}
	if p.opts.Strict && i > 0 && isMetaKeyword(l[skipBlank(l, j):]) {
		return 0, perr(line, "blank before '#' of a HELP, TYPE or UNIT line")
	}
	j = skipBlank(l, j)
	k := tokenEnd(l, j)
	kw := l[j:k]
	var e Entry
	switch string(kw) {
	case "HELP":
		e = EntryHelp
	case "TYPE":
		e = EntryType
	case "UNIT":
		if !p.opts.OpenMetrics {
			return EntryComment, nil
		}
		e = EntryUnit
	default:
		return p.comment(line)
	}
	if k == len(l) && !p.opts.OpenMetrics {
		// "# HELP" alone: the text format makes a keyword only of a word
		// followed by a blank, so this is a comment (Prometheus reads it so).
		return EntryComment, nil
	}
	j = skipBlank(l, k)
	if j >= len(l) {
		return 0, perrf(line, "%s line without a metric name", kw)
	}
	p.metaQuoted = l[j] == '"'
	if p.metaQuoted {
		var err error
		if p.metaName, j, err = p.readQuoted(l, j+1); err != nil {
			return 0, err
		}
		if j < len(l) && !isBlank(l[j]) {
			return 0, perrf(line, "unexpected %q after the quoted metric name", l[j])
		}
	} else {
		k = tokenEnd(l, j)
		p.metaName, j = l[j:k], k
	}
	if p.opts.Strict && !ValidName(p.metaName, p.metaQuoted, false) {
		return 0, perrf(line, "invalid metric name %q in %s line", p.metaName, kw)
	}
	if e == EntryHelp {
		// The docstring is the rest of the line after the one blank that
		// ends the name: leading blanks beyond it are part of the text, as
		// Prometheus reads it.
		if p.opts.Strict {
			if err := p.checkSpacing(l, j); err != nil {
				return 0, err
			}
		}
		if j < len(l) {
			if p.opts.Strict && l[j] != ' ' {
				return 0, perr(line, "tab after the name in a HELP line: write one space")
			}
			j++
		} else if p.opts.Strict && p.opts.OpenMetrics {
			return 0, perrf(line, "HELP line for %q without a space and text after the name", p.metaName)
		}
	} else {
		if p.opts.Strict {
			if err := p.checkSpacing(l, len(l)); err != nil {
				return 0, err
			}
		}
		j = skipBlank(l, j)
	}
	switch e {
	case EntryType:
		if j == len(l) {
			return 0, perrf(line, "TYPE line for %q without a type", p.metaName)
		}
		k = tokenEnd(l, j)
		p.text = l[j:k]
		if p.opts.Strict {
			if _, ok := p.Type(); !ok {
				return 0, perrf(line, "unknown metric type %q", l[j:k])
			}
			if skipBlank(l, k) != len(l) {
				return 0, perrf(line, "unexpected %q after the type: a TYPE line has a name and a type", l[skipBlank(l, k):])
			}
		}
	case EntryHelp:
		var err error
		if p.text, err = p.helpText(l, j); err != nil {
			return 0, err
		}
	case EntryUnit:
		p.text = l[j:tokenEnd(l, j)]
		if p.opts.Strict && len(p.text) > 0 && !bytes.HasSuffix(p.metaName, append([]byte{'_'}, p.text...)) {
			return 0, perrf(line, "unit %q is not the suffix of %q: OpenMetrics names end in _<unit>", p.text, p.metaName)
		}
	}
	return e, nil
}

// comment is a line that starts with '#' and is not HELP, TYPE, UNIT or
// EOF. OpenMetrics has no other comments; Strict refuses them there.
func (p *Parser) comment(line int) (Entry, error) {
	if p.opts.OpenMetrics && p.opts.Strict {
		return 0, perr(line, "comment line: OpenMetrics allows only HELP, TYPE, UNIT and EOF after '#'")
	}
	return EntryComment, nil
}

// isMetaKeyword reports whether b starts with a HELP, TYPE or UNIT keyword
// followed by a blank.
func isMetaKeyword(b []byte) bool {
	if len(b) < 5 || !isBlank(b[4]) {
		return false
	}
	switch string(b[:4]) {
	case "HELP", "TYPE", "UNIT":
		return true
	}
	return false
}

// helpText unescapes a HELP docstring: \\ and \n in both formats, and \" in
// OpenMetrics; any other backslash is kept as it is (Strict: a trailing one
// is an error).
func (p *Parser) helpText(l []byte, i int) ([]byte, error) {
	b := l[i:]
	if skipBlank(b, 0) == len(b) {
		return nil, nil // a docstring of blanks is none, as Prometheus reads it
	}
	if !p.ascii {
		var err error
		if b, _, err = p.validUTF8(b, 0); err != nil {
			return nil, err
		}
	}
	if bytes.IndexByte(b, '\\') < 0 {
		return b, nil
	}
	lo := len(p.esc)
	for k := 0; k < len(b); k++ {
		ch := b[k]
		if ch == '\\' {
			if k+1 == len(b) && p.opts.Strict {
				return nil, perr(p.line, `HELP ends with a lone backslash: write \\ for a backslash`)
			}
			if k+1 < len(b) {
				switch b[k+1] {
				case '\\':
					k++
				case 'n':
					ch = '\n'
					k++
				case '"':
					if p.opts.OpenMetrics {
						ch = '"'
						k++
					}
				}
			}
		}
		p.esc = append(p.esc, ch)
	}
	return p.esc[lo:len(p.esc):len(p.esc)], nil
}

// readQuoted reads a quoted string whose opening quote is just before l[i]
// and returns where its unescaped bytes are and the index after the closing
// quote. Escapes are \\, \" and \n; any other escape is kept verbatim in the
// text format and is an error in OpenMetrics (and when Strict).
func (p *Parser) readQuoted(l []byte, i int) ([]byte, int, error) {
	// Fast path: no escape before the closing quote (label values are short,
	// one scan for both bytes beats two IndexByte calls).
	j := i
	for ; j < len(l); j++ {
		if ch := l[j]; ch == '"' {
			if !p.ascii {
				return p.validUTF8(l[i:j:j], j+1)
			}
			return l[i:j:j], j + 1, nil
		} else if ch == '\\' {
			break
		}
	}
	lo := len(p.esc)
	p.esc = append(p.esc, l[i:j]...)
	for ; j < len(l); j++ {
		ch := l[j]
		switch ch {
		case '"':
			if !p.ascii {
				return p.validUTF8(p.esc[lo:len(p.esc):len(p.esc)], j+1)
			}
			return p.esc[lo:len(p.esc):len(p.esc)], j + 1, nil
		case '\\':
			if j+1 >= len(l) {
				return nil, 0, perr(p.line, "unterminated quoted string")
			}
			j++
			switch l[j] {
			case '\\':
				p.esc = append(p.esc, '\\')
			case '"':
				p.esc = append(p.esc, '"')
			case 'n':
				p.esc = append(p.esc, '\n')
			default:
				if p.opts.OpenMetrics || p.opts.Strict {
					return nil, 0, perrf(p.line, `invalid escape sequence \%c in quoted string (only \\, \" and \n exist)`, l[j])
				}
				p.esc = append(p.esc, '\\', l[j])
			}
		default:
			p.esc = append(p.esc, ch)
		}
	}
	return nil, 0, perr(p.line, "unterminated quoted string")
}

// validUTF8 passes on a quoted string (or docstring) that is valid UTF-8.
// Otherwise Strict refuses it, as Prometheus does the whole scrape; the
// default reading keeps the series with each invalid byte sequence replaced
// by U+FFFD, since an invalid string would later make the OTLP export of
// the whole batch fail.
func (p *Parser) validUTF8(b []byte, next int) ([]byte, int, error) {
	if utf8.Valid(b) {
		return b, next, nil
	}
	if p.opts.Strict {
		return nil, 0, perrf(p.line, "invalid UTF-8 in %q", b)
	}
	lo := len(p.esc)
	p.esc = append(p.esc, bytes.ToValidUTF8(b, []byte(string(utf8.RuneError)))...)
	return p.esc[lo:len(p.esc):len(p.esc)], next, nil
}

// labelNameStop marks the bytes that end an unquoted label name.
var labelNameStop = [256]bool{'=': true, ',': true, '}': true, '"': true, ' ': true, '\t': true}

// parseLabelSet reads `name="value", ...}` starting just after the '{' at
// l[i-1] into *dst. When name is not nil, a lone quoted string is the metric
// name (`{"my.metric", a="b"}`). It returns the index after the '}'.
func (p *Parser) parseLabelSet(l []byte, i int, dst *[]Label, name *[]byte, quotedName *bool) (int, error) {
	line := p.line
	for {
		i = skipBlank(l, i)
		if i >= len(l) {
			return 0, perr(line, "unterminated label set: expected '}'")
		}
		if l[i] == '}' {
			return i + 1, nil
		}
		var ln []byte
		quoted := l[i] == '"'
		if quoted {
			var err error
			if ln, i, err = p.readQuoted(l, i+1); err != nil {
				return 0, err
			}
		} else {
			j := i
			for j < len(l) && !labelNameStop[l[j]] {
				j++
			}
			if j == i {
				return 0, perrf(line, "expected a label name, found %q", l[i])
			}
			ln, i = l[i:j:j], j
		}
		i = skipBlank(l, i)
		if quoted && name != nil && i < len(l) && (l[i] == ',' || l[i] == '}') {
			if *quotedName || len(*name) > 0 {
				return 0, perr(line, "metric name given twice")
			}
			*name, *quotedName = ln, true
		} else {
			if i >= len(l) || l[i] != '=' {
				return 0, perrf(line, "expected '=' after label name %q", ln)
			}
			i = skipBlank(l, i+1)
			if i >= len(l) || l[i] != '"' {
				return 0, perrf(line, "expected '\"' to start the value of label %q", ln)
			}
			var val []byte
			var err error
			if val, i, err = p.readQuoted(l, i+1); err != nil {
				return 0, err
			}
			*dst = append(*dst, Label{Name: ln, Value: val, Quoted: quoted})
		}
		i = skipBlank(l, i)
		if i < len(l) && l[i] == ',' {
			i++
			if p.opts.Strict && i < len(l) && l[i] == '}' {
				return 0, perr(line, "trailing comma in the label set")
			}
			continue
		}
		if i < len(l) && l[i] == '}' {
			return i + 1, nil
		}
		return 0, perrf(line, "expected ',' or '}' after label %q", ln)
	}
}

// parseSample parses a sample line starting at l[i].
func (p *Parser) parseSample(l []byte, i int) error {
	line := p.line
	p.name, p.nameQuoted = nil, false
	p.labels = p.labels[:0]
	p.hasTS, p.hasEx, p.skipped = false, false, false
	nameEnd := 0 // where a name without a label set ends
	start := i
	if l[i] != '{' {
		j := i
		for j < len(l) && l[j] != '{' && !isBlank(l[j]) {
			j++
		}
		p.name, i, nameEnd = l[i:j:j], j, j
		// Blanks may stand between the name and its label set ("a {b="c"}
		// 1"), as Prometheus reads the format.
		if k := skipBlank(l, i); k < len(l) && l[k] == '{' {
			i = k
		}
	}
	if i < len(l) && l[i] == '{' {
		nameEnd = 0
		end := -1
		if p.known != nil && len(p.name) > 0 && !p.opts.Strict {
			end = labelSetEnd(l, i+1)
		}
		if end > 0 && p.known(l[start:end]) {
			p.skipped, p.skipLo, i = true, i+1, end
		} else {
			var err error
			if i, err = p.parseLabelSet(l, i+1, &p.labels, &p.name, &p.nameQuoted); err != nil {
				return err
			}
		}
	}
	if len(p.name) == 0 && !p.nameQuoted {
		return perr(line, "sample without a metric name")
	}
	name := p.name
	i = skipBlank(l, i)
	j := tokenEnd(l, i)
	if j == i {
		if k := signedValueInName(name); k > 0 && nameEnd > 0 && !p.opts.Strict {
			// "a+1": Prometheus ends the name where its characters end and
			// reads the value from there; do the same rather than refuse
			// the scrape it would take.
			p.name, i, j = name[:k:k], nameEnd-len(name)+k, nameEnd
			name = p.name
		} else {
			return perrf(line, "missing value for %q", name)
		}
	}
	v, ok := ParseValue(l[i:j])
	if !ok {
		return perrf(line, "invalid value %q for %q", l[i:j], name)
	}
	p.value, p.valLo, p.valHi = v, i, j
	i = skipBlank(l, j)
	if i < len(l) && l[i] != '#' {
		j = tokenEnd(l, i)
		switch {
		case p.opts.OpenMetrics:
			p.ts, ok = ParseOMTimestamp(l[i:j])
		case p.opts.Strict:
			// Integer milliseconds, as the format says; not before 1970,
			// which Prometheus's parser refuses.
			var ms int64
			if ms, ok = parseInt(l[i:j]); ok && ms >= 0 && l[i] != '+' {
				p.ts, ok = ParseTextTimestamp(l[i:j])
			} else {
				ok = false
			}
		default:
			p.ts, ok = ParseTextTimestamp(l[i:j])
		}
		if !ok {
			return perrf(line, "invalid timestamp %q for %q", l[i:j], name)
		}
		p.hasTS, p.tsLo, p.tsHi = true, i, j
		i = skipBlank(l, j)
	}
	if i < len(l) {
		if !p.opts.OpenMetrics || l[i] != '#' {
			return perrf(line, "unexpected %q after the value of %q", l[i:], name)
		}
		if err := p.parseExemplar(l, i); err != nil {
			return err
		}
	}
	if p.opts.Strict {
		return p.checkNames()
	}
	return nil
}

// signedValueInName is where a value written right after a metric name
// starts ("a+1", "a-Inf", "a.5"), or 0: a '+', '-' or '.' can start a
// value and is not a name character.
func signedValueInName(token []byte) int {
	k := bytes.IndexAny(token, "+-.")
	if k <= 0 || !ValidMetricName(token[:k]) {
		return 0
	}
	if _, ok := ParseValue(token[k:]); !ok {
		return 0
	}
	return k
}

// checkNames refuses, for Strict, the names a lenient reader would skip.
func (p *Parser) checkNames() error {
	name, quoted := p.Name()
	if !ValidName(name, quoted, false) {
		return perrf(p.line, "invalid metric name %q", name)
	}
	for k, lb := range p.labels {
		if !ValidName(lb.Name, lb.Quoted, true) {
			return perrf(p.line, "invalid label name %q in %q", lb.Name, name)
		}
		for _, prev := range p.labels[:k] {
			if bytes.Equal(prev.Name, lb.Name) {
				return perrf(p.line, "label %q appears twice in %q", lb.Name, name)
			}
		}
	}
	return nil
}

// parseExemplar parses ` # {labels} value [timestamp]` starting at the '#'.
func (p *Parser) parseExemplar(l []byte, i int) error {
	line := p.line
	i++
	if i >= len(l) || !isBlank(l[i]) {
		return perr(line, `malformed exemplar: expected " # {"`)
	}
	i = skipBlank(l, i)
	if i >= len(l) || l[i] != '{' {
		return perr(line, "malformed exemplar: expected a label set")
	}
	p.exLabels = p.exLabels[:0]
	i, err := p.parseLabelSet(l, i+1, &p.exLabels, nil, nil)
	if err != nil {
		return err
	}
	i = skipBlank(l, i)
	j := tokenEnd(l, i)
	v, ok := ParseValue(l[i:j])
	if !ok {
		return perrf(line, "invalid exemplar value %q", l[i:j])
	}
	p.ex = Exemplar{Labels: p.exLabels, Value: v}
	i = skipBlank(l, j)
	if i < len(l) {
		j = tokenEnd(l, i)
		if p.ex.TS, ok = ParseOMTimestamp(l[i:j]); !ok {
			return perrf(line, "invalid exemplar timestamp %q", l[i:j])
		}
		p.ex.HasTS = true
		if i = skipBlank(l, j); i < len(l) {
			return perrf(line, "unexpected %q after the exemplar", l[i:])
		}
	}
	p.hasEx = true
	return nil
}

// Unquote reads the double-quoted string at the start of s, with the escapes
// of label values and no others (\\, \" and \n), and returns its value and
// the number of bytes it took. For other syntaxes that quote values the way
// the exposition formats do (the replay server's scenario selectors).
func Unquote(s string) (string, int, error) {
	if s == "" || s[0] != '"' {
		return "", 0, errors.New(`expected a double-quoted value`)
	}
	p := Parser{opts: Options{Strict: true}}
	v, n, err := p.readQuoted([]byte(s), 1)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			return "", 0, errors.New(pe.Msg)
		}
		return "", 0, err
	}
	return string(v), n, nil
}

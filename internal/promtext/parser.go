// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package promtext

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
	// Strict refuses what the default reading tolerates (see the package
	// documentation): CR line ends, unknown escapes, fractional text
	// timestamps, a trailing backslash in HELP, text after a TYPE keyword,
	// TYPE keywords of the other format, and invalid or repeated metric and
	// label names. For fixtures and test expectations, not for scraping.
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
}

// Reset starts reading body, keeping the buffers grown so far.
func (p *Parser) Reset(body []byte, opts Options) {
	p.body, p.pos, p.line, p.opts, p.eof = body, 0, 0, opts, false
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
		return EntryBlank, nil
	}
	if l[i] == '#' {
		return p.parseComment(l, i)
	}
	return EntrySample, p.parseSample(l, i)
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
		return EntryComment, nil
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
	j = skipBlank(l, j)
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
	}
	return e, nil
}

// helpText unescapes a HELP docstring: \\ and \n in both formats, and \" in
// OpenMetrics; any other backslash is kept as it is (Strict: a trailing one
// is an error).
func (p *Parser) helpText(l []byte, i int) ([]byte, error) {
	b := l[i:]
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
	p.hasTS, p.hasEx = false, false
	if l[i] != '{' {
		j := i
		for j < len(l) && l[j] != '{' && !isBlank(l[j]) {
			j++
		}
		p.name, i = l[i:j:j], j
	}
	if i < len(l) && l[i] == '{' {
		var err error
		if i, err = p.parseLabelSet(l, i+1, &p.labels, &p.name, &p.nameQuoted); err != nil {
			return err
		}
	}
	if len(p.name) == 0 && !p.nameQuoted {
		return perr(line, "sample without a metric name")
	}
	name := p.name
	i = skipBlank(l, i)
	j := tokenEnd(l, i)
	if j == i {
		return perrf(line, "missing value for %q", name)
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
			// Integer milliseconds, as the format says.
			if _, ok = parseInt(l[i:j]); ok {
				p.ts, ok = ParseTextTimestamp(l[i:j])
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

package expo

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// parse reads the whole body, line by line, into the per-scrape scratch
// (families, series, label pairs, buckets, exemplars). It reports the first
// syntax error; it never touches the cross-scrape state or the output.
func (c *Converter) parse(body []byte) error {
	line := 0
	eof := false
	for pos := 0; pos < len(body); {
		var l []byte
		if n := bytes.IndexByte(body[pos:], '\n'); n >= 0 {
			l = body[pos : pos+n]
			pos += n + 1
		} else {
			l = body[pos:]
			pos = len(body)
		}
		line++
		if eof {
			return perr(line, "content after # EOF")
		}
		if n := len(l); n > 0 && l[n-1] == '\r' {
			l = l[:n-1]
		}
		i := skipBlank(l, 0)
		if i == len(l) {
			continue // blank line
		}
		if l[i] == '#' {
			isEOF, err := c.parseComment(l, i, line)
			if err != nil {
				return err
			}
			eof = isEOF
			continue
		}
		if err := c.parseSample(l, i, line); err != nil {
			return err
		}
	}
	if c.om && !eof {
		return perr(line+1, `missing "# EOF": the OpenMetrics body is incomplete (truncated?)`)
	}
	return nil
}

func perr(line int, msg string) *ParseError { return &ParseError{Line: line, Msg: msg} }

func perrf(line int, format string, args ...any) *ParseError {
	return &ParseError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// parseComment handles a line starting with '#' at l[i]: HELP, TYPE, UNIT
// (OpenMetrics) and EOF (OpenMetrics) lines; anything else is a comment and
// ignored.
func (c *Converter) parseComment(l []byte, i, line int) (eof bool, err error) {
	if c.om && i == 0 && string(l) == "# EOF" {
		return true, nil
	}
	j := i + 1
	if j >= len(l) || !isBlank(l[j]) {
		return false, nil
	}
	j = skipBlank(l, j)
	k := tokenEnd(l, j)
	kw := l[j:k]
	switch string(kw) {
	case "HELP", "TYPE":
	case "UNIT":
		if !c.om {
			return false, nil
		}
	default:
		return false, nil
	}
	j = skipBlank(l, k)
	if j >= len(l) {
		return false, perrf(line, "%s line without a metric name", kw)
	}
	var name []byte
	quoted := l[j] == '"'
	if quoted {
		name, j, err = c.readQuoted(l, j+1, line, &c.qbufA)
		if err != nil {
			return false, err
		}
		if j < len(l) && !isBlank(l[j]) {
			return false, perrf(line, "unexpected %q after the quoted metric name", l[j])
		}
	} else {
		k = tokenEnd(l, j)
		name, j = l[j:k], k
	}
	rest := l[skipBlank(l, j):]
	valid := validMetricName(name)
	if quoted {
		valid = len(name) > 0 && utf8.Valid(name)
	}
	switch kw[0] {
	case 'T':
		if len(rest) == 0 {
			return false, perrf(line, "TYPE line for %q without a type", name)
		}
		if !valid {
			c.problem(line, "TYPE line for invalid metric name %q ignored", name)
			return false, nil
		}
		tok := rest[:tokenEnd(rest, 0)]
		t, ok := parseType(tok)
		if !ok {
			c.problem(line, "unknown type %q for %q, treated as untyped", tok, name)
		}
		c.declareType(c.metaFamily(name, line), t, line)
	case 'H':
		if !valid {
			c.problem(line, "HELP line for invalid metric name %q ignored", name)
			return false, nil
		}
		fi := c.metaFamily(name, line)
		if f := &c.fams[fi]; !f.hasHelp {
			f.help, f.hasHelp = c.helpText(rest), true
		}
	case 'U':
		if !valid {
			c.problem(line, "UNIT line for invalid metric name %q ignored", name)
			return false, nil
		}
		fi := c.metaFamily(name, line)
		if f := &c.fams[fi]; !f.hasUnit {
			f.unit, f.hasUnit = c.strs.bytes(rest[:tokenEnd(rest, 0)]), true
		}
	}
	return false, nil
}

// metaFamily returns the family a metadata line is about, creating it, and
// makes it the current family.
func (c *Converter) metaFamily(name []byte, line int) int32 {
	fi, ok := c.famByName[string(name)]
	if !ok {
		fi = c.newFamily(c.strs.bytes(name), typeUntyped, line)
	}
	c.cur = fi
	return fi
}

func (c *Converter) declareType(fi int32, t famType, line int) {
	f := &c.fams[fi]
	switch {
	case f.declared && f.typ == t:
		// Repeated TYPE line: harmless.
	case !f.declared && f.nSamples == 0:
		f.typ, f.declared = t, true
	case f.declared:
		c.problem(line, "second TYPE line for %q (%s, already %s) ignored", f.name, t, f.typ)
	default:
		c.problem(line, "TYPE line for %q after its samples ignored (kept as %s)", f.name, f.typ)
	}
}

func (c *Converter) newFamily(name string, t famType, line int) int32 {
	fi := int32(len(c.fams))
	c.fams = append(c.fams, family{
		name:     name,
		typ:      t,
		nameHash: hashString(name),
		line:     int32(line),
		head:     -1,
		tail:     -1,
	})
	c.famByName[name] = fi
	return fi
}

// helpText unescapes a HELP docstring: \\ and \n in both formats, and \" in
// OpenMetrics; any other backslash is kept as it is.
func (c *Converter) helpText(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return c.strs.bytes(b)
	}
	out := c.qbufB[:0]
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if ch == '\\' && i+1 < len(b) {
			switch b[i+1] {
			case '\\':
				ch = '\\'
				i++
			case 'n':
				ch = '\n'
				i++
			case '"':
				if c.om {
					ch = '"'
					i++
				}
			}
		}
		out = append(out, ch)
	}
	c.qbufB = out
	return c.strs.bytes(out)
}

// readQuoted reads a quoted string whose opening quote is just before l[i]
// and returns its unescaped bytes (a sub-slice of l when there is nothing to
// unescape, else *buf) and the index after the closing quote. Escapes are
// \\, \" and \n; any other escape is kept verbatim in the text format and is
// an error in OpenMetrics.
func (c *Converter) readQuoted(l []byte, i, line int, buf *[]byte) ([]byte, int, error) {
	// Fast path: no escape before the closing quote (label values are short,
	// one scan for both bytes beats two IndexByte calls).
	j := i
	for ; j < len(l); j++ {
		if ch := l[j]; ch == '"' {
			return l[i:j], j + 1, nil
		} else if ch == '\\' {
			break
		}
	}
	out := append((*buf)[:0], l[i:j]...)
	for ; j < len(l); j++ {
		ch := l[j]
		switch ch {
		case '"':
			*buf = out
			return out, j + 1, nil
		case '\\':
			if j+1 >= len(l) {
				*buf = out
				return nil, 0, perr(line, "unterminated quoted string")
			}
			j++
			switch l[j] {
			case '\\':
				out = append(out, '\\')
			case '"':
				out = append(out, '"')
			case 'n':
				out = append(out, '\n')
			default:
				if c.om {
					*buf = out
					return nil, 0, perrf(line, "invalid escape sequence \\%c in quoted string", l[j])
				}
				out = append(out, '\\', l[j])
			}
		default:
			out = append(out, ch)
		}
	}
	*buf = out
	return nil, 0, perr(line, "unterminated quoted string")
}

// parseLabelSet reads `name="value", ...}` starting just after the '{' at
// l[i-1], appending the labels to *dst (names starting with "__" are
// dropped). When name is not nil, a lone quoted string is the metric name
// (`{"my.metric", a="b"}`). It returns the index after the '}' and, when a
// label name is not valid, that name (the sample is then skipped, but the
// line must still be well-formed).
func (c *Converter) parseLabelSet(l []byte, i, line int, dst *[]labelPair, exemplar bool, name *[]byte, quotedName *bool) (int, string, error) {
	bad := ""
	for k := 0; ; k++ {
		i = skipBlank(l, i)
		if i >= len(l) {
			return 0, "", perr(line, "unterminated label set")
		}
		if l[i] == '}' {
			return i + 1, bad, nil
		}
		var ln []byte
		quoted := l[i] == '"'
		if quoted {
			var err error
			ln, i, err = c.readQuoted(l, i+1, line, &c.qbufA)
			if err != nil {
				return 0, "", err
			}
		} else {
			j := i
			for j < len(l) && !labelNameStop[l[j]] {
				j++
			}
			if j == i {
				return 0, "", perrf(line, "expected a label name, found %q", l[i])
			}
			ln, i = l[i:j], j
		}
		i = skipBlank(l, i)
		if quoted && name != nil && i < len(l) && (l[i] == ',' || l[i] == '}') {
			if len(*name) > 0 || *quotedName {
				return 0, "", perr(line, "metric name given twice")
			}
			c.nameBuf = append(c.nameBuf[:0], ln...)
			*name, *quotedName = c.nameBuf, true
		} else {
			if i >= len(l) || l[i] != '=' {
				return 0, "", perrf(line, "expected '=' after label name %q", ln)
			}
			i = skipBlank(l, i+1)
			if i >= len(l) || l[i] != '"' {
				return 0, "", perrf(line, "expected '\"' to start the value of label %q", ln)
			}
			var val []byte
			var err error
			val, i, err = c.readQuoted(l, i+1, line, &c.qbufB)
			if err != nil {
				return 0, "", err
			}
			if len(ln) < 2 || ln[0] != '_' || ln[1] != '_' {
				var p labelPair
				if exemplar {
					// Exemplar labels are trace ids, unique: not worth interning.
					p = labelPair{name: string(ln), value: string(val)}
				} else {
					var ok bool
					p, ok = c.labelPair(k, ln, val, quoted)
					if !ok && bad == "" {
						bad = strconv.Quote(string(ln))
					}
				}
				*dst = append(*dst, p)
			}
		}
		i = skipBlank(l, i)
		if i < len(l) && l[i] == ',' {
			i++
			continue
		}
		if i < len(l) && l[i] == '}' {
			return i + 1, bad, nil
		}
		return 0, "", perrf(line, "expected ',' or '}' after label %q", ln)
	}
}

// labelNameStop marks the bytes that end an unquoted label name.
var labelNameStop = [256]bool{'=': true, ',': true, '}': true, '"': true, ' ': true, '\t': true}

// posCache remembers, for the first label positions, the label name and
// value seen last at that position. Consecutive samples nearly always repeat
// them (the buckets of a histogram, the series of one model), and comparing
// bytes with the previous string is much cheaper than a lookup in the string
// table. It is cleared at the start of every Convert, so everything in it was
// looked up in (and so kept alive in) the string table during this call.
type posCache [8]struct{ name, value string }

// labelPair interns one label; ok is false when the name is not valid.
func (c *Converter) labelPair(k int, name, value []byte, quoted bool) (p labelPair, ok bool) {
	if k < len(c.pos) {
		e := &c.pos[k]
		if !quoted && e.name != "" && string(name) == e.name {
			p.name, ok = e.name, true // only valid unquoted names are cached
		} else {
			p.name = c.strs.bytes(name)
			if ok = labelNameOK(name, quoted); ok && !quoted {
				e.name = p.name
			}
		}
		if string(value) == e.value {
			p.value = e.value
		} else {
			p.value = c.strs.bytes(value)
			e.value = p.value
		}
		return p, ok
	}
	return labelPair{name: c.strs.bytes(name), value: c.strs.bytes(value)}, labelNameOK(name, quoted)
}

func labelNameOK(name []byte, quoted bool) bool {
	if quoted {
		return len(name) > 0 && utf8.Valid(name)
	}
	return validLabelName(name)
}

// parseSample parses a sample line starting at l[i] and files it.
func (c *Converter) parseSample(l []byte, i, line int) error {
	c.st.Points++
	var name []byte
	quotedName := false
	if l[i] != '{' {
		j := i
		for j < len(l) && l[j] != '{' && !isBlank(l[j]) {
			j++
		}
		name, i = l[i:j], j
	}
	lo := len(c.labels)
	bad := ""
	if i < len(l) && l[i] == '{' {
		var err error
		i, bad, err = c.parseLabelSet(l, i+1, line, &c.labels, false, &name, &quotedName)
		if err != nil {
			return err
		}
	}
	if len(name) == 0 && !quotedName {
		return perr(line, "sample without a metric name")
	}
	i = skipBlank(l, i)
	j := tokenEnd(l, i)
	if j == i {
		return perrf(line, "missing value for %q", name)
	}
	v, ok := parseValue(l[i:j])
	if !ok {
		return perrf(line, "invalid value %q for %q", l[i:j], name)
	}
	i = skipBlank(l, j)
	var ts int64
	hasTS := false
	if i < len(l) && l[i] != '#' {
		j = tokenEnd(l, i)
		if c.om {
			ts, ok = parseOMTimestamp(l[i:j])
		} else {
			ts, ok = parseTextTimestamp(l[i:j])
		}
		if !ok {
			return perrf(line, "invalid timestamp %q for %q", l[i:j], name)
		}
		hasTS = true
		i = skipBlank(l, j)
	}
	ex := int32(-1)
	if i < len(l) {
		if !c.om || l[i] != '#' {
			return perrf(line, "unexpected %q after the value of %q", l[i:], name)
		}
		var err error
		if ex, err = c.parseExemplar(l, i, line); err != nil {
			return err
		}
	}
	c.fileSample(name, quotedName, lo, bad, v, ts, hasTS, ex, line)
	return nil
}

// parseExemplar parses ` # {labels} value [timestamp]` starting at the '#'.
func (c *Converter) parseExemplar(l []byte, i, line int) (int32, error) {
	i++
	if i >= len(l) || !isBlank(l[i]) {
		return -1, perr(line, "malformed exemplar: expected \" # {\"")
	}
	i = skipBlank(l, i)
	if i >= len(l) || l[i] != '{' {
		return -1, perr(line, "malformed exemplar: expected a label set")
	}
	lo := len(c.exLabels)
	i, _, err := c.parseLabelSet(l, i+1, line, &c.exLabels, true, nil, nil)
	if err != nil {
		return -1, err
	}
	i = skipBlank(l, i)
	j := tokenEnd(l, i)
	v, ok := parseValue(l[i:j])
	if !ok {
		return -1, perrf(line, "invalid exemplar value %q", l[i:j])
	}
	e := exemplar{lo: int32(lo), hi: int32(len(c.exLabels)), next: -1, v: v}
	i = skipBlank(l, j)
	if i < len(l) {
		j = tokenEnd(l, i)
		if e.ts, ok = parseOMTimestamp(l[i:j]); !ok {
			return -1, perrf(line, "invalid exemplar timestamp %q", l[i:j])
		}
		e.hasTS = true
		if i = skipBlank(l, j); i < len(l) {
			return -1, perrf(line, "unexpected %q after the exemplar", l[i:])
		}
	}
	c.exs = append(c.exs, e)
	return int32(len(c.exs) - 1), nil
}

// dropExemplar forgets the exemplar just parsed (it is always the last one).
func (c *Converter) dropExemplar(ex int32) {
	if ex >= 0 {
		c.exLabels = c.exLabels[:c.exs[ex].lo]
		c.exs = c.exs[:ex]
	}
}

// Results of resolveFamily besides success.
const (
	resolvedOK       = iota
	resolvedConflict // the name is taken by a family whose type has no such sample
	resolvedBadName  // no family fits and the name is not a valid metric name
)

// resolveFamily finds the family a sample named name belongs to: the current
// family when the name fits it, else a family with that exact name, else one
// whose name plus a type-specific suffix (_total, _bucket, _count, ...) gives
// the name; otherwise a new untyped family is created. Family names are
// validated when the family is created, so a name that fits an existing
// family needs no further check. On resolvedConflict (the sample "x" next to
// histogram "x") the family returned is the one in the way.
func (c *Converter) resolveFamily(name []byte, quoted bool, line int) (int32, role, int) {
	if c.cur >= 0 {
		f := &c.fams[c.cur]
		if len(name) >= len(f.name) && string(name[:len(f.name)]) == f.name {
			if r, ok := roleFor(f.typ, name[len(f.name):]); ok {
				return c.cur, r, resolvedOK
			}
		}
	}
	exact, hasExact := c.famByName[string(name)]
	if hasExact {
		if r, ok := roleFor(c.fams[exact].typ, nil); ok {
			return exact, r, resolvedOK
		}
	}
	for _, suf := range suffixes {
		n := len(name) - len(suf)
		if n <= 0 || string(name[n:]) != suf {
			continue
		}
		if fi, ok := c.famByName[string(name[:n])]; ok {
			if r, ok := roleFor(c.fams[fi].typ, name[n:]); ok {
				return fi, r, resolvedOK
			}
		}
	}
	if hasExact {
		return exact, 0, resolvedConflict
	}
	valid := validMetricName(name)
	if quoted {
		valid = len(name) > 0 && utf8.Valid(name)
	}
	if !valid {
		return -1, 0, resolvedBadName
	}
	return c.newFamily(c.strs.bytes(name), typeUntyped, line), roleValue, resolvedOK
}

// fileSample attaches a syntactically valid sample to its family and series.
// Samples that cannot be used are counted and skipped here.
func (c *Converter) fileSample(name []byte, quotedName bool, lo int, bad string, v float64, ts int64, hasTS bool, ex int32, line int) {
	discard := func() {
		c.labels = c.labels[:lo]
		c.dropExemplar(ex)
	}
	fi, r, res := c.resolveFamily(name, quotedName, line)
	switch res {
	case resolvedBadName:
		c.invalid(line, "invalid metric name %q", name)
		discard()
		return
	case resolvedConflict:
		c.invalid(line, "sample %q does not fit %s family %q", name, c.fams[fi].typ, c.fams[fi].name)
		discard()
		return
	}
	f := &c.fams[fi]
	if fi != c.cur {
		if f.nSamples > 0 && !f.split {
			f.split = true
			c.problem(line, "samples of %q are split into several groups (merged)", f.name)
		}
		c.cur = fi
	}
	f.nSamples++
	if bad != "" {
		c.invalid(line, "invalid label name %s in %q", bad, name)
		discard()
		return
	}
	if hasTS && ts < 0 {
		c.invalid(line, "timestamp before 1970 in %q", name)
		discard()
		return
	}

	// The le / quantile label is part of the sample, not of the series.
	var bound float64
	boundKey, boundBad, boundMissing, boundInvalid := "", "", false, false
	if r == roleBucket || r == roleQuantile {
		boundKey, boundMissing = "le", true
		if r == roleQuantile {
			boundKey = "quantile"
		}
		for k := lo; k < len(c.labels); k++ {
			if c.labels[k].name != boundKey {
				continue
			}
			boundMissing = false
			var ok bool
			if bound, ok = parseBound(c.labels[k].value, r == roleQuantile); !ok {
				boundBad, boundInvalid = c.labels[k].value, true
			}
			c.labels = append(c.labels[:k], c.labels[k+1:]...)
			break
		}
	}

	ls := c.labels[lo:]
	if dup, ok := sortLabels(ls); !ok {
		c.invalid(line, "duplicate label name %q in %q", dup, name)
		discard()
		return
	}
	// Consecutive samples usually carry the same labels (all the lines of a
	// histogram series, the series of one model across families): compare
	// with the previous sample's labels, which are mostly the very same
	// interned strings, before hashing again.
	var lh uint64
	if c.prevOK && sameLabels(ls, c.prevLabels) {
		lh = c.prevLH
	} else {
		lh = c.hashLabels(ls)
		c.prevLabels = append(c.prevLabels[:0], ls...)
		c.prevLH, c.prevOK = lh, true
	}
	si, isNew := c.seriesFor(mix(f.nameHash, lh), fi, lh, lo, line)
	if !isNew {
		c.labels = c.labels[:lo] // the series already holds these labels
	}
	s := &c.series[si]
	if s.invalid {
		c.dropExemplar(ex)
		return
	}
	if boundMissing || boundInvalid {
		s.invalid = true
		if boundMissing {
			c.invalid(line, "%s %q: sample %q without %s label", f.typ, f.name, name, boundKey)
		} else {
			c.invalid(line, "%s %q: invalid %s %q", f.typ, f.name, boundKey, boundBad)
		}
		c.dropExemplar(ex)
		return
	}

	keepEx := false
	switch r {
	case roleValue:
		if s.hasVal {
			c.duplicate(line, "duplicate sample %q (first wins)", name)
			c.dropExemplar(ex)
			return
		}
		s.val, s.hasVal = v, true
		if f.emitName == "" {
			if len(name) == len(f.name) {
				f.emitName = f.name
			} else {
				f.emitName = c.strs.bytes(name)
			}
		}
		keepEx = f.typ == typeCounter
	case roleBucket, roleQuantile:
		k := int32(len(c.subs))
		c.subs = append(c.subs, subPoint{bound: bound, v: v, line: int32(line), next: -1})
		if s.subTail >= 0 {
			c.subs[s.subTail].next = k
		} else {
			s.subHead = k
		}
		s.subTail = k
		keepEx = r == roleBucket && f.typ == typeHistogram
	case roleCount, roleGCount:
		if s.hasCount {
			c.duplicate(line, "duplicate sample %q (first wins)", name)
			c.dropExemplar(ex)
			return
		}
		s.count, s.hasCount = v, true
	case roleSum, roleGSum:
		if s.hasSum {
			c.duplicate(line, "duplicate sample %q (first wins)", name)
			c.dropExemplar(ex)
			return
		}
		s.sum, s.hasSum = v, true
	case roleCreated:
		if s.hasCreated {
			c.duplicate(line, "duplicate sample %q (first wins)", name)
			c.dropExemplar(ex)
			return
		}
		s.created, s.hasCreated = v, true
	}
	if hasTS && !s.hasTS {
		s.ts, s.hasTS = ts, true
	}
	if ex >= 0 {
		if keepEx {
			if s.exTail >= 0 {
				c.exs[s.exTail].next = ex
			} else {
				s.exHead = ex
			}
			s.exTail = ex
		} else {
			c.dropExemplar(ex)
		}
	}
}

// seriesFor returns the series with the given key, creating it (with the
// labels from lo to the end of c.labels) if needed.
func (c *Converter) seriesFor(key uint64, fi int32, lh uint64, lo, line int) (int32, bool) {
	if c.lastIdx >= 0 && c.lastKey == key {
		return c.lastIdx, false
	}
	si, ok := c.seriesIdx.get(key)
	if !ok {
		si = int32(len(c.series))
		c.series = append(c.series, series{
			lh: lh, fam: fi, next: -1,
			lo: int32(lo), hi: int32(len(c.labels)), line: int32(line),
			subHead: -1, subTail: -1, exHead: -1, exTail: -1,
		})
		c.seriesIdx.put(key, si)
		f := &c.fams[fi]
		if f.tail >= 0 {
			c.series[f.tail].next = si
		} else {
			f.head = si
		}
		f.tail = si
		f.nSeries++
	}
	c.lastKey, c.lastIdx = key, si
	return si, !ok
}

func sameLabels(a, b []labelPair) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// parseBound parses an le or quantile label value. NaN is refused; a
// quantile must lie in [0, 1].
func parseBound(s string, quantile bool) (float64, bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '_', 'x', 'X', 'p', 'P':
			return 0, false
		}
	}
	v, ok := fastFloat(s)
	if !ok {
		var err error
		if v, err = strconv.ParseFloat(s, 64); err != nil || v != v {
			return 0, false
		}
	}
	if quantile && (v < 0 || v > 1) {
		return 0, false
	}
	return v, true
}

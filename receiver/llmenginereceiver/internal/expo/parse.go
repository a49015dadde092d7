// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo

import (
	"errors"
	"io"
	"strconv"

	"github.com/llmops-otel/otelcol-llmops/internal/promtext"
)

// parse reads the whole body, line by line, into the per-scrape scratch
// (families, series, label pairs, buckets, exemplars). It reports the first
// syntax error; it never touches the cross-scrape state or the output.
func (c *Converter) parse(body []byte) error {
	c.p.Reset(body, promtext.Options{OpenMetrics: c.om})
	for {
		e, err := c.p.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		switch e {
		case promtext.EntrySample:
			c.parseSample()
		case promtext.EntryHelp, promtext.EntryType, promtext.EntryUnit:
			c.parseMeta(e)
		}
	}
}

// parseMeta files a HELP, TYPE or UNIT line. Lines about an invalid name are
// ignored with a problem.
func (c *Converter) parseMeta(e promtext.Entry) {
	name, quoted := c.p.MetaName()
	line := c.p.Line()
	if !promtext.ValidName(name, quoted, false) {
		c.problem(line, "%s line for invalid metric name %q ignored", metaKeyword[e], name)
		return
	}
	switch e {
	case promtext.EntryType:
		t, ok := c.p.Type()
		if !ok {
			c.problem(line, "unknown type %q for %q, treated as untyped", c.p.Text(), name)
		}
		c.declareType(c.metaFamily(name, line), t, line)
	case promtext.EntryHelp:
		if f := &c.fams[c.metaFamily(name, line)]; !f.hasHelp {
			f.help, f.hasHelp = c.strs.bytes(c.p.Text()), true
		}
	case promtext.EntryUnit:
		if f := &c.fams[c.metaFamily(name, line)]; !f.hasUnit {
			f.unit, f.hasUnit = c.strs.bytes(c.p.Text()), true
		}
	}
}

var metaKeyword = map[promtext.Entry]string{promtext.EntryHelp: "HELP", promtext.EntryType: "TYPE", promtext.EntryUnit: "UNIT"}

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

func labelNameOK(name []byte, quoted bool) bool { return promtext.ValidName(name, quoted, true) }

// parseSample interns the labels of the sample line just read and files it.
// Labels whose name starts with "__" are dropped; an invalid label name
// makes the sample skipped (in fileSample), not the scrape fail.
func (c *Converter) parseSample() {
	c.st.Points++
	name, quotedName := c.p.Name()
	lo := len(c.labels)
	bad := ""
	if !c.p.LabelsSkipped() {
		bad = c.internLabels(c.p.Labels())
	}
	ex := int32(-1)
	if e, ok := c.p.Exemplar(); ok {
		elo := len(c.exLabels)
		for _, lb := range e.Labels {
			if !isReserved(lb.Name) {
				// Exemplar labels are trace ids, unique: not worth interning.
				c.exLabels = append(c.exLabels, labelPair{name: string(lb.Name), value: string(lb.Value)})
			}
		}
		c.exs = append(c.exs, exemplar{lo: int32(elo), hi: int32(len(c.exLabels)), next: -1, hasTS: e.HasTS, v: e.Value, ts: e.TS})
		ex = int32(len(c.exs) - 1)
	}
	ts, hasTS := c.p.Timestamp()
	c.fileSample(name, quotedName, lo, bad, c.p.Value(), ts, hasTS, ex, c.p.Line())
}

// internLabels appends the labels read to c.labels, interned, and returns
// the first invalid label name, quoted, or "".
func (c *Converter) internLabels(ls []promtext.Label) (bad string) {
	for k, lb := range ls {
		if isReserved(lb.Name) {
			continue
		}
		p, ok := c.labelPair(k, lb.Name, lb.Value, lb.Quoted)
		if !ok && bad == "" {
			bad = strconv.Quote(string(lb.Name))
		}
		c.labels = append(c.labels, p)
	}
	return bad
}

func isReserved(name []byte) bool { return len(name) >= 2 && name[0] == '_' && name[1] == '_' }

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

// famTable is the Converter seen as promtext.Families.
type famTable Converter

func (t *famTable) Lookup(name []byte) (int32, famType, bool) {
	fi, ok := t.famByName[string(name)]
	if !ok {
		return -1, typeUntyped, false
	}
	return fi, t.fams[fi].typ, true
}

// resolveFamily finds the family a sample named name belongs to
// (promtext.Resolve), creating a new untyped family when none fits. Family
// names are validated when the family is created, so a name that fits an
// existing family needs no further check. On resolvedConflict (the sample
// "x" next to histogram "x") the family returned is the one in the way.
func (c *Converter) resolveFamily(name []byte, quoted bool, line int) (int32, role, int) {
	curName, curType := "", typeUntyped
	if c.cur >= 0 {
		curName, curType = c.fams[c.cur].name, c.fams[c.cur].typ
	}
	fi, r, res := promtext.Resolve(name, c.cur, curName, curType, (*famTable)(c))
	switch res {
	case promtext.Resolved:
		return fi, r, resolvedOK
	case promtext.Conflict:
		return fi, 0, resolvedConflict
	}
	if !promtext.ValidName(name, quoted, false) {
		return -1, 0, resolvedBadName
	}
	return c.newFamily(c.strs.bytes(name), typeUntyped, line), roleValue, resolvedOK
}

// fileSample attaches a syntactically valid sample to its family and series.
// Samples that cannot be used are counted and skipped here.
func (c *Converter) fileSample(name []byte, quotedName bool, lo int, bad string, v float64, ts int64, hasTS bool, ex int32, line int) {
	// The line is remembered (lineMemo) only once its labels have made a
	// series without a problem.
	clean, si, r, bound := false, int32(-1), role(0), 0.0
	defer func() { c.memo.record(clean, si, r, bound) }()
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
	// A line the memo knows keeps what its labels made last time, if they
	// are read in the same role (a TYPE line may have changed it).
	known := false
	var lh uint64
	var ms memoSeries
	if c.p.LabelsSkipped() {
		if e := &c.memo.prev[c.memo.pending.hit]; e.role == r {
			ms = c.memo.series[e.series]
			known, bound, lh = true, e.bound, ms.lh
		} else if labels, err := c.p.ReadSkippedLabels(); err == nil {
			bad = c.internLabels(labels)
		} else {
			// Cannot happen: these very bytes were read without error.
			bad = strconv.Quote(err.Error())
		}
	}
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
	boundKey, boundBad, boundMissing, boundInvalid := "", "", false, false
	if !known && (r == roleBucket || r == roleQuantile) {
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
			if bound, ok = promtext.ParseBound(c.labels[k].value, r == roleQuantile); !ok {
				boundBad, boundInvalid = c.labels[k].value, true
			}
			c.labels = append(c.labels[:k], c.labels[k+1:]...)
			break
		}
	}

	if !known {
		ls := c.labels[lo:]
		if dup, ok := sortLabels(ls); !ok {
			c.invalid(line, "duplicate label name %q in %q", dup, name)
			discard()
			return
		}
		// Consecutive samples usually carry the same labels (all the lines
		// of a histogram series, the series of one model across families):
		// compare with the previous sample's labels, which are mostly the
		// very same interned strings, before hashing again.
		if c.prevOK && sameLabels(ls, c.prevLabels) {
			lh = c.prevLH
		} else {
			lh = c.hashLabels(ls)
			c.prevLabels = append(c.prevLabels[:0], ls...)
			c.prevLH, c.prevOK = lh, true
		}
	}
	var isNew bool
	si, isNew = c.seriesFor(mix(f.nameHash, lh), fi, lh, lo, line)
	switch {
	case known && isNew:
		// Created without labels (c.labels ended at lo): copy them only
		// now, so the other lines of the series (buckets, _sum, _count)
		// copy nothing.
		c.labels = append(c.labels, c.memo.labels[ms.lo:ms.hi]...)
		c.series[si].hi = int32(len(c.labels))
	case !isNew:
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
	clean = true

	keepEx := false
	switch r {
	case roleValue:
		if s.hasVal {
			c.duplicate(line, name)
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
			c.duplicate(line, name)
			c.dropExemplar(ex)
			return
		}
		s.count, s.hasCount = v, true
	case roleSum, roleGSum:
		if s.hasSum {
			c.duplicate(line, name)
			c.dropExemplar(ex)
			return
		}
		s.sum, s.hasSum = v, true
	case roleCreated:
		if s.hasCreated {
			c.duplicate(line, name)
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

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// readerFunc adapts the counting reader to io.Reader for encoding/json.
type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// decodeJSON builds the same store from a JSON-serialised snapshot: each
// object becomes a dict given all its items at '}', each array a list at
// ']', so records are recognised exactly as in a pickle.
func decodeJSON(rd *reader, s *store) (value, error) {
	src := readerFunc(func(p []byte) (int, error) {
		if rd.pos == rd.end && !rd.fill() {
			if rd.err == nil || errors.Is(rd.err, io.ErrUnexpectedEOF) {
				return 0, io.EOF
			}
			return 0, rd.err
		}
		n := copy(p, rd.buf[rd.pos:rd.end])
		rd.pos += n
		return n, nil
	})
	dec := json.NewDecoder(src)
	dec.UseNumber()
	type level struct {
		obj   bool
		items []value
	}
	var levels []level
	var top value
	// held is the items of the open arrays and objects (memory accounting).
	var held int64
	done := false
	for !done {
		if err := overBudget(rd.name, dec.InputOffset(), s.footprint()+held+int64(cap(levels))*(sizeSlice+8)); err != nil {
			return value{}, err
		}
		tok, err := dec.Token()
		if err != nil {
			if rd.err != nil && !errors.Is(rd.err, io.ErrUnexpectedEOF) {
				return value{}, rd.err
			}
			return value{}, fmt.Errorf("%s: invalid JSON near byte %d: %s; the file is incomplete or not a memory snapshot", rd.name, dec.InputOffset(), err.Error()) // as text: not wrapped, so a decoder's io.ErrUnexpectedEOF is not taken for a truncated read
		}
		var v value
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				levels = append(levels, level{obj: t == '{'})
				continue
			case '}':
				l := levels[len(levels)-1]
				levels = levels[:len(levels)-1]
				held -= int64(cap(l.items)) * sizeValue
				v = s.newCont(cDict)
				s.setItems(v, l.items)
			case ']':
				l := levels[len(levels)-1]
				levels = levels[:len(levels)-1]
				held -= int64(cap(l.items)) * sizeValue
				v = s.newCont(cList)
				s.appendItems(v, l.items)
			}
		case string:
			v = s.str(t)
		case json.Number:
			if n, err := strconv.ParseInt(string(t), 10, 64); err == nil {
				v = value{k: kInt, n: n}
			} else if f, err := strconv.ParseFloat(string(t), 64); err == nil {
				v = value{k: kFloat, n: int64(math.Float64bits(f))}
			} else {
				v = value{k: kBigInt}
			}
		case bool:
			v = value{k: kBool}
			if t {
				v.n = 1
			}
		case nil:
			v = value{k: kNone}
		}
		if len(levels) == 0 {
			top, done = v, true
			continue
		}
		l := &levels[len(levels)-1]
		before := cap(l.items)
		l.items = append(l.items, v)
		held += int64(cap(l.items)-before) * sizeValue
	}
	return top, nil
}

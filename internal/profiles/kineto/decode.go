// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kineto

import (
	"fmt"
	"runtime"
	"unicode/utf8"
)

// The event decoding of the parser: the document's top-level members
// (metadata, devices, distributedInfo, traceEvents), each event's keys and
// its args, decoded into Event and Metadata with the lexer of lex.go.

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
		from := p.base + int64(p.pos)
		p.eventsParallel()
		// The parallel parse's working set (blocks read ahead, event
		// slots, the workers' buffers and string tables: about 4 MiB)
		// became garbage when eventsParallel returned.
		// Collected here, before the caller builds on what it was
		// handed, its pages are what the caller's next allocations
		// reuse. Left to the collector's own pacing, the cycle
		// sometimes landed in the middle of the builder's finish and
		// the heap grew by 3-4 MiB instead: the 54 MB trace's import
		// peaked at 26.4-26.7 MiB RSS in 6 of 40 cold runs, over the
		// half of the file it may take (25.6 MiB). With this collection
		// (and the spare blocks let go, see eventsParallel's stop), 60
		// alternating cold imports: largest 26.4 -> 24.4 MiB, median
		// 23.3 -> 22.8, wall time within noise (median 226 -> 229 ms;
		// 198 -> 197 in another 60); the 541 MB trace 166 -> 161 MiB.
		// Only after a large array: a small one leaves little garbage,
		// and a forced cycle costs the whole process's heap.
		if p.base+int64(p.pos)-from >= ParallelMinBytes {
			runtime.GC()
		}
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
		if p.job != nil {
			p.ev = p.job.slot()
		}
		p.event()
		p.md.Events++
		if err := p.h.Event(p.ev); err != nil {
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

// Reset clears the event for reuse, keeping Args.Other's storage. One
// assignment of the cleared event: saving Args, clearing the event and
// resetting Args after were three passes over the 200-byte Args per event.
func (e *Event) Reset() {
	*e = Event{Args: clearArgs(e.Args.Other)}
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
	e := p.ev
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
		// endOfMember, inlined: it is not inlinable, and this runs once
		// per member of every event.
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
		if code == argOther && len(a.Other) < MaxOtherArgs && !p.noOther {
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
		// endOfMember, inlined: it is not inlinable, and this runs once
		// per member of every event.
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

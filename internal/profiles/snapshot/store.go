// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"encoding/binary"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
)

// kind is the type of a decoded value.
type kind uint8

const (
	kUndef  kind = iota // a memo slot never written
	kNone               // None / null
	kBool               // n = 0 or 1
	kInt                // n
	kBigInt             // an int beyond int64: kept as "some int", never used as a number
	kFloat              // n = math.Float64bits
	kStr                // ref = index in store.strs (str and bytes alike)
	kCont               // ref = index in store.conts
)

// value is one decoded value. 16 bytes, no pointers: the memo, the stack
// and generic lists are slices of values the GC never scans.
type value struct {
	n   int64
	ref uint32
	k   kind
}

// Container kinds. A dict or list starts generic and is turned into a
// typed record as soon as its items show what it is, so that the bulk of a
// snapshot (trace entries, frames, blocks) never exists as generic maps.
const (
	cDict     uint8 = iota // generic dict: ref = index in store.dicts (0: empty)
	cList                  // generic list: ref = index in store.lists (0: empty)
	cTuple                 // like cList, immutable
	cFrame                 // ref = frame id
	cStack                 // a list of frames: ref = stack id
	cBlock                 // ref = index in store.blocks
	cSegment               // ref = index in store.segments
	cEntry                 // trace entry waiting for its list: ref = index in store.entries
	cTrace                 // list of trace entries: ref = index in store.traces
	cConsumed              // trace entry already replayed into a trace list
)

type cont struct {
	kind uint8
	ref  uint32
}

type kv struct{ k, v value }

type frame struct {
	file, name string
	line       int64
}

// Block states as PyTorch names them.
const (
	stateOther uint8 = iota
	stateActiveAllocated
	stateActivePendingFree
	stateInactive
)

type block struct {
	addr, size, requested int64
	stack                 uint32
	state                 uint8
}

type segment struct {
	device, addr, total, allocated, active, requested, stream int64
	segType                                                   string
	blocks                                                    value // the blocks list
	stack                                                     uint32
}

// Trace entry actions.
const (
	actOther uint8 = iota
	actAlloc
	actFreeRequested
	actFreeCompleted
	actSegmentAlloc
	actSegmentFree
	actSegmentMap
	actSegmentUnmap
	actSnapshot
	actOOM
	actAnnotate
	numActions
)

var actionNames = [numActions]string{"other", "alloc", "free_requested", "free_completed", "segment_alloc",
	"segment_free", "segment_map", "segment_unmap", "snapshot", "oom", "annotate"}

func actionOf(s string) uint8 {
	for i, n := range actionNames {
		if i > 0 && n == s {
			return uint8(i)
		}
	}
	return actOther
}

type entry struct {
	addr, size, stream, timeUS int64
	deviceFree                 int64 // oom entries: free device memory reported by CUDA
	stack                      uint32
	meta                       uint32 // index in store.ids (0: no trace id)
	action                     uint8
}

// maxFramesKept bounds a stack's frames (see appendItems).
const maxFramesKept = 512

// maxDictScan bounds the items looked at by dictGet and metaIDs: the dicts
// they read (the top level, user_metadata, a history record) have a handful
// of keys, and a crafted file must not make each lookup scan a huge dict.
const maxDictScan = 64

// store holds everything decoded. Index 0 of frames, stacks, dicts, lists
// and ids is reserved for "none".
type store struct {
	conts    []cont
	dicts    [][]kv
	lists    [][]value
	strs     []string
	frames   []frame
	frameIdx map[frame]uint32
	stacks   [][]uint32
	stackIdx map[string]uint32
	blocks   []block
	segments []segment
	entries  []entry
	pending  int // entries not yet replayed into a trace list
	traces   []*traceList
	ids      []ids
	idIdx    map[string]uint32
	keyBuf   []byte
	// used is the memory held by what the slices above point to (string
	// bytes, list and dict items, interned stacks, map entries, replay
	// state), charged as it is allocated; footprint adds the slices
	// themselves. It is an estimate within a small factor, enough for the
	// decoders to refuse input that builds far more than it weighs.
	used int64
}

// Approximate sizes, in bytes, of what the store allocates per item.
const (
	sizeValue    = 16 // value
	sizeKV       = 2 * sizeValue
	sizeSlice    = 24 // a slice header
	sizeStrHdr   = 16 // a string header
	sizeMapEntry = 48 // key + value + a Go map's per-entry overhead, for small keys and values
	sizeLive     = 48 + sizeMapEntry
	sizeTrace    = 256 + 2*sizeMapEntry // a traceList and its two maps when empty
	sizeOOM      = 96
)

// footprint estimates the bytes the store holds.
func (s *store) footprint() int64 {
	return s.used +
		int64(cap(s.conts))*8 +
		int64(cap(s.dicts)+cap(s.lists)+cap(s.stacks))*sizeSlice +
		int64(cap(s.strs))*sizeStrHdr +
		int64(cap(s.frames))*40 +
		int64(cap(s.blocks))*48 +
		int64(cap(s.segments))*104 +
		int64(cap(s.entries))*56 +
		int64(cap(s.traces))*8 +
		int64(cap(s.ids))*24
}

func newStore() *store {
	return &store{
		dicts:    make([][]kv, 1),
		lists:    make([][]value, 1),
		frames:   make([]frame, 1),
		frameIdx: make(map[frame]uint32),
		stacks:   make([][]uint32, 1),
		stackIdx: make(map[string]uint32),
		ids:      make([]ids, 1),
		idIdx:    make(map[string]uint32),
	}
}

func (s *store) str(x string) value {
	s.strs = append(s.strs, x)
	s.used += int64(len(x))
	return value{k: kStr, ref: uint32(len(s.strs) - 1)}
}

func (s *store) newCont(kind uint8) value {
	s.conts = append(s.conts, cont{kind: kind})
	return value{k: kCont, ref: uint32(len(s.conts) - 1)}
}

// strOf returns v's string, if it is one.
func (s *store) strOf(v value) (string, bool) {
	if v.k != kStr {
		return "", false
	}
	return s.strs[v.ref], true
}

func intOf(v value) int64 {
	if v.k == kInt || v.k == kBool {
		return v.n
	}
	return 0
}

// contOf returns v's container, or nil.
func (s *store) contOf(v value) *cont {
	if v.k != kCont {
		return nil
	}
	return &s.conts[v.ref]
}

// setItems adds key/value pairs to the dict c (one SETITEM(S), DICT, or a
// JSON object). The first batch of an empty generic dict decides whether it
// is a record.
func (s *store) setItems(c value, items []value) {
	ct := &s.conts[c.ref]
	if ct.kind == cDict && ct.ref == 0 {
		switch s.recordKind(items) {
		case cEntry:
			s.entries = append(s.entries, entry{})
			s.pending++
			ct.kind, ct.ref = cEntry, uint32(len(s.entries)-1)
		case cFrame:
			var f frame
			for i := 0; i+1 < len(items); i += 2 {
				k, _ := s.strOf(items[i])
				switch k {
				case "filename":
					f.file, _ = s.strOf(items[i+1])
				case "name":
					f.name, _ = s.strOf(items[i+1])
				case "line":
					f.line = intOf(items[i+1])
				}
			}
			ct.kind, ct.ref = cFrame, s.internFrame(f)
			return
		case cBlock:
			s.blocks = append(s.blocks, block{})
			ct.kind, ct.ref = cBlock, uint32(len(s.blocks)-1)
		case cSegment:
			s.segments = append(s.segments, segment{})
			ct.kind, ct.ref = cSegment, uint32(len(s.segments)-1)
		}
	}
	for i := 0; i+1 < len(items); i += 2 {
		k, v := items[i], items[i+1]
		key, _ := s.strOf(k)
		switch ct.kind {
		case cEntry:
			s.setEntry(&s.entries[ct.ref], key, v)
		case cBlock:
			s.setBlock(&s.blocks[ct.ref], key, v)
		case cSegment:
			s.setSegment(&s.segments[ct.ref], key, v)
		case cDict:
			if ct.ref == 0 {
				s.dicts = append(s.dicts, nil)
				ct.ref = uint32(len(s.dicts) - 1)
			}
			before := cap(s.dicts[ct.ref])
			s.dicts[ct.ref] = append(s.dicts[ct.ref], kv{k, v})
			s.used += int64(cap(s.dicts[ct.ref])-before) * sizeKV
		default:
			// A frame (or an entry already replayed) given more keys later:
			// nothing in a snapshot does this; the extra keys are ignored.
		}
	}
}

// recordKind tells a record from its keys.
func (s *store) recordKind(items []value) uint8 {
	var has struct{ action, filename, line, state, size, blocks, total bool }
	for i := 0; i < len(items); i += 2 {
		k, ok := s.strOf(items[i])
		if !ok {
			return cDict
		}
		switch k {
		case "action":
			has.action = true
		case "filename":
			has.filename = true
		case "line":
			has.line = true
		case "state":
			has.state = true
		case "size":
			has.size = true
		case "blocks":
			has.blocks = true
		case "total_size":
			has.total = true
		}
	}
	switch {
	case has.action:
		return cEntry
	case has.filename && has.line:
		return cFrame
	case has.blocks || has.total:
		return cSegment
	case has.state && has.size:
		return cBlock
	}
	return cDict
}

func (s *store) internFrame(f frame) uint32 {
	if id, ok := s.frameIdx[f]; ok {
		return id
	}
	s.frames = append(s.frames, f)
	id := uint32(len(s.frames) - 1)
	s.frameIdx[f] = id
	s.used += sizeMapEntry + 40
	return id
}

func (s *store) internStack(fr []uint32) uint32 {
	if len(fr) == 0 {
		return 0
	}
	s.keyBuf = s.keyBuf[:0]
	for _, f := range fr {
		s.keyBuf = binary.LittleEndian.AppendUint32(s.keyBuf, f)
	}
	if id, ok := s.stackIdx[string(s.keyBuf)]; ok {
		return id
	}
	s.stacks = append(s.stacks, append([]uint32(nil), fr...))
	id := uint32(len(s.stacks) - 1)
	s.stackIdx[string(s.keyBuf)] = id
	s.used += int64(len(fr))*8 + sizeMapEntry + sizeStrHdr // the frames, and the map key that repeats them
	return id
}

// stackOf is the stack id of a frames value (0: none or not frames).
func (s *store) stackOf(v value) uint32 {
	if c := s.contOf(v); c != nil && c.kind == cStack {
		return c.ref
	}
	return 0
}

// appendItems adds items to the list c (APPEND(S), LIST, a JSON array).
// A list of frames becomes a stack; a list of trace entries a trace list
// that replays them at once, so that they need not be kept.
func (s *store) appendItems(c value, items []value) {
	ct := &s.conts[c.ref]
	if len(items) == 0 {
		return
	}
	if ct.kind == cList && ct.ref == 0 {
		switch s.allOf(items) {
		case cFrame:
			fr := make([]uint32, min(len(items), maxFramesKept))
			for i := range fr {
				fr[i] = s.conts[items[i].ref].ref
			}
			ct.kind, ct.ref = cStack, s.internStack(fr)
			return
		case cEntry:
			s.traces = append(s.traces, newTraceList())
			s.used += sizeTrace
			ct.kind, ct.ref = cTrace, uint32(len(s.traces)-1)
		}
	}
	switch ct.kind {
	case cStack:
		// More frames than one APPENDS batch (1000) holds. Frames past
		// maxFramesKept are dropped: no stack worth showing is that deep,
		// and re-interning an ever longer stack per APPEND would make a
		// crafted file quadratic.
		if s.allOf(items) == cFrame && len(s.stacks[ct.ref]) < maxFramesKept {
			fr := append([]uint32(nil), s.stacks[ct.ref]...)
			for _, it := range items {
				if len(fr) == maxFramesKept {
					break
				}
				fr = append(fr, s.conts[it.ref].ref)
			}
			ct.ref = s.internStack(fr)
		}
	case cTrace:
		tl := s.traces[ct.ref]
		stacks, ooms, pts := cap(tl.stats), cap(tl.ooms), cap(tl.pts)
		defer func() {
			// Go maps do not shrink: charge the high-water mark of live
			// allocations, not the current count.
			if n := len(tl.live); n > tl.liveHigh {
				s.used += int64(n-tl.liveHigh) * sizeLive
				tl.liveHigh = n
			}
			s.used += int64(cap(tl.stats)-stacks)*sizeStackStat + int64(cap(tl.ooms)-ooms)*sizeOOM +
				int64(cap(tl.pts)-pts)*24
		}()
		for _, it := range items {
			ic := s.contOf(it)
			if ic == nil || ic.kind != cEntry {
				tl.skipped++
				continue
			}
			tl.add(&s.entries[ic.ref])
			ic.kind, ic.ref = cConsumed, 0
			s.pending--
		}
		if s.pending == 0 {
			// Every entry decoded so far is replayed: reuse the arena.
			s.entries = s.entries[:0]
		}
	case cList, cTuple:
		if ct.ref == 0 {
			s.lists = append(s.lists, nil)
			ct.ref = uint32(len(s.lists) - 1)
		}
		before := cap(s.lists[ct.ref])
		s.lists[ct.ref] = append(s.lists[ct.ref], items...)
		s.used += int64(cap(s.lists[ct.ref])-before) * sizeValue
	}
}

// allOf returns the container kind shared by all items, or cDict when they
// differ or are not containers.
func (s *store) allOf(items []value) uint8 {
	k := uint8(255)
	for _, it := range items {
		if it.k != kCont {
			return cDict
		}
		ik := s.conts[it.ref].kind
		if ik != cFrame && ik != cEntry {
			return cDict
		}
		if k != 255 && ik != k {
			return cDict
		}
		k = ik
	}
	return k
}

// listItems returns a generic list's or tuple's items.
func (s *store) listItems(v value) ([]value, bool) {
	c := s.contOf(v)
	if c == nil || (c.kind != cList && c.kind != cTuple) {
		return nil, false
	}
	return s.lists[c.ref], true
}

// dictGet looks a key up in a generic dict.
func (s *store) dictGet(v value, key string) (value, bool) {
	c := s.contOf(v)
	if c == nil || c.kind != cDict {
		return value{}, false
	}
	for i, it := range s.dicts[c.ref] {
		if i == maxDictScan {
			break
		}
		if k, ok := s.strOf(it.k); ok && k == key {
			return it.v, true
		}
	}
	return value{}, false
}

func (s *store) setEntry(e *entry, key string, v value) {
	switch key {
	case "action":
		a, _ := s.strOf(v)
		e.action = actionOf(a)
	case "addr":
		e.addr = intOf(v)
	case "device_free":
		e.deviceFree = intOf(v)
	case "size":
		e.size = intOf(v)
	case "stream":
		e.stream = intOf(v)
	case "time_us":
		e.timeUS = intOf(v)
	case "frames":
		e.stack = s.stackOf(v)
	case "user_metadata":
		e.meta = s.metaIDs(v)
	}
}

func (s *store) setBlock(b *block, key string, v value) {
	switch key {
	case "address":
		b.addr = intOf(v)
	case "size":
		b.size = intOf(v)
	case "requested_size":
		b.requested = intOf(v)
	case "state":
		switch st, _ := s.strOf(v); st {
		case "active_allocated":
			b.state = stateActiveAllocated
		case "active_pending_free":
			b.state = stateActivePendingFree
		case "inactive":
			b.state = stateInactive
		}
	case "frames":
		if id := s.stackOf(v); id != 0 {
			b.stack = id
		}
	case "history":
		// Snapshots before PyTorch 2.1 keep a block's allocation history
		// ({addr, real_size, frames}, oldest first) instead of frames: the
		// last one allocated what the block holds now.
		if items, ok := s.listItems(v); ok && len(items) > 0 && b.stack == 0 {
			if fv, ok := s.dictGet(items[len(items)-1], "frames"); ok {
				b.stack = s.stackOf(fv)
			}
		}
	}
}

func (s *store) setSegment(g *segment, key string, v value) {
	switch key {
	case "device":
		g.device = intOf(v)
	case "address":
		g.addr = intOf(v)
	case "total_size":
		g.total = intOf(v)
	case "allocated_size":
		g.allocated = intOf(v)
	case "active_size":
		g.active = intOf(v)
	case "requested_size":
		g.requested = intOf(v)
	case "stream":
		g.stream = intOf(v)
	case "segment_type":
		g.segType, _ = s.strOf(v)
	case "blocks":
		g.blocks = v
	case "frames":
		g.stack = s.stackOf(v)
	}
}

// metaIDs finds a trace id in user_metadata (a string, or a dict of
// strings) and returns its index in s.ids (0: none).
func (s *store) metaIDs(v value) uint32 {
	if str, ok := s.strOf(v); ok {
		return s.idFor(str)
	}
	c := s.contOf(v)
	if c == nil || c.kind != cDict {
		return 0
	}
	for i, it := range s.dicts[c.ref] {
		if i == maxDictScan {
			break
		}
		if str, ok := s.strOf(it.v); ok {
			if id := s.idFor(str); id != 0 {
				return id
			}
		}
	}
	return 0
}

func (s *store) idFor(str string) uint32 {
	if len(str) < 32 {
		return 0
	}
	if id, ok := s.idIdx[str]; ok {
		return id
	}
	x, ok := findTraceIDs(str)
	if !ok {
		return 0
	}
	s.ids = append(s.ids, x)
	id := uint32(len(s.ids) - 1)
	if len(s.idIdx) < 1<<20 { // request ids repeat; a bounded cache is enough
		s.idIdx[str] = id
		s.used += sizeMapEntry
	}
	return id
}

// ids is a trace id (and, from a traceparent, the parent span id) found in
// user_metadata.
type ids struct {
	trace [16]byte
	span  [8]byte
}

// findTraceIDs reads user_metadata in the forms every profile format
// accepts (signals.FindTraceContext): "request_id=r1 trace_id=4bf9..."
// works.
func findTraceIDs(str string) (ids, bool) {
	tc, ok := signals.FindTraceContext(str)
	return ids{trace: tc.Trace, span: tc.Span}, ok
}

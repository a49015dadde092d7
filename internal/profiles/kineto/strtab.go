// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kineto

import "strings"

// strTab makes strings of parsed bytes without an allocation per event:
// repetitive strings (names, categories, arg keys, grid/block/Input Dims
// text) are interned in a per-parse map looked up as m[string(b)], which
// does not allocate; the rest (flow ids, numeric arg values) are carved out
// of an append-only arena chunk. Both kinds are ordinary immutable strings
// the handler may keep.
type strTab struct {
	// cache is a direct-mapped cache in front of m, indexed by a cheap hash
	// of a few bytes: most lookups (the same categories, arg keys and
	// names over and over) end with one comparison, no map hashing.
	cache [1024]string
	m     map[string]string
	bytes int
	arena *strings.Builder
}

func newStrTab() *strTab {
	return &strTab{m: make(map[string]string, 1024), arena: new(strings.Builder)}
}

// sym returns b interned. The table is flushed when it reaches
// maxSymbols entries or maxSymbolBytes bytes, so that a trace with
// unbounded distinct names (generated kernel names, ...) keeps bounded
// memory.
func (t *strTab) sym(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	slot := &t.cache[(uint(n)*31+uint(b[0])*7+uint(b[n-1])*131+uint(b[n/2]))%uint(len(t.cache))]
	if *slot == string(b) {
		return *slot
	}
	if s, ok := t.m[string(b)]; ok {
		*slot = s
		return s
	}
	if len(b) == 0 {
		return ""
	}
	if len(b) > maxSymbolLen {
		return string(b)
	}
	if len(t.m) >= maxSymbols || t.bytes >= maxSymbolBytes {
		clear(t.m)
		t.bytes = 0
	}
	s := string(b)
	t.m[s] = s
	t.bytes += len(s)
	*slot = s
	return s
}

// val returns b as a string from the arena. A strings.Builder only appends,
// so the strings already handed out from its buffer never change; when the
// chunk is full a new one is started (the old one lives as long as strings
// of it are referenced).
func (t *strTab) val(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > arenaChunk/8 {
		return string(b)
	}
	if t.arena.Cap()-t.arena.Len() < len(b) {
		t.arena = new(strings.Builder)
		t.arena.Grow(arenaChunk)
	}
	n := t.arena.Len()
	t.arena.Write(b)
	return t.arena.String()[n:]
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo

// seriesIndex maps the series keys of one scrape (already well-mixed 64-bit
// hashes) to their index in Converter.series. It is an open-addressing table
// with linear probing, emptied in O(1) by bumping a generation. A Go map
// would do, but clear() picks a new hash seed, and a large map then keeps
// splitting tables (allocating) from one scrape to the next.
type seriesIndex struct {
	slots []indexSlot
	mask  uint64
	n     int
	gen   uint32
}

type indexSlot struct {
	key uint64
	val int32
	gen uint32 // the slot is in use when gen == seriesIndex.gen
}

func (x *seriesIndex) reset() {
	x.n = 0
	x.gen++
	if x.gen == 0 { // wrapped around: old stamps could look current
		clear(x.slots)
		x.gen = 1
	}
}

func (x *seriesIndex) get(key uint64) (int32, bool) {
	if len(x.slots) == 0 {
		return 0, false
	}
	for i := key & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.gen != x.gen {
			return 0, false
		}
		if s.key == key {
			return s.val, true
		}
	}
}

// put adds a key that is not in the index.
func (x *seriesIndex) put(key uint64, val int32) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	for i := key & x.mask; ; i = (i + 1) & x.mask {
		if s := &x.slots[i]; s.gen != x.gen {
			*s = indexSlot{key: key, val: val, gen: x.gen}
			x.n++
			return
		}
	}
}

func (x *seriesIndex) grow() {
	old, oldGen := x.slots, x.gen
	size := max(64, 2*len(old))
	x.slots, x.mask, x.gen, x.n = make([]indexSlot, size), uint64(size-1), 1, 0
	for _, s := range old {
		if s.gen == oldGen {
			x.put(s.key, s.val)
		}
	}
}

// release drops the table (after a spike) so that it is sized again by the
// next scrapes.
func (x *seriesIndex) release() { *x = seriesIndex{} }

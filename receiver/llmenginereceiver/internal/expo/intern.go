// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo

// interner hands out one shared string per distinct byte sequence, so that
// names and label values seen in earlier scrapes cost a map lookup (which Go
// performs on a []byte key without allocating) instead of an allocation.
//
// Entries remember the last Convert call that used them; sweep forgets the
// ones unused for a while, so churning label values (request ids, pod names)
// cannot grow the table without bound.
type interner struct {
	m       map[string]int32 // string -> index in ents
	ents    []internEntry
	free    []int32
	gen     uint32 // advanced by every Convert call, successful or not
	touched int    // entries used by the current call
	peak    int
}

type internEntry struct {
	s   string
	gen uint32
}

func newInterner() interner {
	return interner{m: make(map[string]int32)}
}

func (in *interner) begin() {
	in.gen++
	in.touched = 0
}

// bytes returns the interned copy of b.
func (in *interner) bytes(b []byte) string {
	if i, ok := in.m[string(b)]; ok {
		e := &in.ents[i]
		if e.gen != in.gen {
			e.gen = in.gen
			in.touched++
		}
		return e.s
	}
	s := string(b)
	var i int32
	if n := len(in.free); n > 0 {
		i = in.free[n-1]
		in.free = in.free[:n-1]
		in.ents[i] = internEntry{s: s, gen: in.gen}
	} else {
		i = int32(len(in.ents))
		in.ents = append(in.ents, internEntry{s: s, gen: in.gen})
	}
	in.m[s] = i
	in.touched++
	return s
}

// sweep forgets strings not used by the last keep calls. It only walks the
// table when a noticeable part of it went unused in this call, and rebuilds
// it after a spike so that its memory follows what is actually in use.
func (in *interner) sweep(keep uint32) {
	n := len(in.m)
	if n > in.peak {
		in.peak = n
	}
	if !worthSweeping(n, n-in.touched, in.gen, keep) {
		return
	}
	for s, i := range in.m {
		if in.gen-in.ents[i].gen >= keep {
			delete(in.m, s)
			in.ents[i] = internEntry{}
			in.free = append(in.free, i)
		}
	}
	if in.peak > 4096 && len(in.m)*4 < in.peak {
		in.rebuild()
	}
}

func (in *interner) rebuild() {
	m := make(map[string]int32, len(in.m))
	ents := make([]internEntry, 0, len(in.m))
	for s, i := range in.m {
		m[s] = int32(len(ents))
		ents = append(ents, in.ents[i])
	}
	in.m, in.ents, in.free, in.peak = m, ents, nil, len(m)
}

func (in *interner) len() int { return len(in.m) }

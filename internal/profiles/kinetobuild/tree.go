// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kinetobuild

import (
	"cmp"
	"slices"
	"strings"
)

// tree is the work state of Finish.
type tree struct {
	b     *Builder
	nodes nodeTable
	// modPath is the interned module path of each node ("" when none).
	modPath []uint32
	// up is the nearest ancestor that is a span (-1: the root span).
	up []int32
	// span is true for nodes that are span-eligible (not folded).
	span []bool
	// memNode is the node each memory event is attributed to (-1: none).
	memNode []int32
	stats   *Stats
}

// buildCPUTree parents CPU-side nodes by time containment on their
// (pid, tid), then overrides Python frames' parents with the Python id tree
// where it resolves; it attributes memory events to the deepest op or
// module frame open at their time on the same thread.
func (t *tree) buildCPUTree() {
	nodes, b := t.nodes, t.b
	// Order the CPU nodes by (thread, start, longest first, containRank,
	// arrival), the memory events by (thread, ts, arrival): placed by
	// thread first (a counting pass over the per-thread counts the builder
	// kept), in arrival order within a thread, then each thread's runs
	// merged (see orderRuns).
	per := t.b.perThread
	cpuAt := make([]int, len(per)+1) // start of each thread's bucket
	memAt := make([]int, len(per)+1)
	for th, c := range per {
		cpuAt[th+1] = cpuAt[th] + int(c.cpu)
		memAt[th+1] = memAt[th] + int(c.mem)
	}
	cpu := make([]int32, cpuAt[len(per)])
	next := slices.Clone(cpuAt[:len(per)])
	for i := int32(0); i < nodes.len(); i++ {
		if n := nodes.at(i); n.kind.cpu() {
			th := b.threadOf(i, n)
			cpu[next[th]] = i
			next[th]++
		}
	}
	orderRuns(cpu, cpuAt, func(a, b int32) bool { return precedes(nodes.at(a), nodes.at(b), a, b) })
	mems := t.b.mems
	memOrder := make([]int32, mems.len())
	next = slices.Clone(memAt[:len(per)])
	for i := int32(0); i < mems.len(); i++ {
		th := mems.at(i).thread
		memOrder[next[th]] = i
		next[th]++
	}
	orderRuns(memOrder, memAt, memEarlier(mems))
	t.memNode = make([]int32, mems.len())
	stack := make([]int32, 0, 64)
	ci, mi := 0, 0
	for ci < len(cpu) || mi < len(memOrder) {
		// Next thread to sweep.
		var th uint32
		switch {
		case ci >= len(cpu):
			th = mems.at(memOrder[mi]).thread
		case mi >= len(memOrder):
			th = b.threadOf(cpu[ci], nodes.at(cpu[ci]))
		default:
			th = min(b.threadOf(cpu[ci], nodes.at(cpu[ci])), mems.at(memOrder[mi]).thread)
		}
		stack = stack[:0]
		for {
			hasN := ci < len(cpu) && b.threadOf(cpu[ci], nodes.at(cpu[ci])) == th
			hasM := mi < len(memOrder) && mems.at(memOrder[mi]).thread == th
			if !hasN && !hasM {
				break
			}
			// Ops starting at the memory event's ts are open at it.
			if hasN && (!hasM || nodes.at(cpu[ci]).start <= mems.at(memOrder[mi]).ts) {
				i := cpu[ci]
				ci++
				n := nodes.at(i)
				end := n.end()
				for len(stack) > 0 {
					top := nodes.at(stack[len(stack)-1])
					if top.end() >= end {
						break // top contains n
					}
					if top.end() > n.start {
						t.stats.PartialOverlaps++
					}
					stack = stack[:len(stack)-1]
				}
				if len(stack) > 0 {
					n.parent = stack[len(stack)-1]
				}
				stack = append(stack, i)
				continue
			}
			m := memOrder[mi]
			mi++
			ts := mems.at(m).ts
			for len(stack) > 0 && nodes.at(stack[len(stack)-1]).end() < ts {
				stack = stack[:len(stack)-1]
			}
			t.memNode[m] = -1
			for j := len(stack) - 1; j >= 0; j-- {
				if nd := nodes.at(stack[j]); nd.kind == kOp || nd.flags&fModule != 0 {
					t.memNode[m] = stack[j]
					break
				}
			}
			if t.memNode[m] < 0 && len(stack) > 0 {
				t.memNode[m] = stack[len(stack)-1]
			}
		}
	}

	// Python id tree.
	// Maps are sized up front: growing them rehashes and leaves garbage.
	nPy := 0
	for i := int32(0); i < nodes.len(); i++ {
		if n := nodes.at(i); n.kind == kPython && b.full(i, n).corr >= 0 {
			nPy++
		}
	}
	if nPy == 0 {
		return
	}
	pyIdx := make(map[int64]int32, nPy)
	for i := int32(0); i < nodes.len(); i++ {
		if n := nodes.at(i); n.kind == kPython {
			if id := b.full(i, n).corr; id >= 0 {
				if _, dup := pyIdx[id]; !dup {
					pyIdx[id] = i
				}
			}
		}
	}
	if len(pyIdx) == 0 {
		return
	}
	for i := int32(0); i < nodes.len(); i++ {
		n := nodes.at(i)
		if n.kind != kPython {
			continue
		}
		parentID := b.full(i, n).ext
		if parentID < 0 {
			continue
		}
		p, ok := pyIdx[parentID]
		if !ok || p == i {
			continue
		}
		pn := nodes.at(p)
		// Accept only parents that precede the child in the sweep order,
		// which keeps the tree acyclic whatever the input says.
		if b.threadOf(p, pn) == b.threadOf(i, n) && precedes(pn, n, p, i) {
			n.parent = p
		}
	}
}

// memEarlier orders memory events by time, ties by arrival.
func memEarlier(mems table[memEvent]) func(a, b int32) bool {
	return func(a, b int32) bool {
		if ta, tb := mems.at(a).ts, mems.at(b).ts; ta != tb {
			return ta < tb
		}
		return a < b
	}
}

func containRank(n *node) int {
	switch {
	case n.kind == kAnnotation:
		return 0
	case n.flags&fModule != 0:
		return 1
	case n.kind == kPython:
		return 2
	case n.kind == kOp:
		return 3
	}
	return 4
}

func precedes(a, b *node, ai, bi int32) bool {
	if a.start != b.start {
		return a.start < b.start
	}
	if a.dur != b.dur {
		return a.dur > b.dur
	}
	if ra, rb := containRank(a), containRank(b); ra != rb {
		return ra < rb
	}
	return ai < bi
}

// linkGPU parents GPU activity to the runtime call that launched it (by
// correlation, else by an ac2g flow), gpu_user_annotation to the CPU
// annotation with the same External id, and anything unmatched to the
// annotation containing it in time (else the root).
func (t *tree) linkGPU() {
	nodes, b := t.nodes, t.b
	// Maps are sized up front: growing them rehashes and leaves garbage.
	nRuntime, nAnn := 0, 0
	for i := int32(0); i < nodes.len(); i++ {
		switch nodes.at(i).kind {
		case kRuntime:
			nRuntime++
		case kAnnotation:
			nAnn++
		}
	}
	byCorr := make(map[int64]int32, nRuntime)
	annByExt := make(map[int64]int32, nAnn)
	anns := make([]int32, 0, nAnn)
	for i := int32(0); i < nodes.len(); i++ {
		n := nodes.at(i)
		switch n.kind {
		case kRuntime:
			if id := b.full(i, n).corr; id >= 0 {
				if _, dup := byCorr[id]; !dup {
					byCorr[id] = i
				}
			}
		case kAnnotation:
			anns = append(anns, i)
			if id := b.full(i, n).ext; id >= 0 {
				if _, dup := annByExt[id]; !dup {
					annByExt[id] = i
				}
			}
		}
	}
	type tts struct {
		thread uint32
		ts     int64
	}
	var flowEnd map[tts]uint64   // (thread, ts) of 'f' -> id
	var flowStart map[uint64]tts // id -> (thread, ts) of 's'
	var runtimeAt map[tts]int32
	initFlows := func() {
		nStart := 0
		flows := t.b.flows
		for i := int32(0); i < flows.len(); i++ {
			if flows.at(i).start {
				nStart++
			}
		}
		flowEnd = make(map[tts]uint64, int(flows.len())-nStart)
		flowStart = make(map[uint64]tts, nStart)
		for i := int32(0); i < flows.len(); i++ {
			if f := flows.at(i); f.start {
				flowStart[f.id] = tts{f.thread, f.ts}
			} else {
				flowEnd[tts{f.thread, f.ts}] = f.id
			}
		}
		runtimeAt = make(map[tts]int32, nRuntime)
		for i := int32(0); i < nodes.len(); i++ {
			if n := nodes.at(i); n.kind == kRuntime {
				k := tts{b.threadOf(i, n), n.start}
				if _, dup := runtimeAt[k]; !dup {
					runtimeAt[k] = i
				}
			}
		}
	}
	var unmatched []int32
	for i := int32(0); i < nodes.len(); i++ {
		n := nodes.at(i)
		switch {
		case n.kind == kGPUAnnotation:
			ext := b.full(i, n).ext
			if p, ok := annByExt[ext]; ok && ext >= 0 {
				n.parent = p
			} else {
				unmatched = append(unmatched, i)
			}
		case n.kind.launched():
			w := b.full(i, n)
			if p, ok := byCorr[w.corr]; ok && w.corr >= 0 {
				n.parent = p
				continue
			}
			if t.b.flows.len() > 0 {
				if flowEnd == nil {
					initFlows()
				}
				if id, ok := flowEnd[tts{w.thread, n.start}]; ok {
					if s, ok := flowStart[id]; ok {
						if p, ok := runtimeAt[s]; ok {
							n.parent = p
							t.stats.KernelsLinkedByFlow++
							continue
						}
					}
				}
			}
			t.stats.KernelsWithoutLauncher++
			unmatched = append(unmatched, i)
		}
	}
	if len(unmatched) == 0 || len(anns) == 0 {
		return
	}
	// Annotations by start, with the running max of their ends so the
	// backward scan stops as soon as nothing earlier can contain t.
	slices.SortFunc(anns, func(x, y int32) int {
		if c := cmp.Compare(nodes.at(x).start, nodes.at(y).start); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	maxEnd := make([]int64, len(anns))
	for j, a := range anns {
		maxEnd[j] = nodes.at(a).end()
		if j > 0 {
			maxEnd[j] = max(maxEnd[j], maxEnd[j-1])
		}
	}
	const scanCap = 4096
	for _, i := range unmatched {
		ts := nodes.at(i).start
		j, _ := slices.BinarySearchFunc(anns, ts, func(a int32, v int64) int {
			if nodes.at(a).start <= v {
				return -1
			}
			return 1
		})
		best := int32(-1)
		for k, n := j-1, 0; k >= 0 && n < scanCap && maxEnd[k] >= ts; k, n = k-1, n+1 {
			a := nodes.at(anns[k])
			if a.end() >= ts && (best < 0 || a.dur < nodes.at(best).dur) {
				best = anns[k]
			}
		}
		nodes.at(i).parent = best
	}
}

// computePaths fills modPath: the chain of nn.Module ancestors (the node
// itself included), outermost first, joined by '/'. GPU activity inherits
// its launcher's path through the parent link.
func (t *tree) computePaths() {
	nodes := t.nodes
	const unknown = ^uint32(0)
	t.modPath = make([]uint32, int(nodes.len()))
	for i := range t.modPath {
		t.modPath[i] = unknown
	}
	var chain []int32
	var sb strings.Builder
	for i := int32(0); i < nodes.len(); i++ {
		if t.modPath[i] != unknown {
			continue
		}
		chain = chain[:0]
		j := i
		for j >= 0 && t.modPath[j] == unknown && len(chain) <= int(nodes.len()) {
			chain = append(chain, j)
			j = nodes.at(j).parent
		}
		base := uint32(0)
		if j >= 0 && t.modPath[j] != unknown {
			base = t.modPath[j]
		}
		for k := len(chain) - 1; k >= 0; k-- {
			c := chain[k]
			if nodes.at(c).flags&fModule != 0 {
				cls := strings.TrimPrefix(t.b.strs[nodes.at(c).name], moduleFramePrefix)
				sb.Reset()
				if base != 0 {
					sb.WriteString(t.b.strs[base])
					sb.WriteByte('/')
				}
				sb.WriteString(cls)
				base = t.b.intern(sb.String())
			}
			t.modPath[c] = base
		}
	}
}

// fold marks span-eligible nodes and computes up (nearest span ancestor).
func (t *tree) fold() {
	nodes := t.nodes
	t.span = make([]bool, int(nodes.len()))
	minDur := int64(t.b.opts.MinDuration)
	for i := int32(0); i < nodes.len(); i++ {
		n := nodes.at(i)
		ok := true
		switch n.kind {
		case kPython:
			ok = n.flags&fModule != 0 || !t.b.opts.FoldPythonFrames
			if ok && n.dur < minDur {
				ok = false
			}
		case kOp, kRuntime:
			ok = n.dur >= minDur
		}
		t.span[i] = ok
		if !ok {
			t.stats.SpansFolded++
		}
	}
	t.up = make([]int32, int(nodes.len()))
	const unknown = int32(-2)
	for i := range t.up {
		t.up[i] = unknown
	}
	var chain []int32
	for i := int32(0); i < nodes.len(); i++ {
		if t.up[i] != unknown {
			continue
		}
		chain = chain[:0]
		j := i
		for j >= 0 && t.up[j] == unknown {
			chain = append(chain, j)
			j = nodes.at(j).parent
		}
		// j is -1 or a node with up known; the up of the last chain element
		// is j if j is a span, else up[j].
		var cur int32 = -1
		if j >= 0 {
			if t.span[j] {
				cur = j
			} else {
				cur = t.up[j]
			}
		}
		for k := len(chain) - 1; k >= 0; k-- {
			c := chain[k]
			t.up[c] = cur
			if t.span[c] {
				cur = c
			}
		}
	}
}

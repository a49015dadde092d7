// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"math"
	"strconv"
	"strings"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// A leak pattern is read from one stack's allocations in a device's trace
// ring (see the package comment): a step is one allocation of that stack,
// so the k-th allocation of a stack is its step k. The replay keeps one
// stackStat per stack (trace.go); the survivors come from the allocations
// still live at the end of the ring.

// minPatternSteps is the fewest steps a pattern is read from: survivors
// for kept_across_steps, allocations for growing_reallocation.
const minPatternSteps = 3

// leakPattern is a pattern found at one stack of one device.
type leakPattern struct {
	name          string // spec.LeakPattern*
	frame         string // the forward frame, "file.py:LINE forward"
	growth, steps int64
	bytes         int64 // live bytes of the stack at the end of the ring
	last          int64 // growing_reallocation: size of the latest allocation
	firstUS       int64 // time of the pattern's first step (0: none recorded)
	stack         uint32
}

// survivors sums one stack's allocations live at the end of the ring.
type survivors struct {
	n, bytes            int64
	firstStep, lastStep int64
	firstPos, lastPos   int64 // time_us, or the position in the ring without times
	firstUS             int64 // time of the earliest (0: not recorded)
}

// pos is where an allocation sits on the ring's axis: its time when the
// ring has times, else its position.
func (tl *traceList) pos(timeUS, seq int64) int64 {
	if tl.hasTime {
		return timeUS
	}
	return seq
}

// spread: [from, to] covers at least a quarter of the ring, so the steps
// are spread over the history, not one loop of one step (a model that
// allocates each layer's cache at the same line on its first call).
func (tl *traceList) spread(from, to int64) bool {
	span := tl.entries
	if tl.hasTime {
		span = tl.end - tl.first
	}
	return 4*(to-from) >= span
}

// forwardFrame is the innermost frame of stack named forward (a method
// named forward, or a qualified name ending in .forward) that is not
// library code, as "file.py:LINE forward"; "" when there is none.
func (a *analysis) forwardFrame(stack uint32) string {
	if stack == 0 {
		return ""
	}
	for _, fi := range a.s.stacks[stack] {
		f := a.s.frames[fi]
		if (f.name == "forward" || strings.HasSuffix(f.name, ".forward")) && !isLibraryFrame(f.file) {
			return frameSite(f)
		}
	}
	return ""
}

// patterns finds the leak patterns of one device's ring, by stack.
func (a *analysis) patterns(tl *traceList) map[uint32]leakPattern {
	surv := map[uint32]*survivors{}
	for _, la := range tl.live {
		sv := surv[la.stack]
		p := tl.pos(la.timeUS, la.seq)
		if sv == nil {
			sv = &survivors{firstStep: la.step, lastStep: la.step, firstPos: p, lastPos: p}
			surv[la.stack] = sv
		}
		sv.n++
		sv.bytes += la.size
		sv.firstStep, sv.lastStep = min(sv.firstStep, la.step), max(sv.lastStep, la.step)
		sv.firstPos, sv.lastPos = min(sv.firstPos, p), max(sv.lastPos, p)
		if la.timeUS != 0 && (sv.firstUS == 0 || la.timeUS < sv.firstUS) {
			sv.firstUS = la.timeUS
		}
	}
	out := map[uint32]leakPattern{}
	for stack, sv := range surv {
		i, ok := tl.statIdx[stack]
		if !ok {
			continue
		}
		st := &tl.stats[i]
		var p leakPattern
		switch {
		case sv.n >= minPatternSteps && 2*sv.n >= st.n && tl.spread(sv.firstPos, sv.lastPos):
			// Kept across steps: most of the stack's allocations, made
			// step after step, are all still alive.
			steps := sv.lastStep - sv.firstStep + 1
			p = leakPattern{name: spec.LeakPatternKeptAcrossSteps, steps: steps, growth: sv.bytes / steps, firstUS: sv.firstUS}
		case st.n >= minPatternSteps && st.dec == 0 && 2*st.inc >= st.n-1 && sv.n <= 2 && sv.lastStep == st.n-1 &&
			tl.spread(tl.pos(st.firstUS, st.firstSeq), tl.pos(st.lastUS, st.lastSeq)):
			// Growing reallocation: every allocation at least as large as
			// the one before, the previous ones freed, the latest alive.
			p = leakPattern{name: spec.LeakPatternGrowingReallocation, steps: st.n, growth: int64(math.Round(st.slope())), last: st.last, firstUS: st.firstUS}
			if p.growth <= 0 {
				continue
			}
		default:
			continue
		}
		if p.frame = a.forwardFrame(stack); p.frame == "" {
			continue // not made inside a module's forward
		}
		p.bytes, p.stack = sv.bytes, stack
		out[stack] = p
	}
	return out
}

// slope is the least-squares slope of the allocations' sizes over their
// steps 0..n-1: Σ(k−k̄)·s / Σ(k−k̄)², with Σ(k−k̄)² = n(n²−1)/12.
func (st *stackStat) slope() float64 {
	n := float64(st.n)
	if st.n < 2 {
		return 0
	}
	kbar := (n - 1) / 2
	return (st.sumKS - kbar*st.sumS) / (n * (n*n - 1) / 12)
}

// where is the forward frame as "forward at file.py:LINE".
func (p *leakPattern) where() string {
	if i := strings.LastIndexByte(p.frame, ' '); i > 0 {
		return p.frame[i+1:] + " at " + p.frame[:i]
	}
	return p.frame
}

// describe is the pattern in words, for the record's body.
func (p *leakPattern) describe() string {
	steps := strconv.FormatInt(p.steps, 10)
	switch p.name {
	case spec.LeakPatternKeptAcrossSteps:
		return "kept across steps: " + steps + " steps of " + p.where() + " each left " +
			signals.FormatBytes(p.growth) + " alive (" + signals.FormatBytes(p.bytes) + ")"
	case spec.LeakPatternGrowingReallocation:
		return "growing reallocation: " + steps + " steps of " + p.where() +
			" each allocated a larger tensor here and freed the previous one, " + signals.FormatBytes(p.growth) +
			" more per step (fit; now " + signals.FormatBytes(p.last) + ")"
	}
	return ""
}

// advice is what to look for, by pattern.
func (p *leakPattern) advice() string {
	switch p.name {
	case spec.LeakPatternKeptAcrossSteps:
		return "check what " + p.where() + " keeps from each step (register_buffer or self._buffers[...] in forward, a list or cache appended to, a closure) and release it, or detach it and move it off the GPU"
	case spec.LeakPatternGrowingReallocation:
		return "check what " + p.where() + " concatenates onto a history it keeps (torch.cat each step) and bound that history"
	}
	return ""
}

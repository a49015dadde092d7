// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kinetobuild

import (
	"math/bits"
	"slices"
)

// sortKey is a precomputed sort key, compared lexicographically on
// (a, b, c, d); d ends with a unique index so the order is total. Sorting
// keys instead of node indexes keeps the comparator free of indirections
// into the node table, and sortKeys below inlines the comparison (a
// slices.SortFunc comparator is an indirect call per comparison).
type sortKey struct{ a, b, c, d int64 }

func (x *sortKey) less(y *sortKey) bool {
	if x.a != y.a {
		return x.a < y.a
	}
	if x.b != y.b {
		return x.b < y.b
	}
	if x.c != y.c {
		return x.c < y.c
	}
	return x.d < y.d
}

// sortKeys sorts s ascending (introsort: quicksort with a median-of-three
// pivot, insertion sort for short runs, heapsort past the depth limit).
func sortKeys(s []sortKey) {
	quickSortKeys(s, 2*bits.Len(uint(len(s))))
}

func quickSortKeys(s []sortKey, depth int) {
	for len(s) > 16 {
		if depth == 0 {
			heapSortKeys(s)
			return
		}
		depth--
		p := partitionKeys(s)
		if p < len(s)-p {
			quickSortKeys(s[:p], depth)
			s = s[p+1:]
		} else {
			quickSortKeys(s[p+1:], depth)
			s = s[:p]
		}
	}
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].less(&s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// partitionKeys partitions s around a median-of-three pivot and returns
// the pivot's final position.
func partitionKeys(s []sortKey) int {
	n := len(s)
	lo, mid, hi := 0, n/2, n-1
	if s[mid].less(&s[lo]) {
		s[mid], s[lo] = s[lo], s[mid]
	}
	if s[hi].less(&s[mid]) {
		s[hi], s[mid] = s[mid], s[hi]
		if s[mid].less(&s[lo]) {
			s[mid], s[lo] = s[lo], s[mid]
		}
	}
	// s[lo] <= s[mid] <= s[hi]; use s[mid] as pivot, parked at hi-1.
	s[mid], s[hi-1] = s[hi-1], s[mid]
	pivot := s[hi-1]
	i, j := lo, hi-1
	for {
		for i++; s[i].less(&pivot); i++ {
		}
		for j--; pivot.less(&s[j]); j-- {
		}
		if i >= j {
			break
		}
		s[i], s[j] = s[j], s[i]
	}
	s[i], s[hi-1] = s[hi-1], s[i]
	return i
}

func heapSortKeys(s []sortKey) {
	n := len(s)
	for i := n/2 - 1; i >= 0; i-- {
		siftDownKeys(s, i, n)
	}
	for end := n - 1; end > 0; end-- {
		s[0], s[end] = s[end], s[0]
		siftDownKeys(s, 0, end)
	}
}

func siftDownKeys(s []sortKey, root, n int) {
	for {
		child := 2*root + 1
		if child >= n {
			return
		}
		if child+1 < n && s[child].less(&s[child+1]) {
			child++
		}
		if !s[root].less(&s[child]) {
			return
		}
		s[root], s[child] = s[child], s[root]
		root = child
	}
}

// orderRuns sorts each bucket idx[at[k]:at[k+1]] of indexes by less (a
// strict total order). A profiler writes each thread's events in a few
// long runs in time order (hta-df_index_resolver: 9 descents in 101,088
// CPU nodes; a concatenated trace: one run per part), so a bucket of up to
// maxMergeRuns ascending runs is merged (a heap of run heads) through buf,
// and only a bucket of more runs is sorted outright. Ordering 4-byte
// indexes rather than 32-byte precomputed keys keeps the 541 MB generated
// trace's 1,010,880 CPU nodes from needing a 32 MB key table at the
// finish's peak; the merge reads each run's nodes in arrival order.
func orderRuns(idx []int32, at []int, less func(a, b int32) bool) {
	var (
		heads []run
		buf   []int32
	)
	for k := 0; k+1 < len(at); k++ {
		b := idx[at[k]:at[k+1]]
		heads = runsOf(b, heads[:0], less)
		switch {
		case len(heads) <= 1:
		case len(heads) > maxMergeRuns:
			slices.SortFunc(b, func(x, y int32) int {
				if less(x, y) {
					return -1
				}
				if less(y, x) {
					return 1
				}
				return 0
			})
		default:
			if cap(buf) < len(b) {
				buf = make([]int32, len(b))
			}
			mergeRuns(b, heads, buf[:len(b)], less)
			copy(b, buf)
		}
	}
}

// maxMergeRuns bounds the runs a bucket is merged from; past it, the
// heap's depth makes the sort the cheaper order.
const maxMergeRuns = 64

// run is s[i:end], ascending.
type run struct{ i, end int }

// runsOf appends the maximal ascending runs of s to rs, stopping once
// there are more than maxMergeRuns.
func runsOf(s []int32, rs []run, less func(a, b int32) bool) []run {
	start := 0
	for i := 1; i < len(s); i++ {
		if less(s[i], s[i-1]) {
			rs = append(rs, run{start, i})
			if len(rs) > maxMergeRuns {
				return rs
			}
			start = i
		}
	}
	if len(s) > 0 {
		rs = append(rs, run{start, len(s)})
	}
	return rs
}

// mergeRuns writes the runs rs of s, merged, to out (len(out) == len(s)).
// rs is used as the heap.
func mergeRuns(s []int32, rs []run, out []int32, less func(a, b int32) bool) {
	h := rs
	lessRun := func(x, y int) bool { return less(s[h[x].i], s[h[y].i]) }
	down := func(r int) {
		for {
			c := 2*r + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && lessRun(c+1, c) {
				c++
			}
			if !lessRun(c, r) {
				return
			}
			h[r], h[c] = h[c], h[r]
			r = c
		}
	}
	for r := len(h)/2 - 1; r >= 0; r-- {
		down(r)
	}
	for j := range out {
		out[j] = s[h[0].i]
		h[0].i++
		if h[0].i == h[0].end {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
}

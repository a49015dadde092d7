// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kinetobuild

import "math/bits"

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

// selectKeys reorders s so that s[:k] holds its k smallest keys, in no
// particular order (quickselect; sorts outright past the depth limit).
func selectKeys(s []sortKey, k int) {
	depth := 2 * bits.Len(uint(len(s)))
	for len(s) > 16 && k > 0 && k < len(s) {
		if depth == 0 {
			heapSortKeys(s)
			return
		}
		depth--
		p := partitionKeys(s)
		switch {
		case k <= p:
			s = s[:p]
		case k == p+1:
			return
		default:
			k -= p + 1
			s = s[p+1:]
		}
	}
	if k > 0 && k < len(s) {
		quickSortKeys(s, 0)
	}
}

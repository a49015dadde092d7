// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kinetobuild

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSortKeysMatchesSlicesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 15, 16, 17, 100, 1000, 20000} {
		for _, spread := range []int64{1, 3, 1000, 1 << 40} {
			s := make([]sortKey, n)
			for i := range s {
				s[i] = sortKey{r.Int64N(spread), r.Int64N(spread), -r.Int64N(spread), int64(i)}
			}
			for _, prep := range []string{"random", "sorted", "reversed"} {
				in := slices.Clone(s)
				want := slices.Clone(s)
				cmpKey := func(x, y sortKey) int {
					return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b), cmp.Compare(x.c, y.c), cmp.Compare(x.d, y.d))
				}
				switch prep {
				case "sorted":
					slices.SortFunc(in, cmpKey)
				case "reversed":
					slices.SortFunc(in, cmpKey)
					slices.Reverse(in)
				}
				slices.SortFunc(want, cmpKey)
				sortKeys(in)
				if !slices.Equal(in, want) {
					t.Fatalf("n=%d spread=%d %s: sortKeys differs from slices.SortFunc", n, spread, prep)
				}
			}
		}
	}
	// Heapsort fallback.
	s := make([]sortKey, 5000)
	for i := range s {
		s[i] = sortKey{r.Int64N(50), 0, 0, int64(i)}
	}
	heapSortKeys(s)
	if !slices.IsSortedFunc(s, func(x, y sortKey) int {
		return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.d, y.d))
	}) {
		t.Fatal("heapSortKeys: not sorted")
	}
}

func TestSelectKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 5, 17, 100, 5000} {
		s := make([]sortKey, n)
		for i := range s {
			s[i] = sortKey{a: r.Int64N(20), b: -r.Int64N(1000), d: int64(i)}
		}
		sorted := slices.Clone(s)
		sortKeys(sorted)
		for _, k := range []int{0, 1, n / 3, n - 1, n} {
			if k < 0 || k > n {
				continue
			}
			got := slices.Clone(s)
			selectKeys(got, k)
			sortKeys(got[:k])
			if !slices.Equal(got[:k], sorted[:k]) {
				t.Fatalf("n=%d k=%d: selectKeys did not select the k smallest", n, k)
			}
		}
	}
}

// TestOrderRunsMatchesSortKeys places keys by their first field in
// arrival order, as buildCPUTree does, and checks that orderRuns on their
// indexes gives sortKeys's order: buckets in order, of a few runs
// (merged), of many runs (sorted outright) and at random.
func TestOrderRunsMatchesSortKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 17, 1000, 20000} {
		for _, threads := range []int{1, 2, 7, 300} {
			for _, runs := range []int{1, 3, maxMergeRuns, maxMergeRuns + 1, 0} {
				keys := make([]sortKey, n)
				for i := range keys {
					// runs > 0: each thread's times restart runs times;
					// 0: random times.
					ts := r.Int64N(int64(n) + 1)
					if runs > 0 {
						ts = int64(i % max(n/runs, 1))
					}
					keys[i] = sortKey{a: r.Int64N(int64(threads)), b: ts, c: -r.Int64N(3), d: int64(i)}
				}
				at := make([]int, threads+1)
				for _, k := range keys {
					at[k.a+1]++
				}
				for th := range threads {
					at[th+1] += at[th]
				}
				idx := make([]int32, n)
				next := slices.Clone(at[:threads])
				for i, k := range keys {
					idx[next[k.a]] = int32(i)
					next[k.a]++
				}
				want := slices.Clone(keys)
				sortKeys(want)
				orderRuns(idx, at, func(x, y int32) bool { return keys[x].less(&keys[y]) })
				for j := range want {
					if idx[j] != int32(want[j].d) {
						t.Fatalf("n=%d threads=%d runs=%d: orderRuns differs from sortKeys at %d", n, threads, runs, j)
					}
				}
			}
		}
	}
}

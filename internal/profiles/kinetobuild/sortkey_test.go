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

func TestFirstKPicksTheBudgetOrdersFirst(t *testing.T) {
	// firstK against sorting by (p, s, index): the same set of k, for
	// value ranges from all-tied to all-distinct and every kind of k.
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 3, 17, 100, 3000} {
		for _, spread := range []int64{1, 2, 7, 1 << 40} {
			pv := make([]int64, n)
			sv := make([]int64, n)
			for i := range pv {
				pv[i], sv[i] = -r.Int64N(spread), r.Int64N(spread)-spread/2
			}
			p := func(i int32) int64 { return pv[i] }
			s := func(i int32) int64 { return sv[i] }
			// The tier: ascending indexes, not all of them.
			var idx []int32
			for i := range int32(n) {
				if r.IntN(4) != 0 || n < 4 {
					idx = append(idx, i)
				}
			}
			want := slices.Clone(idx)
			slices.SortFunc(want, func(a, b int32) int {
				return cmp.Or(cmp.Compare(pv[a], pv[b]), cmp.Compare(sv[a], sv[b]), cmp.Compare(a, b))
			})
			for _, k := range []int{0, 1, len(idx) / 2, len(idx) - 1, len(idx), len(idx) + 1} {
				got := slices.Clone(idx)
				firstK(got, k, p, s, make([]int64, 0, len(idx)))
				if k <= 0 || k >= len(idx) {
					if !slices.Equal(got, idx) {
						t.Fatalf("n=%d spread=%d k=%d: reordered with nothing to pick", n, spread, k)
					}
					continue
				}
				picked := slices.Clone(got[:k])
				slices.Sort(picked)
				wantK := slices.Clone(want[:k])
				slices.Sort(wantK)
				if !slices.Equal(picked, wantK) {
					t.Fatalf("n=%d spread=%d k=%d: picked %v, want %v", n, spread, k, picked, wantK)
				}
				all := slices.Clone(got)
				slices.Sort(all)
				if !slices.Equal(all, idx) {
					t.Fatalf("n=%d spread=%d k=%d: not a permutation of the tier", n, spread, k)
				}
			}
		}
	}
}

func TestKthSmallest(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 5, 16, 17, 1000, 20000} {
		for _, spread := range []int64{1, 3, 1000, 1 << 50} {
			v := make([]int64, n)
			for i := range v {
				v[i] = r.Int64N(spread) - spread/2
			}
			sorted := slices.Clone(v)
			slices.Sort(sorted)
			for _, k := range []int{1, 2, n / 2, n} {
				if k < 1 || k > n {
					continue
				}
				if got := kthSmallest(slices.Clone(v), k); got != sorted[k-1] {
					t.Fatalf("n=%d spread=%d k=%d: %d, want %d", n, spread, k, got, sorted[k-1])
				}
			}
		}
	}
	// Already sorted, reversed and organ-pipe inputs take the depth
	// limit's sort at worst.
	for _, shape := range []func(i int) int64{
		func(i int) int64 { return int64(i) },
		func(i int) int64 { return int64(-i) },
		func(i int) int64 { return int64(min(i, 5000-i)) },
	} {
		v := make([]int64, 5000)
		for i := range v {
			v[i] = shape(i)
		}
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		if got := kthSmallest(v, 1234); got != sorted[1233] {
			t.Fatalf("shaped input: %d, want %d", got, sorted[1233])
		}
	}
}

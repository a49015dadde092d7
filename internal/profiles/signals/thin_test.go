// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package signals

import (
	"slices"
	"testing"
)

func TestThinKeepsEveryPointUnderTheBound(t *testing.T) {
	vals := []int64{5, -1, 7, 3}
	got := Thin(nil, len(vals), 0, 10, func(i int) (int64, int64, bool) { return int64(i), vals[i], vals[i] >= 0 })
	if want := []int{0, 2, 3}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v (the point without a value left out)", got, want)
	}
}

// Over the bound each time bucket keeps its highest point: a one-point
// spike in a long flat series must survive.
func TestThinKeepsEachBucketsPeak(t *testing.T) {
	n := 3*MaxMemoryPoints + 7
	spike := 2*MaxMemoryPoints + 1
	point := func(i int) (int64, int64, bool) {
		v := int64(100)
		if i == spike {
			v = 1 << 40
		}
		return int64(i), v, i%5 != 4 // some points have no value
	}
	got := Thin(nil, n, 0, int64(n-1), point)
	if len(got) > MaxMemoryPoints || len(got) < MaxMemoryPoints/2 {
		t.Fatalf("%d points kept of %d, bound %d", len(got), n, MaxMemoryPoints)
	}
	if !slices.Contains(got, spike) {
		t.Fatalf("the spike at %d was thinned away", spike)
	}
	if !slices.IsSorted(got) {
		t.Fatalf("points out of time order")
	}
	for _, i := range got {
		if i%5 == 4 {
			t.Fatalf("point %d has no value but was kept", i)
		}
	}
}

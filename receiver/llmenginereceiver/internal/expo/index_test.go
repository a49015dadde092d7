// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestSeriesIndex(t *testing.T) {
	var x seriesIndex
	if _, ok := x.get(1); ok {
		t.Fatal("empty index found a key")
	}
	for round := range 3 {
		x.reset()
		n := 1000 * (round + 1)
		for i := range n {
			x.put(uint64(i)*0x9E3779B97F4A7C15, int32(i))
		}
		for i := range n {
			if v, ok := x.get(uint64(i) * 0x9E3779B97F4A7C15); !ok || v != int32(i) {
				t.Fatalf("round %d: key %d -> %d %v", round, i, v, ok)
			}
		}
		if _, ok := x.get(12345); ok {
			t.Fatal("absent key found")
		}
	}
	x.reset()
	if _, ok := x.get(0x9E3779B97F4A7C15); ok {
		t.Fatal("reset did not empty the index")
	}
	x.put(7, 1)
	x.gen = ^uint32(0) // force the wrap-around path
	x.put(8, 2)
	x.reset()
	if _, ok := x.get(7); ok || x.gen != 1 {
		t.Fatal("wrap-around reset left stale entries")
	}
}

// TestSpikeReleasesMemory: one scrape with many series, then small ones; the
// state, the string table and the series index shrink back after StaleAfter
// scrapes.
func TestSpikeReleasesMemory(t *testing.T) {
	const stale = 2
	c := NewConverter(Options{StaleAfter: stale})
	var big strings.Builder
	big.WriteString("# TYPE c_total counter\n")
	for i := range 20000 {
		fmt.Fprintf(&big, "c_total{id=\"%d\"} 2\n", i)
	}
	small := "# TYPE c_total counter\nc_total{id=\"1\"} 2\n"
	convert(t, c, small, FormatText, t0)
	convert(t, c, big.String(), FormatText, at(time.Second))
	if len(c.state) != 20000 || c.strs.len() < 20000 || len(c.seriesIdx.slots) < 20000 {
		t.Fatalf("after the spike: %d series, %d strings, %d index slots", len(c.state), c.strs.len(), len(c.seriesIdx.slots))
	}
	var ms string
	for i := range stale + 2 {
		out, _ := convert(t, c, small, FormatText, at(time.Duration(2+i)*time.Second))
		ms = dump(out)
	}
	if len(c.state) != 1 || c.strs.len() > 10 || len(c.seriesIdx.slots) > 64 || c.statePeak > 10 || c.strs.peak > 10 {
		t.Fatalf("after the spike went away: %d series (peak %d), %d strings (peak %d), %d index slots",
			len(c.state), c.statePeak, c.strs.len(), c.strs.peak, len(c.seriesIdx.slots))
	}
	if want := "c_total sum(Cumulative,monotonic=true)\n  {id=\"1\"} start=1700000000 ts=1700000005 v=2\n"; ms != want {
		t.Fatalf("output after the spike:\n%s\nwant\n%s", ms, want)
	}
}

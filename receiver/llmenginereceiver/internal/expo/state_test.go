// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// at returns the scrape time t0 + d.
func at(d time.Duration) time.Time { return t0.Add(d) }

func cumulativeBody(counter, hinf, scount string) string {
	return trimDoc(fmt.Sprintf(`
		# TYPE c_total counter
		c_total{k="a"} %s
		c_total{k="b"} 1
		# TYPE h histogram
		h_bucket{le="1"} 0
		h_bucket{le="+Inf"} %s
		h_count %s
		# TYPE s summary
		s_count %s
		s_sum 1
		# TYPE g gauge
		g 1
	`, counter, hinf, hinf, scount))
}

func TestStartTimesAndResets(t *testing.T) {
	c := NewConverter(Options{})
	steps := []struct {
		at            time.Duration
		c, h, s       string
		resets        int
		wantC, wantH  string // start of c_total{k="a"} and of h, as rendered by fmtTS
		wantS, wantCB string // start of s and of c_total{k="b"}
		noRecordedC   bool
		description   string
	}{
		{0, "10", "5", "3", 0, "1700000000", "1700000000", "1700000000", "1700000000", false, "first scrape: start = first seen"},
		{15 * time.Second, "20", "6", "4", 0, "1700000000", "1700000000", "1700000000", "1700000000", false, "growing values keep the start"},
		{30 * time.Second, "5", "6", "4", 1, "1700000029.999", "1700000000", "1700000000", "1700000000", false, "counter went down: reset"},
		{45 * time.Second, "NaN", "1", "1", 2, "1700000029.999", "1700000044.999", "1700000044.999", "1700000000", true, "NaN counter keeps its state; histogram and summary reset"},
		{60 * time.Second, "4", "2", "2", 1, "1700000059.999", "1700000044.999", "1700000044.999", "1700000000", false, "4 < 5 (the value before NaN): reset"},
		{75 * time.Second, "4", "2", "2", 0, "1700000059.999", "1700000044.999", "1700000044.999", "1700000000", false, "equal values are not resets"},
	}
	for _, s := range steps {
		ms, st := convert(t, c, cumulativeBody(s.c, s.h, s.s), FormatText, at(s.at))
		if st.Resets != s.resets {
			t.Errorf("%s: Resets = %d, want %d", s.description, st.Resets, s.resets)
		}
		ca := ms.At(0).Sum().DataPoints().At(0)
		cb := ms.At(0).Sum().DataPoints().At(1)
		h := ms.At(1).Histogram().DataPoints().At(0)
		su := ms.At(2).Summary().DataPoints().At(0)
		g := ms.At(3).Gauge().DataPoints().At(0)
		for _, chk := range []struct{ what, got, want string }{
			{"c_total{a}", fmtTS(ca.StartTimestamp()), s.wantC},
			{"c_total{b}", fmtTS(cb.StartTimestamp()), s.wantCB},
			{"h", fmtTS(h.StartTimestamp()), s.wantH},
			{"s", fmtTS(su.StartTimestamp()), s.wantS},
			{"g", fmtTS(g.StartTimestamp()), "0"},
		} {
			if chk.got != chk.want {
				t.Errorf("%s: start of %s = %s, want %s", s.description, chk.what, chk.got, chk.want)
			}
		}
		if ca.Flags().NoRecordedValue() != s.noRecordedC {
			t.Errorf("%s: NoRecordedValue = %v", s.description, ca.Flags().NoRecordedValue())
		}
		if want := fmtTS(pcommonTS(at(s.at))); fmtTS(ca.Timestamp()) != want {
			t.Errorf("%s: timestamp %s, want %s", s.description, fmtTS(ca.Timestamp()), want)
		}
	}
}

func TestCreatedOverridesStateAndResets(t *testing.T) {
	c := NewConverter(Options{})
	body := func(v, created string) string {
		return "# TYPE c counter\nc_total " + v + "\nc_created " + created + "\n# EOF\n"
	}
	ms, _ := convert(t, c, body("10", "1699999000"), FormatOpenMetrics, t0)
	if got := fmtTS(ms.At(0).Sum().DataPoints().At(0).StartTimestamp()); got != "1699999000" {
		t.Fatalf("start %s", got)
	}
	// The engine restarted: lower value and a new _created.
	ms, st := convert(t, c, body("1", "1700000010"), FormatOpenMetrics, at(15*time.Second))
	if got := fmtTS(ms.At(0).Sum().DataPoints().At(0).StartTimestamp()); got != "1700000010" || st.Resets != 1 {
		t.Fatalf("start %s resets %d, want the new _created and one reset", got, st.Resets)
	}
	// Same scrape in the text format: prometheus_client names, same series.
	text := "# TYPE c_total counter\nc_total 2\n# TYPE c_created gauge\nc_created 1700000010\n"
	ms, st = convert(t, c, text, FormatText, at(30*time.Second))
	if got := fmtTS(ms.At(0).Sum().DataPoints().At(0).StartTimestamp()); got != "1700000010" || st.Resets != 0 || ms.At(0).Name() != "c_total" {
		t.Fatalf("text scrape: %s start %s resets %d", ms.At(0).Name(), got, st.Resets)
	}
	// _created disappears: the state keeps the last known start.
	ms, _ = convert(t, c, "# TYPE c_total counter\nc_total 3\n", FormatText, at(45*time.Second))
	if got := fmtTS(ms.At(0).Sum().DataPoints().At(0).StartTimestamp()); got != "1700000010" {
		t.Fatalf("start without _created %s", got)
	}
}

func pcommonTS(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }

// snapshot copies the cross-scrape state of a Converter.
func snapshot(c *Converter) (map[uint64]seriesState, uint32) {
	return maps.Clone(c.state), c.gen
}

func TestAllOrNothing(t *testing.T) {
	good1 := cumulativeBody("10", "5", "3")
	good2 := cumulativeBody("4", "5", "3") // c_total{k="a"} resets
	bad := cumulativeBody("1", "1", "1") + "x{a=\"unterminated} 1\n"

	c := NewConverter(Options{})
	convert(t, c, good1, FormatText, t0)
	state, gen := snapshot(c)

	dst := pmetric.NewMetricSlice()
	dst.AppendEmpty().SetName("already there")
	st, err := c.Convert([]byte(bad), FormatText, at(15*time.Second), dst)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 13 {
		t.Fatalf("err = %v", err)
	}
	if dst.Len() != 1 || dst.At(0).Name() != "already there" {
		t.Fatalf("dst modified: %d metrics", dst.Len())
	}
	if st.Points != 0 || st.Series != 0 || len(st.Problems) != 0 {
		t.Fatalf("stats on error: %+v", st)
	}
	if s2, g2 := snapshot(c); g2 != gen || !maps.Equal(s2, state) {
		t.Fatalf("state changed by a failed Convert")
	}
	// An OpenMetrics body without # EOF must not leak anything either.
	if _, err := c.Convert([]byte("# TYPE c counter\nc_total{k=\"a\"} 0\n"), FormatOpenMetrics, at(20*time.Second), dst); err == nil {
		t.Fatal("truncated OpenMetrics body accepted")
	}
	if s2, g2 := snapshot(c); g2 != gen || !maps.Equal(s2, state) || dst.Len() != 1 {
		t.Fatalf("state or dst changed by a truncated body")
	}

	// The next good scrape behaves as if the bad ones never happened: the
	// reset is detected against the first scrape (10 -> 4), not against the
	// failed one (1 -> 4 would look like growth).
	ms, st := convert(t, c, good2, FormatText, at(30*time.Second))
	ref := NewConverter(Options{})
	convert(t, ref, good1, FormatText, t0)
	want, wantSt := convert(t, ref, good2, FormatText, at(30*time.Second))
	if got, w := dump(ms), dump(want); got != w {
		t.Fatalf("after a failed scrape:\n%s\nwant\n%s", got, w)
	}
	if st.Resets != 1 || wantSt.Resets != 1 {
		t.Fatalf("resets %d / %d", st.Resets, wantSt.Resets)
	}
	if got := fmtTS(ms.At(1).Histogram().DataPoints().At(0).StartTimestamp()); got != "1700000000" {
		t.Fatalf("histogram start %s, want the first scrape", got)
	}
}

func TestStaleAfter(t *testing.T) {
	c := NewConverter(Options{StaleAfter: 2})
	both := "# TYPE c_total counter\nc_total{k=\"a\"} 1\nc_total{k=\"b\"} 1\n"
	onlyB := "# TYPE c_total counter\nc_total{k=\"b\"} 1\n"
	onlyA := "# TYPE c_total counter\nc_total{k=\"a\"} 1\n"
	starts := func(ms pmetric.MetricSlice) map[string]string {
		out := map[string]string{}
		dps := ms.At(0).Sum().DataPoints()
		for i := range dps.Len() {
			k, _ := dps.At(i).Attributes().Get("k")
			out[k.Str()] = fmtTS(dps.At(i).StartTimestamp())
		}
		return out
	}
	convert(t, c, both, FormatText, t0)                         // scrape 1: a, b
	convert(t, c, onlyB, FormatText, at(1*time.Second))         // scrape 2: a missed once
	ms, _ := convert(t, c, both, FormatText, at(2*time.Second)) // scrape 3: a is back after 1 miss
	if got := starts(ms); got["a"] != "1700000000" || got["b"] != "1700000000" {
		t.Fatalf("after one missed scrape: %v", got)
	}
	convert(t, c, onlyB, FormatText, at(3*time.Second)) // scrape 4: a missed
	convert(t, c, onlyB, FormatText, at(4*time.Second)) // scrape 5: a missed twice: forgotten
	if len(c.state) != 1 {
		t.Fatalf("state holds %d series, want 1 (b)", len(c.state))
	}
	ms, _ = convert(t, c, both, FormatText, at(5*time.Second))
	if got := starts(ms); got["a"] != "1700000005" || got["b"] != "1700000000" {
		t.Fatalf("after two missed scrapes: %v", got)
	}
	// Failed scrapes do not count as missed scrapes.
	for range 5 {
		if _, err := c.Convert([]byte("x{"), FormatText, at(6*time.Second), pmetric.NewMetricSlice()); err == nil {
			t.Fatal("no error")
		}
	}
	ms, _ = convert(t, c, onlyA, FormatText, at(7*time.Second))
	if got := starts(ms); got["a"] != "1700000005" {
		t.Fatalf("after failed scrapes: %v", got)
	}
}

func TestMaxSeries(t *testing.T) {
	c := NewConverter(Options{MaxSeries: 3})
	var b strings.Builder
	b.WriteString("# TYPE c_total counter\n")
	for i := range 5 {
		fmt.Fprintf(&b, "c_total{i=\"%d\"} %d\n", i, 10+i)
	}
	b.WriteString("# TYPE g gauge\ng 1\n")
	body := b.String()
	_, st := convert(t, c, body, FormatText, t0)
	if st.UntrackedSeries != 2 || len(c.state) != 3 || st.Series != 6 {
		t.Fatalf("first scrape: %+v, state %d", st, len(c.state))
	}
	ms, st := convert(t, c, body, FormatText, at(10*time.Second))
	if st.UntrackedSeries != 2 || len(c.state) != 3 {
		t.Fatalf("second scrape: %+v, state %d", st, len(c.state))
	}
	dps := ms.At(0).Sum().DataPoints()
	for i := range dps.Len() {
		want := "1700000000"
		if i >= 3 { // untracked: start falls back to the scrape time
			want = "1700000010"
		}
		if got := fmtTS(dps.At(i).StartTimestamp()); got != want {
			t.Errorf("series %d: start %s, want %s", i, got, want)
		}
	}
}

// TestBoundedMemory churns label values (a request id in a label, the worst
// case an engine can do to us) and checks that neither the series state nor
// the string table, nor the heap, keeps growing.
func TestBoundedMemory(t *testing.T) {
	const perScrape, stable, stale = 300, 50, 3
	c := NewConverter(Options{StaleAfter: stale})
	var heapAt50 uint64
	scrapes := 250
	if raceEnabled {
		scrapes = 120
	}
	for scrape := range scrapes {
		var b strings.Builder
		b.WriteString("# TYPE req_total counter\n")
		for i := range stable {
			fmt.Fprintf(&b, "req_total{model=\"m%d\"} %d\n", i, scrape)
		}
		b.WriteString("# TYPE lat histogram\n")
		for i := range perScrape {
			id := fmt.Sprintf("req-%d-%d", scrape, i)
			fmt.Fprintf(&b, "lat_bucket{id=%q,le=\"1\"} 1\nlat_bucket{id=%q,le=\"+Inf\"} 2\nlat_count{id=%q} 2\nlat_sum{id=%q} 1.5\n", id, id, id, id)
		}
		ms, st := convert(t, c, b.String(), FormatText, at(time.Duration(scrape)*time.Second))
		if st.Series != stable+perScrape || ms.Len() != 2 {
			t.Fatalf("scrape %d: %+v", scrape, st)
		}
		if n, limit := len(c.state), stable+(stale+1)*perScrape; n > limit {
			t.Fatalf("scrape %d: %d series in state, limit %d", scrape, n, limit)
		}
		if n, limit := c.strs.len(), 100+stable+(stale+1)*perScrape+1024; n > limit {
			t.Fatalf("scrape %d: %d interned strings, limit %d", scrape, n, limit)
		}
		if scrape == 50 {
			heapAt50 = heapInUse()
		}
	}
	if h := heapInUse(); h > heapAt50+4<<20 {
		t.Fatalf("heap grew from %d to %d bytes", heapAt50, h)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

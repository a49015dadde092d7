// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector/internal/stats"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// A leak of 2 GB a day grows 1.4 MiB/min: noise in a 10-minute window,
// ~60 times under leak.min_slope_mib_per_minute, and out of memory in three
// days. The long horizon keeps each memory subject's samples downsampled
// into fixed tiers and judges the floor (bucket minima): a leak raises it
// steadily, a load cycle raises the peaks by day and returns at night.
//
// Tiers, shortest first. The last one's span is leak.long_horizon.span.
const (
	dayNs            = int64(24 * time.Hour)
	tierMinute       = 0 // 1-minute buckets over 2h
	tierDay          = 1 // 10-minute buckets over 24h
	minLongSpan      = 30 * time.Hour
	maxLongSpan      = 720 * time.Hour
	minCyclePairs    = 6 // pairs a day apart before the longest tier judges
	trendCoverage    = 0.85
	trendBucketShare = 2.0 / 3
)

func longTierSpecs(span time.Duration) []stats.TierSpec {
	return []stats.TierSpec{{Width: time.Minute, Span: 2 * time.Hour}, {Width: 10 * time.Minute, Span: 24 * time.Hour},
		{Width: time.Hour, Span: span}}
}

// longState is one memory subject's long-horizon tiers and its last verdict
// (refitted when the 1-minute tier gains a bucket, not every evaluation).
type longState struct {
	tiers  stats.Tiers
	fitB   int64
	fitted bool
	f      finding
	ok     bool
}

func (d *diagnoser) newLongState() *longState {
	lh := d.cfg.Leak.LongHorizon
	if !d.cfg.Leak.Enabled || !lh.Enabled {
		return nil
	}
	return &longState{tiers: stats.NewTiers(longTierSpecs(lh.Span))}
}

// add takes one memory sample (the scrape's running total: see stats.Tiers).
func (l *longState) add(t int64, v float64) {
	if l != nil {
		l.tiers.Add(t, v)
	}
}

// slowLeak is the long-horizon verdict on a memory subject: a leak too slow
// for the short window. The caller asks only when the short window found
// nothing, so a subject has one leak incident, not two.
func (d *diagnoser) slowLeak(s *subject, l *longState) (finding, bool) {
	if l == nil {
		return finding{}, false
	}
	nb, have := l.tiers.Tier(tierMinute).Newest()
	if !have {
		return finding{}, false
	}
	if l.fitted && nb == l.fitB {
		return l.f, l.ok
	}
	f, ok := d.fitSlowLeak(s, l)
	if ok {
		f.key = incidentKey(&f)
	}
	l.fitB, l.fitted, l.f, l.ok = nb, true, f, ok
	return f, ok
}

// longVerdict is what one tier concluded.
type longVerdict struct {
	tier          *stats.Tier
	slope, steady float64 // bytes/s, share of positive pairs
	first, last   stats.Point
	how           string
}

// fitSlowLeak judges the tiers, longest first (the only one a daily cycle
// cannot fool, and the most accurate rate), and reports the first that
// finds a leak.
//
//   - The longest tier (1-hour floors) judges once it holds 30h: the
//     median slope over pairs of floors a whole number of days apart (a
//     daily load moves both alike and cancels out) ≥ min_slope_mib_per_hour,
//     with ≥ min_steadiness of those pairs rising.
//   - The 24h and 2h tiers judge when their floors cover ≥ 85% of their
//     span and ≥ 2/3 of their buckets, and the longest tier holds a whole
//     day (25 1-hour floors): Theil–Sen slope ≥ min_slope_mib_per_hour,
//     steadiness ≥ min_steadiness, and the largest fall of the 1-hour
//     floors over the last day is under a quarter of the rise it claims
//     (slope × covered span), so no cycle explains it: a load that
//     returns at night falls by its whole swing.
func (d *diagnoser) fitSlowLeak(s *subject, l *longState) (finding, bool) {
	cfg := d.cfg.Leak.LongHorizon
	minSlope := cfg.MinSlopeMiBPerHour * mib / 3600
	sc := &d.scratch
	longest := l.tiers.Tier(l.tiers.Len() - 1)
	sc.pts = longest.Floors(sc.pts[:0])
	if n := len(sc.pts); n >= 2 && sc.pts[n-1].T-sc.pts[0].T >= int64(minLongSpan)-longest.Width() {
		slope, steady, pairs, npairs, ok := stats.CycleTheilSen(sc.pts, dayNs, minCyclePairs, sc.pairs)
		sc.pairs = pairs
		if ok && slope >= minSlope && steady >= cfg.MinSteadiness {
			return d.slowLeakFinding(s, longVerdict{tier: longest, slope: slope, steady: steady, first: sc.pts[0], last: sc.pts[n-1],
				how: fmt.Sprintf("%d pairs of 1h floors a whole day apart", npairs)}), true
		}
	}
	// The shorter tiers need a whole day of context to rule a cycle out:
	// any 24h of a daily cycle holds a fall of at least half its swing
	// (the whole swing when its peak comes in the first half), while the
	// rise a tier claims from part of a cycle is at most ~2× that half
	// (Theil–Sen over a whole sine period leans by up to 0.3 amplitude per
	// radian): a fall above a quarter of the claimed rise is a cycle.
	n := len(sc.pts)
	if n < 2 || sc.pts[n-1].T-sc.pts[0].T < dayNs {
		return finding{}, false
	}
	from := sc.pts[n-1].T - dayNs
	sc.ctx = sc.ctx[:0]
	for _, p := range sc.pts {
		if p.T >= from {
			sc.ctx = append(sc.ctx, p)
		}
	}
	fall := stats.Drawdown(sc.ctx)
	for i := tierDay; i >= tierMinute; i-- {
		tr := l.tiers.Tier(i)
		sc.pts = tr.Floors(sc.pts[:0])
		n := len(sc.pts)
		if float64(n) < trendBucketShare*float64(tr.Cap()) {
			continue
		}
		covered := sc.pts[n-1].T + tr.Width() - sc.pts[0].T
		if float64(covered) < trendCoverage*float64(tr.Span()) {
			continue
		}
		slope, steady, pairs, ok := stats.TheilSen(sc.pts, sc.pairs)
		sc.pairs = pairs
		if !ok || slope < minSlope || steady < cfg.MinSteadiness {
			continue
		}
		if rise := slope * float64(covered) / 1e9; fall > rise/4 {
			continue // a cycle (or a fall) explains the rise
		}
		return d.slowLeakFinding(s, longVerdict{tier: tr, slope: slope, steady: steady, first: sc.pts[0], last: sc.pts[n-1],
			how: fmt.Sprintf("Theil–Sen over %d %s floors; the 1h floors fell at most %.0f MiB over the last day", n, spanText(tr.Width()), fall/mib)}), true
	}
	return finding{}, false
}

func (d *diagnoser) slowLeakFinding(s *subject, v longVerdict) finding {
	cfg := d.cfg.Leak
	perHour := v.slope * 3600 / mib
	usage, limit := v.last.V, 0.0
	if g := d.subjects.gpus[s.hwID]; g != nil {
		limit = g.gpu.limit
		if gl, ok := g.gpu.mem.Last(); ok {
			usage = gl.V
		}
	}
	tte := math.Inf(1)
	if limit > usage {
		tte = (limit - usage) / v.slope
	}
	horizon := spanText(v.tier.Span())
	f := finding{subj: s, kind: spec.IncidentKindGPUMemoryLeak, quadrant: spec.QuadrantSaturation, severity: spec.SeverityWarning,
		start: v.first.T, drill: drillMemory, headline: 1, horizon: horizon}
	metric, who := spec.HwGpuMemoryUsage, "GPU "+s.hwID
	if s.kind == kindProcess {
		metric, who = spec.ProcessGpuMemoryUsage, processName(s)
	}
	f.evidence = append(f.evidence,
		evidence{signal: metric, value: v.last.V, baseline: v.first.V, hasBaseline: true, unit: "By",
			note: "floor (bucket minimum) at the end vs the start of the " + horizon + " horizon"},
		evidence{signal: spec.EvidenceMemoryFloorGrowthRate, value: perHour, threshold: cfg.LongHorizon.MinSlopeMiBPerHour, hasThresh: true,
			unit: "MiBy/h", note: fmt.Sprintf("%.0f MiBy/day; %s", perHour*24, v.how)},
		evidence{signal: spec.EvidenceMemoryFloorGrowthSteadiness, value: v.steady, threshold: cfg.LongHorizon.MinSteadiness, hasThresh: true, unit: "1"})
	if !math.IsInf(tte, 1) {
		f.evidence = append(f.evidence, evidence{signal: spec.HwGpuMemoryTimeToExhaustion, value: tte,
			threshold: cfg.CriticalExhaustion.Seconds(), hasThresh: true, unit: "s"})
	}
	f.score = math.Min(1, perHour/(8*cfg.LongHorizon.MinSlopeMiBPerHour))
	if tte < cfg.CriticalExhaustion.Seconds() {
		f.severity = spec.SeverityCritical
		f.score = math.Max(f.score, 0.8)
	}
	f.body = fmt.Sprintf("GPU memory of %s grows slowly: its floor rises %.1f MiB/h (%.0f MiB/day) over the last %s%s — too slow for the %s window",
		who, perHour, perHour*24, horizon, fullInDays(tte), spanText(int64(cfg.Window)))
	if v.tier.Span() > dayNs {
		f.ruleOut("a daily load cycle: floors are compared a whole day apart")
	} else {
		f.ruleOut("a daily load cycle: the floor did not fall back over the last day")
	}
	f.action = "Find what keeps tensors alive across requests (caches, lists of outputs, retained graphs) in the layer named below; plan a restart or drain before the forecast time."
	return f
}

// spanText writes a duration as tiers are named: 2h, 24h, 72h, 10m.
func spanText(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d >= time.Minute && d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return d.String()
}

// fullInDays is a forecast in days and hours: ", full in 2d 20h".
func fullInDays(tte float64) string {
	if math.IsInf(tte, 1) || tte < 0 || math.IsNaN(tte) {
		return ""
	}
	h := int64(math.Round(tte / 3600))
	switch {
	case h >= 24:
		return fmt.Sprintf(", full in %dd %dh", h/24, h%24)
	case tte >= 3600:
		return fmt.Sprintf(", full in %dh", h)
	}
	return ", full in " + (time.Duration(tte) * time.Second).Round(time.Minute).String()
}

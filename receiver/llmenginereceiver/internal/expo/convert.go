// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo // import "github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver/internal/expo"

import (
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/promtext"
)

// Format is the wire format of a scrape body.
type Format int

const (
	// FormatText is the Prometheus text exposition format, version 0.0.4.
	FormatText Format = iota
	// FormatOpenMetrics is OpenMetrics 1.0 text.
	FormatOpenMetrics
)

func (f Format) String() string {
	if f == FormatOpenMetrics {
		return "openmetrics"
	}
	return "text"
}

// FormatFromContentType picks the format from a response Content-Type:
// application/openmetrics-text (any version, any parameters, any case) is
// OpenMetrics; anything else, including an empty header, is the text format.
func FormatFromContentType(ct string) Format {
	mt := ct
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	if strings.EqualFold(strings.TrimSpace(mt), "application/openmetrics-text") {
		return FormatOpenMetrics
	}
	return FormatText
}

// Options configures a Converter. The zero value is usable.
type Options struct {
	// MaxSeries bounds the per-series state (start time, last value) kept
	// for cumulative series (counters, histograms, summaries); 0 or less
	// means 100000. Series beyond it are still emitted, but with no state:
	// their start time is the point's own timestamp (or their _created
	// time), resets cannot be detected, and Stats.UntrackedSeries counts
	// them. Gauges never use state and are not counted.
	MaxSeries int
	// StaleAfter: series not seen for this many consecutive successful
	// scrapes are forgotten (default 10); when one comes back it is treated
	// as new and gets a new start time.
	StaleAfter int
}

const (
	defaultMaxSeries  = 100000
	defaultStaleAfter = 10
	maxProblems       = 10
)

// Stats describes one Convert call.
type Stats struct {
	// Families is the number of metrics appended to dst. Families with no
	// valid point, and _created families consumed as start times, are not
	// appended and not counted.
	Families int
	// Series is the number of data points appended (one per series: a
	// histogram series with 12 buckets is one).
	Series int
	// Points is the number of sample lines in the body (every bucket,
	// _count, _sum and _created line included, skipped ones too).
	Points int
	// DuplicateSeries counts samples skipped because the same name and
	// label set (le and quantile included) was already seen in this scrape;
	// the first one wins.
	DuplicateSeries int
	// InvalidSeries counts skipped series: invalid metric or label names,
	// duplicate label names, histograms with unparsable or missing le,
	// missing +Inf bucket or decreasing buckets, summaries with a bad
	// quantile, samples whose name does not fit the family they fall into.
	InvalidSeries int
	// Resets counts cumulative series whose value (counter value, histogram
	// or summary count) went down since the previous scrape.
	Resets int
	// UntrackedSeries counts cumulative series emitted without state
	// because Options.MaxSeries was reached.
	UntrackedSeries int
	// Problems holds the first few (at most 10) non-fatal problems, each
	// naming its line: skipped series, a histogram whose _count disagrees
	// with its +Inf bucket, a family split into several groups, an ignored
	// TYPE line.
	Problems []string
}

// ParseError is a syntax error that made a whole scrape unusable; Line is
// 1-based.
type ParseError = promtext.Error

// Converter converts the scrapes of ONE target into pdata, keeping the state
// that cumulative series need across scrapes (start times, last values for
// reset detection). It is not safe for concurrent use.
type Converter struct {
	opts Options
	gen  uint32 // number of successful Converts; series remember the last gen they were seen in

	state         map[uint64]seriesState
	statePeak     int
	stateTouched  int
	stateEvicted  bool // evictStale already ran in this scrape because MaxSeries was reached
	strs          interner
	scratchPeak   int // largest series count of a recent scrape, to shrink seriesIdx after spikes
	pendingShrink int

	// Per-scrape scratch, reused.
	om         bool
	p          promtext.Parser
	nowNS      int64
	st         Stats
	cur        int32 // family of the last metadata line or sample, -1 at start
	fams       []family
	famByName  map[string]int32
	series     []series
	seriesIdx  seriesIndex
	lastKey    uint64
	lastIdx    int32
	labels     []labelPair
	exLabels   []labelPair
	exs        []exemplar
	subs       []subPoint
	sorted     []subPoint
	bounds     []float64
	counts     []uint64
	pos        posCache
	prevLabels []labelPair // labels of the last filed sample, sorted
	prevLH     uint64      // and their hash
	prevOK     bool
	hbuf       []byte
	tmp        []byte
	memo       lineMemo
}

// NewConverter returns a Converter for one scrape target.
func NewConverter(opts Options) *Converter {
	if opts.MaxSeries <= 0 {
		opts.MaxSeries = defaultMaxSeries
	}
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = defaultStaleAfter
	}
	c := &Converter{
		opts:      opts,
		state:     make(map[uint64]seriesState),
		strs:      newInterner(),
		famByName: make(map[string]int32),
		cur:       -1,
	}
	c.p.SetKnown(c.memo.known)
	return c
}

// Convert parses one complete scrape body and appends one pmetric.Metric per
// metric family to dst (see Stats.Families for the families that are not
// appended). now is the scrape time: the timestamp of samples without their
// own, and the start time of series seen for the first time.
//
// It is all-or-nothing: on a syntax error it returns a *ParseError and leaves
// dst and the converter's state exactly as before (the scrape does not count
// towards StaleAfter either). Non-fatal problems only skip the affected
// series and are reported in Stats.
func (c *Converter) Convert(body []byte, f Format, now time.Time, dst pmetric.MetricSlice) (Stats, error) {
	// The string table is a cache, not state: its bound must hold even when
	// every scrape fails, so it is swept whatever the outcome.
	c.strs.begin()
	defer c.strs.sweep(uint32(c.opts.StaleAfter))

	c.resetScratch()
	c.om = f == FormatOpenMetrics
	c.memo.begin(c.om)
	c.nowNS = now.UnixNano()
	if err := c.parse(body); err != nil {
		return Stats{}, err
	}
	// From here on nothing can fail.
	c.gen++
	c.stateTouched = 0
	c.resolveCreatedFamilies()
	c.build(dst)
	c.sweepState()
	c.shrinkScratch()
	c.labels = c.memo.commit(c.series, c.labels)
	return c.st, nil
}

func (c *Converter) resetScratch() {
	c.st = Stats{}
	c.cur = -1
	c.fams = c.fams[:0]
	clear(c.famByName)
	c.series = c.series[:0]
	c.seriesIdx.reset()
	c.lastIdx = -1
	c.labels = c.labels[:0]
	c.exLabels = c.exLabels[:0]
	c.exs = c.exs[:0]
	c.subs = c.subs[:0]
	c.pos = posCache{}
	c.prevOK = false
}

// shrinkScratch drops the per-scrape series index after a spike (after
// StaleAfter smaller scrapes), so one huge scrape does not pin its memory.
func (c *Converter) shrinkScratch() {
	n := len(c.series)
	if n > c.scratchPeak {
		c.scratchPeak = n
		c.pendingShrink = 0
		return
	}
	if c.scratchPeak > 4096 && n*4 < c.scratchPeak {
		c.pendingShrink++
		if c.pendingShrink >= c.opts.StaleAfter {
			c.seriesIdx.release()
			c.memo.release()
			c.scratchPeak = n
			c.pendingShrink = 0
		}
		return
	}
	c.pendingShrink = 0
}

func (c *Converter) problem(line int, format string, args ...any) {
	if len(c.st.Problems) >= maxProblems {
		return
	}
	c.st.Problems = append(c.st.Problems, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
}

func (c *Converter) invalid(line int, format string, args ...any) {
	c.st.InvalidSeries++
	c.problem(line, format, args...)
}

// duplicate counts a sample whose series was already read in this scrape;
// the first one wins.
func (c *Converter) duplicate(line int, name []byte) {
	c.st.DuplicateSeries++
	c.problem(line, "duplicate sample %q (first wins)", name)
}

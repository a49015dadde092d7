// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo

import (
	"encoding/binary"

	"github.com/cespare/xxhash/v2"

	"github.com/llmops-otel/otelcol-llmops/internal/promtext"
)

// famType and role are the shared reader's; the short local names keep the
// converter readable.
type (
	famType = promtext.Type
	role    = promtext.Role
)

const (
	typeUntyped        = promtext.TypeUntyped
	typeCounter        = promtext.TypeCounter
	typeGauge          = promtext.TypeGauge
	typeHistogram      = promtext.TypeHistogram
	typeGaugeHistogram = promtext.TypeGaugeHistogram
	typeSummary        = promtext.TypeSummary
	typeInfo           = promtext.TypeInfo
	typeStateset       = promtext.TypeStateset
)

const (
	roleValue    = promtext.RoleValue
	roleQuantile = promtext.RoleQuantile
	roleBucket   = promtext.RoleBucket
	roleCount    = promtext.RoleCount
	roleSum      = promtext.RoleSum
	roleCreated  = promtext.RoleCreated
	roleGCount   = promtext.RoleGCount
	roleGSum     = promtext.RoleGSum
)

// family is one metric family of the scrape being converted.
type family struct {
	name     string // family name: the TYPE/HELP name, or the sample name for undeclared ones
	emitName string // metric name to emit (counters: the sample name, e.g. x_total)
	help     string
	unit     string
	nameHash uint64
	line     int32
	typ      famType
	declared bool // a TYPE line was seen
	hasHelp  bool
	hasUnit  bool
	consumed bool // a text-format X_created family used as start times
	split    bool // "split family" problem already reported
	nSamples int32
	nSeries  int32
	head     int32 // first series of this family in Converter.series, -1 if none
	tail     int32
}

// labelPair is one label; both strings are interned.
type labelPair struct {
	name, value string
}

// series gathers the samples of one series (family + label set without le
// and quantile) of the scrape being converted.
type series struct {
	lh         uint64 // hash of the sorted labels
	fam        int32
	next       int32 // next series of the same family, -1 at the end
	lo, hi     int32 // labels in Converter.labels
	line       int32
	subHead    int32 // buckets or quantiles in Converter.subs, chained; -1 if none
	subTail    int32
	exHead     int32 // exemplars in Converter.exs, chained; -1 if none
	exTail     int32
	ts         int64
	val        float64
	count      float64
	sum        float64
	created    float64
	hasTS      bool
	hasVal     bool
	hasCount   bool
	hasSum     bool
	hasCreated bool
	invalid    bool
}

// subPoint is one histogram bucket or summary quantile.
type subPoint struct {
	bound float64 // le or quantile
	v     float64
	line  int32
	next  int32
}

// exemplar is one OpenMetrics exemplar; its labels are in Converter.exLabels.
type exemplar struct {
	lo, hi int32
	next   int32
	hasTS  bool
	v      float64
	ts     int64
}

// seriesState is what a cumulative series remembers across scrapes.
type seriesState struct {
	start   int64   // start time, Unix nanoseconds
	last    float64 // last value (counter value, histogram/summary count)
	seen    uint32  // Converter.gen of the last scrape that had the series
	hasLast bool
}

// mix combines two 64-bit hashes into one.
func mix(a, b uint64) uint64 {
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[:8], a)
	binary.LittleEndian.PutUint64(buf[8:], b)
	return xxhash.Sum64(buf[:])
}

// hashLabels hashes sorted labels; names and values are separated by bytes
// that cannot occur in valid UTF-8, so different label sets cannot produce
// the same byte stream.
func (c *Converter) hashLabels(ls []labelPair) uint64 {
	b := c.hbuf[:0]
	for _, p := range ls {
		b = append(b, p.name...)
		b = append(b, 0xff)
		b = append(b, p.value...)
		b = append(b, 0xfe)
	}
	c.hbuf = b
	return xxhash.Sum64(b)
}

// sortLabels sorts by name (insertion sort: label sets are short and usually
// already sorted) and reports the first duplicated name, if any.
func sortLabels(ls []labelPair) (dup string, ok bool) {
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && ls[j].name < ls[j-1].name; j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
	for i := 1; i < len(ls); i++ {
		if ls[i].name == ls[i-1].name {
			return ls[i].name, false
		}
	}
	return "", true
}

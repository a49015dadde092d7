package expo

import (
	"encoding/binary"

	"github.com/cespare/xxhash/v2"
)

// famType is a metric family's declared (or assumed) type.
type famType uint8

const (
	typeUntyped famType = iota // text "untyped", OpenMetrics "unknown", or no TYPE line
	typeCounter
	typeGauge
	typeHistogram
	typeGaugeHistogram
	typeSummary
	typeInfo
	typeStateset
)

var typeNames = [...]string{
	typeUntyped:        "untyped",
	typeCounter:        "counter",
	typeGauge:          "gauge",
	typeHistogram:      "histogram",
	typeGaugeHistogram: "gaugehistogram",
	typeSummary:        "summary",
	typeInfo:           "info",
	typeStateset:       "stateset",
}

func (t famType) String() string { return typeNames[t] }

// parseType maps a TYPE keyword to a famType. Both formats accept every
// keyword of both (a text body declaring "unknown" or an OpenMetrics body
// declaring "untyped" gets what it obviously means).
func parseType(b []byte) (famType, bool) {
	switch string(b) {
	case "counter":
		return typeCounter, true
	case "gauge":
		return typeGauge, true
	case "histogram":
		return typeHistogram, true
	case "summary":
		return typeSummary, true
	case "untyped", "unknown":
		return typeUntyped, true
	case "gaugehistogram":
		return typeGaugeHistogram, true
	case "info":
		return typeInfo, true
	case "stateset":
		return typeStateset, true
	}
	return typeUntyped, false
}

// role is what a sample contributes to its series.
type role uint8

const (
	roleValue    role = iota // the value of a counter, gauge, untyped, info or stateset series
	roleQuantile             // a summary quantile (name without suffix, "quantile" label)
	roleBucket               // a histogram or gauge histogram bucket ("le" label)
	roleCount                // _count
	roleSum                  // _sum
	roleCreated              // _created: start time, in Unix seconds
	roleGCount               // _gcount of a gauge histogram
	roleGSum                 // _gsum of a gauge histogram
)

// suffixes that can separate a sample name from its family name.
var suffixes = [...]string{"_total", "_bucket", "_count", "_sum", "_created", "_gcount", "_gsum", "_info"}

// roleFor tells what a sample named family+suffix is in a family of type t.
func roleFor(t famType, suffix []byte) (role, bool) {
	switch t {
	case typeCounter:
		switch string(suffix) {
		case "", "_total":
			return roleValue, true
		case "_created":
			return roleCreated, true
		}
	case typeGauge, typeUntyped, typeStateset:
		if len(suffix) == 0 {
			return roleValue, true
		}
	case typeInfo:
		switch string(suffix) {
		case "_info", "":
			return roleValue, true
		}
	case typeHistogram:
		switch string(suffix) {
		case "_bucket":
			return roleBucket, true
		case "_count":
			return roleCount, true
		case "_sum":
			return roleSum, true
		case "_created":
			return roleCreated, true
		}
	case typeGaugeHistogram:
		switch string(suffix) {
		case "_bucket":
			return roleBucket, true
		case "_gcount":
			return roleGCount, true
		case "_gsum":
			return roleGSum, true
		}
	case typeSummary:
		switch string(suffix) {
		case "":
			return roleQuantile, true
		case "_count":
			return roleCount, true
		case "_sum":
			return roleSum, true
		case "_created":
			return roleCreated, true
		}
	}
	return 0, false
}

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

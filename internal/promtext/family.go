// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package promtext

// Type is a metric family's declared (or assumed) type.
type Type uint8

const (
	TypeUntyped Type = iota // text "untyped", OpenMetrics "unknown", or no TYPE line
	TypeCounter
	TypeGauge
	TypeHistogram
	TypeGaugeHistogram
	TypeSummary
	TypeInfo
	TypeStateset
)

var typeNames = [...]string{
	TypeUntyped:        "untyped",
	TypeCounter:        "counter",
	TypeGauge:          "gauge",
	TypeHistogram:      "histogram",
	TypeGaugeHistogram: "gaugehistogram",
	TypeSummary:        "summary",
	TypeInfo:           "info",
	TypeStateset:       "stateset",
}

func (t Type) String() string { return typeNames[t] }

// ParseType maps a TYPE keyword to a Type. Both formats' keywords are
// accepted (a text body declaring "unknown" or an OpenMetrics body declaring
// "untyped" gets what it obviously means); textOnly restricts them to the
// five of the text format, for Options.Strict.
func ParseType(b []byte, textOnly bool) (Type, bool) {
	switch string(b) {
	case "counter":
		return TypeCounter, true
	case "gauge":
		return TypeGauge, true
	case "histogram":
		return TypeHistogram, true
	case "summary":
		return TypeSummary, true
	case "untyped":
		return TypeUntyped, true
	}
	if textOnly {
		return TypeUntyped, false
	}
	switch string(b) {
	case "unknown":
		return TypeUntyped, true
	case "gaugehistogram":
		return TypeGaugeHistogram, true
	case "info":
		return TypeInfo, true
	case "stateset":
		return TypeStateset, true
	}
	return TypeUntyped, false
}

// Role is what a sample contributes to its series.
type Role uint8

const (
	RoleValue    Role = iota // the value of a counter, gauge, untyped, info or stateset series
	RoleQuantile             // a summary quantile (name without suffix, "quantile" label)
	RoleBucket               // a histogram or gauge histogram bucket ("le" label)
	RoleCount                // _count
	RoleSum                  // _sum
	RoleCreated              // _created: start time, in Unix seconds
	RoleGCount               // _gcount of a gauge histogram
	RoleGSum                 // _gsum of a gauge histogram
)

// Suffixes are the endings that can separate a sample name from its family
// name.
var Suffixes = [...]string{"_total", "_bucket", "_count", "_sum", "_created", "_gcount", "_gsum", "_info"}

// RoleFor tells what a sample named family+suffix is in a family of type t.
// Both formats' rules apply whatever the format: a text counter family
// named x_total has the sample x_total (suffix ""), an OpenMetrics one named
// x has x_total and x_created.
func RoleFor(t Type, suffix []byte) (Role, bool) {
	switch t {
	case TypeCounter:
		switch string(suffix) {
		case "", "_total":
			return RoleValue, true
		case "_created":
			return RoleCreated, true
		}
	case TypeGauge, TypeUntyped, TypeStateset:
		if len(suffix) == 0 {
			return RoleValue, true
		}
	case TypeInfo:
		switch string(suffix) {
		case "_info", "":
			return RoleValue, true
		}
	case TypeHistogram:
		switch string(suffix) {
		case "_bucket":
			return RoleBucket, true
		case "_count":
			return RoleCount, true
		case "_sum":
			return RoleSum, true
		case "_created":
			return RoleCreated, true
		}
	case TypeGaugeHistogram:
		switch string(suffix) {
		case "_bucket":
			return RoleBucket, true
		case "_gcount":
			return RoleGCount, true
		case "_gsum":
			return RoleGSum, true
		}
	case TypeSummary:
		switch string(suffix) {
		case "":
			return RoleQuantile, true
		case "_count":
			return RoleCount, true
		case "_sum":
			return RoleSum, true
		case "_created":
			return RoleCreated, true
		}
	}
	return 0, false
}

// Families is what Resolve needs of a caller's family table: the family
// with exactly this name, if any, and its type. A Go map lookup with
// string(name) does not allocate.
type Families interface {
	Lookup(name []byte) (fam int32, t Type, ok bool)
}

// Resolution is the outcome of Resolve.
type Resolution uint8

const (
	// Resolved: the sample belongs to the family returned, as the role
	// returned.
	Resolved Resolution = iota
	// Unresolved: no family fits; the sample starts an untyped family of
	// its own name (which the caller still has to validate).
	Unresolved
	// Conflict: a family has the sample's exact name but its type has no
	// such sample (the sample "x" next to histogram "x"); that family is
	// returned.
	Conflict
)

// Resolve finds the family a sample named name belongs to: the current
// family (cur, named curName, of type curType; cur < 0 for none) when the
// name fits it, else a family with that exact name, else one whose name
// plus a suffix valid for its type gives the name. The same rules apply to
// both formats.
func Resolve(name []byte, cur int32, curName string, curType Type, fams Families) (int32, Role, Resolution) {
	if cur >= 0 && len(name) >= len(curName) && string(name[:len(curName)]) == curName {
		if r, ok := RoleFor(curType, name[len(curName):]); ok {
			return cur, r, Resolved
		}
	}
	exact, et, hasExact := fams.Lookup(name)
	if hasExact {
		if r, ok := RoleFor(et, nil); ok {
			return exact, r, Resolved
		}
	}
	for _, suf := range Suffixes {
		n := len(name) - len(suf)
		if n <= 0 || string(name[n:]) != suf {
			continue
		}
		if fi, t, ok := fams.Lookup(name[:n]); ok {
			if r, ok := RoleFor(t, name[n:]); ok {
				return fi, r, Resolved
			}
		}
	}
	if hasExact {
		return exact, 0, Conflict
	}
	return -1, RoleValue, Unresolved
}

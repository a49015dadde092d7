// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package promtext

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// Character classes for names, indexed by byte.
const (
	clsMetricFirst = 1 << iota // may start a metric name: [a-zA-Z_:]
	clsMetric                  // may continue a metric name: [a-zA-Z0-9_:]
	clsLabelFirst              // may start a label name: [a-zA-Z_]
	clsLabel                   // may continue a label name: [a-zA-Z0-9_]
)

var charClass = func() (t [256]uint8) {
	for ch := 'a'; ch <= 'z'; ch++ {
		t[ch] = clsMetricFirst | clsMetric | clsLabelFirst | clsLabel
		t[ch-'a'+'A'] = clsMetricFirst | clsMetric | clsLabelFirst | clsLabel
	}
	for ch := '0'; ch <= '9'; ch++ {
		t[ch] = clsMetric | clsLabel
	}
	t['_'] = clsMetricFirst | clsMetric | clsLabelFirst | clsLabel
	t[':'] = clsMetricFirst | clsMetric
	return t
}()

func validName[T string | []byte](b T, first, rest uint8) bool {
	if len(b) == 0 || charClass[b[0]]&first == 0 {
		return false
	}
	for i := 1; i < len(b); i++ {
		if charClass[b[i]]&rest == 0 {
			return false
		}
	}
	return true
}

// ValidMetricName reports whether b is a metric name by the legacy rules,
// the only ones for an unquoted name: [a-zA-Z_:][a-zA-Z0-9_:]*.
func ValidMetricName[T string | []byte](b T) bool { return validName(b, clsMetricFirst, clsMetric) }

// ValidLabelName reports whether b is a label name by the legacy rules:
// [a-zA-Z_][a-zA-Z0-9_]*.
func ValidLabelName[T string | []byte](b T) bool { return validName(b, clsLabelFirst, clsLabel) }

// ValidQuotedName reports whether b may be a quoted (UTF-8) metric or label
// name: any non-empty valid UTF-8.
func ValidQuotedName(b []byte) bool { return len(b) > 0 && utf8.Valid(b) }

// ValidName applies ValidQuotedName to quoted names and ValidMetricName
// (metric) or ValidLabelName (label) to the others.
func ValidName(b []byte, quoted, label bool) bool {
	switch {
	case quoted:
		return ValidQuotedName(b)
	case label:
		return ValidLabelName(b)
	}
	return ValidMetricName(b)
}

// LabelNameEnd returns the end of the legacy label name that starts at
// s[i] (i itself when there is none).
func LabelNameEnd(s string, i int) int {
	if i >= len(s) || charClass[s[i]]&clsLabelFirst == 0 {
		return i
	}
	for i++; i < len(s) && charClass[s[i]]&clsLabel != 0; i++ {
	}
	return i
}

func isBlank(ch byte) bool { return ch == ' ' || ch == '\t' }

func skipBlank(l []byte, i int) int {
	for i < len(l) && isBlank(l[i]) {
		i++
	}
	return i
}

// token returns the end of the run of non-blank bytes starting at i.
func tokenEnd(l []byte, i int) int {
	for i < len(l) && !isBlank(l[i]) {
		i++
	}
	return i
}

// transient views b as a string without copying. The result must not
// outlive the call it is passed to (strconv copies what it keeps in errors).
func transient(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// ParseValue parses a sample value: a decimal float, or NaN / Inf / +Inf /
// -Inf in any case; an overflow (1e999) is ±Inf. Go's hexadecimal floats and
// digit-separating underscores are not part of either format and are refused.
func ParseValue(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, ch := range b {
		switch ch {
		case '_', 'x', 'X', 'p', 'P':
			return 0, false
		}
	}
	if v, ok := fastFloat(b); ok {
		return v, true
	}
	v, err := strconv.ParseFloat(transient(b), 64)
	if err != nil {
		// strconv reports overflow (1e999) as ±Inf with ErrRange: that is
		// what the value means, keep it.
		if errors.Is(err, strconv.ErrRange) { // a *strconv.NumError unwraps to its cause
			return v, true
		}
		return 0, false
	}
	return v, true
}

// ParseTextTimestamp parses a text-format timestamp (integer milliseconds
// since the epoch; a float is tolerated) into Unix nanoseconds.
func ParseTextTimestamp(b []byte) (int64, bool) {
	if ms, ok := parseInt(b); ok {
		if ms > math.MaxInt64/1000000 || ms < math.MinInt64/1000000 {
			return 0, false
		}
		return ms * 1000000, true
	}
	v, ok := ParseValue(b)
	if !ok {
		return 0, false
	}
	return floatToNanos(v * 1e6)
}

// ParseOMTimestamp parses an OpenMetrics timestamp (seconds since the epoch,
// possibly fractional) into Unix nanoseconds. Plain decimals are converted
// exactly; exponent forms go through float64.
func ParseOMTimestamp(b []byte) (int64, bool) {
	neg := false
	i := 0
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i = 1
	}
	var sec, frac int64
	digits, fdigits := 0, 0
	exact := true
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if sec > math.MaxInt64/1000000000/10 {
			exact = false
			break
		}
		sec = sec*10 + int64(b[i]-'0')
		digits++
	}
	if exact && i < len(b) && b[i] == '.' {
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if fdigits < 9 {
				frac = frac*10 + int64(b[i]-'0')
			}
			fdigits++
		}
	}
	if exact && i == len(b) && digits+fdigits > 0 {
		for n := min(fdigits, 9); n < 9; n++ {
			frac *= 10
		}
		const maxSec, maxFrac = math.MaxInt64 / 1000000000, math.MaxInt64 % 1000000000
		if sec > maxSec || (sec == maxSec && frac > maxFrac) {
			return 0, false
		}
		ns := sec*1000000000 + frac
		if neg {
			ns = -ns
		}
		return ns, true
	}
	v, ok := ParseValue(b)
	if !ok {
		return 0, false
	}
	return floatToNanos(v * 1e9)
}

func floatToNanos(v float64) (int64, bool) {
	if math.IsNaN(v) || v >= math.MaxInt64 || v <= math.MinInt64 {
		return 0, false
	}
	return int64(math.Round(v)), true
}

func parseInt(b []byte) (int64, bool) {
	i := 0
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i = 1
	}
	if i == len(b) {
		return 0, false
	}
	var n int64
	for ; i < len(b); i++ {
		d := b[i] - '0'
		if d > 9 || n > (math.MaxInt64-int64(d))/10 {
			return 0, false
		}
		n = n*10 + int64(d)
	}
	if neg {
		n = -n
	}
	return n, true
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fastFloat converts the common short decimals ("0", "7.0", "-0.25",
// "1234.5678") exactly and quickly: with at most 15 significant digits the
// digits form an integer that float64 holds exactly, and dividing it by an
// exact power of ten is correctly rounded by IEEE 754. Anything else
// (exponents, NaN, Inf, long mantissas) is left to strconv.
func fastFloat[T string | []byte](s T) (float64, bool) {
	i, n := 0, len(s)
	neg := false
	if n > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		i = 1
	}
	var mant uint64
	nd, digits, frac := 0, 0, -1 // digit characters, significant digits, digits after the point
	for ; i < n; i++ {
		ch := s[i]
		switch {
		case ch >= '0' && ch <= '9':
			nd++
			if mant != 0 || ch != '0' {
				digits++ // leading zeros are not significant
			}
			mant = mant*10 + uint64(ch-'0')
			if frac >= 0 {
				frac++
			}
		case ch == '.' && frac < 0:
			frac = 0
		default:
			return 0, false
		}
	}
	if nd == 0 || digits > 15 || frac > 22 {
		return 0, false
	}
	v := float64(mant)
	if frac > 0 {
		v /= pow10[frac]
	}
	if neg {
		v = -v
	}
	return v, true
}

// ParseBound parses an le or quantile label value. NaN is refused; a
// quantile must lie in [0, 1].
func ParseBound(s string, quantile bool) (float64, bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '_', 'x', 'X', 'p', 'P':
			return 0, false
		}
	}
	v, ok := fastFloat(s)
	if !ok {
		var err error
		if v, err = strconv.ParseFloat(s, 64); err != nil || v != v {
			return 0, false
		}
	}
	if quantile && (v < 0 || v > 1) {
		return 0, false
	}
	return v, true
}

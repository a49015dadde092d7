// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package promtext

import (
	"math"
	"strconv"
	"testing"
)

func TestFastFloatMatchesStrconv(t *testing.T) {
	inputs := []string{"0", "-0", "+0", "1", "7.0", "-0.25", "0.001", "1234.5678", "5.", ".5", "123456789012345",
		"1234567890123456", "0.31326723098754883", "0.1", "0.7", "2.675", "9007199254740993", "1e3", "-", ".", "+.", "",
		"1.0.0", "0.0000000000000000000001", "0.00000000000000000000001", "100000000000000000000000", "00000000000000000000001.5",
		"4294967296", "1.7181405583", "6.634254336", "-1.5", "99999999999999.9"}
	for _, s := range inputs {
		want, werr := strconv.ParseFloat(s, 64)
		got, ok := fastFloat(s)
		if ok && (werr != nil || math.Float64bits(got) != math.Float64bits(want)) {
			t.Errorf("fastFloat(%q) = %v, strconv says %v (%v)", s, got, want, werr)
		}
		gotB, okB := fastFloat([]byte(s))
		if okB != ok || math.Float64bits(gotB) != math.Float64bits(got) {
			t.Errorf("fastFloat([]byte(%q)) differs from the string version", s)
		}
	}
}

func FuzzFastFloat(f *testing.F) {
	f.Add("1.5")
	f.Add("-0.001")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := fastFloat(s)
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("fastFloat(%q) = %v, strconv: %v %v", s, got, want, err)
		}
	})
}

func TestTimestamps(t *testing.T) {
	for s, want := range map[string]int64{
		"1700000000":            1700000000_000000000,
		"1700000000.5":          1700000000_500000000,
		"1700000000.123456789":  1700000000_123456789,
		"1700000000.1234567899": 1700000000_123456789,
		"-1.5":                  -1_500000000,
		"1.7e9":                 1700000000_000000000,
		"0":                     0,
		"9223372036":            9223372036_000000000,
	} {
		if got, ok := ParseOMTimestamp([]byte(s)); !ok || got != want {
			t.Errorf("ParseOMTimestamp(%q) = %d %v, want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "-", ".", "abc", "9223372037", "9223372036.9", "1e300", "NaN", "1.2.3"} {
		if got, ok := ParseOMTimestamp([]byte(s)); ok {
			t.Errorf("ParseOMTimestamp(%q) = %d, want an error", s, got)
		}
	}
	for s, want := range map[string]int64{"1700000000123": 1700000000_123000000, "-5": -5_000000, "1.5e3": 1_500000000} {
		if got, ok := ParseTextTimestamp([]byte(s)); !ok || got != want {
			t.Errorf("ParseTextTimestamp(%q) = %d %v, want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "x", "9223372036855", "99999999999999999999"} {
		if got, ok := ParseTextTimestamp([]byte(s)); ok {
			t.Errorf("ParseTextTimestamp(%q) = %d, want an error", s, got)
		}
	}
}

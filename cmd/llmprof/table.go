// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// style adds ANSI styling on a terminal and nothing elsewhere, so that piped
// output and the golden files are the same table without escapes.
type style struct{ ansi bool }

func (s style) wrap(code, text string) string {
	if !s.ansi || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) bold(t string) string  { return s.wrap("1", t) }
func (s style) dim(t string) string   { return s.wrap("2", t) }
func (s style) warn(t string) string  { return s.wrap("33", t) }
func (s style) red(t string) string   { return s.wrap("31", t) }
func (s style) green(t string) string { return s.wrap("32", t) }

func section(w io.Writer, st style, title string) {
	// Terminal output (here and below in this file): a write to stdout or
	// stderr that fails has nowhere to be reported, so its error is dropped.
	_, _ = fmt.Fprintf(w, "\n%s\n", st.bold(title))
}

// width is the display width of s: runes, escape sequences excluded.
func width(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			// CSI: ESC [ params final-byte.
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j + 1
			continue
		}
		_, sz := utf8.DecodeRuneInString(s[i:])
		i += sz
		n++
	}
	return n
}

func pad(s string, w int, right bool) string {
	fill := strings.Repeat(" ", max(w-width(s), 0))
	if right {
		return fill + s
	}
	return s + fill
}

// maxPathWidth bounds the module-path column: deep paths and C++ op names
// are cut on the left, where the outer, shared part of a path is.
const maxPathWidth = 72

func clip(s string) string {
	if utf8.RuneCountInString(s) <= maxPathWidth {
		return s
	}
	r := []rune(s)
	return "…" + string(r[len(r)-maxPathWidth+1:])
}

// table is a fixed-width table: columns as wide as their widest cell,
// numbers right-aligned.
type table struct {
	head  []string
	right []bool
	rows  [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer, st style) {
	ws := make([]int, len(t.head))
	for i, h := range t.head {
		ws[i] = width(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			ws[i] = max(ws[i], width(c))
		}
	}
	line := func(cells []string, f func(string) string) {
		var b strings.Builder
		b.WriteString(" ")
		for i, c := range cells {
			b.WriteString(" ")
			p := pad(c, ws[i], t.right[i])
			if i == len(cells)-1 && !t.right[i] {
				p = c // no trailing blanks
			}
			b.WriteString(f(p))
		}
		_, _ = fmt.Fprintln(w, b.String())
	}
	line(t.head, st.dim)
	for _, r := range t.rows {
		line(r, func(s string) string { return s })
	}
}

// formatDuration prints ns for people with 3 significant decimals at most.
func formatDuration(ns int64) string {
	neg := ns < 0
	if neg {
		ns = -ns
	}
	var s string
	switch {
	case ns < 1000:
		s = strconv.FormatInt(ns, 10) + " ns"
	case ns < 1_000_000:
		s = strconv.FormatFloat(float64(ns)/1e3, 'f', 2, 64) + " µs"
	case ns < 1_000_000_000:
		s = strconv.FormatFloat(float64(ns)/1e6, 'f', 2, 64) + " ms"
	default:
		s = strconv.FormatFloat(float64(ns)/1e9, 'f', 3, 64) + " s"
	}
	if neg {
		return "-" + s
	}
	return s
}

// formatBytes is the receiver's byte formatting, so that the numbers here
// read as in its leak-suspect messages.

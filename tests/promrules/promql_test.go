// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package promrules checks the shipped Prometheus rules
// (distro/prometheus/*.rules.yml) against the unified metric registry and
// runs promtool on them and their unit tests.
package promrules

import (
	"fmt"
	"strings"
)

// A small PromQL tokenizer and walker: enough to find every series an
// expression selects, its label matchers and the labels of its by, without,
// on, ignoring, group_left and group_right clauses. It does not check the
// grammar (promtool does); it only has to see names where PromQL sees them.

type tokenKind int

const (
	tokIdent tokenKind = iota
	tokString
	tokNumber
	tokPunct
)

type token struct {
	kind tokenKind
	text string // for a string: its unquoted value
	pos  int
}

// tokenize splits a PromQL expression into tokens, dropping comments.
func tokenize(expr string) ([]token, error) {
	var toks []token
	isIdentStart := func(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isIdentChar := func(c byte) bool { return isIdentStart(c) || c == ':' || c >= '0' && c <= '9' }
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case isIdentStart(c) || c == ':' && i+1 < len(expr) && isIdentStart(expr[i+1]):
			j := i + 1
			for j < len(expr) && isIdentChar(expr[j]) {
				j++
			}
			toks = append(toks, token{tokIdent, expr[i:j], i})
			i = j
		case isDigit(c) || c == '.' && i+1 < len(expr) && isDigit(expr[i+1]):
			// Numbers, durations (5m, 1h30m) and exponents (1e-3).
			j := i + 1
			for j < len(expr) {
				d := expr[j]
				if isDigit(d) || d == '.' || d >= 'a' && d <= 'z' || d >= 'A' && d <= 'Z' {
					j++
					continue
				}
				if (d == '+' || d == '-') && (expr[j-1] == 'e' || expr[j-1] == 'E') && j+1 < len(expr) && isDigit(expr[j+1]) {
					j++
					continue
				}
				break
			}
			toks = append(toks, token{tokNumber, expr[i:j], i})
			i = j
		case c == '"' || c == '\'' || c == '`':
			var b strings.Builder
			j := i + 1
			for ; j < len(expr) && expr[j] != c; j++ {
				if expr[j] == '\\' && c != '`' && j+1 < len(expr) {
					j++
				}
				b.WriteByte(expr[j])
			}
			if j >= len(expr) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			toks = append(toks, token{tokString, b.String(), i})
			i = j + 1
		default:
			if i+1 < len(expr) {
				switch two := expr[i : i+2]; two {
				case "==", "!=", "=~", "!~", ">=", "<=":
					toks = append(toks, token{tokPunct, two, i})
					i += 2
					continue
				}
			}
			toks = append(toks, token{tokPunct, string(c), i})
			i++
		}
	}
	return toks, nil
}

type matcher struct{ label, op, value string }

type selector struct {
	name     string
	matchers []matcher
}

// analysis is what an expression refers to.
type analysis struct {
	selectors []selector
	// grouping holds the labels of by, without, on, ignoring, group_left
	// and group_right clauses.
	grouping []string
}

var groupingKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// aggregations may be followed by their by or without clause rather than
// by their parenthesis.
var aggregations = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
}

// notSelectors are identifiers that are neither functions (those are
// followed by a parenthesis) nor series names.
var notSelectors = map[string]bool{
	"and": true, "or": true, "unless": true, "offset": true, "bool": true, "atan2": true,
	"inf": true, "nan": true, "Inf": true, "NaN": true,
}

// analyze walks an expression's tokens.
func analyze(expr string) (analysis, error) {
	toks, err := tokenize(expr)
	if err != nil {
		return analysis{}, err
	}
	var a analysis
	next := func(i int) (token, bool) {
		if i+1 < len(toks) {
			return toks[i+1], true
		}
		return token{}, false
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == tokIdent && groupingKeywords[t.text]:
			n, ok := next(i)
			if !ok || n.kind != tokPunct || n.text != "(" {
				continue // group_left without a label list
			}
			j := i + 2
			for ; j < len(toks) && (toks[j].kind != tokPunct || toks[j].text != ")"); j++ {
				switch {
				case toks[j].kind == tokIdent:
					a.grouping = append(a.grouping, toks[j].text)
				case toks[j].kind == tokPunct && toks[j].text == ",":
				default:
					return a, fmt.Errorf("unexpected %q in the label list of %s at %d", toks[j].text, t.text, toks[j].pos)
				}
			}
			if j == len(toks) {
				return a, fmt.Errorf("unclosed label list of %s at %d", t.text, t.pos)
			}
			i = j
		case t.kind == tokIdent && notSelectors[t.text]:
		case t.kind == tokIdent:
			if n, ok := next(i); ok && n.kind == tokPunct && n.text == "(" {
				continue // a function or an aggregation
			}
			if n, ok := next(i); ok && aggregations[t.text] && n.kind == tokIdent && (n.text == "by" || n.text == "without") {
				continue // sum by (…) (…)
			}
			s := selector{name: t.text}
			if n, ok := next(i); ok && n.kind == tokPunct && n.text == "{" {
				ms, end, err := matchers(toks, i+1)
				if err != nil {
					return a, err
				}
				s.matchers, i = ms, end
			}
			a.selectors = append(a.selectors, s)
		case t.kind == tokPunct && t.text == "{":
			// A selector without a name outside the braces.
			ms, end, err := matchers(toks, i)
			if err != nil {
				return a, err
			}
			s := selector{matchers: ms}
			for _, m := range ms {
				if m.label == "__name__" && m.op == "=" {
					s.name = m.value
				}
			}
			a.selectors = append(a.selectors, s)
			i = end
		}
	}
	return a, nil
}

// matchers parses the label matchers of the braces opening at toks[open];
// it returns them and the index of the closing brace.
func matchers(toks []token, open int) ([]matcher, int, error) {
	var ms []matcher
	i := open + 1
	for {
		if i >= len(toks) {
			return nil, 0, fmt.Errorf("unclosed braces at %d", toks[open].pos)
		}
		if toks[i].kind == tokPunct && toks[i].text == "}" {
			return ms, i, nil
		}
		if i+2 >= len(toks) || toks[i].kind != tokIdent || toks[i+1].kind != tokPunct || toks[i+2].kind != tokString {
			return nil, 0, fmt.Errorf("not a label matcher at %d", toks[i].pos)
		}
		switch op := toks[i+1].text; op {
		case "=", "!=", "=~", "!~":
			ms = append(ms, matcher{toks[i].text, op, toks[i+2].text})
		default:
			return nil, 0, fmt.Errorf("not a matcher operator %q at %d", op, toks[i+1].pos)
		}
		i += 3
		if i < len(toks) && toks[i].kind == tokPunct && toks[i].text == "," {
			i++
		}
	}
}

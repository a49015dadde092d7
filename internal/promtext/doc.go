// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package promtext reads the Prometheus text exposition format (0.0.4) and
// OpenMetrics 1.0 text, one line at a time, into byte-slice views of the
// body: the one reading of these formats in the module. The llmengine
// receiver's converter (receiver/llmenginereceiver/internal/expo) builds its
// metrics on it, and the engine replay server (tests/enginereplay) checks
// and re-renders its fixtures with it.
//
// A Parser does not allocate once its buffers have grown to the longest
// line: names, label names and values are returned as views of the body, or
// of a per-line buffer when they had escapes to undo, valid until the next
// call to Next. What the formats mean beyond one line (which family a
// sample belongs to, what its role is there) is given by Resolve and
// RoleFor, which the callers apply to their own family tables.
//
// # Leniency
//
// By default the Parser accepts what engines are seen to emit, beyond the
// letter of the formats: CRLF line ends, tabs or several spaces between
// tokens and around label names, '=' and ',', a trailing comma in a label
// set, fractional and pre-1970 text-format timestamps, unknown escapes in
// text-format label values (kept verbatim), every TYPE keyword of both
// formats in both, and in OpenMetrics blank lines, comment lines and a
// UNIT that is not the name's suffix. A label value or docstring that is
// not UTF-8 keeps its series with the invalid bytes replaced by U+FFFD.
// Invalid metric and label names are well-formed tokens, not syntax
// errors: the caller decides (the converter skips the series).
//
// Options.Strict refuses all of that, for fixtures that must be exemplary:
// tokens are separated by exactly one space. Both modes accept a last line
// without a line feed (vLLM ends its exposition so).
//
// The differential test in bench/textparse holds this parser to
// Prometheus's own (model/textparse) on every fixture, the fuzz seeds and
// a fuzzer's mutations of them: what Strict accepts, Prometheus accepts
// and reads entry for entry the same; what Prometheus accepts, the default
// reading accepts, but for a quoted string that runs over a raw line feed
// (Prometheus takes it; the formats write \n and this parser reads lines).
//
// Always refused: unterminated quoted strings or label sets, a missing or
// unparsable value or timestamp, text after the value, a malformed
// exemplar, and in OpenMetrics a missing "# EOF" or anything after it,
// unknown escapes in quoted strings, and Go-only number syntaxes (hex
// floats, 1_000). Errors are *Error values naming the 1-based line.
package promtext // import "github.com/llmops-otel/otelcol-llmops/internal/promtext"

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package expo converts the Prometheus text exposition format (0.0.4) and
// OpenMetrics 1.0 text into pdata metrics, in one pass over the body, keeping
// per-series state across the scrapes of one target. The llmengine receiver
// calls it once per scrape of an inference engine's /metrics endpoint.
//
// # Output
//
// One pmetric.Metric per metric family, named as the engine names it (the
// receiver never renames):
//
//   - counter: Sum, cumulative, monotonic, double values. The name is the
//     sample name as exposed, _total included when the samples carry it, so
//     `# TYPE x_total counter` + `x_total` (text, prometheus_client) and
//     `# TYPE x counter` + `x_total` (OpenMetrics) both give x_total, and a
//     counter exposed without the suffix (TGI) keeps its name.
//   - gauge, untyped (text), unknown (OpenMetrics): Gauge.
//   - info: Gauge named as its samples (x_info), with the info labels and the
//     exposed value (1).
//   - stateset: Gauge, one point per state, the state in the label named
//     after the family, value 0 or 1 as exposed.
//   - gaugehistogram: Gauge named <family>_gcount holding the _gcount value
//     (or the +Inf bucket when _gcount is absent); buckets and _gsum are
//     dropped, pdata having no gauge histogram.
//   - histogram: Histogram, cumulative. Bounds are the finite le values in
//     ascending order, bucket counts are de-cumulated; the +Inf bucket is
//     required, the count is the +Inf bucket (a different _count adds a
//     problem), the sum is _sum when present (no _sum: no sum).
//   - summary: Summary with the quantiles in ascending order, _sum, _count.
//
// HELP becomes the description, UNIT (OpenMetrics only) the unit. Labels
// become string attributes, sorted by name; le and quantile are consumed on
// bucket and quantile samples only; labels whose name starts with "__" are
// dropped. A point's timestamp is the sample's own (text: milliseconds;
// OpenMetrics: seconds, converted exactly for plain decimals) or the scrape
// time. Families without any valid point are not emitted.
//
// # Start times and resets
//
// Cumulative points (counters, histograms, summaries) get as start time, in
// order of preference:
//
//   - their _created value (Unix seconds): the OpenMetrics _created samples
//     of the family, or, in the text format, the X_created gauge family that
//     prometheus_client exposes next to counter X_total or histogram/summary
//     X, matched by name and labels wherever it appears in the body. Such
//     families are consumed and never emitted. A _created value that is NaN,
//     infinite, negative or later than the point's timestamp is ignored.
//   - after a reset (the counter value, histogram count or summary count went
//     down since the previous scrape; Stats.Resets counts them): the point's
//     timestamp minus 1ms, kept until the next reset.
//   - otherwise the timestamp of the first point of the series this
//     Converter saw.
//
// Series are identified by a 64-bit xxhash of the emitted name, the type and
// the sorted labels. A NaN counter value, histogram count or summary count is
// "unknown": the point carries the NoRecordedValue flag and no value, and the
// state keeps the last known value. NaN and ±Inf gauge values are kept.
//
// The state is bounded: a series not seen for Options.StaleAfter consecutive
// successful scrapes is forgotten, and at most Options.MaxSeries series are
// tracked; beyond that, series are emitted with their own timestamp (or
// _created) as start time and counted in Stats.UntrackedSeries.
//
// # Errors and skipped series
//
// Convert is all-or-nothing. Syntax errors (unterminated quoted strings or
// label sets, a missing or unparsable value or timestamp, text after the
// value, a malformed exemplar, a missing "# EOF" in OpenMetrics or anything
// after it, including a blank line) return a *ParseError naming the line, and
// leave dst and the state untouched; such a scrape does not count as a
// scrape for StaleAfter either.
//
// Well-formed lines that cannot be used only skip their series and are
// counted in Stats: invalid metric or label names (legacy rules; UTF-8 names
// are accepted when quoted, `{"my.metric", "my.label"="v"}`), duplicate
// label names, samples whose name does not fit the family they fall into,
// histogram buckets with a missing or unparsable le, decreasing or negative
// buckets, a missing +Inf bucket, quantiles outside [0, 1], negative
// timestamps (InvalidSeries); a repeated name and label set, the first one
// winning (DuplicateSeries, counted per sample: a histogram repeated as a
// whole counts each repeated line). The first ten problems are described in
// Stats.Problems.
//
// # Format corners
//
//   - Families are found by name: the current family first, then a family
//     with the sample's exact name, then one whose name plus a suffix valid
//     for its type (_total, _created, _bucket, _count, _sum, _gcount, _gsum,
//     _info) gives the sample name; otherwise the sample starts an untyped
//     family. The same rules apply to both formats (an OpenMetrics-style
//     x_total / x_created inside a text counter family works).
//   - A family whose samples come in several groups (forbidden by both
//     formats) is merged, with a problem.
//   - A TYPE line after the family's samples, or a second conflicting TYPE
//     line, is ignored with a problem; an unknown type means untyped. Both
//     formats accept all type keywords of both.
//   - Text format: lines may end in CRLF, tokens may be separated by tabs or
//     several spaces, label sets may have spaces around names, '=' and ','
//     and a trailing comma, the last line needs no newline, unknown escapes
//     in label values are kept verbatim (\t stays backslash-t), "# UNIT" and
//     "# EOF" lines are plain comments. HELP unescapes \\ and \n only.
//   - OpenMetrics: the same leniency inside the body (whitespace, comments,
//     blank lines), but an unknown escape in a quoted string is an error and
//     the body must end with "# EOF" and an optional newline. HELP also
//     unescapes \". Exemplars are attached to counter points and histogram
//     points (trace_id and span_id of the right hex length become the
//     exemplar's ids, other labels filtered attributes; no timestamp means
//     the point's); exemplars on other types are parsed and dropped.
//   - Values: decimal floats, NaN, Inf, +Inf, -Inf in any case; overflow
//     (1e999) is ±Inf; Go-only syntaxes (hex floats, 1_000) are errors.
//
// # Performance
//
// The body is read once, line by line, into scratch buffers the Converter
// reuses. Names and label values are interned in a per-Converter table
// (looked up with the []byte, which does not allocate; entries unused for
// StaleAfter scrapes are dropped), a small per-position cache in front of it
// catches the labels that repeat from one line to the next, and a sample
// carrying the same labels as the previous one reuses its hash. Once a
// target's names and values have been seen, parsing a scrape does not
// allocate; what Convert allocates is what pdata needs for the points.
package expo

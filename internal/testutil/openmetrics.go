// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package testutil

import (
	"regexp"
	"strings"
)

var (
	counterType = regexp.MustCompile(`(?m)^# TYPE (\S+)_total counter$`)
	counterMeta = regexp.MustCompile(`^# (HELP|TYPE) (\S+)_total( |$)`)
)

// ToOpenMetrics rewrites a text exposition (format 0.0.4) of a Prometheus
// client library as the same library serves it in OpenMetrics: counter
// families lose "_total" in their HELP and TYPE lines (the samples keep
// it), and the body ends with "# EOF". Engines' fixtures are captured in
// the text format; tests read them in both.
func ToOpenMetrics(text []byte) []byte {
	counters := map[string]bool{}
	for _, m := range counterType.FindAllSubmatch(text, -1) {
		counters[string(m[1])] = true
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(text), "\n") {
		if m := counterMeta.FindStringSubmatch(line); m != nil && counters[m[2]] {
			line = strings.Replace(line, m[2]+"_total", m[2], 1)
		}
		b.WriteString(line)
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	b.WriteString("# EOF\n")
	return []byte(b.String())
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package benchutil

import (
	"fmt"
	"strings"
)

// EngineExposition writes a text exposition (format 0.0.4) of the given
// number of series, shaped like an inference engine's: families of 250
// counters, 250 gauges, and 20 histograms of 11 buckets with _sum and
// _count, in turn, all with model and engine labels. Histogram lines count
// as series one by one (13 per histogram). The body ends with a line feed.
func EngineExposition(series int) []byte {
	var b strings.Builder
	n := 0
	for f := 0; n < series; f++ {
		switch f % 3 {
		case 0:
			fmt.Fprintf(&b, "# HELP bench:counter_%d_total A counter.\n# TYPE bench:counter_%d_total counter\n", f, f)
			for i := 0; i < 250 && n < series; i++ {
				fmt.Fprintf(&b, "bench:counter_%d_total{model_name=\"model-%d\",engine=\"%d\"} %d\n", f, i%16, i/16, 1000+i*7)
				n++
			}
		case 1:
			fmt.Fprintf(&b, "# HELP bench:gauge_%d A gauge.\n# TYPE bench:gauge_%d gauge\n", f, f)
			for i := 0; i < 250 && n < series; i++ {
				fmt.Fprintf(&b, "bench:gauge_%d{model_name=\"model-%d\",engine=\"%d\"} %g\n", f, i%16, i/16, float64(i)/250)
				n++
			}
		default:
			fmt.Fprintf(&b, "# HELP bench:latency_%d_seconds A histogram.\n# TYPE bench:latency_%d_seconds histogram\n", f, f)
			bounds := []string{"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "+Inf"}
			for i := 0; i < 20 && n < series; i++ {
				lbl := fmt.Sprintf("model_name=\"model-%d\",engine=\"%d\"", i%16, i/16)
				for j, le := range bounds {
					fmt.Fprintf(&b, "bench:latency_%d_seconds_bucket{%s,le=\"%s\"} %d\n", f, lbl, le, (j+1)*10)
				}
				fmt.Fprintf(&b, "bench:latency_%d_seconds_sum{%s} %g\n", f, lbl, 12.5)
				fmt.Fprintf(&b, "bench:latency_%d_seconds_count{%s} %d\n", f, lbl, len(bounds)*10)
				n += len(bounds) + 2
			}
		}
	}
	return []byte(b.String())
}

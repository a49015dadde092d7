// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/tests/enginereplay"
)

// ttftBucket is one bucket line of vLLM's time-to-first-token histogram.
var ttftBucket = regexp.MustCompile(`(?m)^vllm:time_to_first_token_seconds_bucket\{le="([^"]+)"[^}]*\} (\S+)$`)

// TestLatencySpikeOnReplayedEngines feeds the time-to-first-token histogram
// of the engine replay's scenarios, as the engine serves it second by
// second, and wants the spike each one plays. Their latency climbs over a
// few seconds: the first windows of the climb hold too few slow requests to
// count, and before the baseline clipped what it learns at its threshold,
// those windows entered it, inflated σ, and the spike never fired.
func TestLatencySpikeOnReplayedEngines(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		onset    float64 // when TTFT starts to climb
	}{
		{"vllm-kv-fills", 38},
		{"vllm-memory-pressure", 40},
		{"vllm-cpu-bound", 35},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			srv, err := enginereplay.New(enginereplay.Options{Engine: enginereplay.VLLM,
				Scenario: "../../tests/enginereplay/scenarios/" + tc.scenario + ".scenario"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() }) // a replay server holds no data worth a close error
			const window = 10 * time.Second
			d := newTestDiagnoser(t, func(c *Config) {
				c.Warmup = 20 * time.Second
				c.Latency.Window = window
				c.Latency.Baseline = time.Minute
			})
			recs := run(d, 70, func(s float64) []pmetric.Metrics {
				body, err := srv.RenderAt(s, enginereplay.FormatText)
				if err != nil {
					t.Fatal(err)
				}
				var bounds []float64
				var counts []uint64
				prev := 0.0
				for _, m := range ttftBucket.FindAllStringSubmatch(string(body), -1) {
					v, err := strconv.ParseFloat(m[2], 64)
					if err != nil {
						t.Fatal(err)
					}
					if m[1] != "+Inf" {
						b, err := strconv.ParseFloat(m[1], 64)
						if err != nil {
							t.Fatal(err)
						}
						bounds = append(bounds, b)
					}
					counts = append(counts, uint64(v-prev))
					prev = v
				}
				if len(counts) == 0 {
					t.Fatalf("no TTFT buckets at %g s", s)
				}
				md := batch(engineRes, sec(s), pt{name: spec.EngineRequestsWaiting, v: 1})
				addHist(md, spec.GenAIServerTimeToFirstToken, sec(s), bounds, counts)
				return []pmetric.Metrics{md}
			})
			l := firing(recs, spec.IncidentKindLatencySpike)
			if len(l) != 1 {
				t.Fatalf("want one latency spike: %+v", recs)
			}
			if after := time.Duration(l[0].ts - sec(tc.onset)); after < 0 || after > window {
				t.Fatalf("fired %s after the climb began, want within latency.window (%s)", after, window)
			}
		})
	}
}

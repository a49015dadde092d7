// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

var appRes = map[string]any{spec.AttrServiceName: "support-bot", spec.AttrServiceInstanceID: "support-bot-7f9c"}

// A hallucination rate above 12% held for 3 minutes is critical and calls
// for the instance's circuit breaker; the same rate for less than 3
// minutes, or 10% for longer, is not an incident.
func TestHallucinationRateBreaksTheCircuit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rate   func(s float64) float64
		fireAt float64 // -1: must not fire
		noise  float64
	}{
		{"held from 100 s", func(s float64) float64 { return step(s, 100, 0.04, 0.15) }, 280, 0.01},
		{"just above, held from 50 s", func(s float64) float64 { return step(s, 50, 0.06, 0.125) }, 230, 0.002},
		{"a 2-minute burst", func(s float64) float64 {
			if s >= 100 && s < 220 {
				return 0.3
			}
			return 0.05
		}, -1, 0.01},
		{"high but under 12%", func(s float64) float64 { return 0.10 }, -1, 0.01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDiagnoser(t, nil)
			recs := run(d, 400, func(s float64) []pmetric.Metrics {
				// Deterministic noise: the rule sees a jittering rate.
				v := tc.rate(s) + tc.noise*math.Sin(s*1.7)
				return []pmetric.Metrics{batch(appRes, sec(s), pt{name: spec.AppHallucinationRate, v: v,
					attrs: map[string]any{spec.AttrGenAIPromptName: "support-v3"}})}
			})
			f := firing(recs, spec.IncidentKindHallucinationRate)
			if tc.fireAt < 0 {
				if len(f) != 0 {
					t.Fatalf("fired: %s", f[0].body)
				}
				return
			}
			if len(f) != 1 {
				t.Fatalf("want one incident: %+v", recs)
			}
			if at := time.Duration(f[0].ts - sec(tc.fireAt)); at < 0 || at > 2*time.Second {
				t.Errorf("fired %s after the 3 minutes were up", at)
			}
			if f[0].severity != spec.SeverityCritical || f[0].quadrant != spec.QuadrantErrors {
				t.Errorf("severity %s quadrant %s", f[0].severity, f[0].quadrant)
			}
			if f[0].attrs[spec.IncidentActionID] != spec.ActionCircuitBreak || f[0].attrs[spec.AttrServiceInstanceID] != "support-bot-7f9c" ||
				f[0].attrs[spec.AttrServiceName] != "support-bot" {
				t.Errorf("the incident does not say which instance to break: %v", f[0].attrs)
			}
			if !strings.Contains(f[0].body, "hallucinated") || !strings.Contains(f[0].body, "support-bot instance support-bot-7f9c") {
				t.Errorf("body %q", f[0].body)
			}
		})
	}
}

func step(s, at, before, after float64) float64 {
	if s >= at {
		return after
	}
	return before
}

// An injection score above 0.92 is critical at once; RAG relevance under
// 0.65 must hold 10 minutes; embedding drift is judged against the norm's
// own baseline, either way.
func TestAppQualityGradedResponses(t *testing.T) {
	d := newTestDiagnoser(t, nil)
	recs := run(d, 1500, func(s float64) []pmetric.Metrics {
		inj := 0.1
		rel := 0.8
		if s >= 400 {
			rel = 0.55
		}
		norm := 1.0 + 0.01*math.Sin(s/7)
		if s >= 900 {
			norm = 0.8 // the embedding model changed
		}
		out := []pmetric.Metrics{batch(appRes, sec(s),
			pt{name: spec.AppPromptInjectionScore, v: inj},
			pt{name: spec.AppRAGRelevance, v: rel},
			pt{name: spec.AppEmbeddingNorm, v: norm})}
		if s == 300 {
			// One request scores 0.97 and the next is back to normal
			// before the evaluation: the spike must not be missed.
			out = append([]pmetric.Metrics{batch(appRes, sec(s)-int64(400*time.Millisecond),
				pt{name: spec.AppPromptInjectionScore, v: 0.97})}, out...)
		}
		return out
	})
	inj := firing(recs, spec.IncidentKindPromptInjection)
	if len(inj) != 1 || inj[0].ts-sec(300) > int64(2*time.Second) || inj[0].severity != spec.SeverityCritical ||
		inj[0].attrs[spec.IncidentActionID] != spec.ActionBlockSession {
		t.Errorf("prompt injection: %+v", inj)
	}
	rel := firing(recs, spec.IncidentKindRAGRelevanceLow)
	if len(rel) != 1 || rel[0].ts < sec(1000) || rel[0].ts > sec(1002) || rel[0].severity != spec.SeverityWarning {
		t.Errorf("RAG relevance: want one warning 10 min after 400 s: %+v", rel)
	}
	drift := firing(recs, spec.IncidentKindEmbeddingDrift)
	if len(drift) != 1 || drift[0].ts < sec(1200) || drift[0].ts > sec(1202) || drift[0].attrs[spec.IncidentActionID] != spec.ActionReindex {
		t.Errorf("embedding drift: want one 5 min after 900 s: %+v", drift)
	}
}

// app_quality.enabled: false leaves the application's signals alone.
func TestAppQualityCanBeTurnedOff(t *testing.T) {
	d := newTestDiagnoser(t, func(c *Config) { c.AppQuality.Enabled = false })
	recs := run(d, 300, func(s float64) []pmetric.Metrics {
		return []pmetric.Metrics{batch(appRes, sec(s), pt{name: spec.AppHallucinationRate, v: 0.5}, pt{name: spec.AppPromptInjectionScore, v: 0.99})}
	})
	if len(recs) != 0 {
		t.Fatalf("incidents with app_quality off: %+v", recs)
	}
}

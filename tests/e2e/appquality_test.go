// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// TestAppQualityActionReachesItsHook: an application sends its quality
// signals over OTLP under common spellings (a hallucination rate in percent,
// a prompt-injection score); the built collector normalizes them, the
// default application-quality rules grade them, and the response each
// calls for reaches the action hook keyed by it: the circuit breaker gets
// the hallucination incident (held for app_quality.hallucination.for) with
// the instance to break, and nothing else.
func TestAppQualityActionReachesItsHook(t *testing.T) {
	const (
		holdFor  = 3 * time.Second
		instance = "support-bot-7f9c"
	)
	ok := func(w http.ResponseWriter, _ []byte) { w.WriteHeader(http.StatusNoContent) }
	main, breaker := startAWServer(t, ok), startAWServer(t, ok)
	grpcPort, healthPort := harness.FreePort(t), harness.FreePort(t)
	cfg := harness.AgentConfig(fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
processors:
  llmnormalize:
connectors:
  rootcause:
    evaluation_interval: 500ms
    warmup: 0s
    app_quality:
      hallucination: {for: %s}
exporters:
  alertwebhook:
    endpoint: %s
    format: json
    node: %s
    timeout: 2s
    retry_on_failure: {enabled: true, initial_interval: 200ms, max_interval: 1s, max_elapsed_time: 0s}
    actions:
      circuit_break:
        endpoint: %s/break
`, grpcPort, holdFor, main.URL, awNode, breaker.URL), `
    metrics:
      receivers: [otlp]
      processors: [llmnormalize]
      exporters: [rootcause]
    logs/incidents:
      receivers: [rootcause]
      exporters: [alertwebhook]
`, healthPort)
	harness.StartCollector(t, harness.Options{Name: "appquality", Config: cfg, HealthPort: healthPort})
	client := pmetricotlp.NewGRPCClient(dial(t, fmt.Sprintf("127.0.0.1:%d", grpcPort)))

	// One scrape's worth of the application's signals.
	send := func(at time.Time, hallucinationPct, injection float64) {
		md := pmetric.NewMetrics()
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr(spec.AttrServiceName, "support-bot")
		rm.Resource().Attributes().PutStr(spec.AttrServiceInstanceID, instance)
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		for name, v := range map[string]float64{"hallucination_rate_percent": hallucinationPct, "prompt_injection_score": injection} {
			m := ms.AppendEmpty()
			m.SetName(name)
			dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
			dp.SetTimestamp(pcommon.NewTimestampFromTime(at))
			dp.SetDoubleValue(v)
			dp.Attributes().PutStr("prompt_template_id", "support-v3")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := client.Export(ctx, pmetricotlp.NewExportRequestFromMetrics(md)); err != nil {
			t.Fatalf("export: %v", err)
		}
	}

	// A healthy start, then 15% hallucinated answers from `onset`, and one
	// request that scores 0.97 for injection.
	start := time.Now()
	var onset time.Time
	deadline := start.Add(40 * time.Second)
	for i := 0; len(breaker.got()) == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("the circuit breaker got nothing in 40 s; the main webhook got:\n%s", bodies(main.got()))
		}
		now := time.Now()
		pct, inj := 4.0, 0.1
		if i >= 4 {
			pct = 15
			if onset.IsZero() {
				onset = now
			}
		}
		if i == 6 {
			inj = 0.97
		}
		send(now, pct, inj)
		time.Sleep(250 * time.Millisecond) // the application's own reporting interval
	}
	arrived := time.Now()

	var doc struct {
		Kind       string         `json:"kind"`
		Severity   string         `json:"severity"`
		State      string         `json:"state"`
		ActionID   string         `json:"action_id"`
		Summary    string         `json:"summary"`
		Attributes map[string]any `json:"attributes"`
	}
	got := breaker.got()
	if err := json.Unmarshal(got[0].body, &doc); err != nil {
		t.Fatalf("the breaker's POST is not an incident document: %v\n%s", err, got[0].body)
	}
	if doc.Kind != spec.IncidentKindHallucinationRate || doc.Severity != spec.SeverityCritical || doc.State != spec.StateFiring ||
		doc.ActionID != spec.ActionCircuitBreak || doc.Attributes[spec.AttrServiceInstanceID] != instance {
		t.Errorf("the breaker got %s", got[0].body)
	}
	// The percentage reached the rule as a fraction (llmnormalize).
	if !strings.Contains(doc.Summary, spec.AppHallucinationRate+" = 0.15") {
		t.Errorf("summary %q does not show the normalized rate", doc.Summary)
	}
	// Held for app_quality.hallucination.for before it fired.
	if held := arrived.Sub(onset); held < holdFor {
		t.Errorf("the breaker was called %s after the rate rose, before the %s hold", held, holdFor)
	}

	// The injection incident went to the main webhook with its response,
	// and not to the breaker.
	harness.Eventually(t, 15*time.Second, func() (bool, string) {
		for _, r := range main.got() {
			var d struct {
				Kind     string `json:"kind"`
				Severity string `json:"severity"`
				ActionID string `json:"action_id"`
			}
			if json.Unmarshal(r.body, &d) == nil && d.Kind == spec.IncidentKindPromptInjection {
				return d.Severity == spec.SeverityCritical && d.ActionID == spec.ActionBlockSession,
					fmt.Sprintf("prompt injection: %s", r.body)
			}
		}
		return false, "no prompt_injection incident on the main webhook:\n" + bodies(main.got())
	})
	for _, r := range breaker.got() {
		if strings.Contains(string(r.body), spec.IncidentKindPromptInjection) {
			t.Errorf("the breaker got the injection incident: %s", r.body)
		}
	}
}

func bodies(rs []awRequest) string {
	var b strings.Builder
	for _, r := range rs {
		b.Write(r.body)
		b.WriteByte('\n')
	}
	return b.String()
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"strings"
	"testing"
	"time"

	"github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector/internal/metadata"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
)

func TestDefaultConfigIsValid(t *testing.T) {
	if err := createDefaultConfig().(*Config).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestTunedConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	if err := testutil.LoadConfig(t, metadata.Type, "tuned", cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.EvaluationInterval != 2*time.Second || cfg.Leak.Window != 20*time.Minute || cfg.Leak.MinSlopeMiBPerMinute != 50 ||
		cfg.Leak.MinSteadiness != 0.8 || cfg.KVCache.Threshold != 0.9 || cfg.Latency.Quantile != 0.95 ||
		cfg.Latency.TimeToFirstTokenFloor != 1 || cfg.Joint.Weights.Latency != 0.5 || cfg.RenotifyInterval != 0 ||
		cfg.DrillDown.MaxSpans != 10000 || cfg.DrillDown.MaxProfiles != 256 || cfg.CorrelationHold != 10*time.Second ||
		cfg.Updates.Change != 0.5 || cfg.Updates.MinInterval != time.Minute || cfg.HardwareErrors.ResolveAfter != 24*time.Hour {
		t.Fatalf("%+v", cfg)
	}
	if len(cfg.Rules) != 2 || *cfg.Rules[0].Above != 0.05 || cfg.Rules[0].For != 5*time.Minute ||
		cfg.Rules[0].Attributes["service.name"] != "chat-api" || *cfg.Rules[1].Sigma != 4 {
		t.Fatalf("%+v", cfg.Rules)
	}
}

func TestBadConfigNamesEveryField(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	if err := testutil.LoadConfig(t, metadata.Type, "bad", cfg); err != nil {
		t.Fatal(err)
	}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		"evaluation_interval must be positive",
		"derived.incident_metrics_interval must be positive, got -1s",
		"correlation_hold must not be negative (0 disables it), got -1s",
		"updates.change must not be negative (0 disables updates), got -0.5",
		"updates.min_interval must not be negative, got -1s",
		"hardware_errors.resolve_after must be positive, got 0s",
		"leak.min_steadiness must be in (0, 1]",
		"kv_cache.threshold must be in (0, 1], got 85",
		"latency.quantile must be in (0, 1), got 99",
		"latency.baseline (5m0s) must be longer than latency.window (10m0s)",
		"rules[0].name is required",
		"rules[0] needs exactly one of above, below or sigma, got 2",
		"rules[1] needs exactly one of above, below or sigma, got 0",
		`rules[1].severity must be "warning" or "critical", got "page"`,
		`rules[2].name "twice" is used twice`,
		"rules[2].sigma must be positive",
		`rules[2].quadrant must be one of latency, errors, throughput, saturation, got "cost"`,
		"app_quality.hallucination.threshold must be in (0, 1] (llm.app.hallucination.rate is a fraction), got 12",
		`app_quality.hallucination.severity must be "warning" or "critical", got "page"`,
		"app_quality.embedding_drift.threshold is in standard deviations and must be positive, got 0",
		"app_quality.prompt_injection.for must not be negative, got -1s",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// The default application-quality rules follow the graded response
// matrix; tuning one keeps the others' defaults, and a user rule of the
// same name replaces the default one.
func TestAppQualityRules(t *testing.T) {
	byName := func(rs []RuleConfig) map[string]RuleConfig {
		m := map[string]RuleConfig{}
		for _, r := range rs {
			m[r.Name] = r
		}
		return m
	}
	def := byName(createDefaultConfig().(*Config).effectiveRules())
	h := def[spec.IncidentKindHallucinationRate]
	if h.Above == nil || *h.Above != 0.12 || h.For != 3*time.Minute || h.Severity != spec.SeverityCritical ||
		h.ActionID != spec.ActionCircuitBreak || h.Metric != spec.AppHallucinationRate {
		t.Errorf("hallucination: %+v", h)
	}
	if r := def[spec.IncidentKindRAGRelevanceLow]; r.Below == nil || *r.Below != 0.65 || r.For != 10*time.Minute {
		t.Errorf("rag relevance: %+v", r)
	}
	if r := def[spec.IncidentKindEmbeddingDrift]; r.Sigma == nil || *r.Sigma != 3 || r.For != 5*time.Minute {
		t.Errorf("embedding drift: %+v", r)
	}
	if r := def[spec.IncidentKindPromptInjection]; r.Above == nil || *r.Above != 0.92 || r.For != 0 || r.ActionID != spec.ActionBlockSession {
		t.Errorf("prompt injection: %+v", r)
	}

	cfg := createDefaultConfig().(*Config)
	if err := testutil.LoadConfig(t, metadata.Type, "app_quality", cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	got := byName(cfg.effectiveRules())
	if h := got[spec.IncidentKindHallucinationRate]; *h.Above != 0.2 || h.For != time.Minute || h.ActionID != "page_oncall" ||
		h.Severity != spec.SeverityCritical {
		t.Errorf("tuned hallucination: %+v", h)
	}
	if _, ok := got[spec.IncidentKindOutputInconsistent]; ok {
		t.Error("a disabled default rule still runs")
	}
	if r := got[spec.IncidentKindRAGRelevanceLow]; r.Below == nil || *r.Below != 0.5 || r.Description != "" {
		t.Errorf("the user's rag_relevance_low should replace the default: %+v", r)
	}
	if len(cfg.effectiveRules()) != 4 {
		t.Errorf("%d rules, want the user's one and 3 defaults", len(cfg.effectiveRules()))
	}
}

func TestLongHorizonConfig(t *testing.T) {
	def := createDefaultConfig().(*Config).Leak.LongHorizon
	if !def.Enabled || def.Span != 72*time.Hour || def.MinSlopeMiBPerHour != 40 || def.MinSteadiness != 0.7 {
		t.Fatalf("defaults %+v", def)
	}
	cfg := createDefaultConfig().(*Config)
	if err := testutil.LoadConfig(t, metadata.Type, "tuned", cfg); err != nil {
		t.Fatal(err)
	}
	if lh := cfg.Leak.LongHorizon; !lh.Enabled || lh.Span != 168*time.Hour || lh.MinSlopeMiBPerHour != 20 || lh.MinSteadiness != 0.7 {
		t.Fatalf("tuned %+v", lh)
	}
	cfg = createDefaultConfig().(*Config)
	if err := testutil.LoadConfig(t, metadata.Type, "bad", cfg); err != nil {
		t.Fatal(err)
	}
	err := cfg.Validate()
	for _, want := range []string{
		"leak.long_horizon.span must be a whole number of hours from 30h0m0s",
		"got 20h0m0s",
		"leak.long_horizon.min_slope_mib_per_hour must be positive",
		"leak.long_horizon.min_steadiness must be in (0, 1], got 2",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// Off, its fields are not checked.
	cfg = createDefaultConfig().(*Config)
	cfg.Leak.LongHorizon = LongHorizonConfig{}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

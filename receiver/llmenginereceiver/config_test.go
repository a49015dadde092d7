// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmenginereceiver

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/confmap"

	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver/internal/metadata"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	if err := testutil.LoadConfig(t, metadata.Type, name, cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestInlineTarget(t *testing.T) {
	cfg := loadConfig(t, "")
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	ts := cfg.targets()
	if len(ts) != 1 || ts[0].Endpoint != "http://127.0.0.1:8000/metrics" || cfg.CollectionInterval != 10*time.Second || cfg.MaxBodySize != 16<<20 {
		t.Fatalf("inline target: %+v", ts)
	}
}

func TestFullConfig(t *testing.T) {
	cfg := loadConfig(t, "node")
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	r := &engineReceiver{cfg: cfg}
	ts := cfg.targets()
	if len(ts) != 3 {
		t.Fatalf("%d targets", len(ts))
	}
	if ts[0].Engine != "vllm" || ts[0].ResourceAttributes["k8s.pod.name"] != "vllm-7b-0" {
		t.Errorf("target 0: %+v", ts[0])
	}
	if r.interval(ts[0]) != 15*time.Second || r.timeout(ts[0]) != 3*time.Second {
		t.Errorf("target 0 inherits interval/timeout: %s %s", r.interval(ts[0]), r.timeout(ts[0]))
	}
	if r.interval(ts[1]) != 5*time.Second || r.timeout(ts[1]) != 2*time.Second || ts[1].Model == "" {
		t.Errorf("target 1 overrides: %s %s %q", r.interval(ts[1]), r.timeout(ts[1]), ts[1].Model)
	}
	if v, _ := ts[1].Headers.Get("Authorization"); string(v) != "Bearer s3cret" {
		t.Errorf("headers not read: %q", v)
	}
	if !ts[2].TLS.InsecureSkipVerify || ts[2].Engine != "nim" {
		t.Errorf("target 2: %+v", ts[2])
	}
	if cfg.MaxBodySize != 4<<20 {
		t.Errorf("max_body_size %d", cfg.MaxBodySize)
	}
	if cfg.MaxSeriesPerTarget != 20000 {
		t.Errorf("max_series_per_target %d", cfg.MaxSeriesPerTarget)
	}
}

func TestInvalidConfigsNameTheField(t *testing.T) {
	for name, fields := range map[string][]string{
		"bad_engine": {"targets[0].endpoint", `"ollama"`},
		"no_targets": {"collection_interval", "targets"},
		"duplicate":  {"already scraped"},
		"no_series":  {"max_series_per_target must be positive"},
	} {
		err := confmap.Validate(loadConfig(t, name))
		if err == nil {
			t.Errorf("%s accepted", name)
			continue
		}
		for _, f := range fields {
			if !strings.Contains(err.Error(), f) {
				t.Errorf("%s: %q does not mention %s", name, err, f)
			}
		}
	}
}

func TestTimeoutNeverExceedsInterval(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.CollectionInterval = time.Second
	cfg.Timeout = time.Minute
	r := &engineReceiver{cfg: cfg}
	if d := r.timeout(TargetConfig{}); d != time.Second {
		t.Fatalf("timeout %s exceeds the interval", d)
	}
}

func TestUnknownTargetFieldIsNamed(t *testing.T) {
	err := testutil.LoadConfig(t, metadata.Type, "typo", createDefaultConfig())
	if err == nil || !strings.Contains(err.Error(), `"enigne"`) {
		t.Fatalf("a misspelt target field must be named, got %v", err)
	}
}

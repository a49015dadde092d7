// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package alertwebhookexporter

import (
	"testing"
	"time"

	"github.com/llmops-otel/otelcol-llmops/exporter/alertwebhookexporter/internal/metadata"
	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
)

// TestEveryFieldIsDecoded: every setting written in YAML reaches the
// config (an embedded confighttp.ClientConfig once swallowed all but its
// own fields without an error).
func TestEveryFieldIsDecoded(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	if err := testutil.LoadConfig(t, metadata.Type, "full", cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	c := cfg
	if c.ClientConfig.Endpoint != "https://hooks.example/incidents" || c.ClientConfig.Timeout != 3*time.Second ||
		len(c.ClientConfig.Headers) != 1 || c.ClientConfig.Headers[0].Name != "X-Team" || c.ClientConfig.Headers[0].Value != "gpu-platform" {
		t.Errorf("client %+v", c.ClientConfig)
	}
	if c.Format != FormatJSON || c.BearerToken != "tok" || c.HMACSecret != "k3y" || c.SignatureHeader != "X-Signature-256" ||
		c.MinSeverity != SeverityCritical || c.SeverityMap["critical"] != "page" || c.TraceURLTemplate != "http://tempo/trace/{trace_id}" ||
		c.GeneratorURL != "http://grafana/d/gpu" || c.Node != "node-7" || c.ResendInterval != 30*time.Second ||
		c.FiringTTL != 2*time.Hour || c.MaxFiring != 50 {
		t.Errorf("settings %+v", c)
	}
	if c.RetryConfig.InitialInterval != time.Second || c.RetryConfig.MaxElapsedTime != 0 {
		t.Errorf("retry %+v", c.RetryConfig)
	}
	q := c.QueueConfig.Get()
	if q == nil || q.QueueSize != 77 || q.StorageID == nil || q.StorageID.String() != "file_storage" {
		t.Errorf("queue %+v", q)
	}
	a, ok := c.Actions["gpu_memory_leak"]
	if !ok || a.ClientConfig.Endpoint != "http://drain.internal/drain" || a.Format != FormatSlack || a.MinSeverity != SeverityCritical ||
		len(a.States) != 2 || a.HMACSecret != "d" || a.SignatureHeader != "X-Sig" {
		t.Errorf("action %+v", a)
	}
}

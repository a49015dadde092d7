// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/confmap"

	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver/internal/metadata"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	if err := testutil.LoadConfig(t, metadata.Type, name, cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestDefaultConfig(t *testing.T) {
	cfg := loadConfig(t, "")
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.CollectionInterval != 10*time.Second || cfg.LibraryPath != "libnvidia-ml.so.1" || cfg.ProcRoot != "/proc" ||
		!cfg.XIDEvents || cfg.GPM || cfg.PodResourcesSocket != "" {
		t.Fatalf("unexpected defaults: %+v", cfg)
	}
}

func TestFullConfig(t *testing.T) {
	cfg := loadConfig(t, "node")
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.CollectionInterval != 5*time.Second || cfg.ProcRoot != "/host/proc" || !cfg.GPM ||
		cfg.PodResourcesSocket != "/var/lib/kubelet/pod-resources/kubelet.sock" || cfg.PodResourcesRefreshInterval != 15*time.Second ||
		cfg.InitRetryInterval != 30*time.Second || cfg.WarningInterval != time.Minute {
		t.Fatalf("config not read: %+v", cfg)
	}
	if cfg.Metrics.HwGpuIo.Enabled {
		t.Fatal("metrics section not read")
	}
}

func TestInvalidConfigsNameTheField(t *testing.T) {
	for name, fields := range map[string][]string{
		"bad_proc_root": {"proc_root"},
		"bad_interval":  {"collection_interval", "init_retry_interval"},
	} {
		err := confmap.Validate(loadConfig(t, name))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		for _, f := range fields {
			if !strings.Contains(err.Error(), f) {
				t.Errorf("%s: error %q does not name %s", name, err, f)
			}
		}
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver"

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver/internal/metadata"
)

// Config is the nvml receiver's configuration.
type Config struct {
	scraperhelper.ControllerConfig `mapstructure:",squash"`
	metadata.MetricsBuilderConfig  `mapstructure:",squash"`

	// LibraryPath is the NVML library to load: a bare name is looked up by
	// the dynamic loader, a path is used as is (tests point it at the fake
	// library in tests/fakenvml).
	LibraryPath string `mapstructure:"library_path"`
	// InitRetryInterval is how often initialisation is retried while NVML
	// cannot be loaded (a CPU node, a driver being upgraded).
	InitRetryInterval time.Duration `mapstructure:"init_retry_interval"`
	// ProcRoot is where the host's /proc is visible. A DaemonSet mounts the
	// host's /proc (e.g. at /host/proc) so that GPU processes of other pods
	// can be named and attributed.
	ProcRoot string `mapstructure:"proc_root"`
	// PodResourcesSocket is the kubelet pod-resources socket. When set, GPU
	// processes get k8s.pod.name, k8s.namespace.name and k8s.container.name
	// of the pod the kubelet assigned their GPU to.
	PodResourcesSocket string `mapstructure:"pod_resources_socket"`
	// PodResourcesRefreshInterval bounds how often the kubelet is asked.
	PodResourcesRefreshInterval time.Duration `mapstructure:"pod_resources_refresh_interval"`
	// XIDEvents enables the background NVML event set that counts XID and
	// ECC error events.
	XIDEvents bool `mapstructure:"xid_events"`
	// GPM enables SM, tensor and DRAM activity from NVML GPM samples on GPUs
	// that support them (Hopper and newer).
	GPM bool `mapstructure:"gpm"`
	// WarningInterval rate-limits repeated warnings about one GPU.
	WarningInterval time.Duration `mapstructure:"warning_interval"`
}

// Validate checks the configuration at start; every message names the field.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.CollectionInterval <= 0 {
		errs = append(errs, errors.New("collection_interval must be positive"))
	}
	if cfg.LibraryPath == "" {
		errs = append(errs, errors.New(`library_path must not be empty (default "libnvidia-ml.so.1")`))
	}
	if cfg.InitRetryInterval <= 0 {
		errs = append(errs, errors.New("init_retry_interval must be positive"))
	}
	if cfg.ProcRoot == "" || !filepath.IsAbs(cfg.ProcRoot) {
		errs = append(errs, fmt.Errorf("proc_root must be an absolute path, got %q", cfg.ProcRoot))
	}
	if cfg.PodResourcesSocket != "" && !filepath.IsAbs(cfg.PodResourcesSocket) {
		errs = append(errs, fmt.Errorf("pod_resources_socket must be an absolute path, got %q", cfg.PodResourcesSocket))
	}
	if cfg.PodResourcesRefreshInterval <= 0 {
		errs = append(errs, errors.New("pod_resources_refresh_interval must be positive"))
	}
	if cfg.WarningInterval < 0 {
		errs = append(errs, errors.New("warning_interval must not be negative"))
	}
	return errors.Join(errs...)
}

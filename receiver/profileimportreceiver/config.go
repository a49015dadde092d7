// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package profileimportreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver"

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
)

// After-import actions.
const (
	AfterImportKeep   = "keep"
	AfterImportDelete = "delete"
	AfterImportMoveTo = "move_to"
)

// maxParseWorkers bounds parse_workers: past a few cores the builder, which
// takes the events in file order on one goroutine, is the bottleneck.
const maxParseWorkers = 16

// Config is the profileimport receiver's configuration.
type Config struct {
	// Include are glob patterns of trace files (e.g. vLLM's
	// VLLM_TORCH_PROFILER_DIR/*.pt.trace.json.gz). Exclude removes matches.
	// A match is imported only if it lies, symbolic links followed, inside
	// its pattern's watched directory: the static prefix before the first
	// wildcard, resolved once when it first exists (see confine.go and the
	// README); a link to outside is refused, not opened.
	Include []string `mapstructure:"include"`
	Exclude []string `mapstructure:"exclude"`
	// PollInterval is how often the patterns are listed.
	PollInterval time.Duration `mapstructure:"poll_interval"`
	// SettleTime: a file is imported once its size and modification time
	// have not changed for this long (Kineto writes `<name>.tmp` and renames
	// it; other writers do not).
	SettleTime time.Duration `mapstructure:"settle_time"`
	// Storage names a storage extension (e.g. file_storage) that remembers
	// what was imported across restarts. Without it, a restart re-imports.
	Storage *component.ID `mapstructure:"storage"`
	// AfterImport is "keep" (default), "delete", or "move_to <dir>".
	AfterImport string `mapstructure:"after_import"`
	// MaxFileSize refuses larger files (on disk); MaxDecompressedSize stops
	// reading a compressed file that expands beyond it (a gzip bomb).
	MaxFileSize         int64 `mapstructure:"max_file_size"`
	MaxDecompressedSize int64 `mapstructure:"max_decompressed_size"`
	// MaxConcurrent bounds simultaneous imports.
	MaxConcurrent int `mapstructure:"max_concurrent"`
	// ParseWorkers is how many goroutines parse one Kineto trace's events
	// (1: one; traces under 4 MB always use one). An import uses about
	// this many cores while it parses.
	ParseWorkers int `mapstructure:"parse_workers"`

	// What is kept of a trace.
	MinDuration      time.Duration `mapstructure:"min_duration"`
	FoldPythonFrames bool          `mapstructure:"fold_python_frames"`
	SpanBudget       int           `mapstructure:"span_budget"`
	LeakSuspects     int           `mapstructure:"leak_suspects"`
	MinLeakBytes     int64         `mapstructure:"min_leak_bytes"`
}

// afterImport splits after_import into its action and directory.
func (cfg *Config) afterImport() (action, dir string) {
	action, dir, _ = strings.Cut(strings.TrimSpace(cfg.AfterImport), " ")
	return action, strings.TrimSpace(dir)
}

// Validate checks the configuration at start; messages name the field.
func (cfg *Config) Validate() error {
	var errs []error
	if len(cfg.Include) == 0 {
		errs = append(errs, errors.New("include: at least one glob pattern is required (e.g. /var/log/vllm-profiles/*.pt.trace.json.gz)"))
	}
	for i, p := range append(append([]string(nil), cfg.Include...), cfg.Exclude...) {
		if _, err := filepath.Match(p, ""); err != nil {
			field := fmt.Sprintf("include[%d]", i)
			if i >= len(cfg.Include) {
				field = fmt.Sprintf("exclude[%d]", i-len(cfg.Include))
			}
			errs = append(errs, fmt.Errorf("%s: bad pattern %q: %w", field, p, err))
		}
	}
	if cfg.PollInterval <= 0 {
		errs = append(errs, errors.New("poll_interval must be positive"))
	}
	if cfg.SettleTime < 0 {
		errs = append(errs, errors.New("settle_time must not be negative"))
	}
	switch action, dir := cfg.afterImport(); action {
	case AfterImportKeep, AfterImportDelete:
		if dir != "" {
			errs = append(errs, fmt.Errorf("after_import: %q takes no directory", action))
		}
	case AfterImportMoveTo:
		if dir == "" || !filepath.IsAbs(dir) {
			errs = append(errs, fmt.Errorf("after_import: move_to needs an absolute directory, e.g. \"move_to /var/log/profiles/imported\", got %q", cfg.AfterImport))
		}
	default:
		errs = append(errs, fmt.Errorf("after_import must be keep, delete or \"move_to <dir>\", got %q", cfg.AfterImport))
	}
	if cfg.MaxFileSize <= 0 {
		errs = append(errs, errors.New("max_file_size must be positive"))
	}
	if cfg.MaxDecompressedSize <= 0 {
		errs = append(errs, errors.New("max_decompressed_size must be positive"))
	}
	if cfg.MaxConcurrent < 1 {
		errs = append(errs, errors.New("max_concurrent must be at least 1"))
	}
	if cfg.ParseWorkers < 1 || cfg.ParseWorkers > maxParseWorkers {
		errs = append(errs, fmt.Errorf("parse_workers must be between 1 and %d (got %d)", maxParseWorkers, cfg.ParseWorkers))
	}
	if cfg.SpanBudget < 1 {
		errs = append(errs, errors.New("span_budget must be at least 1"))
	}
	if cfg.LeakSuspects < 0 || cfg.MinLeakBytes < 0 || cfg.MinDuration < 0 {
		errs = append(errs, errors.New("leak_suspects, min_leak_bytes and min_duration must not be negative"))
	}
	return errors.Join(errs...)
}

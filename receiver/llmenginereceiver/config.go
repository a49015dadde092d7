// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmenginereceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver"

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver/internal/metadata"
)

// EngineAuto asks the receiver to detect the engine from the metric names.
const EngineAuto = "auto"

var knownEngines = []string{EngineAuto, spec.EngineVLLM, spec.EngineTGI, spec.EngineSGLang, spec.EngineTRTLLM,
	spec.EngineTriton, spec.EngineNIM, spec.EngineLlamaCpp, spec.EngineCustom}

// TargetConfig is one engine endpoint to scrape.
type TargetConfig struct {
	// Endpoint (the full URL of the metrics endpoint, e.g.
	// http://127.0.0.1:8000/metrics or NIM's http://…/v1/metrics), TLS,
	// headers, auth and an optional per-target timeout.
	confighttp.ClientConfig `mapstructure:",squash"`
	// Engine is one of vllm, tgi, sglang, trtllm, triton, nim, llamacpp,
	// custom, or auto (the default): detected from the metric names.
	Engine string `mapstructure:"engine"`
	// Model overrides the detected model (gen_ai.request.model).
	Model string `mapstructure:"model"`
	// CollectionInterval overrides the receiver's collection_interval.
	CollectionInterval time.Duration `mapstructure:"collection_interval"`
	// ResourceAttributes are added to the target's resource.
	ResourceAttributes map[string]string `mapstructure:"resource_attributes"`
}

// Config is the llmengine receiver's configuration.
type Config struct {
	// collection_interval, initial_delay and timeout for every target.
	scraperhelper.ControllerConfig `mapstructure:",squash"`
	metadata.MetricsBuilderConfig  `mapstructure:",squash"`

	// Targets to scrape.
	Targets []TargetConfig `mapstructure:"targets"`

	// Endpoint, Engine and Model describe a single target inline. They make
	// the receiver usable under receiver_creator, which fills `endpoint`
	// from the discovered pod port.
	Endpoint string `mapstructure:"endpoint"`
	Engine   string `mapstructure:"engine"`
	Model    string `mapstructure:"model"`

	// MaxBodySize cuts off a response larger than this many bytes: the
	// scrape fails rather than exhausting the agent's memory.
	MaxBodySize int64 `mapstructure:"max_body_size"`
	// WarningInterval rate-limits the warnings about one target.
	WarningInterval time.Duration `mapstructure:"warning_interval"`
	// MaxSeriesPerTarget bounds the cumulative series (counters, histograms,
	// summaries) whose start time and last value are kept per target, for
	// start times and reset detection. Series beyond it are still emitted,
	// without that state, and counted in llmengine_series_untracked.
	MaxSeriesPerTarget int `mapstructure:"max_series_per_target"`
}

// targets returns the configured targets, with the inline one first.
func (cfg *Config) targets() []TargetConfig {
	out := make([]TargetConfig, 0, len(cfg.Targets)+1)
	if cfg.Endpoint != "" {
		out = append(out, TargetConfig{ClientConfig: newClientConfig(cfg.Endpoint), Engine: cfg.Engine, Model: cfg.Model})
	}
	return append(out, cfg.Targets...)
}

// targetFields are the keys a target accepts besides confighttp's.
type targetFields struct {
	Engine             string            `mapstructure:"engine"`
	Model              string            `mapstructure:"model"`
	CollectionInterval time.Duration     `mapstructure:"collection_interval"`
	ResourceAttributes map[string]string `mapstructure:"resource_attributes"`
}

// Unmarshal reads a target. confighttp.ClientConfig has its own Unmarshal,
// which the embedding would otherwise promote, silently dropping this
// type's fields; and since both halves must ignore each other's keys, keys
// that belong to neither are rejected here by name.
func (t *TargetConfig) Unmarshal(conf *confmap.Conf) error {
	if reflect.ValueOf(t.ClientConfig).IsZero() {
		t.ClientConfig = confighttp.NewDefaultClientConfig()
	}
	if err := t.ClientConfig.Unmarshal(conf); err != nil {
		return err
	}
	own := targetFields{Engine: t.Engine, Model: t.Model, CollectionInterval: t.CollectionInterval, ResourceAttributes: t.ResourceAttributes}
	if err := conf.Unmarshal(&own, confmap.WithIgnoreUnused()); err != nil {
		return err
	}
	t.Engine, t.Model, t.CollectionInterval, t.ResourceAttributes = own.Engine, own.Model, own.CollectionInterval, own.ResourceAttributes
	known := map[string]bool{}
	for _, typ := range []reflect.Type{reflect.TypeOf(confighttp.ClientConfig{}), reflect.TypeOf(targetFields{})} {
		for i := 0; i < typ.NumField(); i++ {
			if name, _, _ := strings.Cut(typ.Field(i).Tag.Get("mapstructure"), ","); name != "" {
				known[name] = true
			}
		}
	}
	for key := range conf.ToStringMap() {
		if !known[key] {
			return fmt.Errorf("unknown target field %q", key)
		}
	}
	return nil
}

func newClientConfig(endpoint string) confighttp.ClientConfig {
	c := confighttp.NewDefaultClientConfig()
	c.Endpoint = endpoint
	return c
}

// Validate checks the configuration at start; messages name the field.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.CollectionInterval <= 0 {
		errs = append(errs, errors.New("collection_interval must be positive"))
	}
	if cfg.Timeout < 0 {
		errs = append(errs, errors.New("timeout must not be negative"))
	}
	if cfg.MaxBodySize <= 0 {
		errs = append(errs, errors.New("max_body_size must be positive"))
	}
	if cfg.WarningInterval < 0 {
		errs = append(errs, errors.New("warning_interval must not be negative"))
	}
	if cfg.MaxSeriesPerTarget <= 0 {
		errs = append(errs, fmt.Errorf("max_series_per_target must be positive (default %d)", defaultMaxSeriesPerTarget))
	}
	if cfg.Endpoint == "" && (cfg.Engine != "" || cfg.Model != "") {
		errs = append(errs, errors.New("engine and model at the receiver level describe the inline target and need endpoint"))
	}
	if cfg.Endpoint != "" {
		errs = append(errs, validateTarget("endpoint", TargetConfig{Engine: cfg.Engine}, cfg.Endpoint))
	}
	targets := cfg.targets()
	if len(targets) == 0 {
		errs = append(errs, errors.New("targets: at least one target (or endpoint) is required"))
	}
	seen := map[string]string{}
	for i, t := range cfg.Targets {
		field := fmt.Sprintf("targets[%d]", i)
		errs = append(errs, validateTarget(field+".endpoint", t, t.Endpoint))
		if t.CollectionInterval < 0 {
			errs = append(errs, fmt.Errorf("%s.collection_interval must not be negative", field))
		}
		if t.Timeout < 0 {
			errs = append(errs, fmt.Errorf("%s.timeout must not be negative", field))
		}
	}
	for i, t := range targets {
		if prev, dup := seen[t.Endpoint]; dup && t.Endpoint != "" {
			errs = append(errs, fmt.Errorf("target %d: endpoint %q is already scraped by %s", i, t.Endpoint, prev))
		}
		seen[t.Endpoint] = fmt.Sprintf("target %d", i)
	}
	return errors.Join(errs...)
}

func validateTarget(field string, t TargetConfig, endpoint string) error {
	var errs []error
	u, err := url.Parse(endpoint)
	switch {
	case endpoint == "":
		errs = append(errs, fmt.Errorf("%s is required (the full URL of the metrics endpoint, e.g. http://127.0.0.1:8000/metrics)", field))
	case err != nil:
		errs = append(errs, fmt.Errorf("%s %q is not a URL: %w", field, endpoint, err))
	case u.Scheme != "http" && u.Scheme != "https":
		errs = append(errs, fmt.Errorf("%s %q must start with http:// or https://", field, endpoint))
	case u.Host == "":
		errs = append(errs, fmt.Errorf("%s %q has no host", field, endpoint))
	}
	if t.Engine != "" && !slices.Contains(knownEngines, t.Engine) {
		errs = append(errs, fmt.Errorf("engine of %s: %q is not one of %v", field, t.Engine, knownEngines))
	}
	return errors.Join(errs...)
}

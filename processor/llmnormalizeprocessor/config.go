// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor // import "github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor"

import (
	"errors"
	"fmt"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// Unmapped metric policies.
const (
	UnmappedKeep = "keep"
	UnmappedDrop = "drop"
)

// Config is the llmnormalize processor's configuration.
type Config struct {
	// UnmappedMetrics says what happens to an engine's metrics that have
	// no unified counterpart: keep (default, under their own names) or drop.
	// Metrics that do not come from an engine (nvml, applications) are
	// never dropped.
	UnmappedMetrics string `mapstructure:"unmapped_metrics"`
	// Custom maps a home-grown engine's metrics onto unified ones.
	Custom []CustomMapping `mapstructure:"custom"`
	// TraceIDAttributes are span attributes that may carry a trace id in
	// another form (AWS X-Ray, upper-case hex as PyTorch writes it); the
	// normalised W3C id is written to llm.link.trace_id.
	TraceIDAttributes []string `mapstructure:"trace_id_attributes"`
	// KVCacheModels gives the KV geometry of models the built-in table
	// (spec.KnownKVGeometry) does not know, or overrides it, so the KV
	// cache's capacity can be told in bytes.
	KVCacheModels []KVCacheModel `mapstructure:"kv_cache_models"`
}

// KVCacheModel is one model's KV geometry: what one token costs in every
// layer's KV cache.
type KVCacheModel struct {
	// Model is the name the engine serves it under (gen_ai.request.model).
	Model   string `mapstructure:"model"`
	Layers  int    `mapstructure:"layers"`
	KVHeads int    `mapstructure:"kv_heads"`
	HeadDim int    `mapstructure:"head_dim"`
	// Dtype is the model's dtype (the cache's when the engine says auto):
	// bf16 (default), fp16, fp32, fp8.
	Dtype string `mapstructure:"dtype"`
}

func (m KVCacheModel) geometry() (spec.KVGeometry, error) {
	dtype := m.Dtype
	if dtype == "" {
		dtype = "bf16"
	}
	b, ok := spec.KVDtypeBytes(dtype)
	if !ok || b == 0 {
		return spec.KVGeometry{}, fmt.Errorf("dtype %q is not one of bf16, fp16, fp32, fp8", m.Dtype)
	}
	g := spec.KVGeometry{Layers: m.Layers, KVHeads: m.KVHeads, HeadDim: m.HeadDim, DtypeBytes: b}
	return g, g.Validate()
}

// CustomMapping is one user-defined mapping; see spec.Mapping.
type CustomMapping struct {
	// Engine is the llm.engine.name of the resources it applies to
	// (default "custom", what llmengine reports for an unknown engine).
	Engine     string            `mapstructure:"engine"`
	Source     string            `mapstructure:"source"`
	SourceType string            `mapstructure:"source_type"`
	SourceUnit string            `mapstructure:"source_unit"`
	Target     string            `mapstructure:"target"`
	Match      map[string]string `mapstructure:"match"`
	Labels     map[string]string `mapstructure:"labels"`
	Set        map[string]string `mapstructure:"set"`
}

func (c CustomMapping) mapping() spec.Mapping {
	engine := c.Engine
	if engine == "" {
		engine = spec.EngineCustom
	}
	return spec.Mapping{Engine: engine, Source: c.Source, SourceType: c.SourceType, SourceUnit: c.SourceUnit,
		Target: c.Target, Match: c.Match, Labels: c.Labels, Set: c.Set}
}

// Validate refuses, at start, any mapping that would produce a point of the
// wrong type or unit; messages name the entry.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.UnmappedMetrics != UnmappedKeep && cfg.UnmappedMetrics != UnmappedDrop {
		errs = append(errs, fmt.Errorf("unmapped_metrics must be %q or %q, got %q", UnmappedKeep, UnmappedDrop, cfg.UnmappedMetrics))
	}
	for i, c := range cfg.Custom {
		if err := c.mapping().Validate(); err != nil {
			errs = append(errs, fmt.Errorf("custom[%d]: %w", i, err))
		}
	}
	seen := map[string]bool{}
	for i, m := range cfg.KVCacheModels {
		if m.Model == "" {
			errs = append(errs, fmt.Errorf("kv_cache_models[%d].model is empty: name the model as the engine serves it", i))
		} else if seen[m.Model] {
			errs = append(errs, fmt.Errorf("kv_cache_models[%d]: model %q is listed twice", i, m.Model))
		}
		seen[m.Model] = true
		if _, err := m.geometry(); err != nil {
			errs = append(errs, fmt.Errorf("kv_cache_models[%d] (%s): %w", i, m.Model, err))
		}
	}
	for i, a := range cfg.TraceIDAttributes {
		if a == "" {
			errs = append(errs, fmt.Errorf("trace_id_attributes[%d] is empty", i))
		}
	}
	return errors.Join(errs...)
}

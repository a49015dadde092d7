// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import (
	"fmt"
	"strings"
)

// Values of AttrEngineKvCacheFragmentationMethod.
const (
	// KVFragmentationMeasured: the engine reports the tokens it holds.
	KVFragmentationMeasured = "measured"
	// KVFragmentationEstimated: the engine reports blocks only. Each
	// running request's last block is partly filled; with lengths spread
	// evenly over the block size, (block size − 1)/2 of its slots are
	// empty on average. Sharing (prefix caching) and blocks held for
	// preempted requests are not in the estimate.
	KVFragmentationEstimated = "estimated"
)

// KVGeometry is what a model's KV cache costs per token: every layer keeps
// a key and a value vector of head_dim for each KV head.
type KVGeometry struct {
	Layers  int
	KVHeads int
	HeadDim int
	// DtypeBytes is the size of one element when the engine's cache dtype
	// is "auto" (the model's own dtype).
	DtypeBytes float64
}

// BytesPerToken is 2 (key and value) · layers · KV heads · head dim ·
// bytes per element; dtypeBytes ≤ 0 means the geometry's own dtype.
func (g KVGeometry) BytesPerToken(dtypeBytes float64) float64 {
	if dtypeBytes <= 0 {
		dtypeBytes = g.DtypeBytes
	}
	return 2 * float64(g.Layers) * float64(g.KVHeads) * float64(g.HeadDim) * dtypeBytes
}

// Validate refuses a geometry that cannot describe a model.
func (g KVGeometry) Validate() error {
	var bad []string
	if g.Layers <= 0 {
		bad = append(bad, "layers")
	}
	if g.KVHeads <= 0 {
		bad = append(bad, "kv_heads")
	}
	if g.HeadDim <= 0 {
		bad = append(bad, "head_dim")
	}
	if g.DtypeBytes <= 0 {
		bad = append(bad, "dtype")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s must be positive", strings.Join(bad, ", "))
	}
	return nil
}

// KVDtypeBytes is the element size of a KV-cache dtype as engines name it
// (vLLM cache_dtype, PyTorch dtypes). "auto" and "" are the model's dtype:
// ok is true with 0 bytes, for BytesPerToken to use the geometry's.
func KVDtypeBytes(dtype string) (bytes float64, ok bool) {
	switch d := strings.ToLower(strings.TrimPrefix(dtype, "torch.")); {
	case d == "" || d == "auto":
		return 0, true
	case strings.HasPrefix(d, "fp8"), strings.HasPrefix(d, "float8"), d == "int8", d == "uint8":
		return 1, true
	case d == "fp16", d == "float16", d == "half", d == "bf16", d == "bfloat16":
		return 2, true
	case d == "fp32", d == "float32", d == "float":
		return 4, true
	}
	return 0, false
}

// knownGeometries are the KV geometries of common open models, from their
// published configurations (num_hidden_layers, num_key_value_heads, and
// head_dim or hidden_size / num_attention_heads). Names are matched on the
// part after the last "/", case-insensitively.
var knownGeometries = []struct {
	names []string
	geo   KVGeometry
}{
	{[]string{"opt-125m"}, KVGeometry{Layers: 12, KVHeads: 12, HeadDim: 64, DtypeBytes: 2}},
	{[]string{"llama-2-7b-hf", "llama-2-7b-chat-hf"}, KVGeometry{Layers: 32, KVHeads: 32, HeadDim: 128, DtypeBytes: 2}},
	{[]string{"meta-llama-3-8b", "meta-llama-3-8b-instruct", "llama-3.1-8b", "llama-3.1-8b-instruct", "meta-llama-3.1-8b-instruct"},
		KVGeometry{Layers: 32, KVHeads: 8, HeadDim: 128, DtypeBytes: 2}},
	{[]string{"meta-llama-3-70b", "meta-llama-3-70b-instruct", "llama-3.1-70b", "llama-3.1-70b-instruct", "llama-3.3-70b-instruct"},
		KVGeometry{Layers: 80, KVHeads: 8, HeadDim: 128, DtypeBytes: 2}},
	{[]string{"mistral-7b-v0.1", "mistral-7b-instruct-v0.2", "mistral-7b-instruct-v0.3"}, KVGeometry{Layers: 32, KVHeads: 8, HeadDim: 128, DtypeBytes: 2}},
	{[]string{"qwen2.5-7b", "qwen2.5-7b-instruct"}, KVGeometry{Layers: 28, KVHeads: 4, HeadDim: 128, DtypeBytes: 2}},
	{[]string{"qwen2.5-72b", "qwen2.5-72b-instruct"}, KVGeometry{Layers: 80, KVHeads: 8, HeadDim: 128, DtypeBytes: 2}},
	{[]string{"qwen3-8b"}, KVGeometry{Layers: 36, KVHeads: 8, HeadDim: 128, DtypeBytes: 2}},
}

// KnownKVGeometry returns the built-in geometry of a model, by the name an
// engine serves it under ("meta-llama/Llama-3.1-8B-Instruct").
func KnownKVGeometry(model string) (KVGeometry, bool) {
	base := strings.ToLower(model[strings.LastIndexByte(model, '/')+1:])
	for _, k := range knownGeometries {
		for _, n := range k.names {
			if n == base {
				return k.geo, true
			}
		}
	}
	return KVGeometry{}, false
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import "testing"

func TestKVBytesPerToken(t *testing.T) {
	g, ok := KnownKVGeometry("meta-llama/Llama-3.1-8B-Instruct")
	if !ok {
		t.Fatal("Llama-3.1-8B-Instruct is not known")
	}
	// 2 · 32 layers · 8 KV heads · 128 · 2 bytes = 128 KiB per token.
	if got := g.BytesPerToken(0); got != 131072 {
		t.Errorf("bytes per token %v, want 131072", got)
	}
	fp8, _ := KVDtypeBytes("fp8_e4m3")
	if got := g.BytesPerToken(fp8); got != 65536 {
		t.Errorf("fp8 cache: bytes per token %v, want 65536", got)
	}
	opt, ok := KnownKVGeometry("facebook/opt-125m")
	if !ok || opt.BytesPerToken(0) != 2*12*12*64*2 {
		t.Errorf("opt-125m: %+v %v", opt, ok)
	}
	if _, ok := KnownKVGeometry("acme/secret-model"); ok {
		t.Error("an unknown model has a geometry")
	}
}

func TestKVDtypeBytes(t *testing.T) {
	for d, want := range map[string]float64{"auto": 0, "": 0, "fp8": 1, "fp8_e5m2": 1, "bfloat16": 2, "torch.float16": 2, "fp32": 4} {
		if got, ok := KVDtypeBytes(d); !ok || got != want {
			t.Errorf("%q: %v %v, want %v", d, got, ok, want)
		}
	}
	if _, ok := KVDtypeBytes("int4_awq"); ok {
		t.Error("an unknown dtype has a size")
	}
}

func TestKVGeometryValidate(t *testing.T) {
	if err := (KVGeometry{Layers: 1, KVHeads: 1, HeadDim: 1, DtypeBytes: 2}).Validate(); err != nil {
		t.Error(err)
	}
	if err := (KVGeometry{Layers: 0, KVHeads: 1, HeadDim: 0, DtypeBytes: 2}).Validate(); err == nil || err.Error() != "layers, head_dim must be positive" {
		t.Errorf("got %v", err)
	}
}

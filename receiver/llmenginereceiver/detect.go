// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmenginereceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver"

import (
	"net/url"
	"strings"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// detectEngine names the engine whose metrics these are, or "" when none is
// recognised. endpoint helps with NIM, whose names carry no prefix.
func detectEngine(names []string, endpoint string) string {
	votes := map[string]int{}
	nim := 0
	for _, n := range names {
		if e := spec.EngineForMetricName(n); e != "" {
			votes[e]++
		}
		if spec.IsNIMMetricName(n) {
			nim++
		}
	}
	// A Triton server running the TensorRT-LLM backend exposes both
	// nv_inference_* and nv_trt_llm_*: it is Triton either way. TensorRT-LLM's
	// own server (trtllm-serve) wins over Triton's generic names when both
	// appear, because its metrics are the engine's.
	best, bestVotes := "", 0
	for _, p := range spec.EnginePrefixes() {
		if v := votes[p.Engine]; v > bestVotes {
			best, bestVotes = p.Engine, v
		}
	}
	if best != "" {
		return best
	}
	if nim > 0 {
		if u, err := url.Parse(endpoint); err == nil && strings.HasSuffix(u.Path, "/v1/metrics") || nim >= 3 {
			return spec.EngineNIM
		}
	}
	return ""
}

// namesFingerprint summarises a scrape's family names, so that a change of
// names (an engine upgrade renaming its metrics) triggers re-detection
// without keeping the names.
func namesFingerprint(names []string) uint64 {
	var x uint64
	for _, n := range names {
		h := uint64(14695981039346656037)
		for i := 0; i < len(n); i++ {
			h ^= uint64(n[i])
			h *= 1099511628211
		}
		x ^= h
	}
	return x ^ uint64(len(names))
}

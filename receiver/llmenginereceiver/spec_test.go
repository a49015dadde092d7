// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmenginereceiver

import (
	"testing"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver/internal/metadata"
)

// The receiver's own metrics are unified metrics; everything else it emits
// is engine-native by design.
func TestOwnMetricsFollowTheSpec(t *testing.T) {
	mbc := metadata.NewDefaultMetricsBuilderConfig()
	if !mbc.Metrics.LlmEngineUp.Enabled || !mbc.Metrics.LlmEngineScrapeDuration.Enabled {
		t.Fatal("own metrics must be on by default")
	}
	for name, unit := range map[string]string{spec.EngineUp: "1", spec.EngineScrapeDuration: "s"} {
		m, ok := spec.LookupMetric(name)
		if !ok || m.Unit != unit || m.Instrument != spec.Gauge {
			t.Errorf("%s: spec has %+v", name, m)
		}
	}
}

func TestDetectEngine(t *testing.T) {
	for _, tc := range []struct {
		names    []string
		endpoint string
		want     string
	}{
		{[]string{"vllm:num_requests_running", "vllm:gpu_cache_usage_perc", "process_cpu_seconds_total"}, "http://h/metrics", "vllm"},
		{[]string{"ray_vllm:num_requests_running"}, "http://h/metrics", "vllm"},
		{[]string{"tgi_request_count", "tgi_batch_current_size"}, "http://h/metrics", "tgi"},
		{[]string{"sglang:num_running_reqs"}, "http://h/metrics", "sglang"},
		{[]string{"trtllm_request_success_total"}, "http://h/metrics", "trtllm"},
		{[]string{"nv_inference_request_success", "nv_trt_llm_kv_cache_block_metrics"}, "http://h/metrics", "triton"},
		{[]string{"llamacpp:prompt_tokens_total"}, "http://h/metrics", "llamacpp"},
		{[]string{"num_requests_running", "gpu_cache_usage_perc"}, "http://h/v1/metrics", "nim"},
		{[]string{"num_requests_running", "gpu_cache_usage_perc", "time_to_first_token_seconds"}, "http://h/metrics", "nim"},
		{[]string{"process_cpu_seconds_total", "http_requests_total"}, "http://h/metrics", ""},
	} {
		if got := detectEngine(tc.names, tc.endpoint); got != tc.want {
			t.Errorf("%v at %s: got %q, want %q", tc.names, tc.endpoint, got, tc.want)
		}
	}
}

func TestFingerprintChangesWithNames(t *testing.T) {
	a := namesFingerprint([]string{"vllm:gpu_cache_usage_perc", "vllm:num_requests_running"})
	b := namesFingerprint([]string{"vllm:num_requests_running", "vllm:gpu_cache_usage_perc"})
	c := namesFingerprint([]string{"vllm:kv_cache_usage_perc", "vllm:num_requests_running"})
	if a != b {
		t.Error("fingerprint depends on order")
	}
	if a == c {
		t.Error("a renamed metric left the fingerprint unchanged")
	}
}

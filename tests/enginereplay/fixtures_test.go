// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package enginereplay

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// want describes a metric family a fixture must have.
type want struct {
	name, typ string
	labels    []string // label names every sample carries (besides le)
}

var fixtureWants = map[Engine][]want{
	VLLM: {
		{"vllm:num_requests_running", "gauge", []string{"model_name"}},
		{"vllm:num_requests_waiting", "gauge", []string{"model_name"}},
		{"vllm:gpu_cache_usage_perc", "gauge", []string{"model_name"}},
		{"vllm:kv_cache_usage_perc", "gauge", []string{"model_name"}},
		{"vllm:num_preemptions_total", "counter", []string{"model_name"}},
		{"vllm:prompt_tokens_total", "counter", []string{"model_name"}},
		{"vllm:generation_tokens_total", "counter", []string{"model_name"}},
		{"vllm:time_to_first_token_seconds", "histogram", []string{"model_name"}},
		{"vllm:e2e_request_latency_seconds", "histogram", []string{"model_name"}},
	},
	TGI: {
		{"tgi_request_success", "counter", nil},
		{"tgi_queue_size", "gauge", nil},
		{"tgi_request_inference_duration", "histogram", nil},
		{"tgi_request_skipped_tokens", "summary", nil},
	},
	SGLang: {
		{"sglang:num_running_reqs", "gauge", []string{"model_name"}},
		{"sglang:num_queue_reqs", "gauge", []string{"model_name"}},
		{"sglang:token_usage", "gauge", []string{"model_name"}},
		{"sglang:cache_hit_rate", "gauge", []string{"model_name"}},
		{"sglang:gen_throughput", "gauge", []string{"model_name"}},
		{"sglang:prompt_tokens_total", "counter", []string{"model_name"}},
		{"sglang:generation_tokens_total", "counter", []string{"model_name"}},
		{"sglang:time_to_first_token_seconds", "histogram", []string{"model_name"}},
		{"sglang:inter_token_latency_seconds", "histogram", []string{"model_name"}},
		{"sglang:e2e_request_latency_seconds", "histogram", []string{"model_name"}},
	},
	TRTLLM: {
		{"trtllm_request_success_total", "counter", []string{"model_name", "engine_type", "finished_reason"}},
		{"trtllm_e2e_request_latency_seconds", "histogram", []string{"model_name", "engine_type"}},
		{"trtllm_time_to_first_token_seconds", "histogram", []string{"model_name", "engine_type"}},
		{"trtllm_time_per_output_token_seconds", "histogram", []string{"model_name", "engine_type"}},
		{"trtllm_kv_cache_hit_rate", "gauge", []string{"model_name", "engine_type"}},
		{"trtllm_kv_cache_utilization", "gauge", []string{"model_name", "engine_type"}},
		{"trtllm_num_requests_running", "gauge", []string{"model_name", "engine_type"}},
		{"trtllm_num_requests_waiting", "gauge", []string{"model_name", "engine_type"}},
	},
	Triton: {
		{"nv_inference_request_success", "counter", []string{"model", "version"}},
		{"nv_inference_request_failure", "counter", []string{"model", "version"}},
		{"nv_inference_count", "counter", []string{"model", "version"}},
		{"nv_inference_exec_count", "counter", []string{"model", "version"}},
		{"nv_inference_request_duration_us", "counter", []string{"model", "version"}},
		{"nv_inference_queue_duration_us", "counter", []string{"model", "version"}},
		{"nv_inference_compute_infer_duration_us", "counter", []string{"model", "version"}},
		{"nv_inference_pending_request_count", "gauge", []string{"model", "version"}},
		{"nv_gpu_utilization", "gauge", []string{"gpu_uuid"}},
		{"nv_gpu_memory_used_bytes", "gauge", []string{"gpu_uuid"}},
		{"nv_trt_llm_request_metrics", "gauge", []string{"model", "version", "request_type"}},
		{"nv_trt_llm_kv_cache_block_metrics", "gauge", []string{"model", "version", "kv_cache_block_type"}},
		{"nv_trt_llm_inflight_batcher_metrics", "gauge", []string{"model", "version", "inflight_batcher_specific_metric"}},
		{"nv_trt_llm_general_metrics", "gauge", []string{"model", "version", "general_type"}},
	},
	NIM: {
		{"num_requests_running", "gauge", []string{"model_name"}},
		{"num_requests_waiting", "gauge", []string{"model_name"}},
		{"gpu_cache_usage_perc", "gauge", []string{"model_name"}},
		{"prompt_tokens_total", "counter", []string{"model_name"}},
		{"generation_tokens_total", "counter", []string{"model_name"}},
		{"time_to_first_token_seconds", "histogram", []string{"model_name"}},
		{"time_per_output_token_seconds", "histogram", []string{"model_name"}},
		{"e2e_request_latency_seconds", "histogram", []string{"model_name"}},
		{"request_success_total", "counter", []string{"model_name"}},
	},
	LlamaCpp: {
		{"llamacpp:prompt_tokens_total", "counter", nil},
		{"llamacpp:tokens_predicted_total", "counter", nil},
		{"llamacpp:prompt_tokens_seconds", "gauge", nil},
		{"llamacpp:predicted_tokens_seconds", "gauge", nil},
		{"llamacpp:kv_cache_usage_ratio", "gauge", nil},
		{"llamacpp:kv_cache_tokens", "gauge", nil},
		{"llamacpp:requests_processing", "gauge", nil},
		{"llamacpp:requests_deferred", "gauge", nil},
		{"llamacpp:n_decode_total", "counter", nil},
		{"llamacpp:n_busy_slots_per_decode", "counter", nil},
	},
}

// recorded are the fixtures captured by others and copied unchanged.
var recorded = map[Engine]bool{VLLM: true, TGI: true}

func TestFixturesAreValidExpositions(t *testing.T) {
	for _, e := range Engines() {
		t.Run(string(e), func(t *testing.T) {
			data, err := os.ReadFile(FixturePath(e))
			if err != nil {
				t.Fatal(err)
			}
			probs, x := validateExposition(string(data), false)
			for _, p := range probs {
				if recorded[e] && p == noFinalNewline {
					// The recorded vLLM file lost its last line feed in
					// its source repository; the server adds it back.
					continue
				}
				t.Error(p)
			}
			for _, w := range fixtureWants[e] {
				f := x.family(w.name)
				if f == nil {
					t.Errorf("no family %s", w.name)
					continue
				}
				if f.typ != w.typ {
					t.Errorf("%s is a %s, want %s", w.name, f.typ, w.typ)
				}
				if len(f.samples) == 0 {
					t.Errorf("%s has no samples", w.name)
				}
				for _, s := range f.samples {
					for _, l := range w.labels {
						if _, ok := s.labels[l]; !ok {
							t.Errorf("%s (line %d) lacks label %s", s.name, s.line, l)
						}
					}
				}
			}
			if recorded[e] {
				return
			}
			// Fixtures written by this project: HELP and TYPE everywhere,
			// and a busy server behind them.
			for _, name := range x.order {
				f := x.families[name]
				if !f.help || f.typ == "untyped" {
					t.Errorf("family %s lacks HELP or TYPE", name)
				}
				if len(f.samples) == 0 {
					t.Errorf("family %s has no samples", name)
				}
				if f.typ == "histogram" {
					for _, s := range f.samples {
						if strings.HasSuffix(s.name, "_count") && s.value < 1000 {
							t.Errorf("%s is %v: not a busy server", s.name, s.value)
						}
					}
				}
			}
			if e == LlamaCpp {
				for _, f := range x.families {
					for _, s := range f.samples {
						if len(s.labels) != 0 {
							t.Errorf("llama.cpp has no labels, %s has %v", s.name, s.labels)
						}
					}
				}
			}
		})
	}
}

func TestTritonLabelKeyedGauges(t *testing.T) {
	data, err := os.ReadFile(FixturePath(Triton))
	if err != nil {
		t.Fatal(err)
	}
	_, x := validateExposition(string(data), false)
	for fam, want := range map[string][2]string{
		"nv_trt_llm_request_metrics":        {"request_type", "active context max scheduled waiting"},
		"nv_trt_llm_kv_cache_block_metrics": {"kv_cache_block_type", "fraction free max tokens_per used"},
	} {
		var got []string
		for _, s := range x.family(fam).samples {
			got = append(got, s.labels[want[0]])
		}
		if strings.Join(got, " ") != want[1] {
			t.Errorf("%s %s values %v, want %s", fam, want[0], got, want[1])
		}
	}
	// KV cache block arithmetic holds: used + free = max, fraction = used/max.
	v := map[string]float64{}
	for _, s := range x.family("nv_trt_llm_kv_cache_block_metrics").samples {
		v[s.labels["kv_cache_block_type"]] = s.value
	}
	if v["used"]+v["free"] != v["max"] || abs(v["fraction"]-v["used"]/v["max"]) > 0.001 {
		t.Errorf("inconsistent KV cache blocks %v", v)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// The recorded fixtures are byte-for-byte copies of the shared ones.
func TestRecordedFixturesAreCopies(t *testing.T) {
	for e := range recorded {
		shared := filepath.Join("/work/shared/fixtures/engines", string(e)+".prom")
		want, err := os.ReadFile(shared)
		if err != nil {
			t.Skipf("shared fixtures not available: %v", err)
		}
		got, err := os.ReadFile(FixturePath(e))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s", FixturePath(e), shared)
		}
	}
}

func TestJSONFixtures(t *testing.T) {
	read := func(name string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(packageDir(), "fixtures", name))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return m
	}
	info := read("tgi_info.json")
	for _, k := range []string{"model_id", "model_dtype", "max_total_tokens", "version", "max_input_length", "max_batch_total_tokens", "max_concurrent_requests"} {
		if _, ok := info[k]; !ok {
			t.Errorf("tgi_info.json lacks %s", k)
		}
	}
	props := read("llamacpp_props.json")
	if _, ok := props["model_path"].(string); !ok {
		t.Error("llamacpp_props.json lacks model_path")
	}
	dgs, _ := props["default_generation_settings"].(map[string]any)
	if _, ok := dgs["n_ctx"].(float64); !ok {
		t.Error("llamacpp_props.json lacks default_generation_settings.n_ctx")
	}
	models := read("llamacpp_models.json")
	data, _ := models["data"].([]any)
	if models["object"] != "list" || len(data) != 1 {
		t.Fatalf("llamacpp_models.json: %v", models)
	}
	m0, _ := data[0].(map[string]any)
	if m0["object"] != "model" || m0["id"] == "" {
		t.Errorf("llamacpp_models.json entry: %v", m0)
	}
}

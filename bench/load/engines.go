// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/tests/enginereplay"
)

// The engines of the load: a generated exposition per engine, named as the
// engine names its metrics (the families llmnormalize maps, plus a few it
// passes through unmapped), multiplied out over many models and LoRA
// adapters, ranks, finish reasons and histogram buckets until it holds at
// least seriesTarget series; and a scenario that keeps every counter
// advancing, every histogram observing and every gauge moving, so each
// scrape differs from the last. The label sets are wider than the shipped
// fixtures' (a TGI router, for one, labels nothing by model): they are
// there to give llmnormalize and rootcause real cardinality, not to mimic
// one release of an engine.

const seriesTarget = 10000

// famKind is a family's Prometheus type.
type famKind int

const (
	kindGauge famKind = iota
	kindCounter
	kindHistogram
)

// famSpec is one metric family of a generated engine.
type famSpec struct {
	name string
	kind famKind
	// split multiplies the family's series by one label (finish reasons,
	// error kinds): its name and values.
	splitLabel string
	splitVals  []string
	// buckets are a histogram's upper bounds, +Inf implied.
	buckets []float64
	// What the scenario does with it: a counter's rate per series; a
	// histogram's observation rate and median; a gauge's sine mean,
	// amplitude and period.
	rate, median     float64
	mean, amp, punit float64
}

// engineSpec describes one generated engine.
type engineSpec struct {
	engine enginereplay.Engine
	name   string // as the llmengine receiver's `engine:` spells it
	// modelLabel labels series by model, rankLabel by rank (ranks values
	// 0..ranks-1); fixed labels are added to every series as they are.
	modelLabel, rankLabel string
	ranks                 int
	fixed                 []string // "name=value"
	families              []famSpec
}

var (
	latencyBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	tokenBuckets   = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5}
	e2eBuckets     = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60}
	lengthBuckets  = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000}
	finishReasons  = []string{"stop", "length", "abort", "error"}
)

func engineSpecs() []engineSpec {
	return []engineSpec{
		{
			engine: enginereplay.VLLM, name: spec.EngineVLLM, modelLabel: "model_name", rankLabel: "engine", ranks: 4,
			families: []famSpec{
				{name: "vllm:num_requests_running", kind: kindGauge, mean: 24, amp: 8, punit: 40},
				{name: "vllm:num_requests_waiting", kind: kindGauge, mean: 4, amp: 4, punit: 55},
				{name: "vllm:kv_cache_usage_perc", kind: kindGauge, mean: 0.6, amp: 0.35, punit: 90},
				// The deprecated alias next to its current name: llmnormalize drops it.
				{name: "vllm:gpu_cache_usage_perc", kind: kindGauge, mean: 0.6, amp: 0.35, punit: 90},
				{name: "vllm:prompt_tokens_total", kind: kindCounter, rate: 900},
				{name: "vllm:generation_tokens_total", kind: kindCounter, rate: 300},
				{name: "vllm:prefix_cache_queries_total", kind: kindCounter, rate: 900},
				{name: "vllm:prefix_cache_hits_total", kind: kindCounter, rate: 500},
				{name: "vllm:num_preemptions_total", kind: kindCounter, rate: 0.2},
				{name: "vllm:request_success_total", kind: kindCounter, rate: 2, splitLabel: "finished_reason", splitVals: finishReasons},
				{name: "vllm:time_to_first_token_seconds", kind: kindHistogram, buckets: latencyBuckets, rate: 3, median: 0.12},
				{name: "vllm:inter_token_latency_seconds", kind: kindHistogram, buckets: tokenBuckets, rate: 100, median: 0.03},
				{name: "vllm:request_time_per_output_token_seconds", kind: kindHistogram, buckets: tokenBuckets, rate: 3, median: 0.035},
				{name: "vllm:e2e_request_latency_seconds", kind: kindHistogram, buckets: e2eBuckets, rate: 3, median: 4},
				{name: "vllm:request_queue_time_seconds", kind: kindHistogram, buckets: latencyBuckets, rate: 3, median: 0.02},
				// Unmapped: passed through as the engine names them.
				{name: "vllm:request_prompt_tokens", kind: kindHistogram, buckets: lengthBuckets, rate: 3, median: 300},
				{name: "vllm:request_generation_tokens", kind: kindHistogram, buckets: lengthBuckets, rate: 3, median: 100},
			},
		},
		{
			engine: enginereplay.TGI, name: spec.EngineTGI, modelLabel: "model_name", rankLabel: "shard", ranks: 2,
			families: []famSpec{
				{name: "tgi_batch_current_size", kind: kindGauge, mean: 16, amp: 6, punit: 45},
				{name: "tgi_queue_size", kind: kindGauge, mean: 3, amp: 3, punit: 35},
				{name: "tgi_batch_current_max_tokens", kind: kindGauge, mean: 60000, amp: 30000, punit: 70},
				{name: "tgi_batch_max_total_tokens", kind: kindGauge, mean: 120000},
				{name: "tgi_request_success", kind: kindCounter, rate: 2},
				{name: "tgi_request_failure", kind: kindCounter, rate: 0.05, splitLabel: "err", splitVals: []string{"validation", "generation", "overloaded", "incomplete_generation"}},
				{name: "tgi_request_count", kind: kindCounter, rate: 2},
				{name: "tgi_request_input_length", kind: kindHistogram, buckets: lengthBuckets, rate: 2, median: 400},
				{name: "tgi_request_generated_tokens", kind: kindHistogram, buckets: lengthBuckets, rate: 2, median: 120},
				{name: "tgi_request_duration", kind: kindHistogram, buckets: e2eBuckets, rate: 2, median: 3.5},
				{name: "tgi_request_mean_time_per_token_duration", kind: kindHistogram, buckets: tokenBuckets, rate: 2, median: 0.04},
				{name: "tgi_request_queue_duration", kind: kindHistogram, buckets: latencyBuckets, rate: 2, median: 0.03},
				{name: "tgi_request_inference_duration", kind: kindHistogram, buckets: e2eBuckets, rate: 2, median: 3},
			},
		},
		{
			engine: enginereplay.SGLang, name: spec.EngineSGLang, modelLabel: "model_name", rankLabel: "tp_rank", ranks: 4,
			fixed: []string{"engine_type=unified", "pp_rank=0", "moe_ep_rank=0"},
			families: []famSpec{
				{name: "sglang:num_running_reqs", kind: kindGauge, mean: 20, amp: 10, punit: 50},
				{name: "sglang:num_queue_reqs", kind: kindGauge, mean: 5, amp: 5, punit: 65},
				{name: "sglang:token_usage", kind: kindGauge, mean: 0.55, amp: 0.4, punit: 100},
				{name: "sglang:gen_throughput", kind: kindGauge, mean: 1500, amp: 300, punit: 30},
				{name: "sglang:prompt_tokens_total", kind: kindCounter, rate: 800},
				{name: "sglang:generation_tokens_total", kind: kindCounter, rate: 250},
				{name: "sglang:cached_tokens_total", kind: kindCounter, rate: 400},
				{name: "sglang:num_requests_total", kind: kindCounter, rate: 2},
				{name: "sglang:num_aborted_requests_total", kind: kindCounter, rate: 0.02},
				{name: "sglang:time_to_first_token_seconds", kind: kindHistogram, buckets: latencyBuckets, rate: 2, median: 0.1},
				{name: "sglang:inter_token_latency_seconds", kind: kindHistogram, buckets: tokenBuckets, rate: 80, median: 0.025},
				{name: "sglang:e2e_request_latency_seconds", kind: kindHistogram, buckets: e2eBuckets, rate: 2, median: 3},
				{name: "sglang:queue_time_seconds", kind: kindHistogram, buckets: latencyBuckets, rate: 2, median: 0.015},
			},
		},
		{
			engine: enginereplay.TRTLLM, name: spec.EngineTRTLLM, modelLabel: "model_name", rankLabel: "", ranks: 1,
			fixed: []string{"engine_type=trtllm"},
			families: []famSpec{
				{name: "trtllm_num_requests_running", kind: kindGauge, mean: 30, amp: 10, punit: 40},
				{name: "trtllm_num_requests_waiting", kind: kindGauge, mean: 6, amp: 6, punit: 50},
				{name: "trtllm_kv_cache_utilization", kind: kindGauge, mean: 0.5, amp: 0.45, punit: 110},
				{name: "trtllm_kv_cache_hit_rate", kind: kindGauge, mean: 0.6, amp: 0.2, punit: 80},
				{name: "trtllm_prompt_tokens_total", kind: kindCounter, rate: 1000},
				{name: "trtllm_generation_tokens_total", kind: kindCounter, rate: 350},
				{name: "trtllm_kv_cache_reused_blocks_total", kind: kindCounter, rate: 30},
				{name: "trtllm_kv_cache_missed_blocks_total", kind: kindCounter, rate: 20},
				{name: "trtllm_request_success_total", kind: kindCounter, rate: 3, splitLabel: "finished_reason", splitVals: finishReasons},
				{name: "trtllm_time_to_first_token_seconds", kind: kindHistogram, buckets: latencyBuckets, rate: 3, median: 0.09},
				{name: "trtllm_time_per_output_token_seconds", kind: kindHistogram, buckets: tokenBuckets, rate: 3, median: 0.02},
				{name: "trtllm_e2e_request_latency_seconds", kind: kindHistogram, buckets: e2eBuckets, rate: 3, median: 2.5},
				{name: "trtllm_request_queue_time_seconds", kind: kindHistogram, buckets: latencyBuckets, rate: 3, median: 0.01},
			},
		},
	}
}

// baseModels and adapters make the model label values: each base model
// served bare and with each of its LoRA adapters, as multi-LoRA servers
// report them.
var (
	baseModels = []string{
		"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", "Qwen/Qwen2.5-7B-Instruct",
		"Qwen/Qwen2.5-32B-Instruct", "mistralai/Mistral-7B-Instruct-v0.3", "google/gemma-2-9b-it",
		"deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "microsoft/Phi-3.5-mini-instruct",
	}
	adapters = []string{"sql", "support", "summarize", "legal", "code", "translate", "rag", "json"}
)

func modelName(i int) string {
	b := baseModels[i%len(baseModels)]
	a := i / len(baseModels)
	if a == 0 {
		return b
	}
	return fmt.Sprintf("%s:lora-%s-%d", b, adapters[(a-1)%len(adapters)], (a-1)/len(adapters))
}

// seriesPerCombo is how many series one (model, rank) combination adds.
func (es engineSpec) seriesPerCombo() int {
	n := 0
	for _, f := range es.families {
		per := 1
		if f.kind == kindHistogram {
			per = len(f.buckets) + 1 + 2 // buckets, +Inf, _sum, _count
		}
		if len(f.splitVals) > 0 {
			per *= len(f.splitVals)
		}
		n += per
	}
	return n
}

// models is how many model label values take the engine to seriesTarget.
func (es engineSpec) models() int {
	combos := (seriesTarget + es.seriesPerCombo() - 1) / es.seriesPerCombo()
	return (combos + es.ranks - 1) / es.ranks
}

// generated is one engine's files and size.
type generated struct {
	spec              engineSpec
	fixture, scenario string
	series, bodyBytes int
	models            int
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// generateEngine writes es's exposition and scenario into dir.
func generateEngine(dir string, es engineSpec) (generated, error) {
	models := es.models()
	var labelSets []string
	for m := 0; m < models; m++ {
		for r := 0; r < es.ranks; r++ {
			ls := []string{fmt.Sprintf("%s=%q", es.modelLabel, modelName(m))}
			if es.rankLabel != "" {
				ls = append(ls, fmt.Sprintf("%s=\"%d\"", es.rankLabel, r))
			}
			for _, f := range es.fixed {
				k, v, _ := strings.Cut(f, "=")
				ls = append(ls, fmt.Sprintf("%s=%q", k, v))
			}
			labelSets = append(labelSets, strings.Join(ls, ","))
		}
	}
	var b, sc strings.Builder
	series := 0
	fmt.Fprintf(&sc, "# Generated by bench/load for %s: every series moves.\n", es.name)
	for _, f := range es.families {
		typ := map[famKind]string{kindGauge: "gauge", kindCounter: "counter", kindHistogram: "histogram"}[f.kind]
		fmt.Fprintf(&b, "# HELP %s %s of the load benchmark's %s.\n# TYPE %s %s\n", f.name, typ, es.name, f.name, typ)
		splits := []string{""}
		if len(f.splitVals) > 0 {
			splits = nil
			for _, v := range f.splitVals {
				splits = append(splits, fmt.Sprintf(",%s=%q", f.splitLabel, v))
			}
		}
		for li, ls := range labelSets {
			for _, sp := range splits {
				switch f.kind {
				case kindGauge:
					fmt.Fprintf(&b, "%s{%s%s} %s\n", f.name, ls, sp, fmtNum(f.mean))
					series++
				case kindCounter:
					fmt.Fprintf(&b, "%s{%s%s} %d\n", f.name, ls, sp, 1000+li*7)
					series++
				case kindHistogram:
					for _, le := range f.buckets {
						fmt.Fprintf(&b, "%s_bucket{%s%s,le=\"%s\"} 0\n", f.name, ls, sp, fmtNum(le))
					}
					fmt.Fprintf(&b, "%s_bucket{%s%s,le=\"+Inf\"} 0\n", f.name, ls, sp)
					fmt.Fprintf(&b, "%s_sum{%s%s} 0\n", f.name, ls, sp)
					fmt.Fprintf(&b, "%s_count{%s%s} 0\n", f.name, ls, sp)
					series += len(f.buckets) + 3
				}
			}
		}
		// One rule per family: it matches every series of it.
		switch f.kind {
		case kindGauge:
			if f.amp == 0 {
				break
			}
			fmt.Fprintf(&sc, "gauge %s sine mean=%s amplitude=%s period=%s\n", f.name, fmtNum(f.mean), fmtNum(f.amp), fmtNum(f.punit))
		case kindCounter:
			fmt.Fprintf(&sc, "counter %s rate=%s\n", f.name, fmtNum(f.rate))
		case kindHistogram:
			// Only the first model's histograms observe: the replay server
			// integrates every histogram series over quarter-second slices,
			// which for all of them would cost the load generator most of a
			// core, taken from the agent under test. The others are served
			// unchanged, and cost the agent the same to parse and map.
			fmt.Fprintf(&sc, "histogram %s{%s=%q} rate=%s median=%s\n", f.name, es.modelLabel, modelName(0), fmtNum(f.rate), fmtNum(f.median))
		}
	}
	g := generated{spec: es, series: series, models: models}
	g.fixture = filepath.Join(dir, es.name+".prom")
	g.scenario = filepath.Join(dir, es.name+".scenario")
	g.bodyBytes = b.Len()
	if err := os.WriteFile(g.fixture, []byte(b.String()), 0o600); err != nil {
		return g, err
	}
	if err := os.WriteFile(g.scenario, []byte(sc.String()), 0o600); err != nil {
		return g, err
	}
	return g, nil
}

// engineServer is one running replay server.
type engineServer struct {
	gen generated
	srv *enginereplay.Server
	url string // the metrics URL
}

// startEngines generates and serves every engine on 127.0.0.1.
func startEngines(dir string) ([]*engineServer, error) {
	var out []*engineServer
	for _, es := range engineSpecs() {
		g, err := generateEngine(dir, es)
		if err != nil {
			return out, err
		}
		srv, err := enginereplay.New(enginereplay.Options{Engine: es.engine, Fixture: g.fixture, Scenario: g.scenario})
		if err != nil {
			return out, fmt.Errorf("%s replay server: %w", es.name, err)
		}
		base, err := srv.Start("127.0.0.1:0")
		if err != nil {
			return out, fmt.Errorf("%s replay server: %w", es.name, err)
		}
		out = append(out, &engineServer{gen: g, srv: srv, url: base + enginereplay.MetricsPath(es.engine)})
	}
	return out, nil
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import "testing"

func TestIsKnownMetricAndAttribute(t *testing.T) {
	for _, n := range []string{HwGpuMemoryUsage, EngineUp, EngineScrapeDuration, HwGpuMemoryGrowthRate, ProfileMemoryOutstanding} {
		if !IsKnownMetric(n) {
			t.Errorf("IsKnownMetric(%q) = false", n)
		}
	}
	for _, n := range []string{"vllm:num_requests_running", "DCGM_FI_DEV_GPU_UTIL", "python_gc_objects_collected_total", ""} {
		if IsKnownMetric(n) {
			t.Errorf("IsKnownMetric(%q) = true", n)
		}
	}
	for _, k := range []string{AttrHwID, AttrServiceName, AttrProfileCategory, AttrProfilePythonStack, IncidentKind, IncidentLayerStack, AttrLinkTraceID} {
		if !IsKnownAttribute(k) {
			t.Errorf("IsKnownAttribute(%q) = false", k)
		}
	}
	for _, k := range []string{"model_name", "tp_rank", "llm.profile.nope", ""} {
		if IsKnownAttribute(k) {
			t.Errorf("IsKnownAttribute(%q) = true", k)
		}
	}
}

func TestAttributeTablesNameDefinedAttributes(t *testing.T) {
	for _, tb := range AttributeTables() {
		if len(tb.Attributes) == 0 {
			t.Errorf("%s lists nothing", tb.Title)
		}
		seen := map[string]bool{}
		for _, a := range tb.Attributes {
			if !IsKnownAttribute(a.Name) {
				t.Errorf("%s: %q is not defined", tb.Title, a.Name)
			}
			if seen[a.Name] {
				t.Errorf("%s: %q listed twice", tb.Title, a.Name)
			}
			seen[a.Name] = true
		}
	}
}

func TestEngineDetectionAndNativeNames(t *testing.T) {
	for name, want := range map[string]string{
		"ray_vllm:num_requests_running": EngineVLLM, "vllm:num_requests_running": EngineVLLM,
		"sglang:num_running_reqs": EngineSGLang, "tgi_queue_size": EngineTGI, "trtllm_request_success_total": EngineTRTLLM,
		"nv_trt_llm_kv_cache_block_metrics": EngineTriton, "nv_inference_request_success": EngineTriton,
		"llamacpp:requests_processing": EngineLlamaCpp, "num_requests_running": "", HwGpuMemoryUsage: "",
	} {
		if got := EngineForMetricName(name); got != want {
			t.Errorf("EngineForMetricName(%q) = %q, want %q", name, got, want)
		}
	}
	if !IsNIMMetricName("num_requests_running") || IsNIMMetricName("vllm:num_requests_running") {
		t.Error("IsNIMMetricName")
	}
	for _, m := range Mappings() {
		if !IsEngineNativeMetric(m.Source) {
			t.Errorf("mapping source %q (%s) is not engine-native", m.Source, m.Engine)
		}
		if IsEngineNativeMetric(m.Target) {
			t.Errorf("unified %q is engine-native", m.Target)
		}
	}
	if !IsKeptEngineLabel(EngineSGLang, "tp_rank") || IsKeptEngineLabel(EngineVLLM, "tp_rank") {
		t.Error("IsKeptEngineLabel")
	}
	for e, labels := range keptEngineLabels {
		for _, l := range labels {
			if IsKnownAttribute(l) {
				t.Errorf("kept %s label %q is a spec attribute", e, l)
			}
		}
	}
}

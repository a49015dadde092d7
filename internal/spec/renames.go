// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// A Rename records a unified name that changed in this release, to follow
// the OpenTelemetry semantic conventions. The old name stays an alias for
// one release: llmnormalize renames it when it arrives from outside (an
// older agent over OTLP), and docs/metric-spec.md lists it.
type Rename struct {
	// Attribute is true when Old and New are attribute names; otherwise
	// they are metric names.
	Attribute bool
	Old, New  string
	// Set adds fixed attributes to the renamed points (hw.type=gpu).
	Set map[string]string
	// Unversioned limits the rename to data written before this release:
	// data whose scope and resource carry no schema URL. It is needed where
	// the old name is still in use with another meaning (a point of
	// hw.gpu.memory.utilization with our SchemaURL is the semconv one).
	Unversioned bool
	// Reason says why, citing the semantic-conventions document.
	Reason string
}

// Renames returns this release's renames, in documentation order.
func Renames() []Rename {
	out := make([]Rename, len(renames))
	copy(out, renames)
	return out
}

// LookupRename returns the metric rename whose old name is name.
func LookupRename(name string) (Rename, bool) {
	// By index: ranging by value copied every Rename (reason text
	// included) for every metric llmnormalize sees, ~14% of its time on
	// a vLLM scrape.
	for i := range renames {
		if r := &renames[i]; !r.Attribute && r.Old == name {
			return *r, true
		}
	}
	return Rename{}, false
}

var renames = []Rename{
	{Old: "hw.gpu.memory.utilization", New: HwGpuMemoryControllerUtilization, Unversioned: true,
		Reason: "semconv (docs/hardware/gpu.md) defines hw.gpu.memory.utilization as the fraction of GPU memory in use, so the memory-controller busy ratio (NVML utilization.memory, DCGM_FI_DEV_MEM_COPY_UTIL) it used to carry moves to a name of ours; hw.gpu.memory.utilization now carries usage / limit. Only data without a schema URL is renamed, since the old name stays in use with its semconv meaning."},
	{Old: "hw.gpu.temperature", New: HwGpuTemperature, Set: map[string]string{AttrHwType: "gpu"},
		Reason: "semconv has no GPU temperature metric but a generic hw.temperature (docs/hardware/temperature.md); a GPU's is that metric with hw.type=gpu."},
	{Old: "gen_ai.server.time_per_output_token", New: EngineInterTokenLatency, Unversioned: true,
		Reason: "semconv (gen-ai-metrics.md, now in open-telemetry/semantic-conventions-genai) records gen_ai.server.time_per_output_token once per response, as (duration - time to first token) / (output tokens - 1); the per-token gaps it used to carry (vllm:inter_token_latency_seconds, sglang:inter_token_latency_seconds, NIM's time_per_output_token_seconds) move to a name of ours, and the per-request series (vllm:request_time_per_output_token_seconds and the like) now feed the semconv name."},
	{Attribute: true, Old: AttrHwName, New: AttrHwModel, Unversioned: true,
		Reason: "semconv's GPU metrics (docs/hardware/gpu.md) carry the product name in hw.model (\"descriptive model name\"); hw.name is a short name of the component instance. Renamed on GPU resources and points only."},
}

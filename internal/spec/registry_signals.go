// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import "fmt"

// Where an attribute is set other than on a metric point.
type AttrPlace string

const (
	PlaceResource  AttrPlace = "resource"
	PlaceSpan      AttrPlace = "span"
	PlaceLogRecord AttrPlace = "log record"
)

// AttrTable lists the attributes one producer sets on one kind of record
// other than a metric point (a resource, a span, a log record). Every name
// in it is defined in the attributes table or is an incident field.
type AttrTable struct {
	Producer   string
	Place      AttrPlace
	Title      string
	Intro      string
	Attributes []AttrRef
}

// profileResource is what every profileimport resource carries.
var profileResource = []AttrRef{
	{Name: AttrServiceName, Requirement: Required, Fixed: ProfileServiceName},
	{Name: AttrProfileFile, Requirement: Required},
	{Name: AttrProcessPid, Requirement: ConditionallyRequired},
	{Name: AttrProcessExecutableName, Requirement: Recommended},
	{Name: AttrHostName, Requirement: Recommended},
	{Name: AttrProfileRank, Requirement: ConditionallyRequired},
	{Name: AttrProfileWorldSize, Requirement: ConditionallyRequired},
	{Name: AttrProfileGPUNames, Requirement: Recommended},
}

var attrTables = []AttrTable{
	{Producer: "nvml", Place: PlaceResource, Title: "GPU resources (nvml)",
		Intro: "One resource per GPU or MIG device.",
		Attributes: []AttrRef{
			{Name: AttrHwID, Requirement: Required},
			{Name: AttrHwModel, Requirement: Recommended},
			{Name: AttrHwVendor, Requirement: Recommended},
			{Name: AttrHwDriverVersion, Requirement: Recommended},
			{Name: AttrHwGpuIndex, Requirement: Recommended},
			{Name: AttrHwGpuPciBusID, Requirement: Recommended},
			{Name: AttrHwParent, Requirement: ConditionallyRequired},
			{Name: AttrHwGpuMigGI, Requirement: ConditionallyRequired},
			{Name: AttrHwGpuMigCI, Requirement: ConditionallyRequired},
		}},
	{Producer: "llmengine", Place: PlaceResource, Title: "Engine resources (llmengine)",
		Intro: "One resource per scraped engine target.",
		Attributes: []AttrRef{
			{Name: AttrEngineName, Requirement: Required},
			{Name: AttrEngineTarget, Requirement: Required},
			{Name: AttrGenAIRequestModel, Requirement: ConditionallyRequired},
		}},
	{Producer: "profileimport", Place: PlaceResource, Title: "Profile resources (profileimport)",
		Intro:      "One resource per profiled process (Kineto, Nsight Systems) or per CUDA memory snapshot.",
		Attributes: profileResource},
	{Producer: "profileimport", Place: PlaceSpan, Title: "Profile spans (profileimport)",
		Intro: "A Kineto trace or an Nsight Systems report becomes one trace: a root span (`llm.profile.category` = `profile`) and a span per operator, runtime call, kernel, copy and annotation, nested as they ran.",
		Attributes: []AttrRef{
			{Name: AttrProfileCategory, Requirement: Required},
			{Name: AttrProfileModulePath, Requirement: ConditionallyRequired},
			{Name: AttrProfileDevice, Requirement: ConditionallyRequired},
			{Name: AttrProfileStream, Requirement: ConditionallyRequired},
			{Name: AttrProfileExternalID, Requirement: Recommended},
			{Name: AttrProfileCorrelation, Requirement: Recommended},
			{Name: AttrThreadID, Requirement: Recommended},
			{Name: AttrProfileInputDims, Requirement: Recommended},
			{Name: AttrProfileGrid, Requirement: Recommended},
			{Name: AttrProfileBlock, Requirement: Recommended},
			{Name: AttrProfileCallStack, Requirement: Recommended},
		}},
	{Producer: "profileimport", Place: PlaceLogRecord, Title: "Profile findings (profileimport)",
		Intro: "Log records for what a profile shows: `" + IncidentKindLeakSuspect + "` (memory a model-layer path allocated and did not free) and `" + IncidentKindGPUOOM + "` (a failed allocation in a CUDA memory snapshot). Besides the incident fields below, they carry:",
		Attributes: []AttrRef{
			{Name: AttrProfileModulePath, Requirement: Required},
			{Name: AttrProfileDevice, Requirement: Required},
			{Name: AttrProfileFile, Requirement: Required},
			{Name: AttrProcessPid, Requirement: ConditionallyRequired},
			{Name: AttrProfileOutstandingBytes, Requirement: ConditionallyRequired},
			{Name: AttrProfileOutstandingAllocations, Requirement: ConditionallyRequired},
			{Name: AttrProfileAllocatedBytes, Requirement: ConditionallyRequired},
			{Name: AttrProfileRequestedBytes, Requirement: ConditionallyRequired},
			{Name: AttrProfileDeviceFreeBytes, Requirement: ConditionallyRequired},
			{Name: AttrProfileAllocatorAllocatedBytes, Requirement: ConditionallyRequired},
			{Name: AttrProfileAllocatorReservedBytes, Requirement: ConditionallyRequired},
			{Name: AttrProfileStream, Requirement: ConditionallyRequired},
			{Name: AttrProfilePythonStack, Requirement: Recommended},
			{Name: AttrProfileLeakPattern, Requirement: ConditionallyRequired},
			{Name: AttrProfileLeakForwardFrame, Requirement: ConditionallyRequired},
			{Name: AttrProfileLeakGrowthPerStep, Requirement: ConditionallyRequired},
			{Name: AttrProfileLeakSteps, Requirement: ConditionallyRequired},
		}},
	{Producer: "llmnormalize", Place: PlaceSpan, Title: "Application spans (llmnormalize)",
		Intro: "llmnormalize renames deprecated and vendor GenAI span attributes to current semantic conventions and adds a joinable trace id.",
		Attributes: []AttrRef{
			{Name: AttrGenAIRequestModel, Requirement: ConditionallyRequired},
			{Name: AttrGenAIProviderName, Requirement: ConditionallyRequired},
			{Name: AttrGenAIUsageInputTokens, Requirement: ConditionallyRequired},
			{Name: AttrGenAIUsageOutputTokens, Requirement: ConditionallyRequired},
			{Name: AttrLinkTraceID, Requirement: ConditionallyRequired},
			{Name: AttrGenAIPromptName, Requirement: ConditionallyRequired},
			{Name: AttrAppFallbackTriggered, Requirement: ConditionallyRequired},
			{Name: AttrAppRetrievalDuration, Requirement: ConditionallyRequired},
		}},
}

func init() {
	for _, t := range attrTables {
		for _, a := range t.Attributes {
			if !defined(a.Name) {
				panic(fmt.Sprintf("spec: %s lists attribute %q, which is not defined", t.Title, a.Name))
			}
		}
	}
}

// defined does not use the indexes, which another init fills.
func defined(name string) bool {
	for _, a := range attributes {
		if a.Name == name {
			return true
		}
	}
	_, ok := lookupIncidentField(name)
	return ok
}

// AttributeTables returns where attributes are set outside metric points.
func AttributeTables() []AttrTable {
	out := make([]AttrTable, len(attrTables))
	for i, t := range attrTables {
		t.Attributes = append([]AttrRef(nil), t.Attributes...)
		out[i] = t
	}
	return out
}

// IsKnownMetric reports whether name is a metric this distribution emits:
// a unified metric, one derived by rootcause, or the llmengine receiver's
// own (llm.engine.up, llm.engine.scrape.duration) — all in the registry.
// Engine-native names that llmnormalize passes through under
// unmapped_metrics: keep are not ours and are not known here (see
// IsEngineNativeMetric).
func IsKnownMetric(name string) bool {
	_, ok := metricIndex[name]
	return ok
}

// IsKnownAttribute reports whether key is an attribute this distribution
// sets: on metric points, resources, spans or log records (attributes
// table), or as a field of an incident record.
func IsKnownAttribute(key string) bool {
	if _, ok := attributeIndex[key]; ok {
		return true
	}
	_, ok := lookupIncidentField(key)
	return ok
}

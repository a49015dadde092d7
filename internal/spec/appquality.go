// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// Application quality signals: what an LLM application's own evaluators
// measure about its answers, sent over OTLP (or scraped) as gauges. The
// serving stack can be healthy while these degrade (a model update that
// hallucinates, an index that drifted), and some of them call for an
// automatic response: rootcause's default app_quality rules grade them and
// name the response (incident.action.id), which alertwebhook's action
// hooks carry out.
const (
	AppHallucinationRate    = "llm.app.hallucination.rate"
	AppOutputConsistency    = "llm.app.output.consistency"
	AppRAGRelevance         = "llm.app.rag.relevance"
	AppEmbeddingNorm        = "llm.app.embedding.norm"
	AppPromptInjectionScore = "llm.app.prompt_injection.score"
)

// Incident kinds of the default application-quality rules.
const (
	IncidentKindHallucinationRate  = "hallucination_rate_high"
	IncidentKindOutputInconsistent = "output_consistency_low"
	IncidentKindRAGRelevanceLow    = "rag_relevance_low"
	IncidentKindEmbeddingDrift     = "embedding_drift"
	IncidentKindPromptInjection    = "prompt_injection"
)

// IncidentActionID names the automatic response an incident calls for, for
// machines: alertwebhook's action hooks can be keyed by it as well as by
// the incident's kind. incident.action says the same for people.
const IncidentActionID = "incident.action.id"

// Action ids (incident.action.id) of the graded responses.
const (
	// ActionCircuitBreak: stop sending traffic to the instance (open its
	// circuit breaker) until a person has looked.
	ActionCircuitBreak = "circuit_break"
	// ActionStartQuantizedPipeline: bring up the quantized (cheaper,
	// faster) variant of the model to take load while latency is high.
	ActionStartQuantizedPipeline = "start_quantized_pipeline"
	// ActionBlockSession: refuse further requests of the session that sent
	// the injection attempt.
	ActionBlockSession = "block_session"
	// ActionReindex: check the embedding model and rebuild the retrieval
	// index from the current one.
	ActionReindex = "reindex"
)

// ActionInfo describes one action id, for the docs.
type ActionInfo struct {
	ID, Description string
}

// Actions lists the action ids rootcause's defaults name.
func Actions() []ActionInfo {
	return []ActionInfo{
		{ActionBlockSession, "Refuse further requests of the session that sent a prompt-injection attempt."},
		{ActionCircuitBreak, "Stop routing traffic to the instance (open its circuit breaker) until someone has looked."},
		{ActionReindex, "Check the embedding model, then rebuild the retrieval index with the model in use."},
		{ActionStartQuantizedPipeline, "Start the quantized variant of the model and shift load to it while latency is high."},
	}
}

func actionIDs() []string {
	var out []string
	for _, a := range Actions() {
		out = append(out, a.ID)
	}
	return out
}

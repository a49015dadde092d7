// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

// SourceApp names the table of application quality signals: like
// dcgm-exporter's, not an engine, and recognised on any resource (an
// application sends them over OTLP or is scraped by the prometheus
// receiver). The sources are the spellings in use for these signals:
// snake_case as a Prometheus client or an evaluation script exports them,
// dotted as an OpenTelemetry SDK would, and percentages.
const SourceApp = "application"

func init() {
	const e = SourceApp
	m := func(source, unit, target, note string) Mapping {
		return Mapping{Engine: e, Source: source, SourceType: "gauge", SourceUnit: unit, Target: target, Note: note,
			Labels: map[string]string{"prompt_template_id": AttrGenAIPromptName, "template_id": AttrGenAIPromptName}}
	}
	mappingTables[e] = []Mapping{
		m("hallucination_rate", "1", AppHallucinationRate, ""),
		m("llm.hallucination.rate", "1", AppHallucinationRate, ""),
		m("hallucination_rate_percent", "%", AppHallucinationRate, "a percentage"),
		m("output_consistency", "1", AppOutputConsistency, ""),
		m("response_consistency", "1", AppOutputConsistency, ""),
		m("embedding_cosine_similarity", "1", AppOutputConsistency, "between the answers of successive turns"),
		m("rag_relevance", "1", AppRAGRelevance, ""),
		m("retrieval_relevance", "1", AppRAGRelevance, ""),
		m("rag.top1_relevance", "1", AppRAGRelevance, ""),
		m("embedding_l2_norm", "1", AppEmbeddingNorm, ""),
		m("embedding_norm", "1", AppEmbeddingNorm, ""),
		m("prompt_injection_score", "1", AppPromptInjectionScore, ""),
		m("injection_score", "1", AppPromptInjectionScore, ""),
	}
}

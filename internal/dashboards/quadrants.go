// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"fmt"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// UIDQuadrants is the four golden signals of the inference service.
const UIDQuadrants = "llmops-quadrants"

func quadrants() *board {
	d := newBoard(UIDQuadrants, "LLMOps / Four quadrants",
		"Latency, errors, throughput and saturation of the inference engines and their GPUs, the four quadrants the rootcause connector files incidents under. Dashed lines are the alerting rules' thresholds (distro/prometheus/*.rules.yml).",
		append([]cogVariable{prometheusVar()}, labelVars()...)...)

	d.row("Latency")
	d.add(8, 8, ttftP99())
	d.add(8, 8, tpotP99())
	d.add(8, 8, durationP99())

	d.row("Errors")
	finishedBy := append(append([]string{}, engineBy...), lFinish, lErrorType)
	d.add(8, 8, stacked(graph("Finished requests by outcome",
		"Rate of llm.engine.requests.finished by llm.finish_reason and error.type (engines that report neither show one series).",
		"reqps",
		q(agg("sum", finishedBy, rate(sel(spec.EngineRequestsFinished, engineScope))),
			legend(lEngine, lModel, lFinish, lErrorType)))).Min(0))
	d.add(8, 8, ratio("Error ratio",
		"Share of finished requests that failed: an error.type, or llm.finish_reason=error. 0 while none fail.",
		q(errorRatio(), engineLegend)))
	d.add(8, 8, gpuErrors())

	d.row("Throughput")
	out := agg("sum", engineBy, rate(sel(spec.EngineTokens, engineScope, eq(spec.AttrGenAITokenType, "output"))))
	d.add(12, 8, dashedSeries(graph("Output tokens per second",
		fmt.Sprintf("Rate of llm.engine.tokens (output) per engine and model; the dashed line of the same engine is %g × its peak over %s, the throughput-drop threshold.",
			ThroughputDropFraction, ThroughputPeakWindow),
		"short",
		q(out, engineLegend),
		q(fmt.Sprintf("%g * max_over_time((%s)[%s:])", ThroughputDropFraction, out, ThroughputPeakWindow),
			engineLegend+fmt.Sprintf(" %g × peak", ThroughputDropFraction)),
	), refID(1)).Min(0))
	d.add(12, 8, graph("Finished requests per second",
		"Rate of llm.engine.requests.finished per engine and model, whatever the outcome.",
		"reqps",
		q(agg("sum", engineBy, rate(sel(spec.EngineRequestsFinished, engineScope))), engineLegend)).Min(0))

	d.row("Saturation")
	d.add(8, 8, kvCache())
	d.add(8, 8, gpuMemoryRatio())
	d.add(8, 8, waiting())
	return d
}

// errorRatio is the share of finished requests that failed, per engine and
// model, 0 (not absent) for an engine none of whose requests failed.
func errorRatio() string {
	all := agg("sum", engineBy, rate(sel(spec.EngineRequestsFinished, engineScope)))
	failed := agg("sum", engineBy,
		rate(sel(spec.EngineRequestsFinished, engineScope, notEmpty(spec.AttrErrorType)))+" or "+
			rate(sel(spec.EngineRequestsFinished, engineScope, eq(spec.AttrFinishReason, "error"))))
	return "(" + orZero(failed, engineBy, all) + ") / " + all
}

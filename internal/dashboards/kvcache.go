// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// UIDKVCache is the engines' KV cache and scheduler queue.
const UIDKVCache = "llmops-kv-cache"

func kvCacheBoard() *board {
	d := newBoard(UIDKVCache, "LLMOps / KV cache",
		"How full the engines' KV caches are, what that costs (preemptions, queued requests, queue time) and how much the prefix cache saves.",
		append([]cogVariable{prometheusVar()}, labelVars()...)...)

	d.row("Utilization")
	d.add(12, 8, kvCache())
	d.add(12, 8, graph("Preemptions per second",
		"Rate of llm.engine.preemptions: requests evicted from the running batch because the KV cache ran out.",
		"ops",
		q(agg("sum", engineBy, rate(sel(spec.EnginePreemptions, engineScope))), engineLegend)).Min(0))

	d.row("Queue")
	d.add(8, 8, waiting())
	d.add(8, 8, running())
	d.add(8, 8, p99("Queue time p99",
		"p99 of llm.engine.request.queue.duration: how long requests wait before they are scheduled.",
		spec.EngineRequestQueueDuration))

	d.row("Prefix cache")
	d.add(12, 8, ratio("Prefix-cache hit ratio",
		"llm.engine.prefix_cache.hit_ratio, computed by the rootcause connector from the hit and query counters over its window.",
		q(agg("max", engineBy, sel(spec.EnginePrefixCacheHitRatio, engineScope)), engineLegend)))
	d.add(12, 8, graph("Prefix-cache hits and queries",
		"Rate of llm.engine.prefix_cache.hits and .queries, in tokens per second (an engine that counts no queries shows hits only).",
		"short",
		q(agg("sum", engineBy, rate(sel(spec.EnginePrefixCacheHits, engineScope))), engineLegend+" hits"),
		q(agg("sum", engineBy, rate(sel(spec.EnginePrefixCacheQueries, engineScope))), engineLegend+" queries"),
	).Min(0))
	return d
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The samples cover every data point type and the fields a pipeline could
// lose on the way (scope, schema URL, exemplars, flags, links, events, bodies
// of every kind), so the pass-through comparison has something to catch.

var (
	t0      = pcommon.NewTimestampFromTime(time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC))
	t1      = pcommon.NewTimestampFromTime(time.Date(2026, 11, 29, 3, 0, 10, 0, time.UTC))
	traceID = pcommon.TraceID([16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36})
	spanA   = pcommon.SpanID([8]byte{0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7})
	spanB   = pcommon.SpanID([8]byte{1, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08})
)

const gpu1 = "GPU-3f2c9a7e-0000-0000-0000-000000000001"

func sampleMetrics() pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.SetSchemaUrl("https://opentelemetry.io/schemas/1.37.0")
	rm.Resource().Attributes().PutStr("host.name", "gpu-node-7")
	rm.Resource().Attributes().PutStr("k8s.node.name", "gpu-node-7")
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("e2e.sample")
	sm.Scope().SetVersion("1.2.3")

	usage := sm.Metrics().AppendEmpty()
	usage.SetName("hw.gpu.memory.usage")
	usage.SetUnit("By")
	usage.SetDescription("GPU memory in use")
	sum := usage.SetEmptySum()
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for i, v := range []int64{42_949_672_960, 1_073_741_824} {
		dp := sum.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(t0)
		dp.SetTimestamp(t1)
		dp.SetIntValue(v)
		dp.Attributes().PutStr("hw.id", []string{gpu1, "GPU-3f2c9a7e-0000-0000-0000-000000000002"}[i])
	}

	kv := sm.Metrics().AppendEmpty()
	kv.SetName("llm.engine.kv_cache.utilization")
	kv.SetUnit("1")
	g := kv.SetEmptyGauge().DataPoints().AppendEmpty()
	g.SetTimestamp(t1)
	g.SetDoubleValue(0.8731)
	g.Attributes().PutStr("llm.engine.name", "vllm")
	g.Attributes().PutStr("gen_ai.request.model", "meta-llama/Llama-3.1-8B-Instruct")
	ex := g.Exemplars().AppendEmpty()
	ex.SetTimestamp(t1)
	ex.SetDoubleValue(0.9)
	ex.SetTraceID(traceID)
	ex.SetSpanID(spanA)

	ttft := sm.Metrics().AppendEmpty()
	ttft.SetName("gen_ai.server.time_to_first_token")
	ttft.SetUnit("s")
	h := ttft.SetEmptyHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	hp := h.DataPoints().AppendEmpty()
	hp.SetStartTimestamp(t0)
	hp.SetTimestamp(t1)
	hp.SetCount(17)
	hp.SetSum(3.25)
	hp.SetMin(0.011)
	hp.SetMax(0.74)
	hp.ExplicitBounds().FromRaw([]float64{0.01, 0.05, 0.1, 0.5, 1})
	hp.BucketCounts().FromRaw([]uint64{0, 4, 6, 5, 2, 0})
	hp.Attributes().PutStr("llm.engine.name", "vllm")

	eh := sm.Metrics().AppendEmpty()
	eh.SetName("llm.engine.request.queue.duration")
	eh.SetUnit("s")
	e := eh.SetEmptyExponentialHistogram()
	e.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	ep := e.DataPoints().AppendEmpty()
	ep.SetStartTimestamp(t0)
	ep.SetTimestamp(t1)
	ep.SetScale(3)
	ep.SetCount(9)
	ep.SetSum(1.5)
	ep.SetZeroCount(1)
	ep.Positive().SetOffset(-20)
	ep.Positive().BucketCounts().FromRaw([]uint64{1, 2, 3, 2})

	sumry := sm.Metrics().AppendEmpty()
	sumry.SetName("tgi_request_duration_summary")
	sumry.SetUnit("s")
	sp := sumry.SetEmptySummary().DataPoints().AppendEmpty()
	sp.SetStartTimestamp(t0)
	sp.SetTimestamp(t1)
	sp.SetCount(5)
	sp.SetSum(2.5)
	q := sp.QuantileValues().AppendEmpty()
	q.SetQuantile(0.99)
	q.SetValue(0.95)
	sp.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(false))
	return md
}

func sampleTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "vllm-7b")
	rs.Resource().Attributes().PutInt("process.pid", 4242)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("vllm.tracing")
	parent := ss.Spans().AppendEmpty()
	parent.SetTraceID(traceID)
	parent.SetSpanID(spanA)
	parent.SetName("llm_request")
	parent.SetKind(ptrace.SpanKindServer)
	parent.SetStartTimestamp(t0)
	parent.SetEndTimestamp(t1)
	parent.Attributes().PutStr("gen_ai.request.model", "meta-llama/Llama-3.1-8B-Instruct")
	parent.Attributes().PutInt("gen_ai.usage.input_tokens", 512)
	parent.Status().SetCode(ptrace.StatusCodeError)
	parent.Status().SetMessage("preempted")
	ev := parent.Events().AppendEmpty()
	ev.SetName("first_token")
	ev.SetTimestamp(t0 + 250_000_000)
	child := ss.Spans().AppendEmpty()
	child.SetTraceID(traceID)
	child.SetSpanID(spanB)
	child.SetParentSpanID(spanA)
	child.SetName("nn.Module: LlamaAttention_12")
	child.SetStartTimestamp(t0 + 1000)
	child.SetEndTimestamp(t0 + 9000)
	child.TraceState().FromRaw("llmops=1")
	link := child.Links().AppendEmpty()
	link.SetTraceID(traceID)
	link.SetSpanID(spanA)
	link.Attributes().PutStr("llm.link.kind", "kernel")
	return td
}

func sampleLogs() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("host.name", "gpu-node-7")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("rootcause")
	r := sl.LogRecords().AppendEmpty()
	r.SetTimestamp(t1)
	r.SetObservedTimestamp(t1)
	r.SetSeverityNumber(plog.SeverityNumberError)
	r.SetSeverityText("ERROR")
	r.Body().SetStr("GPU memory of pod vllm-7b-2 grows 96 MB/min, full in 41 min")
	r.SetTraceID(traceID)
	r.SetSpanID(spanB)
	r.Attributes().PutStr("incident.kind", "gpu_memory_leak")
	r.Attributes().PutDouble("incident.score", 0.91)
	stack := r.Attributes().PutEmptySlice("incident.layer_stack")
	layer := stack.AppendEmpty().SetEmptyMap()
	layer.PutStr("module", "LlamaForCausalLM/LlamaModel/LlamaDecoderLayer_12/LlamaAttention_12")
	layer.PutInt("bytes", 1_932_735_283)
	m := sl.LogRecords().AppendEmpty()
	m.SetTimestamp(t1)
	m.Body().SetEmptyMap().PutBool("structured", true)
	m.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(true))
	return ld
}

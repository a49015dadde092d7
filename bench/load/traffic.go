// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// The deprecated GenAI span attributes llmnormalize renames to current
// semantic conventions (processor/llmnormalizeprocessor/traces.go). They
// are not spec keys, being what the spec replaces; a quarter of the
// generated spans carry them instead of the current ones, so the
// processor's renaming runs on real traffic.
const (
	legacyGenAISystem          = "gen_ai.system"
	legacyGenAIPromptTokens    = "gen_ai.usage.prompt_tokens"
	legacyGenAICompletionToken = "gen_ai.usage.completion_tokens"
)

// spansPerTrace: each generated trace is a chat request's root span and
// its children (retrieval, the model call, tool calls, post-processing).
const spansPerTrace = 5

// traffic sends OTLP traces to the agent at a steady rate: batches of
// batchSize spans, rate spans per second in all, paced by a ticker and sent
// by a few workers so that one slow answer does not stall the pace. A
// batch that finds every worker busy is counted as missed, not queued: the
// rate the agent sees is then visibly below the target.
type traffic struct {
	conn               *grpc.ClientConn
	client             ptraceotlp.GRPCClient
	rate, batchSize    int
	sent, failed, miss atomic.Int64 // spans acknowledged, spans refused, batches missed
	lastErr            atomic.Value
	stopCh             chan struct{}
	wg                 sync.WaitGroup
	seq                atomic.Uint64
}

const trafficWorkers = 8

func newTraffic(endpoint string, rate, batchSize int) (*traffic, error) {
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dialling the agent's OTLP/gRPC receiver at %s: %w", endpoint, err)
	}
	return &traffic{conn: conn, client: ptraceotlp.NewGRPCClient(conn), rate: rate, batchSize: batchSize, stopCh: make(chan struct{})}, nil
}

// start begins sending; stop ends it and waits for the batches in flight.
func (tr *traffic) start() {
	if tr.rate <= 0 {
		return
	}
	batches := make(chan struct{}) // unbuffered: a tick nobody takes is a miss
	interval := time.Duration(float64(time.Second) * float64(tr.batchSize) / float64(tr.rate))
	for w := 0; w < trafficWorkers; w++ {
		tr.wg.Add(1)
		go func(w int) {
			defer tr.wg.Done()
			td := ptrace.NewTraces()
			for {
				select {
				case <-tr.stopCh:
					return
				case <-batches:
				}
				tr.fill(td, w)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := tr.client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
				cancel()
				if err != nil {
					tr.failed.Add(int64(tr.batchSize))
					tr.lastErr.Store(err.Error())
				} else {
					tr.sent.Add(int64(tr.batchSize))
				}
			}
		}(w)
	}
	tr.wg.Add(1)
	go func() {
		defer tr.wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-tr.stopCh:
				return
			case <-tick.C:
				select {
				case batches <- struct{}{}:
				default:
					tr.miss.Add(1)
				}
			}
		}
	}()
}

func (tr *traffic) stop() {
	select {
	case <-tr.stopCh:
	default:
		close(tr.stopCh)
	}
	tr.wg.Wait()
	_ = tr.conn.Close()
}

// fill rebuilds td as the next batch: fresh ids and times, the same shapes.
// Rebuilding the worker's own Traces keeps the generator's allocations low.
func (tr *traffic) fill(td ptrace.Traces, worker int) {
	td.ResourceSpans().RemoveIf(func(ptrace.ResourceSpans) bool { return true })
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(spec.AttrServiceName, fmt.Sprintf("chat-gateway-%d", worker))
	rs.Resource().Attributes().PutStr(spec.AttrHostName, "gpu-node-7")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	spans.EnsureCapacity(tr.batchSize)
	now := time.Now()
	var traceID pcommon.TraceID
	var parent pcommon.SpanID
	for i := 0; i < tr.batchSize; i++ {
		n := tr.seq.Add(1)
		if i%spansPerTrace == 0 {
			binary.BigEndian.PutUint64(traceID[0:8], 0x6c6f616462656e63) // "loadbenc"
			binary.BigEndian.PutUint64(traceID[8:16], n)
		}
		var spanID pcommon.SpanID
		binary.BigEndian.PutUint64(spanID[:], n)
		s := spans.AppendEmpty()
		s.SetTraceID(traceID)
		s.SetSpanID(spanID)
		start := now.Add(-time.Duration(1+n%900) * time.Millisecond)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
		model := modelName(int(n/spansPerTrace) % 40)
		a := s.Attributes()
		if i%spansPerTrace == 0 {
			parent = spanID
			s.SetName("POST /v1/chat/completions")
			s.SetKind(ptrace.SpanKindServer)
			a.PutStr(spec.AttrServerAddress, "127.0.0.1")
			a.PutInt(spec.AttrServerPort, 8000)
			continue
		}
		s.SetParentSpanID(parent)
		s.SetName("chat " + model)
		s.SetKind(ptrace.SpanKindClient)
		a.PutStr(spec.AttrGenAIOperationName, "chat")
		a.PutStr(spec.AttrGenAIRequestModel, model)
		in, out := int64(50+n%2000), int64(10+n%500)
		if n%4 == 0 {
			a.PutStr(legacyGenAISystem, spec.EngineVLLM)
			a.PutInt(legacyGenAIPromptTokens, in)
			a.PutInt(legacyGenAICompletionToken, out)
		} else {
			a.PutStr(spec.AttrGenAIProviderName, spec.EngineVLLM)
			a.PutInt(spec.AttrGenAIUsageInputTokens, in)
			a.PutInt(spec.AttrGenAIUsageOutputTokens, out)
		}
		a.PutStr(spec.AttrFinishReason, finishReasons[n%uint64(len(finishReasons))])
	}
}

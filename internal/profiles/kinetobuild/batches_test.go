// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kinetobuild

import (
	"errors"
	"reflect"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/profiles/kineto"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles/signals"
)

// finishInput feeds the same events to a fresh builder each time.
type finishInput struct {
	name string
	md   kineto.Metadata
	file string
	feed func(t *testing.T, b *Builder)
}

func TestFinishBatchesMatchesFinish(t *testing.T) {
	var inputs []finishInput
	for _, name := range []string{"hta-simple_add.json.gz", "tracelens-b200_eager.json.gz"} {
		p := fixture(t, name)
		inputs = append(inputs, finishInput{name: name, file: p})
	}
	big := evb{}
	for s := int64(0); s < 300; s++ {
		base := s * 100 * us
		big.op("aten::step", base, 90*us)
		big.op("aten::mm", base+us, 20*us)
		big.launch(base+2*us, 5*us, 1000+s)
		big.kernel("gemm", base+10*us, 30*us, 1000+s)
		big.mem(cpu, base+3*us, 0x1000+s, MiB, 1)
	}
	inputs = append(inputs, finishInput{name: "constructed", md: noMeta(), file: "/tmp/constructed.json",
		feed: func(t *testing.T, b *Builder) {
			for i := range big.evs {
				e := big.evs[i]
				if err := b.Event(&e); err != nil {
					t.Fatal(err)
				}
			}
		}})

	newBuilder := func(t *testing.T, in finishInput) (*Builder, kineto.Metadata) {
		b := NewBuilder(DefaultOptions())
		if in.feed == nil {
			md, err := kineto.ParseFile(in.file, kineto.Options{}, b)
			if err != nil {
				t.Fatal(err)
			}
			return b, md
		}
		in.feed(t, b)
		return b, in.md
	}

	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			b, md := newBuilder(t, in)
			want, err := b.Finish(md, in.file)
			if err != nil {
				t.Fatal(err)
			}
			if n := want.Traces.SpanCount(); n < 100 {
				t.Fatalf("only %d spans: too few to test batching", n)
			}
			for _, size := range []int{1000, 7} {
				b, md := newBuilder(t, in)
				var batches []ptrace.Traces
				res, err := b.FinishBatches(md, in.file, size, func(td ptrace.Traces) error {
					batches = append(batches, td)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if res.Traces.SpanCount() != 0 || res.Traces.ResourceSpans().Len() != 0 {
					t.Errorf("size %d: Result.Traces not empty", size)
				}
				total := want.Traces.SpanCount()
				if wantN := (total + size - 1) / size; len(batches) != wantN {
					t.Errorf("size %d: %d batches, want %d", size, len(batches), wantN)
				}
				all := ptrace.NewTraces()
				for i, td := range batches {
					if n := td.SpanCount(); n > size || n == 0 || (i < len(batches)-1 && n != size) {
						t.Errorf("size %d: batch %d has %d spans", size, i, n)
					}
					if td.ResourceSpans().Len() != 1 || td.ResourceSpans().At(0).ScopeSpans().Len() != 1 {
						t.Fatalf("size %d: batch %d is not one resource, one scope", size, i)
					}
					rs := td.ResourceSpans().At(0)
					if i == 0 {
						rs.CopyTo(all.ResourceSpans().AppendEmpty())
						continue
					}
					if !reflect.DeepEqual(rs.Resource().Attributes().AsRaw(), all.ResourceSpans().At(0).Resource().Attributes().AsRaw()) {
						t.Errorf("size %d: batch %d resource differs", size, i)
					}
					if rs.ScopeSpans().At(0).Scope().Name() != signals.ScopeName {
						t.Errorf("size %d: batch %d scope %q", size, i, rs.ScopeSpans().At(0).Scope().Name())
					}
					rs.ScopeSpans().At(0).Spans().MoveAndAppendTo(all.ResourceSpans().At(0).ScopeSpans().At(0).Spans())
				}
				if err := ptracetest.CompareTraces(want.Traces, all); err != nil {
					t.Errorf("size %d: %v", size, err)
				}
				// Same order, span for span.
				ws, gs := want.Traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans(), all.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
				for i := 0; i < ws.Len() && i < gs.Len(); i++ {
					if ws.At(i).SpanID() != gs.At(i).SpanID() {
						t.Fatalf("size %d: span %d is %v, want %v", size, i, gs.At(i).SpanID(), ws.At(i).SpanID())
					}
				}
				if !reflect.DeepEqual(res.Stats, want.Stats) {
					t.Errorf("size %d: stats\n%+v\nwant\n%+v", size, res.Stats, want.Stats)
				}
				if res.Metrics.DataPointCount() != want.Metrics.DataPointCount() || res.Logs.LogRecordCount() != want.Logs.LogRecordCount() {
					t.Errorf("size %d: %d points, %d logs; want %d, %d", size, res.Metrics.DataPointCount(),
						res.Logs.LogRecordCount(), want.Metrics.DataPointCount(), want.Logs.LogRecordCount())
				}
				if res.TraceID != want.TraceID || !reflect.DeepEqual(res.Modules, want.Modules) {
					t.Errorf("size %d: trace id or modules differ", size)
				}
			}

			// An emit error stops the batches and is returned.
			b, md = newBuilder(t, in)
			boom := errors.New("boom")
			calls := 0
			_, err = b.FinishBatches(md, in.file, 7, func(ptrace.Traces) error {
				calls++
				if calls == 3 {
					return boom
				}
				return nil
			})
			if !errors.Is(err, boom) || calls != 3 {
				t.Errorf("emit error: err %v after %d calls, want boom after 3", err, calls)
			}
		})
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor

import (
	"bytes"
	"context"
	"math"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// FuzzProcessMetrics builds odd metrics under mapped engine names (wrong
// types, empty histograms, NaN, missing labels, duplicated aliases) from
// the fuzzer's bytes: the processor must never panic, and the in-place
// rename must give, byte for byte, what the copy path gives.
func FuzzProcessMetrics(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{9, 9, 9, 200, 13, 0, 255, 1, 7, 3})
	var sources []string
	for _, m := range spec.Mappings() {
		sources = append(sources, m.Source)
	}
	sources = append(sources, "unrelated", spec.HwGpuMemoryUsage)
	engines := []string{"", spec.EngineVLLM, spec.EngineTGI, spec.EngineTriton, spec.EngineLlamaCpp, "dcgm", spec.EngineCustom}
	n, err := newNormalizer(&Config{UnmappedMetrics: UnmappedKeep, TraceIDAttributes: defaultTraceIDAttributes}, componenttest.NewNopTelemetrySettings())
	if err != nil {
		f.Fatal(err)
	}
	slow, err := newNormalizer(&Config{UnmappedMetrics: UnmappedKeep, TraceIDAttributes: defaultTraceIDAttributes}, componenttest.NewNopTelemetrySettings())
	if err != nil {
		f.Fatal(err)
	}
	slow.copyOnly = true
	var enc pmetric.ProtoMarshaler
	f.Fuzz(func(t *testing.T, b []byte) {
		next := func() int {
			if len(b) == 0 {
				return 0
			}
			v := int(b[0])
			b = b[1:]
			return v
		}
		md := pmetric.NewMetrics()
		for r := next() % 3; r >= 0; r-- {
			rm := md.ResourceMetrics().AppendEmpty()
			if e := engines[next()%len(engines)]; e != "" {
				rm.Resource().Attributes().PutStr(spec.AttrEngineName, e)
			}
			ms := rm.ScopeMetrics().AppendEmpty().Metrics()
			for k := next() % 6; k >= 0 && len(sources) > 0; k-- {
				m := ms.AppendEmpty()
				m.SetName(sources[next()%len(sources)])
				vals := []float64{0, 1, -1, math.NaN(), math.Inf(1), 1e300, 0.5}
				switch next() % 5 {
				case 0:
					for p := next() % 3; p > 0; p-- {
						dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
						dp.SetDoubleValue(vals[next()%len(vals)])
						if next()%2 == 0 {
							dp.Attributes().PutStr("model_name", "m")
							dp.Attributes().PutStr("kv_cache_block_type", "fraction")
						}
					}
				case 1:
					s := m.SetEmptySum()
					s.SetIsMonotonic(next()%2 == 0)
					s.DataPoints().AppendEmpty().SetIntValue(int64(next()))
				case 2:
					h := m.SetEmptyHistogram()
					if next()%2 == 0 {
						dp := h.DataPoints().AppendEmpty()
						dp.ExplicitBounds().FromRaw([]float64{vals[next()%len(vals)]})
						if next()%2 == 0 {
							dp.SetSum(vals[next()%len(vals)])
						}
					}
				case 3:
					m.SetEmptySummary().DataPoints().AppendEmpty()
				}
			}
		}
		in := pmetric.NewMetrics()
		md.CopyTo(in)
		got, _ := n.processMetrics(context.Background(), md)
		want, _ := slow.processMetrics(context.Background(), in)
		// Bytes, not CompareMetrics: the points may hold NaN.
		g, err1 := enc.MarshalMetrics(got)
		w, err2 := enc.MarshalMetrics(want)
		if err1 != nil || err2 != nil || !bytes.Equal(g, w) {
			t.Fatalf("in-place rename differs from the copy path (%v, %v)", err1, err2)
		}
	})
}

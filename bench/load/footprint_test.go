// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import "testing"

func TestChargeOf(t *testing.T) {
	for _, c := range []struct {
		stack      []string
		cat, group string
	}{
		{[]string{"bytes.growSlice", "bytes.(*Buffer).ReadFrom", "github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver.(*scraper).scrape"},
			catOurs, "receiver/llmenginereceiver"},
		{[]string{"go.opentelemetry.io/collector/pdata/internal.(*Span).UnmarshalProto", "google.golang.org/grpc.(*Server).processUnaryRPC"},
			catPdata, "pdata/internal"},
		{[]string{"google.golang.org/grpc/mem.(*simpleBufferPool).Get", "google.golang.org/grpc/internal/transport.(*http2Server).operateHeaders"},
			catGRPC, "google.golang.org/grpc"},
		{[]string{"go.opentelemetry.io/collector/pdata/pcommon.Map.PutStr", "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl.(*Expr).Eval"},
			catContrib, "pkg/ottl"},
		{[]string{"runtime.malg", "runtime.newproc1"}, catRuntime, "runtime"},
		{[]string{"go.opentelemetry.io/collector/exporter/exporterhelper/internal/queue.(*memoryQueue).Offer"},
			catCore, "exporter/exporterhelper"},
	} {
		cat, group := chargeOf(c.stack)
		if cat != c.cat || group != c.group {
			t.Errorf("chargeOf(%v) = %q, %q; want %q, %q", c.stack, cat, group, c.cat, c.group)
		}
	}
}

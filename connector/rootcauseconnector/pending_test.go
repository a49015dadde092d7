// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector/internal/metadatatest"
)

// refusingLogs refuses every batch while refuse is set, as a logs pipeline
// does whose exporters' sending queues are full, and keeps what it took.
type refusingLogs struct {
	refuse bool
	got    []string // incident ids, in the order taken
}

func (r *refusingLogs) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (r *refusingLogs) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	if r.refuse {
		return errors.New("sending queue is full")
	}
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		sls := ld.ResourceLogs().At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				v, _ := lrs.At(k).Attributes().Get("id")
				r.got = append(r.got, v.Str())
			}
		}
	}
	return nil
}

func incidentRecords(from, n int) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i := from; i < from+n; i++ {
		lrs.AppendEmpty().Attributes().PutStr("id", fmt.Sprint(i))
	}
	return ld
}

// TestRefusedIncidentsAreOfferedAgain: while the logs pipeline refuses,
// incident records are kept (oldest dropped past the bound, counted) and
// handed over, oldest first, once it takes them again.
func TestRefusedIncidentsAreOfferedAgain(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tt.Shutdown(context.Background()) })
	d, err := newDiagnoser(testConfig(nil), metadatatest.NewSettings(tt))
	if err != nil {
		t.Fatal(err)
	}
	sink := &refusingLogs{refuse: true}
	d.wiring.logs = sink
	ctx := context.Background()

	d.deliverIncidents(ctx, incidentRecords(0, 3))
	d.deliverIncidents(ctx, incidentRecords(3, 2))
	if n := d.pending.LogRecordCount(); n != 5 {
		t.Fatalf("%d records pending after two refusals, want 5", n)
	}
	// Past the bound: the oldest go.
	d.deliverIncidents(ctx, incidentRecords(5, maxPendingIncidentRecords))
	if n := d.pending.LogRecordCount(); n != maxPendingIncidentRecords {
		t.Fatalf("%d records pending, want the bound %d", n, maxPendingIncidentRecords)
	}
	sink.refuse = false
	d.deliverIncidents(ctx, incidentRecords(5+maxPendingIncidentRecords, 1))
	if len(sink.got) != maxPendingIncidentRecords+1 {
		t.Fatalf("%d records delivered, want %d", len(sink.got), maxPendingIncidentRecords+1)
	}
	// 5 dropped: ids 0..4; the rest in order.
	for i, id := range sink.got {
		if want := fmt.Sprint(i + 5); id != want {
			t.Fatalf("record %d delivered is id %s, want %s (oldest first, the five oldest dropped)", i, id, want)
		}
	}
	if d.pending.LogRecordCount() != 0 {
		t.Errorf("%d records still pending after delivery", d.pending.LogRecordCount())
	}
	// Nothing left: an evaluation without records sends nothing.
	d.deliverIncidents(ctx, plog.NewLogs())
	if len(sink.got) != maxPendingIncidentRecords+1 {
		t.Errorf("an empty evaluation delivered %d more records", len(sink.got)-maxPendingIncidentRecords-1)
	}

	metadatatest.AssertEqualRootcauseIncidentRecordsDropped(t, tt, []metricdata.DataPoint[int64]{{Value: 5}}, metricdatatest.IgnoreTimestamp())
	// Kept at each refusal: 3, then 5, then the bound.
	metadatatest.AssertEqualRootcauseIncidentRecordsRetried(t, tt, []metricdata.DataPoint[int64]{{Value: 3 + 5 + maxPendingIncidentRecords}}, metricdatatest.IgnoreTimestamp())
}

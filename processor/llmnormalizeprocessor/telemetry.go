// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor // import "github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor"

import (
	"context"
	"sort"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor/internal/metadata"
)

// dropReason says why the processor removed data points without making a
// unified point of them. The set is closed (the reason attribute of
// otelcol_llmnormalize_datapoints_dropped, enumerated in metadata.yaml), so
// the counter has at most numReasons series.
type dropReason int

const (
	// reasonUnmapped: unmapped_metrics is drop, and no mapping covers the
	// points (an engine metric without a mapping, or the points of a
	// label-keyed gauge that no mapping's selector picks).
	reasonUnmapped dropReason = iota
	// reasonAliasSuperseded: a deprecated engine name whose current name
	// arrived in the same scope, so the unified metric is emitted once.
	reasonAliasSuperseded
	// reasonTypeMismatch: the source is not the type its mapping expects
	// (e.g. a summary or an untyped gauge where a histogram is mapped).
	reasonTypeMismatch
	// reasonMissingSum: a histogram read as a counter (histogram_sum) has a
	// point without a sum.
	reasonMissingSum
	numReasons
)

// dropReasonNames are the values of the reason attribute; the test
// TestDropReasonsMatchMetadata keeps them equal to metadata.yaml's enum.
var dropReasonNames = [numReasons]string{
	reasonUnmapped:        "unmapped",
	reasonAliasSuperseded: "alias_superseded",
	reasonTypeMismatch:    "type_mismatch",
	reasonMissingSum:      "missing_sum",
}

// attrDropReason is the key of the drop counter's one attribute. It is an
// attribute of this processor's own telemetry only, never of the data it
// normalises, hence not in the spec registry.
const attrDropReason = "reason"

// telemetry holds the processor's own counters and, computed once at start,
// the attribute options of every series they can have, so that recording
// allocates nothing.
type telemetry struct {
	tb *metadata.TelemetryBuilder
	// engineIndex numbers the engines whose unmapped metrics are counted:
	// those with a mapping table or a custom mapping (the ones
	// unmapped_metrics applies to), a set fixed at start, so the engine
	// attribute stays bounded whatever llm.engine.name the data carries.
	engineIndex  map[string]int
	unmappedOpts [][]metric.AddOption
	droppedOpts  [numReasons][]metric.AddOption
}

func newTelemetry(set component.TelemetrySettings, engines map[string]bool) (*telemetry, error) {
	tb, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	t := &telemetry{tb: tb, engineIndex: make(map[string]int, len(engines))}
	names := make([]string, 0, len(engines))
	for e := range engines {
		names = append(names, e)
	}
	sort.Strings(names)
	for i, e := range names {
		t.engineIndex[e] = i
		t.unmappedOpts = append(t.unmappedOpts, []metric.AddOption{
			metric.WithAttributeSet(attribute.NewSet(attribute.String(spec.AttrEngineName, e)))})
	}
	for r := range numReasons {
		t.droppedOpts[r] = []metric.AddOption{
			metric.WithAttributeSet(attribute.NewSet(attribute.String(attrDropReason, dropReasonNames[r])))}
	}
	return t, nil
}

// inlineEngines is how many engines batchCounts counts without a heap
// allocation: the built-in tables plus a few custom engines.
const inlineEngines = 16

// batchCounts accumulates one batch's counts; the counters are updated
// once per batch (record), not per metric or point.
type batchCounts struct {
	unmapped []int64 // by telemetry.engineIndex
	dropped  [numReasons]int64
}

func (c *batchCounts) drop(r dropReason, points int) {
	if points > 0 {
		c.dropped[r] += int64(points)
	}
}

// record adds the batch's nonzero counts to the counters.
func (t *telemetry) record(ctx context.Context, c *batchCounts) {
	for i, v := range c.unmapped {
		if v > 0 {
			t.tb.LlmnormalizeMetricsUnmapped.Add(ctx, v, t.unmappedOpts[i]...)
		}
	}
	for r, v := range c.dropped {
		if v > 0 {
			t.tb.LlmnormalizeDatapointsDropped.Add(ctx, v, t.droppedOpts[r]...)
		}
	}
}

// pointCount is the number of data points of m, whatever its type.
func pointCount(m pmetric.Metric) int {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		return m.ExponentialHistogram().DataPoints().Len()
	case pmetric.MetricTypeSummary:
		return m.Summary().DataPoints().Len()
	}
	return 0
}

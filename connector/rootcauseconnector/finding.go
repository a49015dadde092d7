// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import "github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector/internal/stats"

// evidence is one signal an incident was decided on.
type evidence struct {
	signal      string
	value       float64
	baseline    float64
	hasBaseline bool
	threshold   float64
	hasThresh   bool
	unit        string
	note        string
}

// finding is what a detector concluded about one subject in one evaluation.
type finding struct {
	kind, quadrant, severity string
	subj                     *subject
	score                    float64
	body                     string
	action                   string
	evidence                 []evidence
	start                    int64 // Unix ns the condition began
	// drill says how to drill down: by memory (leaks) or by time (latency).
	drill drillKind
	// suffix tells apart incidents of one kind on one subject (XID codes).
	suffix string
	// key is the incident key, when already computed.
	key string
}

type drillKind uint8

const (
	drillNone drillKind = iota
	drillMemory
	drillTime
)

// evalScratch holds buffers reused by every evaluation.
type evalScratch struct {
	pts   []stats.Point
	pairs []float64
	delta []uint64
}

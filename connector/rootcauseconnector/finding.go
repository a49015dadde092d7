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
	// actionID names the automatic response (incident.action.id).
	actionID string
	evidence []evidence
	start    int64 // Unix ns the condition began
	// drill says how to drill down: by memory (leaks) or by time (latency).
	drill drillKind
	// suffix tells apart incidents of one kind on one subject (XID codes).
	suffix string
	// key is the incident key, when already computed.
	key string
	// headline is the index in evidence of the figure an update compares
	// (growth rate, hit ratio, quantile, token rate, queue length); -1:
	// none (a figure that grows by itself, like a held duration).
	headline int
	// ruledOut: causes the detector checked and excluded, one sentence
	// each; they go into the body and incident.ruled_out.
	ruledOut []string
	// onset, when not 0, is when the fault began as the detector estimates
	// it (a leak's change point).
	onset int64
	// horizon, when set, is the long-horizon tier that found a slow leak.
	horizon string
	// hold: a symptom whose cause may be about to show; it waits
	// correlation_hold before it is sent (holdReason says which cause).
	hold       bool
	holdReason string
}

// ruleOut adds one excluded cause.
func (f *finding) ruleOut(why string) { f.ruledOut = append(f.ruledOut, why) }

type drillKind uint8

const (
	drillNone drillKind = iota
	drillMemory
	drillTime
)

// evalScratch holds buffers reused by every evaluation.
type evalScratch struct {
	pts   []stats.Point
	ctx   []stats.Point // the long horizon's day of context
	pairs []float64
	delta []uint64
}

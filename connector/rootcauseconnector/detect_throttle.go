// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// throttleDetector: a GPU's clocks held back by one reason (thermal or
// hardware slowdown, power brake, power cap) for throttle.for. Each reason
// is timed on its own: a GPU held at its power cap for an hour with a 2 s
// thermal blip has not been thermally throttled for an hour. A power cap
// alone is how a busy GPU normally runs; it fires only when the engine on
// that GPU loses throughput.
type throttleDetector struct{ cfg ThrottleConfig }

func (throttleDetector) detect(d *diagnoser, ev *evaluation) {
	for _, s := range d.subjects.gpus {
		if f, ok := d.throttle(s, ev.now); ok {
			ev.add(f)
		}
	}
}

const powerCap = "sw_power_cap"

func throttleReasons(runs []throttleRun) string {
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.reason
	}
	return strings.Join(names, ", ")
}

func (d *diagnoser) throttle(s *subject, now int64) (finding, bool) {
	runs := s.gpu.activeThrottle(s.lastSeen)
	if len(runs) == 0 {
		return finding{}, false
	}
	forNs := int64(d.cfg.Throttle.For)
	var held []string // "reason for 45s", of the reasons held long enough
	since, powerOnly := int64(0), true
	f := finding{kind: spec.IncidentKindGPUThrottling, quadrant: spec.QuadrantThroughput, severity: spec.SeverityWarning, subj: s, score: 0.6}
	for _, r := range runs {
		h := d.heldFor(r.since, r.last, now)
		f.evidence = append(f.evidence, evidence{signal: spec.EvidenceThrottleDuration, value: float64(h) / 1e9,
			threshold: d.cfg.Throttle.For.Seconds(), hasThresh: true, unit: "s", note: spec.AttrHwGpuThrottleKind + "=" + r.reason})
		if h < forNs {
			continue
		}
		held = append(held, r.reason+" for "+time.Duration(h).Round(time.Second).String())
		if r.reason != powerCap {
			powerOnly = false
		}
		if since == 0 || r.since < since {
			since = r.since
		}
	}
	if len(held) == 0 {
		return finding{}, false
	}
	f.start = since
	tputNote := ""
	lost := false
	if target := d.linkedEngine(s); target != nil {
		if rate, ok := d.tokenRate(target); ok {
			tb := &target.engine.tputBase
			mean, _ := tb.MeanStd()
			f.evidence = append(f.evidence, evidence{signal: spec.EvidenceTokensRate, value: rate, baseline: mean,
				hasBaseline: tb.Len() > 0, unit: "{token}/s"})
			if tb.Len() > 0 && rate < mean*(1-d.cfg.Throughput.Drop) {
				tputNote = fmt.Sprintf("; output tokens/s of %s down to %.0f from %.0f", engineName(target), rate, mean)
				f.score = math.Min(1, 0.8+(mean-rate)/math.Max(mean, 1e-9)/5)
				lost = true
			}
		}
	}
	if powerOnly && !lost {
		// Held at the power cap with no engine losing throughput (or no
		// engine to tell): normal operation under load.
		return finding{}, false
	}
	// The figure an update compares: how long a reason has held grows by
	// itself and is not news; the engine's token rate is.
	f.headline = -1
	if lost {
		f.headline = len(f.evidence) - 1
	}
	f.body = fmt.Sprintf("GPU %s clocks held back by %s%s", s.hwID, strings.Join(held, ", "), tputNote)
	if strings.Contains(strings.Join(held, " "), "thermal") {
		f.action = "Check cooling and airflow of the node (fans, inlet temperature, a blocked slot); move the load off this GPU if it persists."
	} else {
		f.action = "Check the power limit (nvidia-smi -q -d POWER) and the node's power budget; lower batch size or move load."
	}
	return f, true
}

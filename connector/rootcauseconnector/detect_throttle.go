// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// throttleDetector: a GPU's clocks held back by thermal or hardware
// slowdown for throttle.for.
type throttleDetector struct{ cfg ThrottleConfig }

func (throttleDetector) detect(d *diagnoser, ev *evaluation) {
	for _, s := range d.subjects.gpus {
		if f, ok := d.throttle(s, ev.now); ok {
			ev.add(f)
		}
	}
}

// throttle: thermal or hardware slowdown held for throttle.for; a power cap
// only when the engine on that GPU is losing throughput.
func (d *diagnoser) throttle(s *subject, now int64) (finding, bool) {
	g := s.gpu
	active := len(g.throttleNow) > 0 && g.throttleT >= s.lastSeen
	if !active {
		g.throttleSince = 0
		return finding{}, false
	}
	if g.throttleSince == 0 {
		g.throttleSince = g.throttleT
	}
	held := d.heldFor(g.throttleSince, g.throttleT, now)
	if held < int64(d.cfg.Throttle.For) {
		return finding{}, false
	}
	reasons := strings.Join(g.throttleNow, ", ")
	powerOnly := true
	for _, r := range g.throttleNow {
		if r != "sw_power_cap" {
			powerOnly = false
		}
	}
	f := finding{kind: spec.IncidentKindGPUThrottling, quadrant: spec.QuadrantThroughput, severity: spec.SeverityWarning, subj: s,
		start: g.throttleSince, score: 0.6}
	f.evidence = append(f.evidence, evidence{signal: spec.HwGpuThrottle, value: 1, unit: "1", note: reasons},
		evidence{signal: spec.EvidenceThrottleDuration, value: float64(held) / 1e9,
			threshold: d.cfg.Throttle.For.Seconds(), hasThresh: true, unit: "s"})
	tputNote := ""
	if target := d.linkedEngine(s); target != nil {
		if rate, ok := d.tokenRate(target); ok {
			mean, _ := target.engine.tputBase.MeanStd()
			f.evidence = append(f.evidence, evidence{signal: spec.EvidenceTokensRate, value: rate, baseline: mean,
				hasBaseline: target.engine.tputBase.Len() > 0, unit: "{token}/s"})
			if target.engine.tputBase.Len() > 0 && rate < mean*(1-d.cfg.Throughput.Drop) {
				tputNote = fmt.Sprintf("; output tokens/s down to %.0f from %.0f", rate, mean)
				f.score = 0.8
			} else if powerOnly {
				return finding{}, false
			}
		}
	} else if powerOnly {
		// A power cap alone, with no engine to tell whether it costs
		// throughput, is normal operation under load.
		return finding{}, false
	}
	f.body = fmt.Sprintf("GPU %s clocks held back by %s for %s%s", s.hwID, reasons,
		time.Duration(held).Round(time.Second), tputNote)
	if strings.Contains(reasons, "thermal") {
		f.action = "Check cooling and airflow of the node (fans, inlet temperature, a blocked slot); move the load off this GPU if it persists."
	} else {
		f.action = "Check the power limit (nvidia-smi -q -d POWER) and the node's power budget; lower batch size or move load."
	}
	return f, true
}

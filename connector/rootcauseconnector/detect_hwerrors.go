// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"sort"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// xidMeaning names the XIDs an operator meets most.
var xidMeaning = map[int64]string{
	13:  "graphics engine exception (often an out-of-bounds access in a kernel)",
	31:  "GPU memory page fault (illegal address in a kernel)",
	43:  "GPU stopped processing (a kernel was killed after a fault)",
	45:  "preemptive cleanup after a previous error",
	48:  "double-bit ECC error",
	61:  "internal micro-controller breakpoint/warning",
	62:  "internal micro-controller halt",
	63:  "ECC page retirement or row remap recorded",
	64:  "ECC page retirement or row remap failure",
	74:  "NVLink error",
	79:  "GPU has fallen off the bus",
	92:  "high single-bit ECC error rate",
	94:  "contained ECC error",
	95:  "uncontained ECC error",
	119: "GSP RPC timeout",
}

// hardwareErrorDetector: XID events and uncorrected ECC errors, each
// critical at once.
type hardwareErrorDetector struct{}

func (hardwareErrorDetector) detect(d *diagnoser, ev *evaluation) {
	for _, s := range d.subjects.gpus {
		d.hardwareErrors(s, ev)
	}
}

func (d *diagnoser) hardwareErrors(s *subject, ev *evaluation) {
	now := ev.now
	g := s.gpu
	recent := now - int64(d.cfg.ResolveAfter)
	codes := make([]int64, 0, len(g.xidFired))
	for code, t := range g.xidFired {
		if t >= recent {
			codes = append(codes, code)
		}
	}
	sort.Slice(codes, func(i, j int) bool { return codes[i] < codes[j] })
	for _, code := range codes {
		meaning := xidMeaning[code]
		if meaning == "" {
			meaning = "see NVIDIA's XID catalogue"
		}
		f := finding{kind: spec.IncidentKindXIDError, quadrant: spec.QuadrantErrors, severity: spec.SeverityCritical, subj: s,
			start: g.xidFired[code], score: 1}
		f.evidence = append(f.evidence, evidence{signal: spec.HwErrors, value: g.xid[code], unit: "{error}",
			note: fmt.Sprintf("error.type=xid hw.gpu.xid=%d", code)})
		f.body = fmt.Sprintf("XID %d on GPU %s: %s", code, s.hwID, meaning)
		switch code {
		case 48, 63, 64, 79, 92, 94, 95, 119:
			f.action = "Drain this GPU (cordon the node or mark the device unhealthy) and reset it; hardware or driver service needed if it repeats."
		default:
			f.action = "Check the application's logs at that moment (a faulting kernel); restart the process on this GPU, and drain the GPU if it repeats."
		}
		f.suffix = fmt.Sprint(code) // one incident per code
		ev.add(f)
	}
	if g.eccFiredAt >= recent && g.eccFiredAt > 0 {
		f := finding{kind: spec.IncidentKindECCUncorrected, quadrant: spec.QuadrantErrors, severity: spec.SeverityCritical, subj: s,
			start: g.eccFiredAt, score: 1}
		f.evidence = append(f.evidence, evidence{signal: spec.HwErrors, value: g.ecc, unit: "{error}", note: "error.type=uncorrected"})
		f.body = fmt.Sprintf("Uncorrected ECC errors on GPU %s (total %.0f): data in GPU memory may be corrupt", s.hwID, g.ecc)
		f.action = "Drain the GPU and reset it to retire the pages; replace the board if errors recur."
		ev.add(f)
	}
}

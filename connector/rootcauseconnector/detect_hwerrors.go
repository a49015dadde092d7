// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// hardwareErrorDetector: XID events and uncorrected ECC errors. An XID the
// application recovers from (a faulting kernel) clears like any incident;
// one that leaves the GPU needing a reset (spec.LookupXID), and every
// uncorrected ECC error, fires until the GPU's own state shows it was
// handled, an operator acknowledges it, or hardware_errors.resolve_after
// passes: an error that was never fixed must not look fixed a minute later.
type hardwareErrorDetector struct{ cfg HardwareErrorsConfig }

func (det hardwareErrorDetector) detect(d *diagnoser, ev *evaluation) {
	for _, s := range d.subjects.gpus {
		det.gpu(d, s, ev)
	}
}

// handled says whether an error seen at t was handled since, and how.
func (g *gpuState) handled(t, ack int64) (string, bool) {
	switch {
	case ack >= t && ack >= g.resetAt:
		return spec.ResolutionAcknowledged, true
	case g.resetAt >= t:
		return spec.ResolutionGPUReset, true
	}
	return "", false
}

func (det hardwareErrorDetector) gpu(d *diagnoser, s *subject, ev *evaluation) {
	now, g := ev.now, s.gpu
	codes := make([]int64, 0, len(g.xidFired))
	for code := range g.xidFired {
		codes = append(codes, code)
	}
	sort.Slice(codes, func(i, j int) bool { return codes[i] < codes[j] })
	for _, code := range codes {
		t := g.xidFired[code]
		info, known := spec.LookupXID(code)
		// A code the catalogue does not know is treated as the serious
		// kind: better an open incident an operator closes than a GPU
		// error that vanished unexplained.
		sticky := !known || info.Recovery.NeedsReset()
		f := finding{kind: spec.IncidentKindXIDError, quadrant: spec.QuadrantErrors, severity: spec.SeverityCritical, subj: s,
			start: t, score: 1, suffix: fmt.Sprint(code)}
		key := incidentKey(&f)
		if how, ok := g.handled(t, g.xidAck[code]); ok {
			ev.resolveNow[key] = how
			continue
		}
		if sticky && now-t >= int64(det.cfg.ResolveAfter) {
			ev.resolveNow[key] = spec.ResolutionExpired
			continue
		}
		if !sticky && now-t >= int64(d.cfg.ResolveAfter) {
			continue // the application's fault: cleared once it stops
		}
		f.key = key
		f.evidence = append(f.evidence, evidence{signal: spec.HwErrors, value: g.xid[code], unit: "{error}",
			note: fmt.Sprintf("error.type=xid hw.gpu.xid=%d", code)})
		name, recovery := "not in NVIDIA's XID catalogue as this distribution knows it", "reset_gpu (unknown code)"
		f.action = "Look the code up in NVIDIA's XID catalogue; drain the GPU if it repeats."
		if known {
			name, recovery, f.action = info.Name, info.Recovery.String(), info.Action
			if !sticky {
				f.severity = spec.SeverityWarning
			}
		}
		f.body = fmt.Sprintf("XID %d on GPU %s: %s (recovery: %s)", code, s.hwID, name, recovery)
		if sticky {
			f.action += " " + stickyNote(det.cfg.ResolveAfter)
		}
		ev.add(f)
	}
	if g.eccFiredAt > 0 {
		f := finding{kind: spec.IncidentKindECCUncorrected, quadrant: spec.QuadrantErrors, severity: spec.SeverityCritical, subj: s,
			start: g.eccFiredAt, score: 1}
		key := incidentKey(&f)
		if how, ok := g.handled(g.eccFiredAt, g.eccAck); ok {
			ev.resolveNow[key] = how
			return
		}
		if now-g.eccFiredAt >= int64(det.cfg.ResolveAfter) {
			ev.resolveNow[key] = spec.ResolutionExpired
			return
		}
		f.key = key
		f.evidence = append(f.evidence, evidence{signal: spec.HwErrors, value: g.ecc, unit: "{error}", note: "error.type=uncorrected"})
		f.body = fmt.Sprintf("Uncorrected ECC errors on GPU %s (total %.0f): data in GPU memory may be corrupt", s.hwID, g.ecc)
		f.action = "Drain the GPU and reset it to retire the pages or remap the rows; replace the board if errors recur. " +
			stickyNote(det.cfg.ResolveAfter)
		ev.add(f)
	}
}

func stickyNote(bound time.Duration) string {
	return "This incident stays open until a GPU reset or driver reload is seen, it is acknowledged (docs/operations.md, Acknowledging a hardware error), or " +
		bound.String() + " (hardware_errors.resolve_after) pass."
}

// ingestAcknowledgments takes the log records that acknowledge hardware
// errors: incident.state=acknowledged with incident.id (one incident) or
// hw.id (every hardware error of that GPU so far). The caller holds d.mu.
func (d *diagnoser) ingestAcknowledgments(ld plog.Logs) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				a := lrs.At(k).Attributes()
				if st, ok := a.Get(spec.IncidentState); !ok || st.Str() != spec.StateAcknowledged {
					continue
				}
				id, hw := "", ""
				if v, ok := a.Get(spec.IncidentID); ok {
					id = v.Str()
				}
				if v, ok := a.Get(spec.AttrHwID); ok {
					hw = v.Str()
				} else if v, ok := rl.Resource().Attributes().Get(spec.AttrHwID); ok {
					hw = v.Str()
				}
				d.acknowledge(id, hw)
			}
		}
	}
}

// acknowledge marks the named hardware errors as handled now.
func (d *diagnoser) acknowledge(id, hw string) {
	now := d.nowNanos()
	if id != "" {
		for _, inc := range d.incidents {
			if inc.id != id {
				continue
			}
			g := d.subjects.gpus[inc.subj.hwID]
			switch {
			case g == nil:
			case inc.f.kind == spec.IncidentKindXIDError:
				// The suffix is the code, written by the detector.
				code, err := strconv.ParseInt(inc.f.suffix, 10, 64)
				if err == nil {
					g.gpu.ack(code, now)
					return
				}
			case inc.f.kind == spec.IncidentKindECCUncorrected:
				g.gpu.eccAck = now
				return
			}
			d.logger.Warn("acknowledgment ignored: only xid_error and ecc_uncorrected incidents wait for one; the others end when their condition clears",
				zap.String("incident.id", id), zap.String("incident.kind", inc.f.kind))
			return
		}
		d.logger.Warn("acknowledgment of an incident that is not open", zap.String("incident.id", id))
		return
	}
	g := d.subjects.gpus[hw]
	if g == nil {
		d.logger.Warn("acknowledgment names neither an open incident (incident.id) nor a known GPU (hw.id)", zap.String("hw.id", hw))
		return
	}
	for code := range g.gpu.xidFired {
		g.gpu.ack(code, now)
	}
	g.gpu.eccAck = now
}

func (g *gpuState) ack(code, now int64) {
	if g.xidAck == nil {
		g.xidAck = map[int64]int64{}
	}
	g.xidAck[code] = now
}

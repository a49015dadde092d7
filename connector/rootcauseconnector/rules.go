// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// ingestRule feeds the points of a metric some rules watch into one series
// per (rule, identifying attributes).
func (d *diagnoser) ingestRule(rules []int, res pcommon.Map, m pmetric.Metric) {
	for _, ri := range rules {
		r := &d.rules[ri]
		d.eachNumber(m, func(t int64, v float64, a pcommon.Map) {
			for k, want := range r.Attributes {
				if got, ok := lookup(res, a, k); !ok || got.AsString() != want {
					return
				}
			}
			labels := seriesLabels(res, a)
			key := r.Name + "|" + labels
			s := d.subjects.rules[key]
			if s == nil {
				s = &subject{kind: kindRule, key: key, pid: -1, rule: &ruleState{rule: ri, metric: m.Name(), labels: labels,
					vals: newWindow(max(r.For, d.cfg.EvaluationInterval)*2, d.cfg.EvaluationInterval),
					base: newBaseline(cmp.Or(r.Baseline, d.cfg.Latency.Baseline))}}
				if v, ok := lookup(res, a, "hw.id"); ok {
					s.hwID = v.AsString()
				}
				if v, ok := lookup(res, a, "gen_ai.request.model"); ok {
					s.model = v.AsString()
				}
				if v, ok := lookup(res, a, "llm.engine.name"); ok {
					s.engineName = v.AsString()
				}
				// An application's signals name the instance an action
				// (a circuit breaker) is for.
				s.service = strValue(res, a, spec.AttrServiceName)
				s.instance = strValue(res, a, spec.AttrServiceInstanceID)
				s.podName = strValue(res, a, spec.AttrK8sPodName)
				s.namespace = strValue(res, a, spec.AttrK8sNamespaceName)
				d.subjects.rules[key] = s
				d.subjects.added(s, t)
			} else {
				d.subjects.touch(s, t)
			}
			rs := s.rule
			rs.vals.Add(t, v)
			rs.last, rs.lastT = v, t
			if rs.n == 0 || v > rs.hi {
				rs.hi = v
			}
			if rs.n == 0 || v < rs.lo {
				rs.lo = v
			}
			rs.n++
		})
	}
}

// seriesLabels identifies a series: its point attributes, sorted (the
// resource's service and engine names are enough to tell sources apart).
func seriesLabels(res, a pcommon.Map) string {
	parts := make([]string, 0, a.Len()+2)
	for _, k := range []string{spec.AttrServiceName, spec.AttrServiceInstanceID, spec.AttrEngineTarget} {
		if v, ok := res.Get(k); ok {
			parts = append(parts, k+"="+v.AsString())
		}
	}
	a.Range(func(k string, v pcommon.Value) bool {
		parts = append(parts, k+"="+v.AsString())
		return true
	})
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// ruleDetector runs the rules (the user's and the default application-quality ones): a rule fires when its condition has
// held on a series for its `for` duration.
type ruleDetector struct{}

func (ruleDetector) detect(d *diagnoser, ev *evaluation) {
	for _, s := range d.subjects.rules {
		if f, ok := d.evaluateRule(s); ok {
			ev.add(f)
		}
	}
}

func (d *diagnoser) evaluateRule(s *subject) (finding, bool) {
	rs := s.rule
	r := &d.rules[rs.rule]
	cond, thr, base, hasBase := false, 0.0, 0.0, false
	// The value judged: the newest, or of the points since the last
	// evaluation the worst (no hold) or the least bad (a hold must hold at
	// every point).
	hi, lo := rs.last, rs.last
	if rs.n > 0 {
		hi, lo = rs.hi, rs.lo
	}
	rs.n = 0
	value := rs.last
	switch {
	case r.Above != nil:
		value = lo
		if r.For == 0 {
			value = hi
		}
		cond, thr = value > *r.Above, *r.Above
	case r.Below != nil:
		value = hi
		if r.For == 0 {
			value = lo
		}
		cond, thr = value < *r.Below, *r.Below
	case r.Sigma != nil:
		mean, std := rs.base.MeanStd()
		if rs.base.Len() >= minBaseline {
			base, hasBase = mean, true
			dev := math.Max(std, 1e-9)
			cond = math.Abs(rs.last-mean) > *r.Sigma*dev
			thr = mean + *r.Sigma*dev
			if rs.last < mean {
				thr = mean - *r.Sigma*dev
			}
		}
		if !cond {
			rs.base.Push(rs.lastT, rs.last)
		}
	}
	if !cond {
		rs.condSince = 0
		return finding{}, false
	}
	if rs.condSince == 0 {
		rs.condSince = rs.lastT
	}
	if rs.lastT-rs.condSince < int64(r.For) {
		return finding{}, false
	}
	sev := r.Severity
	if sev == "" {
		sev = spec.SeverityWarning
	}
	quad := r.Quadrant
	if quad == "" {
		quad = spec.QuadrantErrors
	}
	f := finding{kind: r.Name, quadrant: quad, severity: sev, subj: s, start: rs.condSince, score: 0.5}
	f.evidence = append(f.evidence, evidence{signal: rs.metric, value: value, baseline: base, hasBaseline: hasBase,
		threshold: thr, hasThresh: true, note: rs.labels})
	f.body = fmt.Sprintf("%s: %s = %g (threshold %g) for %s", r.Name, rs.metric, value, thr,
		time.Duration(rs.lastT-rs.condSince).Round(time.Second))
	if r.Description != "" {
		f.body = r.Description + " — " + f.body
	}
	if s.service != "" {
		f.body += " on " + s.service
		if s.instance != "" {
			f.body += " instance " + s.instance
		}
	}
	f.actionID = r.ActionID
	f.action = r.Action
	if f.action == "" {
		f.action = "Rule " + r.Name + " from the rootcause configuration."
	}
	return f, true
}

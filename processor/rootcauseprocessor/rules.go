package rootcauseprocessor

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// ingestRule feeds the points of a metric some rules watch into one series
// per (rule, identifying attributes).
func (e *engine) ingestRule(rules []int, res pcommon.Map, m pmetric.Metric) {
	for _, ri := range rules {
		r := &e.cfg.Rules[ri]
		e.eachNumber(m, func(t int64, v float64, a pcommon.Map) {
			for k, want := range r.Attributes {
				if got, ok := lookup(res, a, k); !ok || got.AsString() != want {
					return
				}
			}
			labels := seriesLabels(res, a)
			key := r.Name + "|" + labels
			s := e.reg.rules[key]
			if s == nil {
				s = &subject{kind: kindRule, key: key, pid: -1, rule: &ruleState{rule: ri, metric: m.Name(), labels: labels,
					vals: newWindow(max(r.For, e.cfg.EvaluationInterval)*2, e.cfg.EvaluationInterval),
					base: newBaseline(cmp.Or(r.Baseline, e.cfg.Latency.Baseline))}}
				if v, ok := lookup(res, a, "hw.id"); ok {
					s.hwID = v.AsString()
				}
				if v, ok := lookup(res, a, "gen_ai.request.model"); ok {
					s.model = v.AsString()
				}
				if v, ok := lookup(res, a, "llm.engine.name"); ok {
					s.engineName = v.AsString()
				}
				e.reg.rules[key] = s
				e.reg.added(s, t)
			} else {
				e.reg.touch(s, t)
			}
			s.rule.vals.Add(t, v)
			s.rule.last, s.rule.lastT = v, t
		})
	}
}

// seriesLabels identifies a series: its point attributes, sorted (the
// resource's service and engine names are enough to tell sources apart).
func seriesLabels(res, a pcommon.Map) string {
	parts := make([]string, 0, a.Len()+2)
	for _, k := range []string{"service.name", "llm.engine.target"} {
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

// evaluateRules: a rule fires when its condition has held on a series for
// its `for` duration.
func (e *engine) evaluateRules(now int64, out []finding) []finding {
	for _, s := range e.reg.rules {
		rs := s.rule
		r := &e.cfg.Rules[rs.rule]
		cond, thr, base, hasBase := false, 0.0, 0.0, false
		switch {
		case r.Above != nil:
			cond, thr = rs.last > *r.Above, *r.Above
		case r.Below != nil:
			cond, thr = rs.last < *r.Below, *r.Below
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
			continue
		}
		if rs.condSince == 0 {
			rs.condSince = rs.lastT
		}
		if rs.lastT-rs.condSince < int64(r.For) {
			continue
		}
		sev := r.Severity
		if sev == "" {
			sev = SeverityWarning
		}
		quad := r.Quadrant
		if quad == "" {
			quad = QuadrantErrors
		}
		f := finding{kind: r.Name, quadrant: quad, severity: sev, subj: s, start: rs.condSince, score: 0.5}
		f.evidence = append(f.evidence, evidence{signal: rs.metric, value: rs.last, baseline: base, hasBaseline: hasBase,
			threshold: thr, hasThresh: true, note: rs.labels})
		f.body = fmt.Sprintf("%s: %s = %g (threshold %g) for %s", r.Name, rs.metric, rs.last, thr,
			time.Duration(rs.lastT-rs.condSince).Round(time.Second))
		f.action = r.Action
		if f.action == "" {
			f.action = "Rule " + r.Name + " from the rootcause configuration."
		}
		out = append(out, f)
	}
	return out
}

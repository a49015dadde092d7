// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/pdatautil"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// drilldown links incidents to profiler spans and model layers. It keeps,
// per process, the latest profile's outstanding memory by module path (from
// profileimport's metrics and leak-suspect records), and a bounded ring of
// spans that carry a module path or belong to a process, to find what ran
// during an incident window.
type drilldown struct {
	cfg      DrillDownConfig
	profiles map[int64]*profileSummary
	spans    []spanRef // ring, MaxSpans
	head     int
	n        int
	evicted  int64
	now      func() int64 // the connector's clock (Unix ns)
}

// profileSummary is what the newest profile of one process says about its
// memory.
type profileSummary struct {
	pid     int64
	file    string
	seen    int64 // Unix ns when it arrived
	modules map[string]*moduleMem
}

type moduleMem struct {
	bytes   float64
	device  int64
	traceID pcommon.TraceID
	spanID  pcommon.SpanID
	pattern leakPattern // from the path's leak-suspect record, if it has one
}

// leakPattern is how a memory-snapshot leak suspect leaks
// (llm.profile.leak.*: profileimport replays the snapshot's allocation
// history); empty for suspects without one (Kineto, Nsight, or a snapshot
// site that only stayed allocated). The drill-down carries it into the
// memory incident that cites the suspect.
type leakPattern struct {
	name, frame   string
	growth, steps int64
}

// patternOf reads the llm.profile.leak.* attributes of a leak-suspect
// record (zero when it has no pattern).
func patternOf(a pcommon.Map) leakPattern {
	v, ok := a.Get(spec.AttrProfileLeakPattern)
	if !ok || v.Str() == "" {
		return leakPattern{}
	}
	p := leakPattern{name: v.Str()}
	if f, ok := a.Get(spec.AttrProfileLeakForwardFrame); ok {
		p.frame = f.Str()
	}
	if g, ok := a.Get(spec.AttrProfileLeakGrowthPerStep); ok {
		p.growth = intValue(g)
	}
	if n, ok := a.Get(spec.AttrProfileLeakSteps); ok {
		p.steps = intValue(n)
	}
	return p
}

type spanRef struct {
	traceID    pcommon.TraceID
	spanID     pcommon.SpanID
	start, end int64
	pid        int64
	module     string
}

func newDrilldown(cfg DrillDownConfig, now func() int64) *drilldown {
	return &drilldown{cfg: cfg, now: now, profiles: map[int64]*profileSummary{}, spans: make([]spanRef, 0, min(cfg.MaxSpans, 4096))}
}

func resourcePid(res pcommon.Map) int64 {
	if v, ok := res.Get(spec.AttrProcessPid); ok {
		return intValue(v)
	}
	return -1
}

// profile returns the summary of pid for file, starting a fresh one when a
// newer profile file arrives; the oldest summary goes beyond max_profiles.
func (d *drilldown) profile(pid int64, file string, now int64) *profileSummary {
	p := d.profiles[pid]
	if p != nil && p.file == file {
		p.seen = now
		return p
	}
	if p == nil && len(d.profiles) >= d.cfg.MaxProfiles {
		var oldest *profileSummary
		for _, q := range d.profiles {
			if oldest == nil || q.seen < oldest.seen {
				oldest = q
			}
		}
		delete(d.profiles, oldest.pid)
	}
	p = &profileSummary{pid: pid, file: file, seen: now, modules: map[string]*moduleMem{}}
	d.profiles[pid] = p
	return p
}

func (d *drilldown) ingestOutstanding(res pcommon.Map, m pmetric.Metric) {
	pid := resourcePid(res)
	if pid < 0 {
		return
	}
	file := ""
	if v, ok := res.Get(spec.AttrProfileFile); ok {
		file = v.Str()
	}
	dps, ok := pdatautil.NumberPoints(m)
	if !ok || dps.Len() == 0 {
		return
	}
	p := d.profile(pid, file, d.now())
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		mp, ok := dp.Attributes().Get(spec.AttrProfileModulePath)
		if !ok || mp.Str() == "" {
			continue
		}
		if f, ok := dp.Attributes().Get(spec.AttrProfileFile); ok && f.Str() != file {
			file = f.Str()
			p = d.profile(pid, file, d.now())
		}
		mm := p.module(mp.Str())
		switch dp.ValueType() {
		case pmetric.NumberDataPointValueTypeInt:
			mm.bytes = float64(dp.IntValue())
		case pmetric.NumberDataPointValueTypeDouble:
			mm.bytes = dp.DoubleValue()
		}
		if dev, ok := dp.Attributes().Get(spec.AttrProfileDevice); ok {
			mm.device = intValue(dev)
		}
	}
}

func (p *profileSummary) module(path string) *moduleMem {
	mm := p.modules[path]
	if mm == nil {
		// Bound one profile's summary: keep the biggest 256 paths.
		if len(p.modules) >= 256 {
			var smallest string
			for k, v := range p.modules {
				if smallest == "" || v.bytes < p.modules[smallest].bytes {
					smallest = k
				}
			}
			delete(p.modules, smallest)
		}
		mm = &moduleMem{}
		p.modules[path] = mm
	}
	return mm
}

// ingestLogs takes the span ids of profileimport's leak suspects.
func (d *drilldown) ingestLogs(ld plog.Logs) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		pid := resourcePid(rl.Resource().Attributes())
		if pid < 0 {
			continue
		}
		file := ""
		if v, ok := rl.Resource().Attributes().Get(spec.AttrProfileFile); ok {
			file = v.Str()
		}
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				a := lr.Attributes()
				if kind, ok := a.Get(spec.IncidentKind); !ok || kind.Str() != spec.IncidentKindLeakSuspect {
					continue
				}
				mp, ok := a.Get(spec.AttrProfileModulePath)
				if !ok {
					continue
				}
				f := file
				if v, ok := a.Get(spec.AttrProfileFile); ok {
					f = v.Str()
				}
				mm := d.profile(pid, f, d.now()).module(mp.Str())
				mm.traceID, mm.spanID = lr.TraceID(), lr.SpanID()
				if v, ok := a.Get(spec.AttrProfileOutstandingBytes); ok && float64(intValue(v)) > mm.bytes {
					mm.bytes = float64(intValue(v))
				}
				if v, ok := a.Get(spec.AttrProfileDevice); ok {
					mm.device = intValue(v)
				}
				// The newest record of the path says whether it has a
				// pattern (a re-import without one clears it).
				mm.pattern = patternOf(a)
			}
		}
	}
}

// ingestTraces indexes spans that can explain an incident: profiler spans
// (they carry a module path) and spans of a known process.
func (d *drilldown) ingestTraces(td ptrace.Traces) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		pid := resourcePid(rs.Resource().Attributes())
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				module := ""
				if v, ok := sp.Attributes().Get(spec.AttrProfileModulePath); ok {
					module = v.Str()
				}
				if module == "" && pid < 0 {
					continue
				}
				d.addSpan(spanRef{traceID: sp.TraceID(), spanID: sp.SpanID(), start: int64(sp.StartTimestamp()),
					end: int64(sp.EndTimestamp()), pid: pid, module: module})
			}
		}
	}
}

func (d *drilldown) addSpan(s spanRef) {
	if len(d.spans) < d.cfg.MaxSpans {
		d.spans = append(d.spans, s)
		d.head = len(d.spans) - 1
		d.n = len(d.spans)
		return
	}
	d.head = (d.head + 1) % len(d.spans)
	d.spans[d.head] = s
	d.evicted++
}

// layer is one level of an incident's layer stack.
type layer struct {
	path  string
	bytes float64
	ns    int64
}

// drillResult is where an incident points.
type drillResult struct {
	traceID pcommon.TraceID
	spanID  pcommon.SpanID
	top     string
	stack   []layer
	note    string
	pattern leakPattern // memory drill-downs: the top path's leak pattern
}

// memory drills a memory incident of the processes in pids down to the
// module path with the most outstanding bytes in their newest profile.
func (d *drilldown) memory(pids []int64, now int64) drillResult {
	var best *profileSummary
	var bestBytes float64
	for _, pid := range pids {
		p := d.profiles[pid]
		if p == nil || p.seen < now-int64(d.cfg.Retention) {
			continue
		}
		total := 0.0
		for _, m := range p.modules {
			total += m.bytes
		}
		if best == nil || total > bestBytes {
			best, bestBytes = p, total
		}
	}
	if best == nil || len(best.modules) == 0 {
		return drillResult{note: d.cfg.ProfileHint}
	}
	top, topBytes := "", -1.0
	for path, m := range best.modules {
		if m.bytes > topBytes || (m.bytes == topBytes && path < top) {
			top, topBytes = path, m.bytes
		}
	}
	r := drillResult{top: top, note: "profile " + best.file}
	// The stack: every prefix of the top path with the bytes of everything
	// under it (profileimport attributes bytes to the deepest module).
	parts := strings.Split(top, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		sum := 0.0
		for path, m := range best.modules {
			if path == prefix || strings.HasPrefix(path, prefix+"/") {
				sum += m.bytes
			}
		}
		r.stack = append(r.stack, layer{path: prefix, bytes: sum})
	}
	m := best.modules[top]
	r.traceID, r.spanID = m.traceID, m.spanID
	r.pattern = m.pattern
	if r.traceID.IsEmpty() {
		// No leak-suspect record: any span of that module in that process.
		if s, ok := d.findSpan(func(s *spanRef) bool { return s.pid == best.pid && s.module == top }); ok {
			r.traceID, r.spanID = s.traceID, s.spanID
		}
	}
	return r
}

// timed drills a latency incident down to the profiler spans of the
// processes in pids overlapping [from, to]: the module path with the most
// span time, and its longest span.
func (d *drilldown) timed(pids []int64, from, to int64) drillResult {
	byModule := map[string]int64{}
	longest := map[string]*spanRef{}
	for i := 0; i < len(d.spans); i++ {
		s := &d.spans[i]
		if s.module == "" || s.end < from || s.start > to || !containsPid(pids, s.pid) {
			continue
		}
		dur := min(s.end, to) - max(s.start, from)
		byModule[s.module] += dur
		if l := longest[s.module]; l == nil || s.end-s.start > l.end-l.start {
			longest[s.module] = s
		}
	}
	if len(byModule) == 0 {
		return drillResult{note: d.cfg.ProfileHint}
	}
	paths := make([]string, 0, len(byModule))
	for p := range byModule {
		paths = append(paths, p)
	}
	// The deepest path with the most time: parents contain their children.
	sort.Slice(paths, func(i, j int) bool {
		if byModule[paths[i]] != byModule[paths[j]] {
			return byModule[paths[i]] > byModule[paths[j]]
		}
		return strings.Count(paths[i], "/") > strings.Count(paths[j], "/")
	})
	top := paths[0]
	r := drillResult{top: top, traceID: longest[top].traceID, spanID: longest[top].spanID, note: "profiler spans in the incident window"}
	parts := strings.Split(top, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		r.stack = append(r.stack, layer{path: prefix, ns: byModule[prefix]})
	}
	return r
}

func containsPid(pids []int64, pid int64) bool {
	for _, p := range pids {
		if p == pid {
			return true
		}
	}
	return false
}

func (d *drilldown) findSpan(match func(*spanRef) bool) (spanRef, bool) {
	for i := 0; i < len(d.spans); i++ {
		// Newest first.
		s := &d.spans[(d.head-i+len(d.spans))%len(d.spans)]
		if match(s) {
			return *s, true
		}
	}
	return spanRef{}, false
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor // import "github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor"

import (
	"context"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/pdatautil"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

type normalizer struct {
	// copyOnly turns the in-place rename off: every mapped metric is built
	// anew by apply. Tests set it to hold the two paths to one output.
	copyOnly bool
	cfg      *Config
	rules    *rules
	traceIDs []string
	tel      *telemetry
	// kvModels: configured KV geometries by model name.
	kvModels map[string]spec.KVGeometry
	// lastTarget is the last llm.engine.target read and what
	// serverFromTarget made of it: a collector's batches come from a
	// handful of targets, and parsing the URL was ~3% of a vLLM scrape's
	// time and an allocation. Batches may arrive concurrently: it is
	// replaced, never changed.
	lastTarget atomic.Pointer[parsedTarget]
}

type parsedTarget struct {
	target, address string
	port            int64
}

func newNormalizer(cfg *Config, set component.TelemetrySettings) (*normalizer, error) {
	rs, err := compileRules(cfg.Custom)
	if err != nil {
		return nil, err
	}
	tel, err := newTelemetry(set, rs.engines)
	if err != nil {
		return nil, err
	}
	geo := map[string]spec.KVGeometry{}
	for _, m := range cfg.KVCacheModels {
		g, err := m.geometry()
		if err != nil {
			return nil, err
		}
		geo[m.Model] = g
	}
	return &normalizer{cfg: cfg, rules: rs, traceIDs: cfg.TraceIDAttributes, tel: tel, kvModels: geo}, nil
}

// pointContext is what labelPoint adds to every point of one resource.
type pointContext struct {
	engine, model string
	// serverAddress and serverPort come from the engine's scrape target
	// URL (llm.engine.target); empty and 0 when it has none.
	serverAddress string
	serverPort    int64
}

func (n *normalizer) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	// The batch's counts live on the stack (for up to inlineEngines
	// engines) and reach the counters once, after the batch.
	var inline [inlineEngines]int64
	var c batchCounts
	if k := len(n.tel.unmappedOpts); k <= inlineEngines {
		c.unmapped = inline[:k]
	} else {
		c.unmapped = make([]int64, k)
	}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		res := rm.Resource().Attributes()
		var pc pointContext
		if v, ok := res.Get(spec.AttrEngineName); ok {
			pc.engine = v.Str()
		}
		if v, ok := res.Get(spec.AttrGenAIRequestModel); ok {
			pc.model = v.Str()
		}
		if v, ok := res.Get(spec.AttrEngineTarget); ok {
			pc.serverAddress, pc.serverPort = n.server(v.Str())
		}
		resUnversioned := rm.SchemaUrl() == ""
		wroteAny := resUnversioned && renameGPUModel(res)
		sms := rm.ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			sm := sms.At(j)
			wrote := renameAliases(sm.Metrics(), resUnversioned && sm.SchemaUrl() == "")
			if n.processScope(sm.Metrics(), pc, &c) {
				wrote = true
			}
			if wrote && sm.SchemaUrl() == "" {
				sm.SetSchemaUrl(spec.SchemaURL)
			}
			wroteAny = wroteAny || wrote
		}
		if wroteAny && resUnversioned {
			rm.SetSchemaUrl(spec.SchemaURL)
		}
	}
	n.tel.record(ctx, &c)
	return md, nil
}

// server is serverFromTarget, remembering the last target.
func (n *normalizer) server(target string) (string, int64) {
	if p := n.lastTarget.Load(); p != nil && p.target == target {
		return p.address, p.port
	}
	addr, port := serverFromTarget(target)
	n.lastTarget.Store(&parsedTarget{target: target, address: addr, port: port})
	return addr, port
}

// serverFromTarget reads server.address and server.port from an engine's
// metrics URL: the engines serve their API and /metrics on one listener
// (Triton excepted, whose metrics port differs from its inference ports).
func serverFromTarget(target string) (string, int64) {
	u, err := url.Parse(target)
	if err != nil || u.Hostname() == "" {
		return "", 0
	}
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	p, _ := strconv.ParseInt(port, 10, 64)
	return u.Hostname(), p
}

// renameGPUModel moves an older agent's GPU product name from hw.name to
// hw.model (spec.Renames) on a GPU resource.
func renameGPUModel(attrs pcommon.Map) bool {
	_, gpu := attrs.Get(spec.AttrHwID)
	_, named := attrs.Get(spec.AttrHwName)
	if !gpu || !named {
		return false
	}
	renameAttrs(attrs, []labelRename{{spec.AttrHwName, spec.AttrHwModel}})
	return true
}

// renameAliases renames unified names of an earlier release (spec.Renames)
// to this release's and adds to the renamed points what the rename sets
// (hw.type=gpu). Renames marked Unversioned apply only when unversioned is
// true: the data's scope and resource carry no schema URL. On such data it
// also moves a GPU point's hw.name to hw.model and fills the gen_ai.server.*
// attributes an older agent did not set. It reports whether it changed
// anything.
func renameAliases(ms pmetric.MetricSlice, unversioned bool) bool {
	changed := false
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		var set map[string]string
		if r, ok := spec.LookupRename(m.Name()); ok && (!r.Unversioned || unversioned) {
			m.SetName(r.New)
			if t, known := spec.LookupMetric(r.New); known {
				m.SetDescription(t.Description)
			}
			set = r.Set
			changed = true
		} else if !unversioned {
			continue
		}
		// GroupOf, not LookupMetric: this runs for every metric of
		// unversioned data, and LookupMetric copies the attribute list
		// (an allocation per metric of GPU gauges passing through).
		group, known := spec.GroupOf(m.Name())
		if !known {
			continue
		}
		gpu := group == spec.GroupGPU
		genAI := strings.HasPrefix(m.Name(), "gen_ai.server.")
		pdatautil.EachAttributes(m, func(attrs pcommon.Map) bool {
			for k, v := range set {
				if _, has := attrs.Get(k); !has {
					attrs.PutStr(k, v)
				}
			}
			if !unversioned {
				return true
			}
			if gpu {
				if _, has := attrs.Get(spec.AttrHwName); has {
					renameAttrs(attrs, []labelRename{{spec.AttrHwName, spec.AttrHwModel}})
					changed = true
				}
			}
			if genAI {
				_, hasOp := attrs.Get(spec.AttrGenAIOperationName)
				if v, has := attrs.Get(spec.AttrEngineName); has && !hasOp {
					setGenAIServer(attrs, pointContext{engine: v.Str()})
					changed = true
				}
			}
			return true
		})
	}
	return changed
}

// setGenAIServer puts on a gen_ai.server.* point the attributes semconv
// requires or recommends there, unless the point has them already.
func setGenAIServer(attrs pcommon.Map, pc pointContext) {
	_, hasOp := attrs.Get(spec.AttrGenAIOperationName)
	_, hasProvider := attrs.Get(spec.AttrGenAIProviderName)
	hasProvider = hasProvider || pc.engine == ""
	_, hasAddress := attrs.Get(spec.AttrServerAddress)
	hasAddress = hasAddress || pc.serverAddress == ""
	// Room for all of them at once: appended one by one, a point's
	// attribute list grew up to three times here (1 -> 2 -> 4 -> 8).
	add := 0
	for _, missing := range []bool{!hasOp, !hasProvider, !hasAddress, !hasAddress && pc.serverPort > 0} {
		if missing {
			add++
		}
	}
	attrs.EnsureCapacity(attrs.Len() + add)
	if !hasOp {
		attrs.PutStr(spec.AttrGenAIOperationName, spec.GenAIOperationEngine)
	}
	if !hasProvider {
		attrs.PutStr(spec.AttrGenAIProviderName, pc.engine)
	}
	if !hasAddress {
		attrs.PutStr(spec.AttrServerAddress, pc.serverAddress)
		if pc.serverPort > 0 {
			attrs.PutInt(spec.AttrServerPort, pc.serverPort)
		}
	}
}

// processScope normalises the metrics of one scope in place. Metrics with
// no rule are left untouched (or dropped, for an engine's resource, when
// unmapped_metrics is drop). It reports whether it wrote a unified metric,
// and adds to c the unmapped metrics and the points it removed without
// making a unified point of them.
func (n *normalizer) processScope(ms pmetric.MetricSlice, pc pointContext, c *batchCounts) bool {
	engine := pc.engine
	ds := n.rules.derivations[engine]
	engineIdx, engineCounted := n.tel.engineIndex[engine]

	// When an engine serves a metric under both its current name and a
	// deprecated alias (a deprecation window), only the current one is
	// kept. Find the targets fed by current names first.
	//
	// looked keeps the first 64 metrics' rules for the second pass
	// (RemoveIf calls its function once per metric, in order): the
	// lookups were ~15% of the scope's time, done twice. A fixed array,
	// on the stack: a larger scope looks the rest up again rather than
	// allocate.
	var looked [64][]*rule
	var current map[string]bool
	mapped := 0
	for i := 0; i < ms.Len(); i++ {
		rs := n.rules.lookup(ms.At(i).Name(), engine)
		if i < len(looked) {
			looked[i] = rs
		}
		if len(rs) > 0 {
			mapped++
		}
		for _, r := range rs {
			// Only a key some alias shares is ever asked for: the
			// others stay out of the map (on the vLLM scrape, 2 keys
			// instead of 45, whose inserts and growths were a tenth
			// of the scope's time).
			if !r.Deprecated && r.aliased {
				if current == nil {
					current = map[string]bool{}
				}
				current[r.key] = true
			}
		}
	}

	if mapped == 0 && len(ds) == 0 && !engineCounted {
		return false // nothing to map or count (GPU gauges, applications)
	}
	// Derivations read the engine's own metrics, so they run first.
	var derived pmetric.MetricSlice
	if len(ds) > 0 {
		derived = n.derive(ms, pc, ds)
	}
	out := pmetric.NewMetricSlice()
	if mapped > 0 {
		// One allocation for out's pointer list instead of a growth
		// every few mapped metrics (7 on the vLLM scrape).
		out.EnsureCapacity(mapped + len(ds))
	}
	dropUnmapped := n.cfg.UnmappedMetrics == UnmappedDrop && n.rules.engines[engine]
	next := 0
	ms.RemoveIf(func(m pmetric.Metric) bool {
		var rs []*rule
		if next < len(looked) {
			rs = looked[next]
		} else {
			rs = n.rules.lookup(m.Name(), engine)
		}
		next++
		if len(rs) == 0 {
			if !engineCounted || isUnified(m.Name()) {
				return false
			}
			c.unmapped[engineIdx]++
			if dropUnmapped {
				c.drop(reasonUnmapped, pointCount(m))
			}
			return dropUnmapped
		}
		if len(rs) == 1 && (!rs[0].Deprecated || !current[rs[0].key]) &&
			n.renameInPlace(rs[0], m, out, pc.forRule(rs[0])) {
			return true
		}
		// made counts the unified points made of m; lost is why the
		// first rule that left some of m's points behind did so. When the
		// source is consumed, its points beyond made are counted as
		// dropped, all under that one reason (in the tables a source has
		// one rule, or rules whose selectors pick disjoint points).
		made, lost, lossy := 0, reasonTypeMismatch, false
		total := pointCount(m)
		for _, r := range rs {
			if r.Deprecated && current[r.key] {
				if !lossy {
					lost, lossy = reasonAliasSuperseded, true
				}
				continue
			}
			k, why := n.apply(r, m, out, pc.forRule(r))
			made += k
			if k < total && !lossy {
				lost, lossy = why, true
			}
		}
		// The source is consumed unless some of its points matched no
		// rule's selector and unmapped metrics are kept.
		consumed := !hasUnmatched(m, rs) || dropUnmapped
		if consumed && lossy {
			c.drop(lost, total-made)
		}
		return consumed
	})
	if len(ds) > 0 {
		derived.MoveAndAppendTo(out)
	}
	n.kvCapacity(out, pc)
	mergeByName(out)
	wrote := out.Len() > 0
	out.MoveAndAppendTo(ms)
	return wrote
}

// forRule is the context of the points rule r makes: data without
// llm.engine.name gets the rule's engine. An application's signals come
// from no engine: they get no llm.engine.name.
func (pc pointContext) forRule(r *rule) pointContext {
	if pc.engine == "" && r.Engine != spec.SourceApp {
		pc.engine = r.Engine
	}
	return pc
}

// isUnified reports whether name is in the registry. It runs for every
// unmapped metric of an engine (to count it), so it uses the registry's
// index without LookupMetric's copy of the attribute list.
func isUnified(name string) bool {
	return spec.IsKnownMetric(name)
}

func matchKey(r *rule) string {
	if len(r.match) == 0 {
		return ""
	}
	k := "{"
	for _, m := range r.match {
		k += m.key + "=" + m.value + ","
	}
	return k + "}"
}

// hasUnmatched reports whether some points of m match none of the rules'
// selectors (a label-keyed gauge partly mapped).
func hasUnmatched(m pmetric.Metric, rs []*rule) bool {
	for _, r := range rs {
		if len(r.match) == 0 {
			return false
		}
	}
	unmatched := false
	pdatautil.EachAttributes(m, func(attrs pcommon.Map) bool {
		for _, r := range rs {
			if matches(attrs, r.match) {
				return true
			}
		}
		unmatched = true
		return false
	})
	return unmatched
}

func matches(attrs pcommon.Map, sel []labelValue) bool {
	for _, lv := range sel {
		v, ok := attrs.Get(lv.key)
		if !ok || v.AsString() != lv.value {
			return false
		}
	}
	return true
}

// apply appends to out the unified metric rule r makes of m's points. It
// returns how many points it made and, for m's points it made nothing of,
// why: outside the rule's selector (reasonUnmapped), a histogram point
// without a sum (reasonMissingSum), or a source of the wrong type
// (reasonTypeMismatch, nothing made).
func (n *normalizer) apply(r *rule, m pmetric.Metric, out pmetric.MetricSlice, pc pointContext) (int, dropReason) {
	dst := pmetric.NewMetric()
	dst.SetName(r.Target)
	dst.SetUnit(r.target.Unit)
	dst.SetDescription(r.target.Description)
	made, why := 0, reasonUnmapped
	switch {
	case r.SourceType == "histogram_sum" && m.Type() == pmetric.MetricTypeHistogram:
		made = histogramSumToCounter(r, m.Histogram(), dst.SetEmptySum())
		why = reasonMissingSum
	case m.Type() == pmetric.MetricTypeHistogram && r.target.Instrument == spec.Histogram:
		made = copyHistogram(r, m.Histogram(), dst.SetEmptyHistogram())
	case m.Type() == pmetric.MetricTypeGauge && r.target.Instrument == spec.Gauge:
		made = copyNumbers(r, m.Gauge().DataPoints(), dst.SetEmptyGauge().DataPoints())
	case m.Type() == pmetric.MetricTypeGauge && r.target.Instrument == spec.UpDownCounter:
		sum := dst.SetEmptySum()
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		made = copyNumbers(r, m.Gauge().DataPoints(), sum.DataPoints())
	case m.Type() == pmetric.MetricTypeSum && r.target.IsSum():
		sum := dst.SetEmptySum()
		sum.SetAggregationTemporality(m.Sum().AggregationTemporality())
		sum.SetIsMonotonic(r.target.Monotonic())
		made = copyNumbers(r, m.Sum().DataPoints(), sum.DataPoints())
	default:
		why = reasonTypeMismatch
	}
	if made == 0 {
		return 0, why // nothing to emit (the source is not what the mapping expects, or nothing selected)
	}
	if dst.Type() == pmetric.MetricTypeSum {
		dst.Sum().SetIsMonotonic(r.target.Monotonic())
		if dst.Sum().AggregationTemporality() == pmetric.AggregationTemporalityUnspecified {
			dst.Sum().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		}
	}
	pdatautil.EachAttributes(dst, func(attrs pcommon.Map) bool { labelPoint(r, attrs, pc); return true })
	dst.MoveTo(out.AppendEmpty())
	return made, why
}

// renameInPlace appends to out the unified metric r makes of m, made of m
// itself, when r takes all of m's points one for one: no selector, no
// setting read from a label, no histogram read as a counter. m is left
// empty, to be removed. It reports false, changing nothing, when r needs
// the copy (apply) or m has no point (apply makes nothing of it then).
//
// The result is the one apply gives (TestInPlaceRenameMatchesCopy holds
// them to it), without a copy of every point: on the vLLM scrape that was
// ~3.9 allocations per point. m is moved into out (one allocation, out's
// new element) rather than left where it is so that out still holds
// exactly what this processor made, in the copy path's order: kvCapacity
// and mergeByName work on out, and the scope's metric order is unchanged.
func (n *normalizer) renameInPlace(r *rule, m pmetric.Metric, out pmetric.MetricSlice, pc pointContext) bool {
	if n.copyOnly || len(r.match) > 0 || r.ValueLabel != "" || r.SourceType == "histogram_sum" || pointCount(m) == 0 {
		return false
	}
	var dst pmetric.Metric
	switch {
	case m.Type() == pmetric.MetricTypeHistogram && r.target.Instrument == spec.Histogram:
		dst = out.AppendEmpty()
		m.MoveTo(dst)
		scaleHistogram(r, dst.Histogram().DataPoints(), 0)
	case m.Type() == pmetric.MetricTypeGauge && r.target.Instrument == spec.Gauge:
		dst = out.AppendEmpty()
		m.MoveTo(dst)
		scaleNumbers(r, dst.Gauge().DataPoints(), 0)
	case m.Type() == pmetric.MetricTypeGauge && r.target.Instrument == spec.UpDownCounter:
		// A new metric, as apply makes, but the gauge's points are
		// moved into its sum (the slice, not each point).
		dst = out.AppendEmpty()
		sum := dst.SetEmptySum()
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		m.Gauge().DataPoints().MoveAndAppendTo(sum.DataPoints())
		scaleNumbers(r, sum.DataPoints(), 0)
	case m.Type() == pmetric.MetricTypeSum && r.target.IsSum():
		dst = out.AppendEmpty()
		m.MoveTo(dst)
		sum := dst.Sum()
		sum.SetIsMonotonic(r.target.Monotonic())
		if sum.AggregationTemporality() == pmetric.AggregationTemporalityUnspecified {
			sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		}
		scaleNumbers(r, sum.DataPoints(), 0)
	default:
		return false
	}
	dst.SetName(r.Target)
	dst.SetUnit(r.target.Unit)
	dst.SetDescription(r.target.Description)
	// apply's new metric has no metadata: the source's (e.g. a Prometheus
	// type or help the receiver kept) describes the engine's metric, not
	// the unified one, which may not even have the same type.
	dst.Metadata().Clear()
	pdatautil.EachAttributes(dst, func(attrs pcommon.Map) bool { labelPoint(r, attrs, pc); return true })
	return true
}

// labelPoint renames engine labels to spec attributes, drops the selector
// labels, sets the mapping's fixed attributes, and makes sure the point
// names its engine and (when known) model; gen_ai.server.* points also get
// the attributes semconv asks for there.
func labelPoint(r *rule, attrs pcommon.Map, pc pointContext) {
	engine, model := pc.engine, pc.model
	for _, lv := range r.match {
		attrs.Remove(lv.key)
	}
	renameAttrs(attrs, r.renames)
	for _, lv := range r.set {
		attrs.PutStr(lv.key, lv.value)
	}
	if engine != "" {
		putStrIfAbsent(attrs, spec.AttrEngineName, engine)
	}
	if model != "" {
		putStrIfAbsent(attrs, spec.AttrGenAIRequestModel, model)
	}
	if strings.HasPrefix(r.Target, "gen_ai.server.") {
		setGenAIServer(attrs, pc)
	}
}

// putStrIfAbsent sets key to v unless attrs has it: one scan of the list
// where Get then PutStr make two.
func putStrIfAbsent(attrs pcommon.Map, key, v string) {
	if dst, had := attrs.GetOrPutEmpty(key); !had {
		dst.SetStr(v)
	}
}

// renameAttrs moves each attribute to its new key; a value already present
// under the new key wins, and the old key is removed either way.
func renameAttrs(attrs pcommon.Map, renames []labelRename) {
	for _, rn := range renames {
		if _, ok := attrs.Get(rn.from); !ok {
			continue
		}
		if dst, exists := attrs.GetOrPutEmpty(rn.to); !exists {
			// Moved, not copied: a copy allocates a new value (one
			// allocation per renamed label, 15 per vLLM scrape).
			// GetOrPutEmpty may grow the list, which would leave a value
			// taken before it pointing into the old one: look it up now.
			v, _ := attrs.Get(rn.from)
			v.MoveTo(dst)
		}
		attrs.Remove(rn.from)
	}
}

// copyNumbers copies the selected points, scaled, and returns how many.
func copyNumbers(r *rule, src, dst pmetric.NumberDataPointSlice) int {
	if r.ValueLabel != "" {
		return copySetting(r, src, dst)
	}
	from := dst.Len()
	for i := 0; i < src.Len(); i++ {
		p := src.At(i)
		if !matches(p.Attributes(), r.match) {
			continue
		}
		p.CopyTo(dst.AppendEmpty())
	}
	scaleNumbers(r, dst, from)
	return dst.Len()
}

// scaleNumbers converts the points of dps from index first on to the
// target's unit; a scaled integer becomes a double.
func scaleNumbers(r *rule, dps pmetric.NumberDataPointSlice, first int) {
	if r.factor == 1 {
		return
	}
	for i := first; i < dps.Len(); i++ {
		q := dps.At(i)
		switch q.ValueType() {
		case pmetric.NumberDataPointValueTypeInt:
			q.SetDoubleValue(float64(q.IntValue()) * r.factor)
		case pmetric.NumberDataPointValueTypeDouble:
			q.SetDoubleValue(q.DoubleValue() * r.factor)
		}
	}
}

// copySetting makes a point of one setting of an info gauge: its value is
// the label r.ValueLabel, and of the other labels only those the rule
// renames are kept (an info gauge's labels are all settings).
func copySetting(r *rule, src, dst pmetric.NumberDataPointSlice) int {
	for i := 0; i < src.Len(); i++ {
		p := src.At(i)
		raw, ok := p.Attributes().Get(r.ValueLabel)
		if !ok || !matches(p.Attributes(), r.match) {
			continue
		}
		v, err := strconv.ParseFloat(raw.AsString(), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			continue // "None": the engine has no such setting
		}
		q := dst.AppendEmpty()
		q.SetStartTimestamp(p.StartTimestamp())
		q.SetTimestamp(p.Timestamp())
		q.SetDoubleValue(v)
		p.Attributes().Range(func(k string, val pcommon.Value) bool {
			if _, keep := r.Labels[k]; keep {
				val.CopyTo(q.Attributes().PutEmpty(k))
			}
			return true
		})
	}
	return dst.Len()
}

// copyHistogram copies the selected points, scaling bounds, sum, min, max,
// and returns how many.
func copyHistogram(r *rule, src, dst pmetric.Histogram) int {
	dst.SetAggregationTemporality(src.AggregationTemporality())
	from := dst.DataPoints().Len()
	dps := src.DataPoints()
	for i := 0; i < dps.Len(); i++ {
		p := dps.At(i)
		if !matches(p.Attributes(), r.match) {
			continue
		}
		p.CopyTo(dst.DataPoints().AppendEmpty())
	}
	scaleHistogram(r, dst.DataPoints(), from)
	return dst.DataPoints().Len()
}

// scaleHistogram converts the points of dps from index first on to the
// target's unit: bounds, sum, min and max.
func scaleHistogram(r *rule, dps pmetric.HistogramDataPointSlice, first int) {
	if r.factor == 1 {
		return
	}
	for i := first; i < dps.Len(); i++ {
		q := dps.At(i)
		b := q.ExplicitBounds()
		for k := 0; k < b.Len(); k++ {
			b.SetAt(k, b.At(k)*r.factor)
		}
		if q.HasSum() {
			q.SetSum(q.Sum() * r.factor)
		}
		if q.HasMin() {
			q.SetMin(q.Min() * r.factor)
		}
		if q.HasMax() {
			q.SetMax(q.Max() * r.factor)
		}
	}
}

// histogramSumToCounter reads each histogram point's sum as a counter (the
// _sum of a per-request token histogram is the total token count) and
// returns how many points it made.
func histogramSumToCounter(r *rule, src pmetric.Histogram, dst pmetric.Sum) int {
	dst.SetAggregationTemporality(src.AggregationTemporality())
	dps := src.DataPoints()
	for i := 0; i < dps.Len(); i++ {
		p := dps.At(i)
		if !p.HasSum() || !matches(p.Attributes(), r.match) {
			continue
		}
		q := dst.DataPoints().AppendEmpty()
		p.Attributes().CopyTo(q.Attributes())
		q.SetStartTimestamp(p.StartTimestamp())
		q.SetTimestamp(p.Timestamp())
		q.SetDoubleValue(p.Sum() * r.factor)
		q.SetFlags(p.Flags())
	}
	return dst.DataPoints().Len()
}

// mergeByName folds metrics of the same unified name (e.g. input and output
// tokens from two engine counters) into one metric, as the spec has one
// metric per name.
func mergeByName(ms pmetric.MetricSlice) {
	if ms.Len() < 2 {
		return
	}
	// Sized at once: growing it cost a rehash and two allocations per
	// vLLM scrape.
	first := make(map[string]int, ms.Len())
	for i := 0; i < ms.Len(); i++ {
		name := ms.At(i).Name()
		j, seen := first[name]
		if !seen {
			first[name] = i
			continue
		}
		a, b := ms.At(j), ms.At(i)
		if a.Type() != b.Type() {
			continue
		}
		switch a.Type() {
		case pmetric.MetricTypeGauge:
			b.Gauge().DataPoints().MoveAndAppendTo(a.Gauge().DataPoints())
		case pmetric.MetricTypeSum:
			b.Sum().DataPoints().MoveAndAppendTo(a.Sum().DataPoints())
		case pmetric.MetricTypeHistogram:
			b.Histogram().DataPoints().MoveAndAppendTo(a.Histogram().DataPoints())
		}
	}
	ms.RemoveIf(isEmpty)
}

func isEmpty(m pmetric.Metric) bool {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len() == 0
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len() == 0
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().Len() == 0
	}
	return false
}

// derive computes the engine's derivations ds from its own metrics.
func (n *normalizer) derive(ms pmetric.MetricSlice, pc pointContext, ds []derivation) pmetric.MetricSlice {
	out := pmetric.NewMetricSlice()
	for _, d := range ds {
		num, den := findNumbers(ms, d.Numerator), findNumbers(ms, d.Denominator)
		if num.Len() == 0 || den.Len() == 0 {
			continue // the engine lacks an input: derive nothing
		}
		dst := pmetric.NewMetric()
		dst.SetName(d.Target)
		dst.SetUnit(d.target.Unit)
		dst.SetDescription(d.target.Description)
		g := dst.SetEmptyGauge().DataPoints()
		for i := 0; i < num.Len(); i++ {
			p := num.At(i)
			q, ok := sameLabels(den, p.Attributes())
			if !ok {
				continue
			}
			dv := value(q)
			if dv == 0 || math.IsNaN(dv) || math.IsInf(dv, 0) {
				continue // no meaningful ratio: never invent one
			}
			o := g.AppendEmpty()
			p.Attributes().CopyTo(o.Attributes())
			o.SetTimestamp(p.Timestamp())
			o.SetDoubleValue(value(p) / dv)
			labelPoint(n.rules.common, o.Attributes(), pc)
		}
		if g.Len() > 0 {
			dst.MoveTo(out.AppendEmpty())
		}
	}
	return out
}

func findNumbers(ms pmetric.MetricSlice, name string) pmetric.NumberDataPointSlice {
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		if m.Name() != name {
			continue
		}
		if dps, ok := pdatautil.NumberPoints(m); ok {
			return dps
		}
	}
	return pmetric.NewNumberDataPointSlice()
}

func sameLabels(dps pmetric.NumberDataPointSlice, attrs pcommon.Map) (pmetric.NumberDataPoint, bool) {
	for i := 0; i < dps.Len(); i++ {
		if dps.At(i).Attributes().Equal(attrs) {
			return dps.At(i), true
		}
	}
	return pmetric.NumberDataPoint{}, false
}

func value(p pmetric.NumberDataPoint) float64 {
	if p.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(p.IntValue())
	}
	return p.DoubleValue()
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor // import "github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor"

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// kvInputs are the unified KV-cache figures of one scope (one scrape of
// one engine) that the capacity is computed from.
type kvInputs struct {
	util, blockLimit, blockUsage, blockSize pmetric.NumberDataPointSlice
	tokenLimit, tokenUsage, running         pmetric.NumberDataPointSlice
}

// kvCapacity adds to one scope's unified metrics what its KV-cache
// configuration and utilization imply: blocks in use, capacity in tokens,
// memory (when the model's KV geometry is known) and fragmentation. It is
// stateless: everything comes from the same scrape, which is where an
// engine publishes its cache configuration next to its utilization. A
// figure the engine reports itself is never replaced.
//
// One engine process can serve several ranks (SGLang's dp_rank): a figure
// is paired with the utilization point of the same llm.engine.rank, and a
// figure without a rank (vLLM's cache configuration) applies to all.
func (n *normalizer) kvCapacity(ms pmetric.MetricSlice, pc pointContext) {
	// Most scopes (GPU gauges, applications, engines without a cache
	// configuration) have no capacity figure: find that out without
	// allocating (findNumbers makes an empty slice for a missing name).
	if !hasMetric(ms, spec.EngineKvCacheBlockLimit) && !hasMetric(ms, spec.EngineKvCacheTokenLimit) {
		return
	}
	in := kvInputs{
		util:       findNumbers(ms, spec.EngineKvCacheUtilization),
		blockLimit: findNumbers(ms, spec.EngineKvCacheBlockLimit),
		blockUsage: findNumbers(ms, spec.EngineKvCacheBlockUsage),
		blockSize:  findNumbers(ms, spec.EngineKvCacheBlockSize),
		tokenLimit: findNumbers(ms, spec.EngineKvCacheTokenLimit),
		tokenUsage: findNumbers(ms, spec.EngineKvCacheTokenUsage),
		running:    findNumbers(ms, spec.EngineRequestsRunning),
	}
	anchors := in.util
	if anchors.Len() == 0 {
		anchors = in.blockLimit
		if anchors.Len() == 0 {
			anchors = in.tokenLimit
		}
	}
	out := kvOutputs{blockUsage: pmetric.NewNumberDataPointSlice(), tokenLimit: pmetric.NewNumberDataPointSlice(),
		memLimit: pmetric.NewNumberDataPointSlice(), memUsage: pmetric.NewNumberDataPointSlice(), frag: pmetric.NewNumberDataPointSlice()}
	for i := 0; i < anchors.Len(); i++ {
		n.kvPoint(&in, anchors.At(i), pc, &out)
	}
	out.appendTo(ms)
}

// kvOutputs collects the computed points, one metric per name.
type kvOutputs struct {
	blockUsage, tokenLimit, memLimit, memUsage, frag pmetric.NumberDataPointSlice
}

// addKV appends to dst a computed point of value v with the anchor's
// attributes and time.
func addKV(dst pmetric.NumberDataPointSlice, a pmetric.NumberDataPoint, v float64) pmetric.NumberDataPoint {
	p := dst.AppendEmpty()
	a.Attributes().CopyTo(p.Attributes())
	p.Attributes().Remove(spec.AttrEngineKvCacheDtype)
	p.SetTimestamp(a.Timestamp())
	p.SetDoubleValue(v)
	return p
}

func (o *kvOutputs) appendTo(ms pmetric.MetricSlice) {
	for _, m := range []struct {
		name string
		dps  pmetric.NumberDataPointSlice
	}{
		{spec.EngineKvCacheBlockUsage, o.blockUsage}, {spec.EngineKvCacheTokenLimit, o.tokenLimit},
		{spec.EngineKvCacheMemoryLimit, o.memLimit}, {spec.EngineKvCacheMemoryUsage, o.memUsage},
		{spec.EngineKvCacheFragmentation, o.frag},
	} {
		if m.dps.Len() == 0 {
			continue
		}
		t, _ := spec.LookupMetric(m.name)
		dst := ms.AppendEmpty()
		dst.SetName(m.name)
		dst.SetUnit(t.Unit)
		dst.SetDescription(t.Description)
		m.dps.MoveAndAppendTo(dst.SetEmptyGauge().DataPoints())
	}
}

// kvPoint computes the figures of one utilization (or capacity) point.
func (n *normalizer) kvPoint(in *kvInputs, anchor pmetric.NumberDataPoint, pc pointContext, out *kvOutputs) {
	rank := rankOf(anchor)
	bl, haveBL := sameRank(in.blockLimit, rank)
	bs, haveBS := sameRank(in.blockSize, rank)
	util, haveUtil := sameRank(in.util, rank)
	blocks, blockSize := 0.0, 0.0
	if haveBL {
		blocks = value(bl)
	}
	if haveBS {
		blockSize = value(bs)
	}

	used, haveUsed := 0.0, false
	if p, ok := sameRank(in.blockUsage, rank); ok {
		used, haveUsed = value(p), true
	} else if haveBL && haveUtil {
		used, haveUsed = value(util)*blocks, true
		addKV(out.blockUsage, anchor, used)
	}

	capTokens, haveCap := 0.0, false
	if p, ok := sameRank(in.tokenLimit, rank); ok {
		capTokens, haveCap = value(p), true
	} else if haveBL && haveBS {
		capTokens, haveCap = blocks*blockSize, true
		addKV(out.tokenLimit, anchor, capTokens)
	}

	// Bytes: the model's geometry and the cache's dtype.
	var dtypeFrom []pmetric.NumberDataPoint
	if haveBL {
		dtypeFrom = append(dtypeFrom, bl)
	}
	if haveBS {
		dtypeFrom = append(dtypeFrom, bs)
	}
	if bpt, ok := n.bytesPerToken(anchor, dtypeFrom, pc); ok && haveCap {
		addKV(out.memLimit, anchor, capTokens*bpt)
		switch {
		case haveUsed && haveBS:
			addKV(out.memUsage, anchor, used*blockSize*bpt)
		case haveUtil:
			addKV(out.memUsage, anchor, value(util)*capTokens*bpt)
		}
	}

	// Fragmentation: token slots of the blocks in use that hold no token.
	if !haveUsed || !haveBS || used <= 0 {
		return
	}
	slots := used * blockSize
	if tu, ok := sameRank(in.tokenUsage, rank); ok {
		f := addKV(out.frag, anchor, clamp01(1-value(tu)/slots))
		f.Attributes().PutStr(spec.AttrEngineKvCacheFragmentationMethod, spec.KVFragmentationMeasured)
		return
	}
	if r, ok := sameRank(in.running, rank); ok && blockSize > 1 {
		f := addKV(out.frag, anchor, clamp01(value(r)*(blockSize-1)/2/slots))
		f.Attributes().PutStr(spec.AttrEngineKvCacheFragmentationMethod, spec.KVFragmentationEstimated)
	}
}

// bytesPerToken finds the model's KV geometry (configured first, then the
// built-in table) and the cache's element size (the dtype on the engine's
// cache configuration; "auto" is the model's).
func (n *normalizer) bytesPerToken(anchor pmetric.NumberDataPoint, dtypeFrom []pmetric.NumberDataPoint, pc pointContext) (float64, bool) {
	model := pc.model
	if v, ok := anchor.Attributes().Get(spec.AttrGenAIRequestModel); ok && v.Str() != "" {
		model = v.Str()
	}
	if model == "" {
		return 0, false
	}
	g, ok := n.kvModels[model]
	if !ok {
		if g, ok = spec.KnownKVGeometry(model); !ok {
			return 0, false
		}
	}
	dtype := ""
	for _, p := range dtypeFrom {
		if v, ok := p.Attributes().Get(spec.AttrEngineKvCacheDtype); ok {
			dtype = v.Str()
		}
	}
	b, ok := spec.KVDtypeBytes(dtype)
	if !ok {
		return 0, false // a dtype we cannot size: no bytes rather than wrong ones
	}
	return g.BytesPerToken(b), true
}

func rankOf(p pmetric.NumberDataPoint) string {
	if v, ok := p.Attributes().Get(spec.AttrEngineRank); ok {
		return v.AsString()
	}
	return ""
}

// sameRank returns the point of dps with the given llm.engine.rank, or the
// first point without a rank (a figure of the whole engine).
func sameRank(dps pmetric.NumberDataPointSlice, rank string) (pmetric.NumberDataPoint, bool) {
	var whole pmetric.NumberDataPoint
	found := false
	for i := 0; i < dps.Len(); i++ {
		p := dps.At(i)
		r, has := p.Attributes().Get(spec.AttrEngineRank)
		switch {
		case has && r.AsString() == rank:
			return p, true
		case !has && !found:
			whole, found = p, true
		}
	}
	return whole, found
}

func clamp01(v float64) float64 {
	return math.Max(0, math.Min(1, v))
}

func hasMetric(ms pmetric.MetricSlice, name string) bool {
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Name() == name {
			return true
		}
	}
	return false
}

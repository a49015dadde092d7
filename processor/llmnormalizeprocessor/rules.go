// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmnormalizeprocessor // import "github.com/llmops-otel/otelcol-llmops/processor/llmnormalizeprocessor"

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// rule is a validated mapping, compiled for the hot path.
type rule struct {
	spec.Mapping
	target spec.Metric
	factor float64
	match  []labelValue
	// key is the target and the selector: a deprecated alias's rule and
	// the current name's share it. aliased is true when some deprecated
	// rule has this key (the only keys processScope looks for).
	key     string
	aliased bool
	// renames is the common label renames merged with the mapping's own,
	// in a fixed order.
	renames []labelRename
	set     []labelValue
}

type labelValue struct{ key, value string }
type labelRename struct{ from, to string }

// derivation is a compiled spec.Derivation.
type derivation struct {
	spec.Derivation
	target spec.Metric
}

// rules indexes the compiled mappings by source name.
type rules struct {
	bySource    map[string][]*rule
	derivations map[string][]derivation // by engine
	// engines lists the engines whose resources this processor normalises;
	// unmapped metrics of those resources obey unmapped_metrics.
	engines map[string]bool
	// common applies only the common label renames (to derived points).
	common *rule
}

func compileRules(custom []CustomMapping) (*rules, error) {
	rs := &rules{bySource: map[string][]*rule{}, derivations: map[string][]derivation{}, engines: map[string]bool{},
		common: &rule{renames: sortedRenames(spec.CommonLabelRenames)}}
	all := spec.Mappings()
	for _, c := range custom {
		all = append(all, c.mapping())
	}
	for _, m := range all {
		if err := m.Validate(); err != nil {
			return nil, err
		}
		target, _ := spec.LookupMetric(m.Target)
		conv, _ := spec.ConversionFor(m.SourceUnit, target.Unit)
		r := &rule{Mapping: m, target: target, factor: conv.Factor}
		for k, v := range m.Match {
			r.match = append(r.match, labelValue{k, v})
		}
		renames := maps.Clone(spec.CommonLabelRenames)
		maps.Copy(renames, m.Labels)
		r.renames = sortedRenames(renames)
		for k, v := range m.Set {
			r.set = append(r.set, labelValue{k, v})
		}
		sort.Slice(r.match, func(i, j int) bool { return r.match[i].key < r.match[j].key })
		sort.Slice(r.set, func(i, j int) bool { return r.set[i].key < r.set[j].key })
		r.key = r.Target + matchKey(r)
		rs.bySource[m.Source] = append(rs.bySource[m.Source], r)
		rs.engines[m.Engine] = true
	}
	aliased := map[string]bool{}
	for _, bySource := range rs.bySource {
		for _, r := range bySource {
			if r.Deprecated {
				aliased[r.key] = true
			}
		}
	}
	for _, bySource := range rs.bySource {
		for _, r := range bySource {
			r.aliased = aliased[r.key]
		}
	}
	for _, d := range spec.Derivations() {
		t, ok := spec.LookupMetric(d.Target)
		if !ok {
			return nil, fmt.Errorf("derivation of %s: not a unified metric", d.Target)
		}
		rs.derivations[d.Engine] = append(rs.derivations[d.Engine], derivation{Derivation: d, target: t})
	}
	return rs, nil
}

// sortedRenames lists renames in a fixed order.
func sortedRenames(m map[string]string) []labelRename {
	out := make([]labelRename, 0, len(m))
	for from, to := range m {
		out = append(out, labelRename{from, to})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].from < out[j].from })
	return out
}

// dcgmEngine names the dcgm-exporter table, whose metrics are recognised on
// any resource (dcgm-exporter is scraped by the prometheus receiver, not by
// llmengine).
// The application table (spec.SourceApp) is recognised on any resource too.
const dcgmEngine = spec.SourceDCGM

// lookup returns the rules for a metric of a resource of the given engine.
// A leading "ray_" (vLLM under Ray Serve) is ignored.
func (rs *rules) lookup(name, engine string) []*rule {
	candidates := rs.bySource[name]
	if candidates == nil && strings.HasPrefix(name, spec.RayPrefix) {
		candidates = rs.bySource[name[len(spec.RayPrefix):]]
	}
	if len(candidates) == 0 {
		return nil
	}
	// Data without llm.engine.name (scraped by the prometheus receiver, or
	// sent over OTLP) is mapped when its name belongs to one engine only.
	if engine == "" {
		first := candidates[0].Engine
		for _, r := range candidates[1:] {
			if r.Engine != first {
				return nil
			}
		}
		return candidates
	}
	// Fast path: every candidate belongs to this engine (the usual case).
	all := true
	for _, r := range candidates {
		if !r.appliesTo(engine) {
			all = false
			break
		}
	}
	if all {
		return candidates
	}
	var out []*rule
	for _, r := range candidates {
		if r.appliesTo(engine) {
			out = append(out, r)
		}
	}
	return out
}

func (r *rule) appliesTo(engine string) bool {
	return r.Engine == engine || r.Engine == dcgmEngine || r.Engine == spec.SourceApp
}

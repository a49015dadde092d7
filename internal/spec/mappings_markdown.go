// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// mappingEngineOrder orders the sections of docs/engine-mappings.md; engines
// not listed follow in alphabetical order.
var mappingEngineOrder = []string{EngineVLLM, EngineNIM, EngineSGLang, EngineTGI, EngineTRTLLM, EngineTriton, EngineLlamaCpp, SourceDCGM, SourceApp}

// mappingEngines returns every engine that has a table or a derivation, in
// document order.
func mappingEngines() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range mappingEngineOrder {
		if _, ok := mappingTables[e]; ok {
			out = append(out, e)
			seen[e] = true
		}
	}
	var rest []string
	for e := range mappingTables {
		if !seen[e] {
			rest = append(rest, e)
			seen[e] = true
		}
	}
	for _, d := range derivations {
		if !seen[d.Engine] {
			rest = append(rest, d.Engine)
			seen[d.Engine] = true
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// WriteMappingsMarkdown renders the built-in engine mappings and derivations
// as the Markdown document committed at docs/engine-mappings.md.
func WriteMappingsMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("<!-- Generated from internal/spec (mappings_*.go). DO NOT EDIT. -->\n\n")
	b.WriteString("# Engine metric mappings\n\n")
	b.WriteString("How `llmnormalize` turns each engine's native metric names, as the `llmengine` receiver emits them, ")
	b.WriteString("into the unified names of [metric-spec.md](metric-spec.md). ")
	b.WriteString("Values (and histogram bounds and sums) are multiplied by the factor. ")
	b.WriteString("Every mapping also renames the labels ")
	b.WriteString(renameList(CommonLabelRenames))
	b.WriteString(". A deprecated name is an older alias, dropped when the current name arrives in the same scrape.\n\n")

	for _, e := range mappingEngines() {
		fmt.Fprintf(&b, "## `%s`\n\n", e)
		table := mappingTables[e]
		if len(table) == 0 {
			b.WriteString("No direct mappings.\n\n")
		} else {
			b.WriteString("| source | match | type | unit | → unified | factor | labels / set | notes | deprecated |\n")
			b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
			for _, m := range table {
				factor := "?"
				if t, ok := LookupMetric(m.Target); ok {
					if c, err := ConversionFor(m.SourceUnit, t.Unit); err == nil {
						factor = strconv.FormatFloat(c.Factor, 'g', -1, 64)
					}
				}
				dep := ""
				if m.Deprecated {
					dep = "yes"
				}
				typ := m.SourceType
				if m.ValueLabel != "" {
					typ += " (value: label `" + m.ValueLabel + "`)"
				}
				fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` | `%s` | %s | %s | %s | %s |\n",
					m.Source, matchList(m.Match), typ, m.SourceUnit, m.Target, factor,
					labelsAndSet(m.Labels, m.Set), escapeCell(m.Note), dep)
			}
			b.WriteString("\n")
		}
		var ds []Derivation
		for _, d := range derivations {
			if d.Engine == e {
				ds = append(ds, d)
			}
		}
		if len(ds) > 0 {
			b.WriteString("Derived:\n\n| unified | = numerator | / denominator | notes |\n|---|---|---|---|\n")
			for _, d := range ds {
				fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s |\n", d.Target, d.Numerator, d.Denominator, escapeCell(d.Note))
			}
			b.WriteString("\n")
		}
		if kept := KeptEngineLabels(e); len(kept) > 0 {
			b.WriteString("Labels kept as the engine names them on the unified metrics (they tell apart series of one engine that no unified attribute describes): `")
			b.WriteString(strings.Join(kept, "`, `"))
			b.WriteString("`.\n\n")
		}
	}
	_, err := io.WriteString(w, strings.TrimSuffix(b.String(), "\n"))
	return err
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func renameList(m map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("`%s` → `%s`", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func matchList(m map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("`%s=%s`", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func labelsAndSet(labels, set map[string]string) string {
	var parts []string
	if len(labels) > 0 {
		parts = append(parts, renameList(labels))
	}
	for _, k := range sortedKeys(set) {
		parts = append(parts, fmt.Sprintf("`%s=%s`", k, set[k]))
	}
	return strings.Join(parts, "; ")
}

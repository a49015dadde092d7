// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var fixtureDir = filepath.Join("..", "..", "tests", "enginereplay", "fixtures")

// realButAbsent lists engine-native names that are mapped (or used by a
// derivation) although the engine's replay fixture does not contain them:
// names of other releases or of optional features. Anything mapped and
// neither in the fixture nor here is taken for a typo.
var realButAbsent = map[string]map[string]string{
	EngineVLLM: {
		"vllm:gpu_prefix_cache_queries_total": "older name, replaced by vllm:prefix_cache_queries_total",
		"vllm:gpu_prefix_cache_hits_total":    "older name, replaced by vllm:prefix_cache_hits_total",
	},
	EngineNIM: {
		"num_preemptions_total": "vLLM V0 counter; not in the documented NIM set the fixture follows",
	},
	EngineTGI: {
		"tgi_request_duration":                     "fixture is the first 15,176 bytes of a longer payload",
		"tgi_request_queue_duration":               "fixture is truncated",
		"tgi_request_generated_tokens":             "fixture is truncated",
		"tgi_request_mean_time_per_token_duration": "histogram listed in TGI's metrics documentation; fixture is truncated",
		"tgi_batch_max_total_tokens":               "gauge set once at warm-up by the router; fixture is truncated",
	},
	EngineTriton: {
		"nv_inference_first_response_histogram_ms": "only with histogram latencies enabled (--metrics-config histogram_latencies=true)",
	},
}

// fixtureFamilies reads the # TYPE lines of a Prometheus text fixture: family
// name → type, plus the sample lines.
func fixtureFamilies(t *testing.T, path string) (map[string]string, []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	var samples []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]] = f[3]
		} else if line != "" && !strings.HasPrefix(line, "#") {
			samples = append(samples, line)
		}
	}
	return types, samples
}

func matchKey(m Mapping) string {
	var parts []string
	for _, k := range sortedKeys(m.Match) {
		parts = append(parts, k+"="+m.Match[k])
	}
	k := m.Source + "{" + strings.Join(parts, ",") + "}"
	if m.ValueLabel != "" {
		// Settings of one info gauge are distinct sources.
		k += "[" + m.ValueLabel + "]"
	}
	return k
}

func TestBuiltinMappingsValidate(t *testing.T) {
	if len(Mappings()) == 0 {
		t.Fatal("no built-in mappings")
	}
	for engine, table := range mappingTables {
		if len(table) == 0 {
			t.Errorf("%s: empty table", engine)
		}
		for _, m := range table {
			if m.Engine != engine {
				t.Errorf("%s: mapping of %s says engine %q", engine, m.Source, m.Engine)
			}
			if err := m.Validate(); err != nil {
				t.Errorf("%s: %v", engine, err)
			}
		}
	}
}

func TestNoDuplicateSources(t *testing.T) {
	for engine, table := range mappingTables {
		seen := map[string]bool{}
		current := map[string]bool{} // targets of non-deprecated mappings
		for _, m := range table {
			if !m.Deprecated {
				current[m.Target] = true
			}
		}
		for _, m := range table {
			if m.Deprecated {
				if !current[m.Target] {
					t.Errorf("%s: deprecated %s maps to %s, which no current name maps to", engine, m.Source, m.Target)
				}
				continue
			}
			k := matchKey(m)
			if seen[k] {
				t.Errorf("%s: %s is mapped twice", engine, k)
			}
			seen[k] = true
		}
		// A deprecated alias must not also be mapped as current.
		for _, m := range table {
			if m.Deprecated && seen[matchKey(m)] {
				t.Errorf("%s: %s is both current and deprecated", engine, matchKey(m))
			}
		}
	}
}

func TestDerivations(t *testing.T) {
	mentioned := map[string]bool{}
	for _, m := range Mappings() {
		mentioned[m.Source] = true
	}
	for _, names := range realButAbsent {
		for n := range names {
			mentioned[n] = true
		}
	}
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.prom"))
	for _, f := range files {
		types, _ := fixtureFamilies(t, f)
		for n := range types {
			mentioned[n] = true
		}
	}
	for _, d := range Derivations() {
		m, ok := LookupMetric(d.Target)
		if !ok {
			t.Errorf("derivation %s/%s: target is not a unified metric", d.Engine, d.Target)
		} else if m.Instrument != Gauge {
			t.Errorf("derivation %s/%s: a ratio can only be a gauge, not a %s", d.Engine, d.Target, m.Instrument)
		}
		if d.Engine == "" {
			t.Errorf("derivation %s: no engine", d.Target)
		}
		for _, n := range []string{d.Numerator, d.Denominator} {
			if !mentioned[n] {
				t.Errorf("derivation %s/%s: %q is in no mapping table, fixture or list of known names", d.Engine, d.Target, n)
			}
		}
		if d.Numerator == d.Denominator {
			t.Errorf("derivation %s/%s: numerator and denominator are the same", d.Engine, d.Target)
		}
	}
}

// TestMappedNamesExistInFixtures catches typos: every name an engine's table
// or derivations use is a family of that engine's replay fixture (with the
// right type, and with the matched label values), unless realButAbsent
// explains why not.
func TestMappedNamesExistInFixtures(t *testing.T) {
	for _, engine := range mappingEngines() {
		path := filepath.Join(fixtureDir, engine+".prom")
		if _, err := os.Stat(path); err != nil {
			t.Logf("%s: no fixture, names not checked", engine)
			continue
		}
		types, samples := fixtureFamilies(t, path)
		absent := realButAbsent[engine]
		check := func(name, wantType string) bool {
			got, inFixture := types[name]
			_, excused := absent[name]
			switch {
			case inFixture && excused:
				t.Errorf("%s: %s is in the fixture; remove it from realButAbsent", engine, name)
			case !inFixture && !excused:
				t.Errorf("%s: %s is not in %s (typo?)", engine, name, filepath.Base(path))
			case inFixture && wantType != "" && got != wantType:
				t.Errorf("%s: %s is a %s in the fixture, the mapping says %s", engine, name, got, wantType)
			}
			return inFixture
		}
		for _, m := range mappingTables[engine] {
			want := m.SourceType
			if want == "histogram_sum" {
				want = "histogram"
			}
			if !check(m.Source, want) {
				continue
			}
			for k, v := range m.Match {
				found := false
				for _, s := range samples {
					if strings.HasPrefix(s, m.Source+"{") && strings.Contains(s, k+`="`+v+`"`) {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("%s: no %s point with %s=%q in the fixture", engine, m.Source, k, v)
				}
			}
		}
		for _, d := range derivations {
			if d.Engine == engine {
				check(d.Numerator, "")
				check(d.Denominator, "")
			}
		}
		for name := range absent {
			used := false
			for _, m := range mappingTables[engine] {
				used = used || m.Source == name
			}
			for _, d := range derivations {
				used = used || d.Engine == engine && (d.Numerator == name || d.Denominator == name)
			}
			if !used {
				t.Errorf("%s: realButAbsent lists %s, which nothing uses", engine, name)
			}
		}
	}
	provided := providedByEngine()
	for _, engine := range mappingEngines() {
		t.Logf("%s provides: %s", engine, strings.Join(provided[engine], ", "))
	}
}

// providedByEngine lists the unified metrics each engine's table and
// derivations produce, sorted.
func providedByEngine() map[string][]string {
	sets := map[string]map[string]bool{}
	add := func(engine, target string) {
		if sets[engine] == nil {
			sets[engine] = map[string]bool{}
		}
		sets[engine][target] = true
	}
	for engine, table := range mappingTables {
		for _, m := range table {
			add(engine, m.Target)
		}
	}
	for _, d := range derivations {
		add(d.Engine, d.Target)
	}
	out := map[string][]string{}
	for engine, set := range sets {
		for name := range set {
			out[engine] = append(out[engine], name)
		}
		sort.Strings(out[engine])
	}
	return out
}

// TestEngineCoverage pins which unified metrics each engine provides
// (mapped or derived), so that adding or losing one is a deliberate edit.
func TestEngineCoverage(t *testing.T) {
	engineCore := []string{EngineRequestsRunning, EngineRequestsWaiting, EngineKvCacheUtilization, EngineTokens}
	want := map[string][]string{
		EngineVLLM: append([]string{EnginePrefixCacheQueries, EnginePrefixCacheHits, GenAIServerTimeToFirstToken,
			GenAIServerTimePerOutputToken, EngineInterTokenLatency, GenAIServerRequestDuration, EngineRequestQueueDuration,
			EngineRequestsFinished, EnginePreemptions, EngineKvCacheBlockLimit, EngineKvCacheBlockSize}, engineCore...),
		EngineNIM: append([]string{GenAIServerTimeToFirstToken, EngineInterTokenLatency,
			GenAIServerRequestDuration, EngineRequestsFinished, EnginePreemptions}, engineCore...),
		EngineSGLang: append([]string{EnginePrefixCacheHits, GenAIServerTimeToFirstToken,
			EngineInterTokenLatency, GenAIServerRequestDuration, EngineRequestQueueDuration,
			EngineRequestsFinished, EngineKvCacheTokenLimit, EngineKvCacheTokenUsage}, engineCore...),
		EngineTGI: append([]string{GenAIServerRequestDuration, GenAIServerTimePerOutputToken, EngineRequestQueueDuration,
			EngineRequestsFinished}, engineCore...),
		EngineTRTLLM: append([]string{GenAIServerTimeToFirstToken, GenAIServerTimePerOutputToken, GenAIServerRequestDuration,
			EngineRequestQueueDuration, EngineRequestsFinished}, engineCore...),
		EngineTriton: {EngineRequestsRunning, EngineRequestsWaiting, EngineKvCacheUtilization,
			EngineKvCacheBlockLimit, EngineKvCacheBlockUsage, EngineKvCacheBlockSize,
			EngineRequestsFinished, EngineRequestTime, EngineRequestQueueTime, GenAIServerTimeToFirstToken,
			HwGpuUtilization, HwPower, HwEnergy, HwGpuMemoryUsage, HwGpuMemoryLimit},
		EngineLlamaCpp: append([]string{EngineTimePerOutputTokenMean}, engineCore...),
		SourceApp:      {AppHallucinationRate, AppOutputConsistency, AppRAGRelevance, AppEmbeddingNorm, AppPromptInjectionScore},
		SourceDCGM: {HwGpuMemoryUsage, HwGpuMemoryReserved, HwGpuUtilization, HwGpuMemoryControllerUtilization,
			HwGpuSmUtilization, HwGpuTensorUtilization, HwGpuDramUtilization, HwGpuTemperature,
			HwGpuClockFrequency, HwPower, HwEnergy, HwErrors},
	}
	got := providedByEngine()
	for engine := range got {
		if _, ok := want[engine]; !ok {
			t.Errorf("%s: engine not in the expected table", engine)
		}
	}
	for engine, names := range want {
		w := append([]string(nil), names...)
		sort.Strings(w)
		if strings.Join(w, " ") != strings.Join(got[engine], " ") {
			t.Errorf("%s provides\n  %v\nwant\n  %v", engine, got[engine], w)
		}
	}
}

// TestMappingsDocumentIsUpToDate fails when docs/engine-mappings.md was not
// regenerated after a change to the mapping tables. UPDATE_DOCS=1 rewrites it.
func TestMappingsDocumentIsUpToDate(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "engine-mappings.md")
	var fresh bytes.Buffer
	if err := WriteMappingsMarkdown(&fresh); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, fresh.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v (run the test with UPDATE_DOCS=1)", path, err)
	}
	if !bytes.Equal(committed, fresh.Bytes()) {
		t.Fatalf("%s is stale: the mapping tables changed; run `UPDATE_DOCS=1 go test ./internal/spec -run TestMappingsDocumentIsUpToDate`", path)
	}
}

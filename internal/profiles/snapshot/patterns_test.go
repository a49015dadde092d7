// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// leakRecords are the leak-suspect records of an import, by "device|site".
func leakRecords(t *testing.T, res Result) map[string]plog.LogRecord {
	t.Helper()
	out := map[string]plog.LogRecord{}
	lrs := res.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i := 0; i < lrs.Len(); i++ {
		a := lrs.At(i).Attributes()
		if k, _ := a.Get(spec.IncidentKind); k.Str() != spec.IncidentKindLeakSuspect {
			continue
		}
		site, _ := a.Get(spec.AttrProfileModulePath)
		dev, _ := a.Get(spec.AttrProfileDevice)
		out[dev.AsString()+"|"+site.Str()] = lrs.At(i)
	}
	return out
}

// checkPattern: lr carries the pattern gen_snapshot.py computed for its
// site, or none when it computed none.
func checkPattern(t *testing.T, exp expectedFile, lr plog.LogRecord) {
	t.Helper()
	a := lr.Attributes()
	site, _ := a.Get(spec.AttrProfileModulePath)
	dev, _ := a.Get(spec.AttrProfileDevice)
	key := dev.AsString() + "|" + site.Str()
	want, ok := exp.Patterns[key]
	p, has := a.Get(spec.AttrProfileLeakPattern)
	if !ok {
		if has {
			t.Errorf("%s: no pattern expected, got %s (%s)", key, p.Str(), lr.Body().Str())
		}
		_, has = a.Get(spec.AttrProfileLeakSteps)
		assert.False(t, has, key)
		return
	}
	require.True(t, has, "%s: want pattern %s", key, want.Pattern)
	assert.Equal(t, want.Pattern, p.Str(), key)
	fr, _ := a.Get(spec.AttrProfileLeakForwardFrame)
	assert.Equal(t, want.Frame, fr.Str(), key)
	st, _ := a.Get(spec.AttrProfileLeakSteps)
	assert.Equal(t, want.Steps, st.Int(), key)
	g, _ := a.Get(spec.AttrProfileLeakGrowthPerStep)
	// Python fits exactly (fractions), Go in float64: ±1 byte of rounding.
	assert.InDelta(t, want.GrowthPerStep, g.Int(), 1, key)
	assert.Contains(t, lr.Body().Str(), "forward at "+strings.TrimSuffix(want.Frame, " forward"), key)
}

// TestLeakPatterns: the pattern scenario of gen_snapshot.py has one site
// per pattern, a per-layer cache allocated in one step (a suspect without
// a pattern), and healthy activations (no suspect); what the generator
// computed independently is what the import finds.
func TestLeakPatterns(t *testing.T) {
	exp := loadExpectedFile(t, "testdata/snapshot_patterns.expected.json")
	require.Len(t, exp.Patterns, 2)
	res, err := ImportFile("testdata/snapshot_patterns.pickle", Options{})
	require.NoError(t, err)
	leaks := leakRecords(t, res)
	got := map[string]int64{}
	for k, lr := range leaks {
		b, _ := lr.Attributes().Get(spec.AttrProfileOutstandingBytes)
		got[k] = b.Int()
		checkPattern(t, exp, lr)
	}
	assert.Equal(t, exp.LeaksBySite, got)
	assert.Equal(t, 2, res.Summary.LeakPatterns)
	for _, k := range exp.HealthySites {
		assert.NotContains(t, leaks, k, "healthy site reported")
	}

	kept := leaks["0|blocks.py:57 forward"]
	p, _ := kept.Attributes().Get(spec.AttrProfileLeakPattern)
	assert.Equal(t, spec.LeakPatternKeptAcrossSteps, p.Str())
	assert.Contains(t, kept.Body().Str(), "kept across steps: 46 steps of forward at blocks.py:57 each left 2 MiB alive (92 MiB)")

	grow := leaks["0|history.py:19 append"]
	p, _ = grow.Attributes().Get(spec.AttrProfileLeakPattern)
	assert.Equal(t, spec.LeakPatternGrowingReallocation, p.Str())
	assert.Contains(t, grow.Body().Str(), "growing reallocation: 48 steps of forward at history.py:44 each allocated a larger tensor here and freed the previous one, 137.4 KiB more per step")
	// Outstanding is the one live allocation, late in the ring: only the
	// pattern makes it a suspect.
	n, _ := grow.Attributes().Get(spec.AttrProfileOutstandingAllocations)
	assert.Equal(t, int64(1), n.Int())
	// The incident starts at the pattern's first step.
	st, _ := grow.Attributes().Get(spec.IncidentStartTime)
	ks, _ := kept.Attributes().Get(spec.IncidentStartTime)
	assert.Less(t, st.Str(), ks.Str(), "the history grew from the ring's first step")

	lazy := leaks["0|blocks.py:30 forward"]
	_, has := lazy.Attributes().Get(spec.AttrProfileLeakPattern)
	assert.False(t, has, "caches allocated in one step are not kept across steps")
}

// TestLeakPatternsNeedDetection fails when detection is off or removed:
// without it, the growing tensor (late, one allocation) is no suspect and
// no record carries a pattern.
func TestLeakPatternsNeedDetection(t *testing.T) {
	data, err := os.ReadFile("testdata/snapshot_patterns.pickle")
	require.NoError(t, err)
	with, err := Import(bytes.NewReader(data), "p.pickle", Options{})
	require.NoError(t, err)
	without, err := Import(bytes.NewReader(data), "p.pickle", Options{noPatterns: true})
	require.NoError(t, err)
	assert.Contains(t, leakRecords(t, with), "0|history.py:19 append")
	assert.NotContains(t, leakRecords(t, without), "0|history.py:19 append")
	for k, lr := range leakRecords(t, without) {
		_, has := lr.Attributes().Get(spec.AttrProfileLeakPattern)
		assert.False(t, has, k)
	}
	assert.Equal(t, 0, without.Summary.LeakPatterns)
	assert.Equal(t, 2, with.Summary.LeakPatterns)
}

// BenchmarkImportLeakPatterns compares the import with and without the
// leak-pattern analysis (the replay's per-stack record is kept either
// way), on the committed snapshots and, when SNAPSHOT_BENCH_FILE names one,
// a larger one (gen_snapshot.py big FILE --mb 12).
//
//	go test -run '^$' -bench ImportLeakPatterns -benchmem ./internal/profiles/snapshot/
func BenchmarkImportLeakPatterns(b *testing.B) {
	files := []string{"testdata/snapshot_p2.pickle", "testdata/snapshot_patterns.pickle"}
	if f := os.Getenv("SNAPSHOT_BENCH_FILE"); f != "" {
		files = append(files, f)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(b, err)
		for _, mode := range []struct {
			name string
			off  bool
		}{{"patterns", false}, {"no_patterns", true}} {
			b.Run(filepath.Base(f)+"/"+mode.name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Import(bytes.NewReader(data), "bench.pickle", Options{noPatterns: mode.off}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

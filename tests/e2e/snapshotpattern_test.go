// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// TestSnapshotLeakPatternThroughBinary: the built collector imports a CUDA
// memory snapshot whose allocation history has both leak patterns
// (gen_snapshot.py's pattern scenario), and the leak-suspect records that
// reach the OTLP backend through the logs pipeline carry each pattern with
// its forward frame, growth per step and steps, as the generator computed
// them.
func TestSnapshotLeakPatternThroughBinary(t *testing.T) {
	backend := harness.StartBackend(t)
	watch := t.TempDir()
	src := filepath.Join(harness.RepoRoot(t), "internal", "profiles", "snapshot", "testdata", "snapshot_patterns.pickle")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(watch, "rank0.pickle.tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(watch, "rank0.pickle")); err != nil {
		t.Fatal(err)
	}
	health := harness.FreePort(t)
	harness.StartCollector(t, harness.Options{Name: "agent", HealthPort: health, Config: harness.AgentConfig(fmt.Sprintf(`
receivers:
  profileimport:
    include: [%s/*.pickle]
    poll_interval: 100ms
    settle_time: 200ms
`, watch)+backend.OTLPExporter(), `
    logs:
      receivers: [profileimport]
      exporters: [otlp]
`, health)})

	// What gen_snapshot.py found in the allocation history it simulated.
	want := map[string]struct {
		pattern, frame string
		steps, growth  int64
	}{
		"blocks.py:57 forward": {spec.LeakPatternKeptAcrossSteps, "blocks.py:57 forward", 46, 2 << 20},
		"history.py:19 append": {spec.LeakPatternGrowingReallocation, "history.py:44 forward", 48, 140683},
	}
	var got map[string]plog.LogRecord
	harness.Eventually(t, 60*time.Second, func() (bool, string) {
		got = leakSuspects(backend.Logs(t))
		return len(got) >= 3, fmt.Sprintf("%d leak suspects at the backend, want 3", len(got))
	})
	for site, w := range want {
		lr, ok := got[site]
		if !ok {
			t.Fatalf("no leak suspect for %s: %v", site, siteNames(got))
		}
		a := lr.Attributes().AsRaw()
		if a[spec.AttrProfileLeakPattern] != w.pattern || a[spec.AttrProfileLeakForwardFrame] != w.frame ||
			a[spec.AttrProfileLeakSteps] != w.steps || a[spec.AttrProfileLeakGrowthPerStep] != w.growth {
			t.Errorf("%s: pattern attributes %v, want %+v", site, a, w)
		}
		if !strings.Contains(lr.Body().Str(), strings.ReplaceAll(w.pattern, "_", " ")+":") {
			t.Errorf("%s: body does not name the pattern: %s", site, lr.Body().Str())
		}
	}
	// The per-layer caches of the first step: a suspect, not a pattern.
	if lr, ok := got["blocks.py:30 forward"]; !ok {
		t.Errorf("no leak suspect for the first step's caches: %v", siteNames(got))
	} else if _, has := lr.Attributes().Get(spec.AttrProfileLeakPattern); has {
		t.Errorf("caches allocated in one step reported with a pattern: %s", lr.Body().Str())
	}
	// The healthy per-step activations are not suspects.
	for _, site := range []string{"blocks.py:61 forward", "blocks.py:66 forward"} {
		if _, ok := got[site]; ok {
			t.Errorf("healthy activation site %s reported", site)
		}
	}
}

// leakSuspects are the leak-suspect records of ld, by allocation site.
func leakSuspects(ld plog.Logs) map[string]plog.LogRecord {
	out := map[string]plog.LogRecord{}
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		sls := ld.ResourceLogs().At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				a := lrs.At(k).Attributes()
				if v, ok := a.Get(spec.IncidentKind); !ok || v.Str() != spec.IncidentKindLeakSuspect {
					continue
				}
				if v, ok := a.Get(spec.AttrProfileModulePath); ok {
					out[v.Str()] = lrs.At(k)
				}
			}
		}
	}
	return out
}

func siteNames(m map[string]plog.LogRecord) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

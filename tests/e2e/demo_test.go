// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// TestDemoShortRun runs the README's demo command in its short mode, as CI
// does (make demo DEMO_DURATION=60), and checks what a newcomer would see:
// the leak (with the process, GPU and layer) and its update, the KV
// saturation superseding the latency spike it caused, the throttled GPU and
// the XID, nothing left running, and a report that
// Chromium renders with its charts and without network requests.
func TestDemoShortRun(t *testing.T) {
	root := harness.RepoRoot(t)
	work := t.TempDir()
	dir := filepath.Join(work, "demo")
	reportPath := filepath.Join(work, "demo-report.html")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "demo", "DEMO_DURATION=60",
		"DEMO_ARGS=-dir "+dir+" -report "+reportPath)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("make demo took %s; output:\n%s", time.Since(start).Round(time.Second), tailOf(out.String(), 6000))
	if err != nil {
		t.Fatalf("make demo: %v", err)
	}

	// Nothing the demo started may outlive it: no process carries its
	// working directory in its environment.
	if left := processesWithEnv("LLMOPS_DEMO_DIR=" + dir); len(left) > 0 {
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("processes left running after the demo: %v", left)
	}

	// The incidents, from what the collector exported.
	type key struct{ kind, hw string }
	got := map[key]map[string]any{}
	var all []string
	var records []map[string]any // every incident record, in order
	readLines(t, filepath.Join(dir, "out", "logs.jsonl"), func(line []byte) {
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(line)
		if err != nil {
			t.Fatalf("logs.jsonl: %v", err)
		}
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					a := lrs.At(k).Attributes().AsRaw()
					kind, _ := a["incident.kind"].(string)
					if kind != "" {
						records = append(records, a)
					}
					if kind == "" || a["incident.state"] != "firing" {
						continue
					}
					hw, _ := a["hw.id"].(string)
					all = append(all, kind+" "+hw+": "+lrs.At(k).Body().Str())
					if _, ok := got[key{kind, hw}]; !ok {
						got[key{kind, hw}] = a
					}
				}
			}
		}
	})
	const gpu = "GPU-5d1e7a42-0c3b-4f1a-8e2d-7b6c0000000"
	leak, ok := got[key{"gpu_memory_leak", gpu + "0"}]
	if !ok {
		t.Fatalf("no gpu_memory_leak on GPU 0; incidents:\n%s", strings.Join(all, "\n"))
	}
	if leak["process.pid"] != int64(31337) || !strings.HasSuffix(leak["incident.layer"].(string), "LlamaAttention_12") {
		t.Errorf("leak incident: pid %v layer %v", leak["process.pid"], leak["incident.layer"])
	}
	for _, want := range []key{{"kv_cache_saturation", gpu + "1"}, {"gpu_throttling", gpu + "3"}, {"xid_error", gpu + "2"}} {
		if _, ok := got[want]; !ok {
			t.Errorf("no %s on %s; incidents:\n%s", want.kind, want.hw, strings.Join(all, "\n"))
		}
	}
	if _, ok := got[key{"gpu_memory_leak", gpu + "1"}]; ok {
		t.Error("the KV engine's flat memory was reported as a leak")
	}
	// The story unfolds: the leak triples at 40 s and its incident is
	// updated; the second vLLM's latency climbs before its KV cache
	// saturates, and the latency incident is superseded by the KV one.
	var updatedLeak, superseded bool
	kvID, _ := got[key{"kv_cache_saturation", gpu + "1"}]["incident.id"].(string)
	for _, a := range records {
		if a["incident.id"] == leak["incident.id"] && a["incident.state"] == "firing" {
			if n, _ := a["incident.update"].(int64); n >= 1 && strings.Contains(fmt.Sprint(a["incident.change"]), "memory.growth_rate") {
				updatedLeak = true
			}
		}
		if a["incident.kind"] == "latency_spike" && a["incident.state"] == "resolved" &&
			a["incident.resolution"] == "superseded" && kvID != "" && a["incident.superseded_by"] == kvID {
			superseded = true
		}
	}
	if !updatedLeak {
		t.Errorf("no update of the leak incident with its new growth rate; incidents:\n%s", strings.Join(all, "\n"))
	}
	if !superseded {
		t.Errorf("no latency_spike superseded by the KV saturation %q; incidents:\n%s", kvID, strings.Join(all, "\n"))
	}

	// The report.
	html, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatalf("no report: %v", err)
	}
	for _, chart := range []string{"gpu-memory", "kv-cache", "latency-p99", "token-rate"} {
		if !bytes.Contains(html, []byte(`data-chart="`+chart+`"`)) {
			t.Errorf("report lacks the %s chart", chart)
		}
	}
	if !bytes.Contains(html, []byte("LlamaAttention_12")) {
		t.Error("report lacks the leak's layer")
	}
	harness.CheckReportInChromium(t, reportPath, []string{"gpu-memory", "kv-cache", "latency-p99", "token-rate"})
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func readLines(t *testing.T, path string, fn func([]byte)) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for sc.Scan() {
		fn(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// processesWithEnv lists processes whose environment contains kv.
func processesWithEnv(kv string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, v := range bytes.Split(env, []byte{0}) {
			if string(v) == kv {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

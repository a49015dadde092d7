// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command snapshot compares the CUDA memory snapshot import of the
// profileimport receiver (internal/profiles/snapshot)
// with what users would otherwise run, Python's C unpickler
// (pickle.load, the floor under torch's memory_viz and any script reading a
// snapshot), on the same generated snapshot of ≥100 MB (written by the
// package's testdata/gen_snapshot.py, cached under the system temp dir).
// Both sides run as child processes in one run, timed wall-clock, peak RSS
// by /usr/bin/time -v when present (else the child's ru_maxrss). Our side is
// the snapshotimport command, built from the root module (the package is
// internal to the receiver, so this module cannot import it): the full
// import (decode, allocator state, sites, leak suspects, OOMs, metrics and
// logs built). Targets: no slower than pickle.load, peak RSS < 2× the file.
//
//	go run ./snapshot [-size-mb 110] [-runs 3] [-dir DIR]   (from bench/)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/llmops-otel/otelcol-llmops/bench/internal/benchutil"
)

const pythonLoad = `import pickle,sys; pickle.load(open(sys.argv[1],"rb"))`

const pkg = "internal/profiles/snapshot"

func main() {
	sizeMB := flag.Int("size-mb", 110, "approximate size of the generated snapshot, MB")
	runs := flag.Int("runs", 3, "runs per side (the fastest is reported, with the largest RSS)")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "otelcol-llmops-bench-snapshot"), "where the generated snapshot is kept between runs")
	python := benchutil.PythonFlag("to compare with and to generate the snapshot")
	flag.Parse()
	if err := run(*sizeMB, *runs, *dir, *python); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type summary struct {
	TraceEntries     int64 `json:"trace_entries"`
	Segments         int64 `json:"segments"`
	Blocks           int64 `json:"blocks"`
	OutstandingBytes int64 `json:"outstanding_bytes"`
	LeakSuspects     int   `json:"leak_suspects"`
	OOMs             int64 `json:"ooms"`
	MetricPoints     int   `json:"metric_points"`
}

func run(sizeMB, runs int, dir, pythonCmd string) error {
	root, err := benchutil.RepoRoot()
	if err != nil {
		return err
	}
	python, err := benchutil.Python(pythonCmd)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	importer := filepath.Join(dir, "snapshotimport")
	build := exec.CommandContext(context.Background(), "go", "build", "-o", importer, "./"+pkg+"/cmd/snapshotimport")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building snapshotimport: %w\n%s", err, out)
	}
	file := filepath.Join(dir, fmt.Sprintf("generated-%dmb.pickle", sizeMB))
	if _, err := os.Stat(file); err != nil {
		fmt.Fprintf(os.Stderr, "generating %s (about a minute; cached for later runs)…\n", file)
		tmp := file + ".partial"
		gen := exec.CommandContext(context.Background(), python, filepath.Join(root, pkg, "testdata", "gen_snapshot.py"), "big", tmp, "--mb", strconv.Itoa(sizeMB))
		if out, err := gen.CombinedOutput(); err != nil {
			_ = os.Remove(tmp) // the generator's error is the one to report
			return fmt.Errorf("generating the snapshot: %w\n%s", err, out)
		}
		if err := os.Rename(tmp, file); err != nil {
			return err
		}
	}
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	mb := float64(st.Size()) / 1e6

	py, err := benchutil.Measure(runs, python, "-c", pythonLoad, file)
	if err != nil {
		return fmt.Errorf("python: %w", err)
	}
	ours, err := benchutil.Measure(runs, importer, file)
	if err != nil {
		return fmt.Errorf("ours: %w", err)
	}
	var s summary
	if err := json.Unmarshal(ours.Stdout, &s); err != nil {
		return fmt.Errorf("snapshotimport output %q: %w", ours.Stdout, err)
	}
	rssMethod := "ru_maxrss of the child (getrusage)"
	if benchutil.TimeV() != "" {
		rssMethod = "/usr/bin/time -v"
	}
	fmt.Printf("CUDA memory snapshot (%s, %.1f MB, protocol 2 as PyTorch writes it; %d trace entries, %d segments, %d blocks)\n",
		filepath.Base(file), mb, s.TraceEntries, s.Segments, s.Blocks)
	fmt.Printf("python: %s -c '%s' FILE\nours:   snapshotimport FILE (full import: decode, allocator state, sites, leak suspects, OOMs, metrics and logs)\n", python, pythonLoad)
	fmt.Printf("wall time includes process start; fastest of %d run(s); peak RSS by %s (largest of the runs)\n\n", runs, rssMethod)
	fmt.Printf("%-8s %8s %8s %10s %9s\n", "side", "s", "MB/s", "peak RSS", "RSS/size")
	for _, r := range []struct {
		name string
		m    benchutil.Measured
	}{{"python", py}, {"ours", ours}} {
		fmt.Printf("%-8s %8.3f %8.1f %9.1fM %9.2f\n", r.name, r.m.Wall.Seconds(), mb/r.m.Wall.Seconds(),
			float64(r.m.RSSKB)/1024, float64(r.m.RSSKB*1024)/float64(st.Size()))
	}
	speedup := py.Wall.Seconds() / ours.Wall.Seconds()
	ratio := float64(ours.RSSKB*1024) / float64(st.Size())
	fmt.Printf("\nspeedup (python s / ours s): %.2f×; ours peak RSS / file size: %.2f (%d leak suspects, %d OOM, %d metric points)\n",
		speedup, ratio, s.LeakSuspects, s.OOMs, s.MetricPoints)
	// MET / NOT MET, as every bench program says it: make bench's closing
	// summary collects the lines that do.
	v1, v2 := "MET", "MET"
	if speedup < 1 {
		v1 = "NOT MET"
	}
	if ratio >= 2 {
		v2 = "NOT MET"
	}
	fmt.Printf("targets: no slower than pickle.load: %s; peak RSS < 2× file size: %s\n", v1, v2)
	return nil
}

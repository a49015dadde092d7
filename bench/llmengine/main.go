// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command llmengine compares, in one run, the CPU time and allocations one
// scrape costs in the llmengine receiver and in contrib's prometheus
// receiver, both scraping the same engine replay server (a separate process,
// so its serving cost is not counted): the vLLM fixture and a generated
// exposition of 10,000 series. It prints a table and the ratios; the
// target is at most half the CPU of the prometheus receiver per scrape.
//
//	go run ./llmengine [-duration 5s] [-interval 50ms]   (from bench/; `make bench` runs it)
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/prometheusreceiver"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/llmops-otel/otelcol-llmops/bench/internal/benchutil"
	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver"
)

var (
	profileDir string
	idle       time.Duration
)

func idleCPU(window time.Duration) time.Duration {
	runtime.GC()
	c0 := cpuTime()
	time.Sleep(window)
	return cpuTime() - c0
}

func main() {
	duration := flag.Duration("duration", 5*time.Second, "measurement window per receiver and exposition")
	interval := flag.Duration("interval", 50*time.Millisecond, "scrape interval of both receivers")
	flag.StringVar(&profileDir, "profile", "", "write a CPU profile of each measurement window into this directory")
	flag.Parse()
	if err := run(*duration, *interval); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type result struct {
	scrapes        int64
	cpuPerScrape   time.Duration
	allocsPerScrap float64
	bytesPerScrape float64
}

func run(duration, interval time.Duration) error {
	root, err := benchutil.RepoRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "llmengine-bench")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // a leftover scratch directory is harmless
	replay := filepath.Join(tmp, "enginereplay")
	build := exec.CommandContext(context.Background(), "go", "build", "-o", replay, "./tests/enginereplay/cmd/enginereplay")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the replay server: %w\n%s", err, out)
	}
	big := filepath.Join(tmp, "10k.prom")
	if err := os.WriteFile(big, benchutil.EngineExposition(10000), 0o644); err != nil {
		return err
	}

	// The process burns some CPU with no receiver at all (runtime timers,
	// the profiler, the go tool's own threads); measure it once and take it
	// off both sides, so the ratio compares the receivers' own work.
	idle = idleCPU(duration)
	fmt.Printf("idle CPU of this process: %s per %s window (subtracted from both sides)\n\n", idle.Round(time.Microsecond), duration)
	fmt.Printf("%-22s %-12s %8s %14s %14s %14s\n", "exposition", "receiver", "scrapes", "CPU/scrape", "allocs/scrape", "bytes/scrape")
	for _, expo := range []struct{ name, fixture string }{
		{"vLLM fixture", filepath.Join(root, "tests", "enginereplay", "fixtures", "vllm.prom")},
		{"10,000 series", big},
	} {
		base, stop, err := startReplay(replay, expo.fixture)
		if err != nil {
			return err
		}
		ours, err := measure("llmengine-"+expo.name, newLLMEngine(base+"/metrics", interval), duration)
		if err != nil {
			stop()
			return fmt.Errorf("llmengine: %w", err)
		}
		prom, err := measure("prometheus-"+expo.name, newPrometheus(base, interval), duration)
		stop()
		if err != nil {
			return fmt.Errorf("prometheus: %w", err)
		}
		for _, r := range []struct {
			name string
			res  result
		}{{"llmengine", ours}, {"prometheus", prom}} {
			fmt.Printf("%-22s %-12s %8d %14s %14.0f %14.0f\n", expo.name, r.name, r.res.scrapes,
				r.res.cpuPerScrape.Round(time.Microsecond), r.res.allocsPerScrap, r.res.bytesPerScrape)
		}
		cpuRatio := float64(ours.cpuPerScrape) / float64(prom.cpuPerScrape)
		verdict := "meets"
		if cpuRatio > 0.5 {
			verdict = "MISSES"
		}
		fmt.Printf("%-22s ratio llmengine/prometheus: CPU %.2f (%s the ≤0.50 target), allocations %.2f\n\n",
			expo.name, cpuRatio, verdict, ours.allocsPerScrap/prom.allocsPerScrap)
	}
	return nil
}

type factoryRun struct {
	factory receiver.Factory
	cfg     any
}

func newLLMEngine(endpoint string, interval time.Duration) factoryRun {
	f := llmenginereceiver.NewFactory()
	cfg := f.CreateDefaultConfig()
	cm := confmap.NewFromStringMap(map[string]any{
		"collection_interval": interval.String(),
		"initial_delay":       "0s",
		"timeout":             interval.String(),
		"targets":             []any{map[string]any{"endpoint": endpoint}},
	})
	if err := cm.Unmarshal(cfg); err != nil {
		panic(err)
	}
	return factoryRun{f, cfg}
}

func newPrometheus(base string, interval time.Duration) factoryRun {
	f := prometheusreceiver.NewFactory()
	cfg := f.CreateDefaultConfig()
	host := strings.TrimPrefix(base, "http://")
	cm := confmap.NewFromStringMap(map[string]any{
		"config": map[string]any{
			"scrape_configs": []any{map[string]any{
				"job_name":        "bench",
				"scrape_interval": interval.String(),
				"scrape_timeout":  interval.String(),
				"metrics_path":    "/metrics",
				"static_configs":  []any{map[string]any{"targets": []any{host}}},
			}},
		},
	})
	if err := cm.Unmarshal(cfg); err != nil {
		panic(err)
	}
	return factoryRun{f, cfg}
}

// measure runs a receiver, waits for two warm-up scrapes, then counts the
// process's CPU time and allocations over the window, per scrape.
func measure(label string, fr factoryRun, window time.Duration) (result, error) {
	var scrapes atomic.Int64
	sink, _ := consumer.NewMetrics(func(_ context.Context, md pmetric.Metrics) error {
		if md.DataPointCount() > 10 {
			scrapes.Add(1)
		}
		return nil
	})
	r, err := fr.factory.CreateMetrics(context.Background(), receivertest.NewNopSettings(fr.factory.Type()), fr.cfg, sink)
	if err != nil {
		return result{}, err
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		return result{}, err
	}
	defer func() { _ = r.Shutdown(context.Background()) }()
	deadline := time.Now().Add(30 * time.Second)
	for scrapes.Load() < 2 {
		if time.Now().After(deadline) {
			return result{}, fmt.Errorf("no scrapes within 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	runtime.GC()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	if profileDir != "" {
		f, err := os.Create(filepath.Join(profileDir, strings.NewReplacer(" ", "_", ",", "").Replace(label)+".pprof"))
		if err != nil {
			return result{}, err
		}
		defer func() { _ = f.Close() }() // read only: a failed close loses nothing
		if err := pprof.StartCPUProfile(f); err != nil {
			return result{}, err
		}
		defer pprof.StopCPUProfile()
	}
	cpu0, n0 := cpuTime(), scrapes.Load()
	time.Sleep(window)
	cpu1, n1 := cpuTime(), scrapes.Load()
	runtime.ReadMemStats(&ms1)
	n := n1 - n0
	if n == 0 {
		return result{}, fmt.Errorf("no scrapes in the window")
	}
	return result{
		scrapes:        n,
		cpuPerScrape:   max(cpu1-cpu0-idle, 0) / time.Duration(n),
		allocsPerScrap: float64(ms1.Mallocs-ms0.Mallocs) / float64(n),
		bytesPerScrape: float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(n),
	}, nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startReplay(bin, fixture string) (string, func(), error) {
	cmd := exec.CommandContext(context.Background(), bin, "-engine", "vllm", "-fixture", fixture, "-listen", "127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); _ = cmd.Wait() }
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "listening ") {
			go func() {
				for sc.Scan() {
				}
			}()
			return strings.TrimPrefix(line, "listening "), stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("replay server did not start")
}

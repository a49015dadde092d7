// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command llmengine compares, in one run, the CPU time and allocations one
// scrape costs in the llmengine receiver and in contrib's prometheus
// receiver, both scraping the same engine replay server (a separate process,
// so its serving cost is not counted): the vLLM fixture and generated
// expositions of 1,000, 10,000 and 100,000 series; and the floor, the same
// body read from the socket with nothing parsed. It prints a table (CPU
// per scrape and per series, so it shows whether the cost per series stays
// flat as the exposition grows) and the ratios; the target is at most 0.20
// of the prometheus receiver's CPU per scrape.
//
//	go run ./llmengine [-duration 5s] [-interval 50ms]   (from bench/; `make bench` runs it)
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
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
	points         int // data points of the last scrape
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
	type exposition struct {
		name, fixture string
		series        int // 0: the fixture
	}
	expos := []exposition{{"vLLM fixture", filepath.Join(root, "tests", "enginereplay", "fixtures", "vllm.prom"), 0}}
	for _, n := range []int{1000, 10000, 100000} {
		f := filepath.Join(tmp, fmt.Sprintf("%d.prom", n))
		if err := os.WriteFile(f, benchutil.EngineExposition(n), 0o644); err != nil {
			return err
		}
		expos = append(expos, exposition{fmt.Sprintf("%d series", n), f, n})
	}

	// The process burns some CPU with no receiver at all (runtime timers,
	// the profiler, the go tool's own threads); measure it once and take it
	// off both sides, so the ratio compares the receivers' own work.
	idle = idleCPU(duration)
	fmt.Printf("idle CPU of this process: %s per %s window (subtracted from every side)\n\n", idle.Round(time.Microsecond), duration)
	fmt.Printf("%-16s %-12s %8s %14s %12s %14s %14s\n", "exposition", "side", "scrapes", "CPU/scrape", "ns/series", "allocs/scrape", "bytes/scrape")
	var verdicts []string
	for _, expo := range expos {
		base, stop, err := startReplay(replay, expo.fixture)
		if err != nil {
			return err
		}
		// A scrape of 100,000 series takes longer than 50 ms on either
		// side: the interval grows with the exposition so no scrape times
		// out.
		every := interval * time.Duration(max(1, expo.series/10000))
		ours, err := measure("llmengine-"+expo.name, startReceiver(newLLMEngine(base+"/metrics", every)), duration)
		if err != nil {
			stop()
			return fmt.Errorf("llmengine: %w", err)
		}
		prom, err := measure("prometheus-"+expo.name, startReceiver(newPrometheus(base, every)), duration)
		if err != nil {
			stop()
			return fmt.Errorf("prometheus: %w", err)
		}
		floor, err := measure("floor-"+expo.name, startReader(base+"/metrics", every, pmetric.Metrics{}), duration)
		if err != nil {
			stop()
			return fmt.Errorf("floor: %w", err)
		}
		// The second floor: the same read, plus building what llmengine
		// hands downstream (a deep copy of one of its scrapes: every point,
		// attribute and bucket allocated anew, as any receiver must) with
		// nothing parsed or looked up.
		tmpl, err := captureScrape(base+"/metrics", every)
		if err != nil {
			stop()
			return fmt.Errorf("capturing a scrape: %w", err)
		}
		pfloor, err := measure("floor-pdata-"+expo.name, startReader(base+"/metrics", every, tmpl), duration)
		stop()
		if err != nil {
			return fmt.Errorf("floor with pdata: %w", err)
		}
		series := expo.series
		if series == 0 {
			series = ours.points
		}
		for _, r := range []struct {
			name string
			res  result
		}{{"llmengine", ours}, {"prometheus", prom}, {"floor (read)", floor}, {"floor+pdata", pfloor}} {
			fmt.Printf("%-16s %-12s %8d %14s %12.0f %14.0f %14.0f\n", expo.name, r.name, r.res.scrapes,
				r.res.cpuPerScrape.Round(time.Microsecond), float64(r.res.cpuPerScrape.Nanoseconds())/float64(series),
				r.res.allocsPerScrap, r.res.bytesPerScrape)
		}
		cpuRatio := float64(ours.cpuPerScrape) / float64(prom.cpuPerScrape)
		overFloor := float64(ours.cpuPerScrape) / float64(max(floor.cpuPerScrape, 1))
		overPdata := float64(ours.cpuPerScrape) / float64(max(pfloor.cpuPerScrape, 1))
		v := fmt.Sprintf("%-16s llmengine/prometheus CPU %.2f (target ≤ 0.20: %s), allocations %.2f; llmengine/floor CPU %.1f, /(floor+pdata) %.1f; (floor+pdata)/prometheus %.2f",
			expo.name, cpuRatio, verdictOf(cpuRatio <= 0.20), ours.allocsPerScrap/prom.allocsPerScrap, overFloor, overPdata,
			float64(pfloor.cpuPerScrape)/float64(prom.cpuPerScrape))
		// Allocations of an unchanged exposition beyond what the pdata
		// handed downstream needs (the second floor's): the target is
		// close to zero, taken as none per series — a fixed count per
		// scrape, at most 100 whatever the size (the HTTP client's
		// instrumentation and the receiver's own two metrics).
		extra := ours.allocsPerScrap - pfloor.allocsPerScrap
		a := fmt.Sprintf("%-16s llmengine allocations beyond floor+pdata: %.0f per scrape, %.4f per series (target ≤ 100 per scrape, none per series: %s)",
			expo.name, extra, extra/float64(series), verdictOf(extra <= 100))
		fmt.Println(v)
		fmt.Println(a)
		fmt.Println()
		verdicts = append(verdicts, v, a)
	}
	fmt.Println("verdicts:")
	for _, v := range verdicts {
		fmt.Println("  " + v)
	}
	return nil
}

func verdictOf(ok bool) string {
	if ok {
		return "MET"
	}
	return "NOT MET"
}

// startReceiver runs a receiver whose every batch of more than 10 points is
// one scrape; it returns how to stop it.
func startReceiver(fr factoryRun) func(count func(points int)) (func(), error) {
	return func(count func(points int)) (func(), error) {
		sink, _ := consumer.NewMetrics(func(_ context.Context, md pmetric.Metrics) error {
			if n := md.DataPointCount(); n > 10 {
				count(n)
			}
			return nil
		})
		r, err := fr.factory.CreateMetrics(context.Background(), receivertest.NewNopSettings(fr.factory.Type()), fr.cfg, sink)
		if err != nil {
			return nil, err
		}
		if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
			return nil, err
		}
		return func() { _ = r.Shutdown(context.Background()) }, nil
	}
}

// captureScrape runs the llmengine receiver until it hands over one scrape
// and returns a copy of it.
func captureScrape(url string, every time.Duration) (pmetric.Metrics, error) {
	got := make(chan pmetric.Metrics, 1)
	fr := newLLMEngine(url, every)
	sink, _ := consumer.NewMetrics(func(_ context.Context, md pmetric.Metrics) error {
		if md.DataPointCount() > 10 {
			cp := pmetric.NewMetrics()
			md.CopyTo(cp)
			select {
			case got <- cp:
			default:
			}
		}
		return nil
	})
	r, err := fr.factory.CreateMetrics(context.Background(), receivertest.NewNopSettings(fr.factory.Type()), fr.cfg, sink)
	if err != nil {
		return pmetric.Metrics{}, err
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		return pmetric.Metrics{}, err
	}
	defer func() { _ = r.Shutdown(context.Background()) }()
	select {
	case md := <-got:
		return md, nil
	case <-time.After(30 * time.Second):
		return pmetric.Metrics{}, fmt.Errorf("no scrape within 30s")
	}
}

// startReader is the floor: the same body fetched over the same loopback
// socket every interval and read to the end, with nothing parsed. With a
// template (not the zero Metrics), each read also builds a copy of it and
// hands it to a consumer that drops it: the floor under any receiver that
// delivers those points as pdata.
func startReader(url string, every time.Duration, tmpl pmetric.Metrics) func(count func(points int)) (func(), error) {
	return func(count func(points int)) (func(), error) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		client := &http.Client{Timeout: 10 * time.Second}
		drop, _ := consumer.NewMetrics(func(context.Context, pmetric.Metrics) error { return nil })
		go func() {
			defer close(done)
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				if resp, err := client.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					if tmpl != (pmetric.Metrics{}) {
						out := pmetric.NewMetrics()
						tmpl.CopyTo(out)
						_ = drop.ConsumeMetrics(ctx, out)
					}
					count(11) // one scrape, as the receivers count them
				}
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
		return func() { cancel(); <-done }, nil
	}
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

// measure runs one side, waits for two warm-up scrapes, then counts the
// process's CPU time and allocations over the window, per scrape.
func measure(label string, start func(count func(points int)) (func(), error), window time.Duration) (result, error) {
	var scrapes, points atomic.Int64
	stopSide, err := start(func(n int) { points.Store(int64(n)); scrapes.Add(1) })
	if err != nil {
		return result{}, err
	}
	defer stopSide()
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
		points:         int(points.Load()),
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

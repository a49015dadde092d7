// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command load is the load and soak benchmark of the built agent (issue 18
// §3): the distro binary on the shipped configuration, with 8 fake GPUs of
// 64 processes each, 4 engines of ~10,000 series each scraped every second,
// and 20,000 spans/s of OTLP traces, for -duration; its memory, CPU, own
// telemetry and what reaches a sink are sampled every second. An idle
// phase (the agent with nothing to watch) comes first. The output ends
// with a MET / NOT MET line per target.
//
//	go run ./load [-duration 5m] [-warmup 30s] [-idle 30s] [-bin ../_build/otelcol-llmops]   (from bench/)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/llmops-otel/otelcol-llmops/bench/internal/benchutil"
)

type options struct {
	bin, fakenvml          string
	duration, warmup, idle time.Duration
	rate, batch            int
	keep                   bool
	top                    bool
	floor                  bool
	floorBin               string
	env                    []string // KEY=VALUE for the agent and the floor (-env)
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "the distro binary (default ../_build/otelcol-llmops, i.e. the repository root's _build)")
	flag.StringVar(&o.fakenvml, "fakenvml", "", "the fake NVML library (default ../_build/fakenvml/libnvidia-ml.so.1; `make fakenvml` builds it)")
	flag.DurationVar(&o.duration, "duration", 5*time.Minute, "measured load window, after the warm-up")
	flag.DurationVar(&o.warmup, "warmup", 30*time.Second, "load before the measured window")
	flag.DurationVar(&o.idle, "idle", 30*time.Second, "idle footprint phase (0 skips it)")
	flag.IntVar(&o.rate, "spans", 20000, "spans per second sent to the agent")
	flag.IntVar(&o.batch, "batch", 500, "spans per OTLP request")
	flag.BoolVar(&o.keep, "keep", false, "keep the scratch directory (configs, logs, heap profile) and print its path")
	flag.BoolVar(&o.top, "top", false, "print the heap profile's top lines even when every target is met")
	flag.BoolVar(&o.floor, "floor", false, "also run the floor (the collector core alone: OTLP receiver, batch, OTLP exporter; `make floor`) under the same spans/s, and print ours ÷ floor")
	flag.StringVar(&o.floorBin, "floorbin", "", "the floor binary (default ~/.cache/otelcol-llmops/floor-v0.161.0/otelcol-floor, where `make floor` builds it)")
	flag.Func("env", "KEY=VALUE added to the environment of the agent and of the floor, e.g. GOMEMLIMIT=48MiB or GOGC=50 (repeatable)", func(v string) error {
		if !strings.Contains(v, "=") {
			return errors.New("want KEY=VALUE")
		}
		o.env = append(o.env, v)
		return nil
	})
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(o options) (err error) {
	root, err := benchutil.RepoRoot()
	if err != nil {
		return err
	}
	if o.bin == "" {
		o.bin = filepath.Join(root, "_build", "otelcol-llmops")
	}
	if o.fakenvml == "" {
		o.fakenvml = filepath.Join(root, "_build", "fakenvml", "libnvidia-ml.so.1")
	}
	if o.floor && o.floorBin == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return err
		}
		v, err := ocbVersion(root)
		if err != nil {
			return err
		}
		o.floorBin = filepath.Join(cache, "otelcol-llmops", "floor-"+v, "otelcol-floor")
	}
	need := []struct{ path, make string }{{o.bin, "build"}, {o.fakenvml, "fakenvml"}}
	if o.floor {
		need = append(need, struct{ path, make string }{o.floorBin, "floor"})
	}
	for _, f := range need {
		if _, err := os.Stat(f.path); err != nil {
			return fmt.Errorf("%w: run `make %s` in the repository root first, or pass the path", err, f.make)
		}
	}
	if o.duration <= 0 || o.batch <= 0 {
		return errors.New("-duration and -batch must be positive")
	}
	shipped := filepath.Join(root, "distro", "config.yaml")
	tmp, err := os.MkdirTemp("", "otelcol-llmops-load")
	if err != nil {
		return err
	}
	defer func() {
		if o.keep {
			fmt.Println("scratch directory kept:", tmp)
		} else {
			_ = os.RemoveAll(tmp)
		}
	}()

	// SIGINT/SIGTERM end the run through the same deferred cleanup as an
	// error does; a panic in this goroutine runs it too, and the agent's
	// Pdeathsig covers the rest.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	var agents []*agent
	defer func() {
		for _, a := range agents {
			a.kill()
		}
	}()

	sk, err := startSink()
	if err != nil {
		return fmt.Errorf("starting the OTLP sink: %w", err)
	}
	defer sk.stop()

	fmt.Printf("agent: %s\nshipped configuration: %s (+ overlay: 1s collection, 4 engine targets, OTLP to a sink, pprof)\n", o.bin, shipped)
	fmt.Printf("machine: %d CPUs; the load generator runs in this process and competes with the agent for them\n", numCPU())
	if len(o.env) > 0 {
		fmt.Printf("environment added to the agent and the floor: %s\n", strings.Join(o.env, " "))
	}
	fmt.Println()

	// Idle: the agent with nothing to watch (no NVML library, one engine
	// target on a port nobody listens on).
	var idle []sample
	var idleMaps mappings
	if o.idle > 0 {
		ports, err := freePorts()
		if err != nil {
			return err
		}
		closed, err := freePort()
		if err != nil {
			return err
		}
		ov := overlay(nil, []string{fmt.Sprintf("http://127.0.0.1:%d/metrics", closed)}, sk.addr, ports.pprof)
		a, err := startAgent(o.bin, shipped, tmp, "idle", ov, ports,
			append([]string{"LLMOPS_NVML_LIBRARY=" + filepath.Join(tmp, "no-such-libnvidia-ml.so.1")}, o.env...))
		if err != nil {
			return err
		}
		agents = append(agents, a)
		fmt.Printf("idle: the agent with nothing to watch for %s ...\n", o.idle)
		idle, err = sampleFor(ctx, a, sk, nil, o.idle, 0)
		if err != nil {
			return err
		}
		if idleMaps, err = readSmaps(a.pid()); err != nil {
			return err
		}
		if err := a.stop(); err != nil {
			return fmt.Errorf("stopping the idle agent: %w", err)
		}
	}

	// Load.
	scen := filepath.Join(tmp, "nvml.scenario")
	if err := writeNVMLScenario(scen); err != nil {
		return err
	}
	engines, err := startEngines(tmp)
	defer func() {
		for _, e := range engines {
			_ = e.srv.Close()
		}
	}()
	if err != nil {
		return err
	}
	total := 0
	for _, e := range engines {
		fmt.Printf("engine %-7s %6d series (%d models and adapters × %d ranks, %d families), %4d KB per scrape, %s\n",
			e.gen.spec.name, e.gen.series, e.gen.models, e.gen.spec.ranks, len(e.gen.spec.families), e.gen.bodyBytes/1024, e.url)
		total += e.gen.series
	}
	fmt.Printf("nvml: %d GPUs × %d processes (fake NVML, one in %d processes growing %d MiB/s)\n", nvmlGPUs, nvmlProcsPerGPU, nvmlLeakEvery, nvmlLeakRate>>20)
	fmt.Printf("traces: %d spans/s in batches of %d over OTLP/gRPC\n\n", o.rate, o.batch)

	ports, err := freePorts()
	if err != nil {
		return err
	}
	a, err := startAgent(o.bin, shipped, tmp, "load", overlay(engines, nil, sk.addr, ports.pprof), ports,
		append([]string{"LLMOPS_NVML_LIBRARY=" + o.fakenvml, "FAKE_NVML_SCENARIO=" + scen, "FAKE_NVML_TIME_SCALE=1"}, o.env...))
	if err != nil {
		return err
	}
	agents = append(agents, a)
	tr, err := newTraffic(fmt.Sprintf("127.0.0.1:%d", ports.otlpGRPC), o.rate, o.batch)
	if err != nil {
		return err
	}
	tr.start()
	defer tr.stop()
	fmt.Printf("load: %s warm-up + %s measured ...\n", o.warmup, o.duration)
	benchCPU0 := selfCPU()
	load, err := sampleFor(ctx, a, sk, tr, o.warmup+o.duration, o.warmup)
	if err != nil {
		return err
	}
	benchCPU := selfCPU() - benchCPU0
	loadMaps, err := readSmaps(a.pid())
	if err != nil {
		return err
	}
	heap := filepath.Join(tmp, "heap.pb.gz")
	heapErr := fetch(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap", ports.pprof), heap)

	// Drain: stop sending, then wait until the sink has every span the
	// agent accepted (or give up after 20 s).
	tr.stop()
	drain, err := drainSpans(ctx, a, sk, 20*time.Second)
	if err != nil {
		return err
	}
	limiterLogs := a.limiterLines()
	if err := a.stop(); err != nil {
		fmt.Printf("note: stopping the load agent: %v\n", err)
	}

	// The floor, once the agent has stopped: the same spans/s into the
	// collector core alone.
	var fl *floorRun
	if o.floor {
		fmt.Println()
		if fl, err = runFloor(ctx, o, shipped, tmp, func(a *agent) { agents = append(agents, a) }); err != nil {
			fmt.Printf("floor: %v\n", err) // the agent's figures are still worth the report
			fl = nil
		}
	}

	met := report(o, idle, load, drain, tr, limiterLogs, benchCPU, total, idleMaps, loadMaps, fl)
	if heapErr != nil {
		fmt.Printf("heap profile: %v\n", heapErr)
	} else {
		printHeapByComponent(heap)
		if !met || o.top {
			printTop(heap)
		}
	}
	return nil
}

// sampleFor samples the agent every second for d. Samples taken before
// warmup are marked with a negative offset from the end of the warm-up.
func sampleFor(ctx context.Context, a *agent, sk *sink, tr *traffic, d, warmup time.Duration) ([]sample, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", a.ports.telemetry)
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var out []sample
	misses := 0
	for {
		s, err := takeSample(a, sk, tr, client, url)
		// A telemetry scrape that times out on a starved machine keeps the
		// previous second's telemetry (its counters only grow); five in a
		// row end the run.
		var te *telemetryError
		if errors.As(err, &te) && len(out) > 0 && misses < 5 {
			misses++
			s.tel, err = out[len(out)-1].tel, nil
		} else if err == nil {
			misses = 0
		}
		if err != nil {
			return out, err
		}
		s.at = time.Since(start) - warmup
		out = append(out, s)
		if time.Since(start) >= d {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, errors.New("interrupted")
		case <-a.exited:
			return out, fmt.Errorf("the agent exited during the run: %s\n%s", fmt.Sprint(a.err), a.logTail()) // as text: a clean exit's nil error has nothing to wrap
		case <-tick.C:
		}
	}
}

func takeSample(a *agent, sk *sink, tr *traffic, client *http.Client, url string) (sample, error) {
	var s sample
	var err error
	if s.rssKB, s.anonKB, s.fileKB, err = readStatus(a.pid()); err != nil {
		return s, err
	}
	if s.cpu, err = readCPU(a.pid()); err != nil {
		return s, err
	}
	s.sinkPoints, s.sinkSpans, s.sinkLogs = sk.points.Load(), sk.spans.Load(), sk.logs.Load()
	if tr != nil {
		s.trafficSpans = tr.sent.Load()
	}
	if s.tel, err = scrapeTelemetry(client, url); err != nil {
		return s, &telemetryError{err}
	}
	return s, nil
}

// telemetryError is a failed scrape of the agent's own telemetry.
type telemetryError struct{ err error }

func (e *telemetryError) Error() string { return "scraping the agent's telemetry: " + e.err.Error() }
func (e *telemetryError) Unwrap() error { return e.err }

// drainSpans waits until the sink has received every span the agent's
// receivers accepted, polling the agent's telemetry.
func drainSpans(ctx context.Context, a *agent, sk *sink, timeout time.Duration) (sample, error) {
	client := &http.Client{Timeout: 2 * time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", a.ports.telemetry)
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		s, err := takeSample(a, sk, nil, client, url)
		if err != nil {
			return s, err
		}
		accepted := s.tel.sum("otelcol_receiver_accepted_spans", `receiver="otlp"`)
		if float64(s.sinkSpans) >= accepted || time.Now().After(deadline) {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return s, errors.New("interrupted")
		case <-tick.C:
		}
	}
}

func fetch(url, path string) error {
	resp, err := httpGet(&http.Client{Timeout: 30 * time.Second}, url)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }() // read only: a failed close loses nothing
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// printTop prints the heap profile's in-use top 10 (go tool pprof -top).
func printTop(path string) {
	out, err := exec.CommandContext(context.Background(), "go", "tool", "pprof", "-top", "-inuse_space", "-nodecount=10", path).CombinedOutput()
	if err != nil {
		fmt.Printf("go tool pprof: %v\n%s", err, out)
		return
	}
	fmt.Println("\nheap in use at the end of the window (go tool pprof -top -inuse_space):")
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		fmt.Println("  " + l)
	}
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

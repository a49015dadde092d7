// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command demo plays the whole otelcol-llmops story on any machine: a
// simulated four-GPU inference node (the fake NVML library with the demo
// scenario), three inference engines (the engine replay server serving vLLM
// and TGI scenarios), a PyTorch profiler trace of the leaking process dropped
// into the watched directory mid-run, and the collector with
// distro/demo.yaml. While it runs it shows GPU memory, engine KV cache,
// latency and token rate, and incidents as they fire and resolve; at the end
// (or on Ctrl-C) it writes demo-report.html from what the collector
// exported. Everything listens on loopback, and every process it starts is
// stopped when it exits.
//
//	go run ./demo [-duration 120s] [-report demo-report.html]   (make demo)
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/llmops-otel/otelcol-llmops/demo/internal/exported"
	"github.com/llmops-otel/otelcol-llmops/demo/internal/report"
	"github.com/llmops-otel/otelcol-llmops/tests/tracegen"
)

func main() {
	opts := options{}
	flag.DurationVar(&opts.duration, "duration", 0, "stop after this long (0: run until Ctrl-C)")
	flag.StringVar(&opts.dir, "dir", "_build/demo", "working directory for the run (recreated)")
	flag.StringVar(&opts.bin, "bin", "_build/otelcol-llmops", "the collector binary (make build)")
	flag.StringVar(&opts.fakeNVML, "fakenvml", "_build/fakenvml/libnvidia-ml.so.1", "the fake NVML library (make fakenvml)")
	flag.StringVar(&opts.replay, "enginereplay", "_build/enginereplay", "the engine replay server binary")
	flag.StringVar(&opts.reportPath, "report", "demo-report.html", "where to write the report")
	flag.StringVar(&opts.config, "config", "distro/demo.yaml", "the collector configuration")
	flag.DurationVar(&opts.traceAt, "trace-at", 15*time.Second, "when the profiler trace of the leaking process is written")
	flag.BoolVar(&opts.plain, "plain", false, "plain line output even on a terminal")
	flag.Parse()
	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

type options struct {
	duration, traceAt                              time.Duration
	dir, bin, fakeNVML, replay, reportPath, config string
	plain                                          bool
}

// The demo scenario's GPUs and processes (tests/fakenvml/scenarios/demo.scenario).
const (
	leakPID  = 31337
	leakGPU  = "GPU-5d1e7a42-0c3b-4f1a-8e2d-7b6c00000000"
	leakPath = "LlamaAttention_12"
)

func run(o options) error {
	for _, f := range []struct{ path, how string }{{o.bin, "make build"}, {o.fakeNVML, "make fakenvml"}, {o.replay, "make demo builds it"}, {o.config, "run from the repository root"}} {
		if _, err := os.Stat(f.path); err != nil {
			return fmt.Errorf("%s is missing (%s): %w", f.path, f.how, err)
		}
	}
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	dir := abs(o.dir)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for _, d := range []string{"profiles", "out", "state", "logs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	procs := &group{}
	defer procs.stopAll()

	// Engines: the leaking vLLM (KV flat), the saturating vLLM, a TGI.
	engines := map[string]string{}
	// The saturation scenario's minute-long ramp plays at double speed so
	// the story fits a short run.
	for _, e := range []struct{ env, engine, scenario, speed string }{
		{"LLMOPS_DEMO_VLLM_LEAK", "vllm", "tests/enginereplay/scenarios/vllm-healthy.scenario", "1"},
		{"LLMOPS_DEMO_VLLM_KV", "vllm", "tests/enginereplay/scenarios/vllm-kv-fills.scenario", "1"},
		{"LLMOPS_DEMO_TGI", "tgi", "tests/enginereplay/scenarios/tgi-steady.scenario", "1"},
	} {
		url, err := procs.startReplay(abs(o.replay), e.engine, abs(e.scenario), e.speed, filepath.Join(dir, "logs", strings.ToLower(e.env)+".log"))
		if err != nil {
			return err
		}
		engines[e.env] = url
	}

	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	health := fmt.Sprintf("127.0.0.1:%d", ports[0])
	env := append(os.Environ(),
		"FAKE_NVML_SCENARIO="+abs("tests/fakenvml/scenarios/demo.scenario"),
		"LLMOPS_NVML_LIBRARY="+abs(o.fakeNVML),
		"LLMOPS_DEMO_DIR="+dir,
		"LLMOPS_HEALTH_ENDPOINT="+health,
		fmt.Sprintf("LLMOPS_OTLP_GRPC_ENDPOINT=127.0.0.1:%d", ports[1]),
		fmt.Sprintf("LLMOPS_OTLP_HTTP_ENDPOINT=127.0.0.1:%d", ports[2]))
	for k, v := range engines {
		env = append(env, k+"="+v)
	}
	collector, err := procs.start("collector", filepath.Join(dir, "logs", "collector.log"), env, abs(o.bin), "--config", abs(o.config))
	if err != nil {
		return err
	}
	if err := waitHealthy(ctx, "http://"+health, collector, 60*time.Second); err != nil {
		return fmt.Errorf("collector did not become healthy (see %s): %w", filepath.Join(dir, "logs", "collector.log"), err)
	}
	started := time.Now()

	view := newView(os.Stdout, o.plain)
	view.banner(o.duration, dir)
	reader := exported.NewReader(filepath.Join(dir, "out"))
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var deadline <-chan time.Time
	if o.duration > 0 {
		deadline = time.After(o.duration)
	}
	traceTimer := time.After(o.traceAt)
	interrupted := false
loop:
	for {
		select {
		case <-ctx.Done():
			interrupted = true
			break loop
		case <-deadline:
			break loop
		case <-collector.exited:
			return fmt.Errorf("the collector exited early (see %s)", filepath.Join(dir, "logs", "collector.log"))
		case <-traceTimer:
			if err := writeTrace(filepath.Join(dir, "profiles")); err != nil {
				return err
			}
			view.note(fmt.Sprintf("profiler trace of vllm pid %d written to profiles/ (as vLLM's /start_profile would)", leakPID))
		case <-tick.C:
			if err := reader.Update(); err != nil {
				view.note("reading the collector's output: " + err.Error())
			}
			view.render(time.Since(started), reader.Data())
		}
	}

	// Stop the collector first so its file exporter flushes, then read
	// everything it wrote and make the report.
	view.note("stopping…")
	procs.stopAll()
	if err := reader.Update(); err != nil {
		return err
	}
	d := reader.Data()
	view.render(time.Since(started), d)
	note := fmt.Sprintf("%s of a simulated 4-GPU node", time.Since(started).Round(time.Second))
	if interrupted {
		note += " (stopped with Ctrl-C)"
	}
	if err := report.WriteFile(o.reportPath, d, report.Options{Title: "otelcol-llmops demo", Generated: time.Now(), Note: note}); err != nil {
		return err
	}
	view.summary(d, abs(o.reportPath))
	return nil
}

// writeTrace drops a Kineto trace of the leaking process, as vLLM's
// profiler would after /start_profile + /stop_profile: written to a .tmp
// file and renamed.
func writeTrace(dir string) error {
	opts := tracegen.Options{Pid: leakPID, ProcessName: "vllm", Start: time.Now().Add(-5 * time.Second), Layers: 16, Steps: 6,
		Leak: &tracegen.Leak{Module: leakPath, BytesPerStep: 96 << 20}}
	_, err := tracegen.WriteFile(filepath.Join(dir, fmt.Sprintf("vllm-%d.pt.trace.json.gz", leakPID)), opts)
	return err
}

// group starts child processes each in its own process group (and with a
// parent-death signal), so that stopping the demo, however it ends, leaves
// nothing running.
type group struct {
	mu    sync.Mutex
	procs []*proc
}

type proc struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
}

func (g *group) start(name, logPath string, env []string, bin string, args ...string) (*proc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logf.Close() // nothing was written to it
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{})}
	// The child wrote the log through its own descriptor: closing ours
	// loses nothing.
	go func() { _ = cmd.Wait(); _ = logf.Close(); close(p.exited) }()
	g.mu.Lock()
	g.procs = append(g.procs, p)
	g.mu.Unlock()
	return p, nil
}

// startReplay starts an engine replay server and returns its URL, read from
// the one line it prints once it listens.
func (g *group) startReplay(bin, engine, scenario, speed, logPath string) (string, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(context.Background(), bin, "-engine", engine, "-scenario", scenario, "-speed", speed, "-listen", "127.0.0.1:0")
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("starting the engine replay server: %w", err)
	}
	p := &proc{name: "enginereplay " + engine, cmd: cmd, exited: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	// The child wrote the log through its own descriptor: closing ours
	// loses nothing.
	go func() { _ = cmd.Wait(); _ = logf.Close(); close(p.exited) }()
	g.mu.Lock()
	g.procs = append(g.procs, p)
	g.mu.Unlock()
	select {
	case l := <-lines:
		if url, ok := strings.CutPrefix(l, "listening "); ok {
			return url, nil
		}
		return "", fmt.Errorf("engine replay server said %q, want \"listening http://…\"", l)
	case <-p.exited:
		return "", fmt.Errorf("engine replay server exited (see %s)", logPath)
	case <-time.After(30 * time.Second):
		return "", errors.New("engine replay server did not start in 30s")
	}
}

// stopAll stops every child: SIGTERM to its process group, SIGKILL after
// 10 s. Safe to call more than once.
func (g *group) stopAll() {
	g.mu.Lock()
	procs := g.procs
	g.procs = nil
	g.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- { // the collector (started last) first
		p := procs[i]
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.exited
		}
	}
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close() // only its port number was wanted
		}
	}()
	var ports []int
	for range n {
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func waitHealthy(ctx context.Context, url string, p *proc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.exited:
			return errors.New("it exited")
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close() // only the status matters
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no 200 from %s in %s", url, timeout)
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package harness runs the built otelcol-llmops binary in end-to-end tests:
// on free loopback ports, ready only once its health_check answers, and
// always stopped (with its whole process group) when the test ends, passed
// or failed.
package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BinaryEnv names the environment variable that points the tests at the
// distro binary; `make test` sets it to the binary it just built.
const BinaryEnv = "OTELCOL_LLMOPS_BIN"

// Binary returns the path of the distro binary under test. It fails the test
// with instructions when the binary has not been built.
func Binary(t testing.TB) string {
	t.Helper()
	path := os.Getenv(BinaryEnv)
	if path == "" {
		path = filepath.Join(RepoRoot(t), "_build", "otelcol-llmops")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("distro binary not found at %s (%v): run `make build`, or `make test` which builds it first", path, err)
	}
	return path
}

// RepoRoot returns the repository root (the directory holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the harness source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

var (
	portsMu sync.Mutex
	given   = map[int]bool{}
)

// FreePort returns a loopback TCP port that is free now and that this test
// process has not handed out before, so two servers of one test never race
// for the same port.
func FreePort(t testing.TB) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 100 {
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if !given[port] {
			given[port] = true
			return port
		}
	}
	t.Fatal("no unused loopback port found")
	return 0
}

// Options describe one collector to start.
type Options struct {
	// Name labels the instance in logs and failure messages.
	Name string
	// Config is the YAML configuration. It must enable the health_check
	// extension on 127.0.0.1:HealthPort.
	Config string
	// ConfigPath, when set, is used instead of Config.
	ConfigPath string
	// HealthPort is the port of the health_check extension.
	HealthPort int
	// Args are extra command-line arguments after --config.
	Args []string
	// Env is added to the test process's environment.
	Env []string
	// ReadyTimeout bounds the wait for the health endpoint (default 60s).
	ReadyTimeout time.Duration
}

// Collector is a running distro binary.
type Collector struct {
	Name    string
	Dir     string // the instance's scratch directory (config, log)
	LogPath string

	cmd    *exec.Cmd
	exited chan struct{}
	err    error // the process's exit status, valid once exited is closed

	stopOnce sync.Once
}

// StartCollector starts the binary with opts.Config and waits until its
// health endpoint answers 200. The collector is stopped when the test ends;
// on failure its log is attached to the test output.
func StartCollector(t testing.TB, opts Options) *Collector {
	t.Helper()
	if opts.Name == "" {
		opts.Name = "collector"
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 60 * time.Second
	}
	dir := t.TempDir()
	cfgPath := opts.ConfigPath
	if cfgPath == "" {
		cfgPath = filepath.Join(dir, opts.Name+".yaml")
		if err := os.WriteFile(cfgPath, []byte(opts.Config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	logPath := filepath.Join(dir, opts.Name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}

	args := append([]string{"--config", cfgPath}, opts.Args...)
	cmd := exec.CommandContext(context.Background(), Binary(t), args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), opts.Env...)
	// Own process group, so stopping kills anything the collector started;
	// and die with the test process if it is killed outright.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		t.Fatalf("starting %s: %v", opts.Name, err)
	}
	c := &Collector{Name: opts.Name, Dir: dir, LogPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		_ = logFile.Close()
		close(c.exited)
	}()
	t.Cleanup(func() {
		c.Stop(t)
		if t.Failed() {
			t.Logf("---- log of %s ----\n%s", c.Name, c.Log())
		}
	})

	if err := waitHealthy(opts.HealthPort, opts.ReadyTimeout, c.exited, func() error { return c.err }, "process"); err != nil {
		// The cleanup above attaches the log to the failure.
		t.Fatalf("%s did not become ready: %v", opts.Name, err)
	}
	return c
}

// waitHealthy polls the health_check extension on 127.0.0.1:port until it
// answers 200, the process behind it exits (exited closes; exitErr says
// why), or timeout passes. The collector and the container harness share it.
func waitHealthy(port int, timeout time.Duration, exited <-chan struct{}, exitErr func() error, what string) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	client := &http.Client{Timeout: time.Second}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		resp, err := httpGet(client, url)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("health endpoint answered %s", resp.Status)
		} else {
			last = err
		}
		select {
		case <-exited:
			// As text: a clean exit's nil error has nothing to wrap.
			return fmt.Errorf("%s exited before it was ready: %s", what, fmt.Sprint(exitErr()))
		case <-deadline.C:
			return fmt.Errorf("no healthy answer from %s within %s: %w", url, timeout, last)
		case <-tick.C:
		}
	}
}

// Exited is closed when the process has exited.
func (c *Collector) Exited() <-chan struct{} { return c.exited }

// Log returns what the collector has written so far.
func (c *Collector) Log() string {
	b, err := os.ReadFile(c.LogPath)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	return string(b)
}

// Stop asks the collector to shut down (SIGTERM) and waits; after 20s it
// kills the whole process group. It reports an unclean exit as a test error.
func (c *Collector) Stop(t testing.TB) {
	c.stopOnce.Do(func() {
		pgid := c.cmd.Process.Pid
		select {
		case <-c.exited:
		default:
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			select {
			case <-c.exited:
			case <-time.After(20 * time.Second):
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
				<-c.exited
				t.Errorf("%s did not shut down within 20s of SIGTERM and was killed", c.Name)
				return
			}
		}
		// Make sure nothing of the group outlives the test.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		var exitErr *exec.ExitError
		if c.err != nil && (!errors.As(c.err, &exitErr) || !strings.Contains(c.err.Error(), "signal: terminated")) {
			t.Errorf("%s exited uncleanly: %v", c.Name, c.err)
		}
	})
}

// Run runs the binary with args to completion (for sub-commands such as
// `components`) and returns its standard output.
func Run(t testing.TB, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, Binary(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(Binary(t)), strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// FakeNVMLEnv names the environment variable that points at the fake NVML
// library built from tests/fakenvml (`make fakenvml`).
const FakeNVMLEnv = "OTELCOL_LLMOPS_FAKENVML"

// FakeNVML returns the path of the fake NVML library, failing the test with
// instructions when it has not been built.
func FakeNVML(t testing.TB) string {
	t.Helper()
	path := os.Getenv(FakeNVMLEnv)
	if path == "" {
		path = filepath.Join(RepoRoot(t), "_build", "fakenvml", "libnvidia-ml.so.1")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("fake NVML library not found at %s (%v): run `make fakenvml`", path, err)
	}
	return path
}

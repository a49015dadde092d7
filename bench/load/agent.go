// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// agent is one run of the distro binary on distro/config.yaml plus an
// overlay, in its own process group.
type agent struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error
	ports   agentPorts
}

type agentPorts struct {
	health, telemetry, otlpGRPC, otlpHTTP, pprof int
}

func freePort() (int, error) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }() // only its port number was wanted
	return l.Addr().(*net.TCPAddr).Port, nil
}

func freePorts() (agentPorts, error) {
	var p agentPorts
	var err error
	for _, dst := range []*int{&p.health, &p.telemetry, &p.otlpGRPC, &p.otlpHTTP, &p.pprof} {
		if *dst, err = freePort(); err != nil {
			return p, err
		}
	}
	return p, nil
}

// overlay is what the load changes in the shipped configuration (merged
// after it: maps merge, lists replace): 1 s collection, the engine targets,
// the sink in place of debug, the pprof extension.
func overlay(engines []*engineServer, extraTargets []string, sinkAddr string, pprofPort int) string {
	var b strings.Builder
	b.WriteString("receivers:\n  nvml:\n    collection_interval: 1s\n  llmengine:\n    collection_interval: 1s\n    targets:\n")
	for _, e := range engines {
		fmt.Fprintf(&b, "      - endpoint: %s\n        engine: %s\n", e.url, e.gen.spec.name)
	}
	for _, u := range extraTargets {
		fmt.Fprintf(&b, "      - endpoint: %s\n", u)
	}
	fmt.Fprintf(&b, `exporters:
  otlp/sink:
    endpoint: %s
    tls:
      insecure: true
extensions:
  pprof:
    endpoint: 127.0.0.1:%d
service:
  extensions: [health_check, file_storage, pprof]
  pipelines:
    metrics:
      exporters: [otlp/sink]
    traces:
      exporters: [rootcause, otlp/sink]
    logs:
      exporters: [rootcause, otlp/sink]
    logs/incidents:
      exporters: [otlp/sink]
`, sinkAddr, pprofPort)
	return b.String()
}

// startAgent starts bin on the shipped configuration plus overlayYAML and
// waits for its health check. env adds to the environment (the LLMOPS_*
// variables of the shipped configuration).
func startAgent(bin, shipped, dir, name, overlayYAML string, ports agentPorts, env []string) (*agent, error) {
	ovPath := filepath.Join(dir, name+"-overlay.yaml")
	if err := os.WriteFile(ovPath, []byte(overlayYAML), 0o600); err != nil {
		return nil, err
	}
	return startCollector(bin, []string{shipped, ovPath}, dir, name, ports, env, fmt.Sprintf("http://127.0.0.1:%d/", ports.health))
}

// startCollector starts bin on the configuration files and waits until
// readyURL answers 200.
func startCollector(bin string, configs []string, dir, name string, ports agentPorts, env []string, readyURL string) (*agent, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	state := filepath.Join(dir, name+"-state")
	profiles := filepath.Join(dir, name+"-profiles")
	if err := os.MkdirAll(profiles, 0o700); err != nil {
		return nil, err
	}
	var args []string
	for _, c := range configs {
		args = append(args, "--config", c)
	}
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(),
		fmt.Sprintf("LLMOPS_HEALTH_ENDPOINT=127.0.0.1:%d", ports.health),
		fmt.Sprintf("LLMOPS_TELEMETRY_PORT=%d", ports.telemetry),
		fmt.Sprintf("LLMOPS_OTLP_GRPC_ENDPOINT=127.0.0.1:%d", ports.otlpGRPC),
		fmt.Sprintf("LLMOPS_OTLP_HTTP_ENDPOINT=127.0.0.1:%d", ports.otlpHTTP),
		"LLMOPS_STATE_DIR="+state,
		"LLMOPS_PROFILE_DIR="+profiles,
	)
	cmd.Env = append(cmd.Env, env...)
	// Its own process group, killed as a whole; and killed by the kernel
	// should this program die without running its deferred cleanup.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	a := &agent{cmd: cmd, logPath: logPath, exited: make(chan struct{}), ports: ports}
	go func() {
		a.err = cmd.Wait()
		_ = logFile.Close()
		close(a.exited)
	}()
	if err := a.waitHealthy(readyURL, 60*time.Second); err != nil {
		a.kill()
		return nil, fmt.Errorf("%s agent: %w\n%s", name, err, a.logTail())
	}
	return a, nil
}

func (a *agent) pid() int { return a.cmd.Process.Pid }

func (a *agent) waitHealthy(url string, timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := httpGet(client, url)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no healthy answer from %s within %s: %w", url, timeout, err)
		}
		select {
		case <-a.exited:
			return fmt.Errorf("exited before it was ready: %s", fmt.Sprint(a.err)) // as text: a clean exit's nil error has nothing to wrap
		case <-tick.C:
		}
	}
}

// stop asks the agent to shut down (SIGTERM to its group), and kills the
// group if it has not exited within 15 s.
func (a *agent) stop() error {
	select {
	case <-a.exited:
		return a.err
	default:
	}
	_ = syscall.Kill(-a.pid(), syscall.SIGTERM)
	select {
	case <-a.exited:
	case <-time.After(15 * time.Second):
		a.kill()
		return errors.New("did not stop within 15s of SIGTERM; killed")
	}
	var ee *exec.ExitError
	if errors.As(a.err, &ee) && ee.ExitCode() == -1 {
		return nil // ended by the signal
	}
	return a.err
}

// kill ends the whole process group at once; safe to call more than once.
func (a *agent) kill() {
	select {
	case <-a.exited:
		return
	default:
	}
	_ = syscall.Kill(-a.pid(), syscall.SIGKILL)
	<-a.exited
}

func (a *agent) logTail() string {
	data, _ := os.ReadFile(a.logPath)
	s := string(data)
	if len(s) > 3000 {
		s = "..." + s[len(s)-3000:]
	}
	return s
}

// limiterLines counts the log lines in which memory_limiter reports
// memory above its soft or hard limit, which it logs when it starts
// refusing data or forcing a GC.
func (a *agent) limiterLines() int {
	data, _ := os.ReadFile(a.logPath)
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "Memory usage is above") {
			n++
		}
	}
	return n
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	replayOnce sync.Once
	replayBin  string
	replayErr  error
)

// engineReplayBinary builds the engine replay command once per test process.
func engineReplayBinary(t testing.TB) string {
	t.Helper()
	replayOnce.Do(func() {
		dir, err := os.MkdirTemp("", "enginereplay")
		if err != nil {
			replayErr = err
			return
		}
		replayBin = filepath.Join(dir, "enginereplay")
		cmd := exec.CommandContext(context.Background(), "go", "build", "-o", replayBin, "./tests/enginereplay/cmd/enginereplay")
		cmd.Dir = RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			replayErr = err
			t.Logf("%s", out)
		}
	})
	if replayErr != nil {
		t.Fatalf("building the engine replay server: %v", replayErr)
	}
	return replayBin
}

// StartEngineReplay runs the engine replay server (tests/enginereplay) with
// args plus a free loopback listen address, waits for its "listening" line
// and returns its base URL. The server is stopped when the test ends.
func StartEngineReplay(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), engineReplayBinary(t), append(args, "-listen", "127.0.0.1:0")...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "listening ") {
				lines <- strings.TrimPrefix(line, "listening ")
			}
		}
	}()
	select {
	case url := <-lines:
		return url
	case <-exited:
		t.Fatalf("engine replay server exited before listening: %s", stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("engine replay server not listening after 30s: %s", stderr.String())
	}
	return ""
}

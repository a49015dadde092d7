// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package enginereplay

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildCommand compiles cmd/enginereplay into a temporary directory.
func buildCommand(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	bin := filepath.Join(t.TempDir(), "enginereplay")
	cmd := exec.CommandContext(t.Context(), goBin, "build", "-o", bin, "./cmd/enginereplay")
	cmd.Dir = packageDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// started is a running command whose stdout's first line has been read.
type started struct {
	cmd    *exec.Cmd
	url    string
	rest   chan string // the rest of stdout, once it closes
	stderr *bytes.Buffer
}

func startCommand(t *testing.T, bin string, args ...string) *started {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Dir = packageDir()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	st := &started{cmd: cmd, rest: make(chan string, 1), stderr: &bytes.Buffer{}}
	cmd.Stderr = st.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, err := r.ReadString('\n')
		if err != nil {
			close(lines)
		} else {
			lines <- line
		}
		b, _ := io.ReadAll(r)
		st.rest <- string(b)
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("command exited without a listening line; stderr:\n%s", st.stderr)
		}
		url, found := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "listening ")
		if !found || !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Fatalf("first line %q", line)
		}
		st.url = url
	case <-time.After(30 * time.Second):
		t.Fatal("no listening line within 30s")
	}
	return st
}

// stop sends sig and waits for a clean exit.
func (st *started) stop(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := st.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- st.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after %v: %v; stderr:\n%s", sig, err, st.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30s after %v", sig)
	}
}

func TestCommand(t *testing.T) {
	bin := buildCommand(t)

	t.Run("serves, logs with -v, stops on SIGTERM", func(t *testing.T) {
		st := startCommand(t, bin, "-engine", "vllm", "-scenario", "scenarios/vllm-kv-saturation.scenario",
			"-speed", "10", "-format", "negotiate", "-listen", "127.0.0.1:0", "-v")
		r := get(t, st.url+"/metrics")
		if r.status != 200 || !strings.Contains(r.body, "vllm:kv_cache_usage_perc") {
			t.Fatalf("GET /metrics: %d %v", r.status, r.err)
		}
		r = get(t, st.url+"/metrics", "Accept", "application/openmetrics-text; version=1.0.0")
		if r.header.Get("Content-Type") != ContentTypeOpenMetrics || !strings.HasSuffix(r.body, "# EOF\n") {
			t.Errorf("negotiated OpenMetrics: %q", r.header.Get("Content-Type"))
		}
		st.stop(t, syscall.SIGTERM)
		if rest := <-st.rest; rest != "" {
			t.Errorf("stdout has more than the listening line: %q", rest)
		}
		if n := strings.Count(st.stderr.String(), "GET /metrics 200"); n != 2 {
			t.Errorf("stderr has %d request lines, want 2:\n%s", n, st.stderr)
		}
	})

	t.Run("quiet without -v, stops on SIGINT", func(t *testing.T) {
		st := startCommand(t, bin, "-engine", "nim")
		if r := get(t, st.url+"/v1/metrics"); r.status != 200 {
			t.Fatalf("GET /v1/metrics: %d %v", r.status, r.err)
		}
		st.stop(t, os.Interrupt)
		<-st.rest
		if st.stderr.Len() != 0 {
			t.Errorf("stderr without -v: %q", st.stderr)
		}
	})

	t.Run("errors", func(t *testing.T) {
		bad := writeFile(t, "bad.scenario", "counter vllm:nope rate=1\n")
		for _, c := range []struct {
			args []string
			code int
			want string
		}{
			{[]string{}, 2, "-engine is required"},
			{[]string{"-engine", "vllm", "extra"}, 2, "unexpected arguments"},
			{[]string{"-engine", "ollama"}, 1, `unknown engine "ollama"`},
			{[]string{"-engine", "vllm", "-scenario", bad}, 1, "bad.scenario:1: selector vllm:nope matches nothing"},
			{[]string{"-engine", "vllm", "-listen", "127.0.0.1:99999"}, 1, "invalid port"},
		} {
			cmd := exec.CommandContext(t.Context(), bin, c.args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != c.code {
				t.Errorf("%v: %v, want exit code %d", c.args, err, c.code)
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("%v: stderr %q, want %q", c.args, stderr.String(), c.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("%v: stdout %q", c.args, stdout.String())
			}
		}
	})
}

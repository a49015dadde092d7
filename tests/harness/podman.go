// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The image the container tests run: what `make image` tags, or ImageEnv.
const (
	ImageEnv     = "OTELCOL_LLMOPS_IMAGE"
	DefaultImage = "localhost/otelcol-llmops:dev"
)

// Podman returns the podman binary. Without it the test is skipped, unless
// CI is set: there podman is a requirement (.ci/run installs it), and a skip
// would hide that the image was never run.
func Podman(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("podman")
	if err != nil {
		msg := "podman not found: install the Debian packages podman, runc and mmdebstrap, then `make image`"
		if os.Getenv("CI") != "" {
			t.Fatal(msg + " (.ci/run installs them)")
		}
		t.Skip(msg)
	}
	return path
}

// Image returns the image under test, failing the test with instructions
// when it has not been built.
func Image(t testing.TB) string {
	t.Helper()
	image := os.Getenv(ImageEnv)
	if image == "" {
		image = DefaultImage
	}
	if err := exec.CommandContext(context.Background(), Podman(t), "image", "exists", image).Run(); err != nil {
		t.Fatalf("image %s not found (%v): run `make image`, or `make test` which builds it first", image, err)
	}
	return image
}

// PodmanRunFlags are the flags every `podman run` needs on this machine: the
// runc runtime (crun fails on this cgroup setup), ulimits at the hard limits
// (root cannot raise them, and podman's default nofile is above them) and the
// host's network, so the container reaches the test's loopback servers.
// nproc is also capped at kernel.pid_max: podman lowers its own RLIMIT_NPROC
// to that when it starts, and a container cannot get more than podman has.
func PodmanRunFlags(t testing.TB) []string {
	t.Helper()
	const rlimitNproc = 6 // RLIMIT_NPROC on Linux; the syscall package does not name it
	limit := func(resource int, ceiling uint64) string {
		var r syscall.Rlimit
		if err := syscall.Getrlimit(resource, &r); err != nil {
			t.Fatalf("getrlimit(%d): %v", resource, err)
		}
		v := min(r.Max, ceiling)
		return fmt.Sprintf("%d:%d", v, v)
	}
	pidMax := uint64(1 << 20)
	if b, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
			pidMax = min(pidMax, v)
		}
	}
	return []string{
		"--runtime", "runc",
		"--ulimit", "nofile=" + limit(syscall.RLIMIT_NOFILE, 1<<20),
		"--ulimit", "nproc=" + limit(rlimitNproc, pidMax),
		"--network=host",
	}
}

var (
	containerSeqMu sync.Mutex
	containerSeq   int
	nameUnsafe     = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)
)

// ContainerName returns a container name unique to this test, this call and
// this test process: two tests, or two runs of the suite, never share one.
func ContainerName(t testing.TB, label string) string {
	containerSeqMu.Lock()
	containerSeq++
	n := containerSeq
	containerSeqMu.Unlock()
	name := fmt.Sprintf("otelcol-llmops-e2e-%s-%s-%d-%d", t.Name(), label, os.Getpid(), n)
	return strings.Trim(nameUnsafe.ReplaceAllString(name, "-"), "-")
}

// removeContainer removes the container whatever its state; a container
// that is already gone is not an error.
func removeContainer(t testing.TB, podman, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, podman, "rm", "--force", "--ignore", "--time", "5", name).CombinedOutput(); err != nil {
		t.Errorf("podman rm -f %s: %v\n%s", name, err, out)
	}
}

// RunContainer runs image with args to completion (`podman run --rm` with
// PodmanRunFlags and runArgs, under a per-call name) and returns its
// standard output. The container is removed whatever happens.
func RunContainer(t testing.TB, label string, runArgs []string, image string, args ...string) []byte {
	t.Helper()
	podman := Podman(t)
	name := ContainerName(t, label)
	t.Cleanup(func() { removeContainer(t, podman, name) })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	full := append([]string{"run", "--rm", "--name", name}, PodmanRunFlags(t)...)
	full = append(append(append(full, runArgs...), image), args...)
	cmd := exec.CommandContext(ctx, podman, full...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("podman %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(full, " "), err, out, stderr.String())
	}
	return out
}

// ContainerOptions describe one long-running container to start.
type ContainerOptions struct {
	// Label is part of the container's name and labels it in logs.
	Label string
	Image string
	// RunArgs are podman run flags after PodmanRunFlags (mounts, env, ...).
	RunArgs []string
	// Args follow the image: arguments to its entrypoint.
	Args []string
	// HealthPort is the port of the collector's health_check extension on
	// 127.0.0.1 (the container shares the host's network).
	HealthPort int
	// ReadyTimeout bounds the wait for the health endpoint (default 60s).
	ReadyTimeout time.Duration
}

// Container is a running container of the image.
type Container struct {
	Name    string
	LogPath string

	podman   string
	cmd      *exec.Cmd
	exited   chan struct{}
	err      error
	stopOnce sync.Once
}

// StartContainer runs the image in the foreground of a `podman run --rm`
// (its output goes to the container's log) and waits until the collector's
// health endpoint answers 200. When the test ends, passed or failed, the
// container is stopped (SIGTERM: the collector must exit 0) and removed
// (`podman rm -f`); on failure its log is attached to the test output.
func StartContainer(t testing.TB, opts ContainerOptions) *Container {
	t.Helper()
	podman := Podman(t)
	if opts.Label == "" {
		opts.Label = "container"
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 60 * time.Second
	}
	dir := t.TempDir()
	c := &Container{
		Name:    ContainerName(t, opts.Label),
		LogPath: filepath.Join(dir, opts.Label+".log"),
		podman:  podman,
		exited:  make(chan struct{}),
	}
	logFile, err := os.Create(c.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"run", "--rm", "--name", c.Name}, PodmanRunFlags(t)...)
	args = append(append(append(args, opts.RunArgs...), opts.Image), opts.Args...)
	c.cmd = exec.CommandContext(context.Background(), podman, args...)
	c.cmd.Stdout = logFile
	c.cmd.Stderr = logFile
	// The podman client in its own group, dying with the test process; the
	// container itself (under conmon) is removed by the cleanup.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Registered before the start, so a start that fails half-way still
	// leaves no container behind.
	t.Cleanup(func() {
		c.Stop(t)
		removeContainer(t, podman, c.Name)
		if t.Failed() {
			t.Logf("---- log of container %s ----\n%s", c.Name, c.Log())
		}
	})
	if err := c.cmd.Start(); err != nil {
		_ = logFile.Close()
		close(c.exited)
		t.Fatalf("starting podman run: %v", err)
	}
	go func() {
		c.err = c.cmd.Wait()
		_ = logFile.Close()
		close(c.exited)
	}()
	if err := waitHealthy(opts.HealthPort, opts.ReadyTimeout, c.exited, func() error { return c.err }, "podman run"); err != nil {
		t.Fatalf("container %s did not become ready: %v", c.Name, err)
	}
	return c
}

// Log returns what the container has written so far.
func (c *Container) Log() string {
	b, err := os.ReadFile(c.LogPath)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	return string(b)
}

// Stop stops the container (`podman stop`: SIGTERM, SIGKILL after 20s) and
// waits for `podman run` to return. An exit other than 0 is a test error:
// the collector runs as PID 1 and must shut down cleanly on SIGTERM, as
// Kubernetes stops it.
func (c *Container) Stop(t testing.TB) {
	c.stopOnce.Do(func() {
		if c.cmd.Process == nil {
			return
		}
		select {
		case <-c.exited:
		default:
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			out, err := exec.CommandContext(ctx, c.podman, "stop", "--ignore", "--time", "20", c.Name).CombinedOutput()
			cancel()
			if err != nil {
				t.Errorf("podman stop %s: %v\n%s", c.Name, err, out)
			}
			select {
			case <-c.exited:
			case <-time.After(30 * time.Second):
				t.Errorf("podman run %s did not return within 30s of podman stop; killing the client", c.Name)
				_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
				<-c.exited
				return
			}
			var exitErr *exec.ExitError
			if errors.As(c.err, &exitErr) {
				t.Errorf("container %s exited with %v after SIGTERM, want 0", c.Name, c.err)
			}
		}
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	})
}

// PID returns the host PID of the container's main process (the collector).
func (c *Container) PID(t testing.TB) int {
	t.Helper()
	out, err := exec.CommandContext(context.Background(), c.podman, "inspect", "--format", "{{.State.Pid}}", c.Name).Output()
	if err != nil {
		t.Fatalf("podman inspect %s: %v", c.Name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || pid <= 0 {
		t.Fatalf("podman inspect %s: no PID in %q", c.Name, out)
	}
	return pid
}

// ContainerMemory is the collector's memory as /proc/PID/status reports it,
// in bytes: resident (VmRSS), its peak (VmHWM), and the resident set split
// into anonymous memory (heap, stacks) and file-backed pages (mostly the
// binary's own text and data).
type ContainerMemory struct {
	RSS, Peak, Anon, File int64
}

func (m ContainerMemory) String() string {
	mib := func(v int64) float64 { return float64(v) / (1 << 20) }
	return fmt.Sprintf("VmRSS %.1f MiB (peak %.1f MiB; anonymous %.1f MiB, file-backed %.1f MiB)", mib(m.RSS), mib(m.Peak), mib(m.Anon), mib(m.File))
}

// Memory returns the collector's memory (its /proc/PID/status on the host).
func (c *Container) Memory(t testing.TB) ContainerMemory {
	t.Helper()
	pid := c.PID(t)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var m ContainerMemory
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			m.RSS = v << 10
		case "VmHWM:":
			m.Peak = v << 10
		case "RssAnon:":
			m.Anon = v << 10
		case "RssFile:":
			m.File = v << 10
		}
	}
	if m.RSS == 0 {
		t.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	return m
}

// Stats returns `podman stats --no-stream` for the container (memory use as
// its cgroup counts it, CPU), or why it could not be had.
func (c *Container) Stats() string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, c.podman, "stats", "--no-stream", "--format", "mem {{.MemUsage}} cpu {{.CPUPerc}}", c.Name).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(podman stats: %v: %s)", err, bytes.TrimSpace(out))
	}
	return string(bytes.TrimSpace(out))
}

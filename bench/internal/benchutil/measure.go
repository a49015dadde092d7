// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package benchutil

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Measured is one command's fastest wall time (process start included), its
// output from that run, and the largest peak RSS over the runs.
type Measured struct {
	Wall   time.Duration
	RSSKB  int64
	Stdout []byte
}

// TimeV is /usr/bin/time when installed (its -v report gives the peak RSS
// the same way for every side), else "".
func TimeV() string {
	if _, err := os.Stat("/usr/bin/time"); err == nil {
		return "/usr/bin/time"
	}
	return ""
}

var maxRSSLine = regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`)

// Measure runs the command runs times, as a child process, and keeps the
// fastest run's wall time and output and the largest peak RSS seen (by
// /usr/bin/time -v when present, else the child's ru_maxrss).
func Measure(runs int, name string, args ...string) (Measured, error) {
	var best Measured
	for i := 0; i < max(runs, 1); i++ {
		var cmd *exec.Cmd
		tv := TimeV()
		if tv != "" {
			cmd = exec.CommandContext(context.Background(), tv, append([]string{"-v", name}, args...)...)
		} else {
			cmd = exec.CommandContext(context.Background(), name, args...)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		if err != nil {
			return best, fmt.Errorf("%w: %s", err, Tail(stderr.String()))
		}
		var rss int64
		if tv != "" {
			m := maxRSSLine.FindStringSubmatch(stderr.String())
			if m == nil {
				return best, fmt.Errorf("no maximum RSS in /usr/bin/time output: %s", Tail(stderr.String()))
			}
			rss, _ = strconv.ParseInt(m[1], 10, 64)
		} else if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = int64(ru.Maxrss) //nolint:unconvert // KB on Linux; an int32 on 32-bit Linux, an int64 here
		}
		if i == 0 || wall < best.Wall {
			best.Wall, best.Stdout = wall, stdout.Bytes()
		}
		best.RSSKB = max(best.RSSKB, rss)
	}
	return best, nil
}

// Tail keeps the end of a long message.
func Tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}

// Python returns the executable that cmd runs Python as (its
// sys.executable), for a baseline to time the interpreter itself: a
// launcher in front of it, such as a pyenv shim (a shell script choosing a
// version, ~0.3 s a start on the project's machine), would be timed as
// Python's and inflate every speedup against it.
func Python(cmd string) (string, error) {
	if _, err := exec.LookPath(cmd); err != nil {
		return "", fmt.Errorf("%s is needed for the Python baseline (-python names another): %w", cmd, err)
	}
	out, err := exec.CommandContext(context.Background(), cmd, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return "", fmt.Errorf("asking %s for its interpreter: %w", cmd, err)
	}
	path := strings.TrimSpace(string(out))
	if path == "" {
		return "", fmt.Errorf("%s reports no sys.executable: pass the interpreter itself with -python", cmd)
	}
	return path, nil
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package benchutil

import (
	"bytes"
	"context"
	"flag"
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
// output from that run, and the largest peak RSS over the runs, with the
// minor page faults (the first touches of its memory) and the CPU time of
// the fastest run.
type Measured struct {
	Wall        time.Duration
	RSSKB       int64
	MinorFaults int64
	// CPU is user and system time, the command's children's included
	// (/usr/bin/time's child is the command).
	CPU    time.Duration
	Stdout []byte
}

// Faster is the faster of m and o (their fastest run's figures), with the
// larger peak RSS of the two: the merge of two measurements of one command.
func (m Measured) Faster(o Measured) Measured {
	f := m
	if o.Wall < m.Wall {
		f = o
	}
	f.RSSKB = max(m.RSSKB, o.RSSKB)
	return f
}

// TimeV is /usr/bin/time when installed (its -v report gives the peak RSS
// the same way for every side), else "".
func TimeV() string {
	if _, err := os.Stat("/usr/bin/time"); err == nil {
		return "/usr/bin/time"
	}
	return ""
}

var (
	maxRSSLine      = regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`)
	minorFaultsLine = regexp.MustCompile(`Minor \(reclaiming a frame\) page faults: (\d+)`)
)

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
		var rss, faults int64
		if tv != "" {
			m := maxRSSLine.FindStringSubmatch(stderr.String())
			f := minorFaultsLine.FindStringSubmatch(stderr.String())
			if m == nil || f == nil {
				return best, fmt.Errorf("no maximum RSS or minor page faults in /usr/bin/time output: %s", Tail(stderr.String()))
			}
			rss, _ = strconv.ParseInt(m[1], 10, 64)
			faults, _ = strconv.ParseInt(f[1], 10, 64)
		} else if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = int64(ru.Maxrss)    //nolint:unconvert // KB on Linux; an int32 on 32-bit Linux, an int64 here
			faults = int64(ru.Minflt) //nolint:unconvert // as Maxrss
		}
		m := Measured{Wall: wall, RSSKB: rss, MinorFaults: faults, Stdout: stdout.Bytes(),
			CPU: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
		if i == 0 {
			best = m
		} else {
			best = best.Faster(m)
		}
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

// PythonFlag defines the -python flag of a bench that compares with Python
// (use: what the Python is for, e.g. "to compare with"); Python resolves
// its value.
func PythonFlag(use string) *string {
	return flag.String("python", "python3", "the Python "+use+
		" (resolved to the interpreter it runs, so that a launcher such as a pyenv shim is not timed)")
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

// FirstTouchCost is what touching a page of fresh anonymous memory for the
// first time costs this machine (the page fault, the kernel zeroing the
// page, and under a hypervisor the host backing it): 64 MB mapped and
// written one byte a page, the fastest of three. Hundreds of nanoseconds
// on bare metal; several microseconds in some virtual machines, where a
// short-lived process's first touches of its heap weigh on its time.
func FirstTouchCost() (time.Duration, error) {
	const size = 64 << 20
	page := os.Getpagesize()
	best := time.Duration(0)
	for range 3 {
		mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			return 0, fmt.Errorf("mapping %d bytes to time page faults: %w", size, err)
		}
		start := time.Now()
		for i := 0; i < size; i += page {
			mem[i] = 1
		}
		d := time.Since(start) / time.Duration(size/page)
		if err := syscall.Munmap(mem); err != nil {
			return 0, err
		}
		if best == 0 || d < best {
			best = d
		}
	}
	return best, nil
}

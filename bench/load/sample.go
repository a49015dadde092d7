// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat:
// 100 on every Linux architecture Go supports (the kernel's HZ may differ,
// the value it exports to user space does not).
const clockTicks = 100

// sample is one second's look at the agent.
type sample struct {
	at                     time.Duration // since the load started (negative: idle phase)
	rssKB, anonKB, fileKB  int64
	cpu                    time.Duration // user + system since the agent started
	tel                    telemetry
	sinkPoints, sinkSpans  int64
	sinkLogs, trafficSpans int64
}

// readStatus reads VmRSS, RssAnon and RssFile (kB) of pid.
func readStatus(pid int) (rss, anon, file int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "RssAnon":
			anon = n
		case "RssFile":
			file = n
		}
	}
	return rss, anon, file, nil
}

// readCPU reads utime + stime of pid from /proc/PID/stat.
func readCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields from the last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no ')' in %q", pid, data)
	}
	f := strings.Fields(string(data[i+1:]))
	// After ')': state is field 3, so utime (14) and stime (15) are f[11], f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command name", pid, len(f))
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}

// telemetry is one scrape of the agent's own Prometheus endpoint: every
// series (name and labels as written) with its value.
type telemetry map[string]float64

func scrapeTelemetry(client *http.Client, url string) (telemetry, error) {
	resp, err := httpGet(client, url)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }() // read only: a failed close loses nothing
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s", url, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return parseTelemetry(body), nil
}

// parseTelemetry reads the text format loosely: "series value" per line,
// comments skipped. Label values here never hold spaces followed by a
// number, so the value is the last field.
func parseTelemetry(body []byte) telemetry {
	out := telemetry{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out
}

// sum adds every series whose metric name starts with prefix and whose
// labels contain every one of the given `key="value"` pairs.
func (t telemetry) sum(prefix string, labels ...string) float64 {
	var s float64
	for k, v := range t {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		ok := true
		for _, l := range labels {
			if !strings.Contains(k, l) {
				ok = false
				break
			}
		}
		if ok {
			s += v
		}
	}
	return s
}

// names lists the metric names (without labels) that start with prefix.
func (t telemetry) names(prefix string) []string {
	seen := map[string]bool{}
	for k := range t {
		name, _, _ := strings.Cut(k, "{")
		if strings.HasPrefix(name, prefix) {
			seen[name] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// byLabel sums the series of metric name by the value of label.
func (t telemetry) byLabel(name, label string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range t {
		n, rest, _ := strings.Cut(k, "{")
		if n != name {
			continue
		}
		key := label + `="`
		i := strings.Index(rest, key)
		if i < 0 {
			continue
		}
		val, _, _ := strings.Cut(rest[i+len(key):], `"`)
		out[val] += v
	}
	return out
}

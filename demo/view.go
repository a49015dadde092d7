// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/llmops-otel/otelcol-llmops/demo/internal/exported"
)

// width is what the live view fits in: an 80-column terminal.
const width = 80

// view shows the run as it goes: on a terminal it redraws one screen every
// second; otherwise (a pipe, CI) it prints each incident once as it fires or
// resolves and a status line every 10 s.
type view struct {
	w         io.Writer
	tty       bool
	notes     []string
	seen      map[string]bool // incident id + state already printed (plain)
	lastPlain time.Duration
}

func newView(w io.Writer, plain bool) *view {
	tty := false
	if f, ok := w.(*os.File); ok && !plain {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &view{w: w, tty: tty, seen: map[string]bool{}}
}

func (v *view) banner(d time.Duration, dir string) {
	how := "until Ctrl-C"
	if d > 0 {
		how = "for " + d.String()
	}
	// Terminal output (here and below in this file): a write to stdout or
	// stderr that fails has nowhere to be reported, so its error is dropped.
	_, _ = fmt.Fprintf(v.w, "otelcol-llmops demo: a simulated 4-GPU node, %s. Files: %s\n", how, dir)
}

func (v *view) note(s string) {
	v.notes = append(v.notes, s)
	if len(v.notes) > 3 {
		v.notes = v.notes[1:]
	}
	if !v.tty {
		_, _ = fmt.Fprintln(v.w, "  · "+s)
	}
}

func gib(b float64) string { return fmt.Sprintf("%.1f", b/(1<<30)) }

func last(s exported.Series) (float64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	return s[len(s)-1].V, true
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 1 {
		return s[:n]
	}
	return s[:n-1] + "…"
}

// shortGPU keeps the end of a GPU UUID, where the demo's GPUs differ.
func shortGPU(id string) string {
	if len(id) > 12 {
		return "GPU…" + id[len(id)-8:]
	}
	return id
}

// wrap cuts text into lines of at most n columns.
func wrap(s string, n int) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len([]rune(line))+1+len([]rune(w)) > n {
			out = append(out, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

func (v *view) render(elapsed time.Duration, d *exported.Data) {
	if v.tty {
		v.screen(elapsed, d)
		return
	}
	v.plain(elapsed, d)
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (v *view) screen(elapsed time.Duration, d *exported.Data) {
	var b strings.Builder
	b.WriteString("\033[H\033[2J")
	fmt.Fprintf(&b, "otelcol-llmops demo  +%-5s  (Ctrl-C stops and writes the report)\n\n", elapsed.Round(time.Second))
	b.WriteString(v.gpuLines(d))
	b.WriteString("\n")
	b.WriteString(v.engineLines(d))
	b.WriteString("\nINCIDENTS\n")
	incs := latestIncidents(d)
	if len(incs) == 0 {
		b.WriteString("  none yet (the detectors need their windows: ~20-60 s)\n")
	}
	for _, in := range incs {
		for _, l := range incidentLines(in) {
			b.WriteString(l + "\n")
		}
	}
	for _, n := range v.notes {
		b.WriteString("\n· " + short(n, width-2))
	}
	b.WriteString("\n")
	_, _ = fmt.Fprint(v.w, b.String())
}

func (v *view) gpuLines(d *exported.Data) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-13s %-12s %6s %9s  %s\n", "GPU", "memory GiB", "util", "MiB/min", "processes (GiB)")
	for _, id := range sortedKeys(d.GPUs) {
		g := d.GPUs[id]
		mem, _ := last(g.Memory)
		lim, _ := last(g.Limit)
		util, _ := last(g.Utilization)
		rate, ok := last(g.GrowthRate)
		slope := "-"
		if ok {
			slope = fmt.Sprintf("%+.0f", rate*60/(1<<20))
		}
		var procs []string
		for _, p := range g.Processes {
			m, _ := last(p.Memory)
			procs = append(procs, fmt.Sprintf("%s:%d %s", p.Name, p.PID, gib(m)))
		}
		sort.Strings(procs)
		flag := ""
		if len(g.Throttle) > 0 && g.Throttle[0] != "" {
			flag = " [" + strings.Join(g.Throttle, ",") + "]"
		}
		line := fmt.Sprintf("%-13s %5s/%-6s %5.0f%% %9s  %s%s", shortGPU(id), gib(mem), gib(lim), 100*util, slope, strings.Join(procs, " "), flag)
		b.WriteString(short(line, width) + "\n")
	}
	return b.String()
}

func (v *view) engineLines(d *exported.Data) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %5s %8s %8s %7s\n", "ENGINE", "KV", "p99 s", "tok/s", "waiting")
	for _, t := range sortedKeys(d.Engines) {
		e := d.Engines[t]
		kv, _ := last(e.KV)
		p99, okP := last(e.P99)
		tok, _ := last(e.TokenRate)
		wait, _ := last(e.Waiting)
		name := e.Name + " " + strings.TrimPrefix(strings.TrimSuffix(t, "/metrics"), "http://")
		p := "-"
		if okP {
			p = fmt.Sprintf("%.2f", p99)
		}
		fmt.Fprintf(&b, "%-26s %4.0f%% %8s %8.0f %7.0f\n", short(name, 26), 100*kv, p, tok, wait)
	}
	return b.String()
}

// latestIncidents keeps the newest record of each incident, newest first.
func latestIncidents(d *exported.Data) []exported.Incident {
	byID := map[string]exported.Incident{}
	var order []string
	for _, in := range d.Incidents {
		if _, ok := byID[in.ID]; !ok {
			order = append(order, in.ID)
		}
		byID[in.ID] = in
	}
	out := make([]exported.Incident, 0, len(order))
	for i := len(order) - 1; i >= 0; i-- {
		out = append(out, byID[order[i]])
	}
	if len(out) > 6 {
		out = out[:6]
	}
	return out
}

func incidentLines(in exported.Incident) []string {
	state := strings.ToUpper(in.State)
	switch {
	case in.State == "firing" && in.Update > 0:
		state = fmt.Sprintf("UPDATE %d", in.Update)
	case in.Resolution == "superseded":
		state = "SUPERSEDED"
	}
	head := fmt.Sprintf("%s %-10s %-8s %s", in.Time.Local().Format("15:04:05"), state, in.Severity, in.Kind)
	lines := []string{short(head, width)}
	for i, l := range wrap(in.Body, width-4) {
		if i == 3 {
			lines = append(lines, "    …")
			break
		}
		lines = append(lines, "    "+l)
	}
	if in.Layer != "" {
		// The end of a module path names the layer: cut from the left.
		layer := in.Layer
		if room := width - len("    layer: "); len(layer) > room {
			layer = "…" + layer[len(layer)-room+1:]
		}
		lines = append(lines, "    layer: "+layer)
	}
	return lines
}

func (v *view) plain(elapsed time.Duration, d *exported.Data) {
	for _, in := range d.Incidents {
		key := fmt.Sprintf("%s/%s/%d", in.ID, in.State, in.Update)
		if v.seen[key] {
			continue
		}
		v.seen[key] = true
		for _, l := range incidentLines(in) {
			_, _ = fmt.Fprintln(v.w, l)
		}
	}
	if elapsed-v.lastPlain >= 10*time.Second {
		v.lastPlain = elapsed
		var parts []string
		for _, id := range sortedKeys(d.GPUs) {
			g := d.GPUs[id]
			mem, _ := last(g.Memory)
			parts = append(parts, fmt.Sprintf("%s %sG", shortGPU(id), gib(mem)))
		}
		for _, t := range sortedKeys(d.Engines) {
			kv, _ := last(d.Engines[t].KV)
			parts = append(parts, fmt.Sprintf("%s KV %.0f%%", d.Engines[t].Name, 100*kv))
		}
		_, _ = fmt.Fprintf(v.w, "+%s %s\n", elapsed.Round(time.Second), strings.Join(parts, " | "))
	}
}

func (v *view) summary(d *exported.Data, reportPath string) {
	kinds := map[string]int{}
	ids := map[string]bool{}
	for _, in := range d.Incidents {
		if !ids[in.ID] {
			ids[in.ID] = true
			kinds[in.Kind]++
		}
	}
	var parts []string
	for _, k := range sortedKeys(kinds) {
		parts = append(parts, fmt.Sprintf("%s×%d", k, kinds[k]))
	}
	_, _ = fmt.Fprintf(v.w, "\n%d incidents (%s), %d leak suspects from the profile, %d spans.\nReport: %s\n",
		len(ids), strings.Join(parts, ", "), len(d.LeakSuspects), d.Spans, reportPath)
}

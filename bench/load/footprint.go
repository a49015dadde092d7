// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// mappings is the resident memory of a process by what backs it, from
// /proc/PID/smaps (kB): the executable's own mappings by permission (text
// r-x, read-only data r--, data rw-), other files (shared libraries), and
// anonymous memory. Anonymous is counted apart inside the executable's
// mappings, where written data pages become private copies.
type mappings struct {
	exeRSS, exeAnon map[string]int64 // by permissions, e.g. "r-xp"
	otherFiles      map[string]int64 // by path
	anon            int64            // mappings backed by no file
}

func (m mappings) exeTotal() (rss, anon int64) {
	for p, v := range m.exeRSS {
		rss += v
		anon += m.exeAnon[p]
	}
	return rss, anon
}

func readSmaps(pid int) (mappings, error) {
	m := mappings{exeRSS: map[string]int64{}, exeAnon: map[string]int64{}, otherFiles: map[string]int64{}}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return m, err
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return m, err
	}
	var path, perms string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		// A mapping's header: "start-end perms offset dev inode [path]";
		// the fields under it are "Key: value kB".
		if !strings.HasSuffix(f[0], ":") {
			perms, path = "", ""
			if len(f) >= 5 {
				perms = f[1]
			}
			if len(f) >= 6 {
				path = strings.Join(f[5:], " ")
			}
			continue
		}
		if len(f) < 2 || (f[0] != "Rss:" && f[0] != "Anonymous:") {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch {
		case path == exe:
			if f[0] == "Rss:" {
				m.exeRSS[perms] += kb
			} else {
				m.exeAnon[perms] += kb
			}
		case strings.HasPrefix(path, "/") && f[0] == "Rss:":
			m.otherFiles[path] += kb
		case !strings.HasPrefix(path, "/") && f[0] == "Rss:":
			m.anon += kb
		}
	}
	return m, sc.Err()
}

func printMappings(what string, m mappings) {
	rss, anon := m.exeTotal()
	var others int64
	type file struct {
		path string
		kb   int64
	}
	var fs []file
	for p, v := range m.otherFiles {
		others += v
		fs = append(fs, file{p, v})
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].kb > fs[j].kb })
	var top []string
	for i, f := range fs {
		if i == 3 {
			break
		}
		top = append(top, fmt.Sprintf("%s %s", f.path[strings.LastIndexByte(f.path, '/')+1:], mib(f.kb)))
	}
	fmt.Printf("  resident pages %s (/proc/PID/smaps): the executable %s (text r-x %s, read-only data r-- %s, data rw- %s of which %s anonymous), other files %s (%s), anonymous mappings %s\n",
		what, mib(rss), mib(m.exeRSS["r-xp"]), mib(m.exeRSS["r--p"]), mib(m.exeRSS["rw-p"]), mib(anon), mib(others), strings.Join(top, ", "), mib(m.anon))
}

// Where a heap sample is charged: the innermost frame of a component or
// other package of ours, contrib or the collector core (the owner of the
// stack), else the innermost frame outside the standard library (pdata
// unmarshalling a request, gRPC's buffers, the OpenTelemetry SDK of the
// agent's own telemetry), else the Go runtime and standard library.
const (
	catOurs    = "ours"
	catContrib = "contrib"
	catCore    = "collector core"
	catPdata   = "pdata"
	catGRPC    = "grpc, protobuf, x/net"
	catOTel    = "OpenTelemetry Go SDK"
	catOther   = "other modules"
	catRuntime = "runtime, standard library"
)

const (
	oursPrefix    = "github.com/llmops-otel/otelcol-llmops/"
	contribPrefix = "github.com/open-telemetry/opentelemetry-collector-contrib/"
	corePrefix    = "go.opentelemetry.io/collector/"
)

// packageOf is the import path of a pprof function name such as
// "github.com/a/b/c.(*T).M" or "runtime.mallocgc".
func packageOf(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return fn
	}
	return fn[:slash+1+dot]
}

// classify names the category and the group of a package: the group is
// the component's package under ours, contrib and core (e.g.
// "receiver/llmenginereceiver"), the module otherwise.
func classify(pkg string) (cat, group string) {
	trim := func(p string, n int) string { // the first n path elements
		parts := strings.SplitN(p, "/", n+1)
		if len(parts) > n {
			parts = parts[:n]
		}
		return strings.Join(parts, "/")
	}
	switch {
	case strings.HasPrefix(pkg, oursPrefix):
		return catOurs, trim(strings.TrimPrefix(pkg, oursPrefix), 2)
	case strings.HasPrefix(pkg, contribPrefix):
		return catContrib, trim(strings.TrimPrefix(pkg, contribPrefix), 2)
	case strings.HasPrefix(pkg, corePrefix+"pdata"):
		return catPdata, trim(strings.TrimPrefix(pkg, corePrefix), 2)
	case strings.HasPrefix(pkg, corePrefix):
		return catCore, trim(strings.TrimPrefix(pkg, corePrefix), 2)
	case strings.HasPrefix(pkg, "google.golang.org/grpc"), strings.HasPrefix(pkg, "google.golang.org/protobuf"),
		strings.HasPrefix(pkg, "golang.org/x/net/"):
		return catGRPC, trim(pkg, 2)
	case strings.HasPrefix(pkg, "go.opentelemetry.io/"):
		return catOTel, trim(pkg, 3)
	case !strings.Contains(strings.SplitN(pkg, "/", 2)[0], "."):
		return catRuntime, trim(pkg, 1)
	default:
		return catOther, trim(pkg, 3)
	}
}

// chargeOf is where one sample's stack (innermost frame first) is charged.
func chargeOf(stack []string) (cat, group string) {
	fallback := ""
	for _, fn := range stack {
		c, g := classify(packageOf(fn))
		switch c {
		case catOurs, catContrib, catCore:
			return c, g
		case catRuntime:
		default:
			if fallback == "" {
				fallback = fn
			}
		}
	}
	if fallback != "" {
		return classify(packageOf(fallback))
	}
	if len(stack) > 0 {
		return classify(packageOf(stack[0]))
	}
	return catRuntime, "?"
}

// heapByComponent reads a heap profile and sums its in-use bytes by
// category and by group within each.
func heapByComponent(path string) (total int64, byCat map[string]int64, byGroup map[[2]string]int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, nil, err
	}
	defer func() { _ = f.Close() }() // read only
	p, err := profile.Parse(f)
	if err != nil {
		return 0, nil, nil, err
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			idx = i
		}
	}
	if idx < 0 {
		return 0, nil, nil, fmt.Errorf("%s: no inuse_space in the profile", path)
	}
	byCat, byGroup = map[string]int64{}, map[[2]string]int64{}
	for _, s := range p.Sample {
		var stack []string
		for _, loc := range s.Location {
			// Inlined calls come innermost first within a location.
			for _, ln := range loc.Line {
				if ln.Function != nil {
					stack = append(stack, ln.Function.Name)
				}
			}
		}
		v := s.Value[idx]
		c, g := chargeOf(stack)
		total += v
		byCat[c] += v
		byGroup[[2]string{c, g}] += v
	}
	return total, byCat, byGroup, nil
}

// printHeapByComponent prints the heap in use by category, and the groups
// of at least 1% of it.
func printHeapByComponent(path string) {
	total, byCat, byGroup, err := heapByComponent(path)
	if err != nil {
		fmt.Printf("heap by component: %v\n", err)
		return
	}
	mb := func(v int64) string { return fmt.Sprintf("%.1f MiB", float64(v)/(1<<20)) }
	fmt.Printf("\nheap in use at the end of the window: %s, by the innermost frame of ours, contrib or the collector core (else of the first module outside the standard library):\n", mb(total))
	type kv struct {
		cat, group string
		v          int64
	}
	var cats []kv
	for c, v := range byCat {
		cats = append(cats, kv{cat: c, v: v})
	}
	sort.Slice(cats, func(i, j int) bool { return cats[i].v > cats[j].v })
	for _, c := range cats {
		var gs []kv
		var rest int64
		for k, v := range byGroup {
			if k[0] != c.cat {
				continue
			}
			if v*100 >= total {
				gs = append(gs, kv{group: k[1], v: v})
			} else {
				rest += v
			}
		}
		sort.Slice(gs, func(i, j int) bool { return gs[i].v > gs[j].v })
		parts := make([]string, 0, len(gs)+1)
		for _, g := range gs {
			parts = append(parts, fmt.Sprintf("%s %s", g.group, mb(g.v)))
		}
		if rest > 0 {
			parts = append(parts, fmt.Sprintf("rest %s", mb(rest)))
		}
		fmt.Printf("  %-26s %9s %5.1f%%  %s\n", c.cat, mb(c.v), 100*float64(c.v)/float64(max(total, 1)), strings.Join(parts, ", "))
	}
}

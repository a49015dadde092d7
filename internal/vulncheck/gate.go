// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package vulncheck

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Finding is one vulnerability govulncheck found reachable: some function of
// the scanned code calls a vulnerable symbol.
type Finding struct {
	ID string
	// Module and Version are the vulnerable module as the scan resolved it
	// ("stdlib" with the Go version for the standard library).
	Module, Version string
	// Fixed is the first version with the fix, "" when there is none.
	Fixed string
	// Symbol is the vulnerable function called, e.g. net/http.Server.Serve.
	Symbol string
	// Scan names the govulncheck output the finding was read from.
	Scan string
}

// The fields of govulncheck's streamed JSON (protocol v1.0.0) the gate reads.
type message struct {
	Config *struct {
		ProtocolVersion string `json:"protocol_version"`
	} `json:"config"`
	Finding *struct {
		OSV          string `json:"osv"`
		FixedVersion string `json:"fixed_version"`
		Trace        []struct {
			Module   string `json:"module"`
			Version  string `json:"version"`
			Package  string `json:"package"`
			Function string `json:"function"`
			Receiver string `json:"receiver"`
		} `json:"trace"`
	} `json:"finding"`
}

// ReadFindings reads `govulncheck -format json` output and returns its
// reachable findings, one per vulnerability id. Module- and package-level
// findings (a vulnerable module required, a vulnerable package imported,
// nothing vulnerable called) are not returned: they are what govulncheck's
// own text mode does not fail on either.
func ReadFindings(r io.Reader, scan string) ([]Finding, error) {
	dec := json.NewDecoder(r)
	sawConfig := false
	byID := map[string]Finding{}
	for {
		var m message
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: not govulncheck JSON output (%w): was govulncheck run with -format json, and did it finish?", scan, err)
		}
		if m.Config != nil {
			if !strings.HasPrefix(m.Config.ProtocolVersion, "v1.") {
				return nil, fmt.Errorf("%s: govulncheck JSON protocol %q; this gate reads v1", scan, m.Config.ProtocolVersion)
			}
			sawConfig = true
		}
		f := m.Finding
		if f == nil || len(f.Trace) == 0 || f.Trace[0].Function == "" {
			continue
		}
		if !validID(f.OSV) {
			return nil, fmt.Errorf("%s: finding with id %q, not GO-YYYY-NNNN", scan, f.OSV)
		}
		if _, ok := byID[f.OSV]; ok {
			continue // another trace to the same vulnerability
		}
		top := f.Trace[0]
		sym := top.Function
		if top.Receiver != "" {
			sym = strings.TrimPrefix(top.Receiver, "*") + "." + sym
		}
		if top.Package != "" {
			sym = top.Package + "." + sym
		}
		byID[f.OSV] = Finding{ID: f.OSV, Module: top.Module, Version: top.Version, Fixed: f.FixedVersion, Symbol: sym, Scan: scan}
	}
	if !sawConfig {
		return nil, fmt.Errorf("%s: no config message: empty or truncated govulncheck output", scan)
	}
	out := make([]Finding, 0, len(byID))
	for _, f := range byID {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Allowlist maps a vulnerability id to why it is accepted.
type Allowlist map[string]string

// ReadAllowlist reads lines of "GO-YYYY-NNNN  reason"; blank lines and lines
// starting with # are skipped. Every entry needs a reason, and an id may be
// listed once.
func ReadAllowlist(r io.Reader, name string) (Allowlist, error) {
	allow := Allowlist{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id := strings.Fields(line)[0]
		reason := strings.TrimSpace(strings.TrimPrefix(line, id))
		switch {
		case !validID(id):
			return nil, fmt.Errorf("%s:%d: %q is not a vulnerability id (want \"GO-YYYY-NNNN  reason\")", name, n, id)
		case reason == "":
			return nil, fmt.Errorf("%s:%d: %s has no reason: say why it is accepted (not reachable as used, no fixed version within the pinned release, ...)", name, n, id)
		case allow[id] != "":
			return nil, fmt.Errorf("%s:%d: %s is listed twice", name, n, id)
		}
		allow[id] = reason
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return allow, nil
}

// Check fails on every finding the allowlist does not list, and on every
// listed id that no scan found any more (so the list says only what is
// true). The findings are those of all the scans the allowlist covers.
func Check(findings []Finding, allow Allowlist, allowName string) error {
	found := map[string]bool{}
	var msgs []string
	for _, f := range findings {
		found[f.ID] = true
		if _, ok := allow[f.ID]; ok {
			continue
		}
		fix := "no fixed version yet: list it in " + allowName + " with the reason it is accepted"
		if f.Fixed != "" {
			fix = fmt.Sprintf("fixed in %s: move %s to it (or list the id in %s with the reason it cannot be)", f.Fixed, f.Module, allowName)
		}
		msgs = append(msgs, fmt.Sprintf("%s in %s@%s, reachable through %s (%s): %s; https://pkg.go.dev/vuln/%s", f.ID, f.Module, f.Version, f.Symbol, f.Scan, fix, f.ID))
	}
	var stale []string
	for id := range allow {
		if !found[id] {
			stale = append(stale, id)
		}
	}
	sort.Strings(stale)
	for _, id := range stale {
		msgs = append(msgs, fmt.Sprintf("%s is listed in %s but no scan finds it any more: remove its line", id, allowName))
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "\n"))
	}
	return nil
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package vulncheck runs govulncheck offline: it turns the OSV files of a
// golang.org/x/vulndb module (data/osv) into the local database layout that
// `govulncheck -db file:///…` reads, and it gates govulncheck's JSON output
// on an allowlist (vulncheck-allow.txt) that must stay true.
package vulncheck

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// The v1 database layout govulncheck's local client reads (golang.org/x/vuln
// internal/client, v1.9.0): uncompressed JSON files, found by endpoint name
// plus ".json". The client recognises a directory as a v1 database by the
// presence of index/modules.json.
const (
	// VulnDBModule is the module whose data/osv holds the database's records.
	VulnDBModule = "golang.org/x/vulndb"

	dbIndexFile      = "index/db.json"
	modulesIndexFile = "index/modules.json"
	entryDir         = "ID"
)

// entry is the part of an OSV record the index is built from.
type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
	} `json:"affected"`
}

type moduleVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	// No "fixed": the client uses it only to skip reading entries a module
	// version is past, and reads every entry when it is absent. Leaving it
	// out costs a few local file reads and cannot hide a vulnerability the
	// way a wrongly computed fixed version would.
}

type moduleIndex struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

// DBStats says what BuildDB wrote.
type DBStats struct {
	Entries int
	Modules int
}

var idPattern = regexp.MustCompile(`^GO-[0-9]{4}-[0-9]{4,}$`)

// pseudoVersionTime is the commit time in a module pseudo-version such as
// v0.0.0-20261105234957-e22db6528018.
var pseudoVersionTime = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+-(?:[0-9A-Za-z.]+\.)?([0-9]{14})-[0-9a-f]{12}$`)

// VersionTime is the commit time of a pseudo-version (what the database's
// modified time falls back to: the OSV files in the vulndb repository carry
// a zero "modified", which is set only when the database is deployed).
func VersionTime(version string) (time.Time, error) {
	m := pseudoVersionTime.FindStringSubmatch(version)
	if m == nil {
		return time.Time{}, fmt.Errorf("%q is not a module pseudo-version (vX.Y.Z-yyyymmddhhmmss-abcdefabcdef): give the golang.org/x/vulndb version the OSV files come from", version)
	}
	return time.Parse("20060102150405", m[1])
}

// BuildDB writes the database for the OSV files (GO-*.json) in osvDir into
// outDir, which must not exist yet: it is written beside it and renamed into
// place, so an interrupted build never leaves half a database that later
// runs would trust. fallbackModified is the database's modified time when no
// entry has one.
func BuildDB(osvDir, outDir string, fallbackModified time.Time) (DBStats, error) {
	if _, err := os.Stat(outDir); err == nil {
		return DBStats{}, fmt.Errorf("%s already exists: remove it to rebuild the database", outDir)
	}
	files, err := filepath.Glob(filepath.Join(osvDir, "*.json"))
	if err != nil {
		return DBStats{}, err
	}
	if len(files) == 0 {
		return DBStats{}, fmt.Errorf("no OSV files (*.json) in %s: point -vulns at the data/osv directory of the golang.org/x/vulndb module", osvDir)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(outDir), "."+filepath.Base(outDir)+".tmp-")
	if err != nil {
		return DBStats{}, err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // a no-op once renamed; a leftover scratch directory is harmless
	if err := os.MkdirAll(filepath.Join(tmp, entryDir), 0o755); err != nil {
		return DBStats{}, err
	}
	if err := os.MkdirAll(filepath.Join(tmp, "index"), 0o755); err != nil {
		return DBStats{}, err
	}

	modules := map[string]*moduleIndex{}
	var modified time.Time
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return DBStats{}, err
		}
		var e entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return DBStats{}, fmt.Errorf("%s: not an OSV record: %w", f, err)
		}
		// The client finds an entry by its id alone, so the name must be it.
		if !idPattern.MatchString(e.ID) || filepath.Base(f) != e.ID+".json" {
			return DBStats{}, fmt.Errorf("%s: OSV id %q does not match the file name (want GO-YYYY-NNNN.json holding that id)", f, e.ID)
		}
		if e.Modified.After(modified) {
			modified = e.Modified
		}
		seen := map[string]bool{}
		for _, a := range e.Affected {
			path := a.Package.Name
			if path == "" {
				return DBStats{}, fmt.Errorf("%s: an affected entry has no package name", f)
			}
			if seen[path] {
				continue
			}
			seen[path] = true
			m := modules[path]
			if m == nil {
				m = &moduleIndex{Path: path}
				modules[path] = m
			}
			m.Vulns = append(m.Vulns, moduleVuln{ID: e.ID, Modified: e.Modified})
		}
		if err := os.WriteFile(filepath.Join(tmp, entryDir, e.ID+".json"), raw, 0o644); err != nil {
			return DBStats{}, err
		}
	}
	if modified.IsZero() {
		modified = fallbackModified.UTC()
	}

	index := make([]*moduleIndex, 0, len(modules))
	for _, m := range modules {
		sort.Slice(m.Vulns, func(i, j int) bool { return m.Vulns[i].ID < m.Vulns[j].ID })
		index = append(index, m)
	}
	sort.Slice(index, func(i, j int) bool { return index[i].Path < index[j].Path })
	if err := writeJSON(filepath.Join(tmp, modulesIndexFile), index); err != nil {
		return DBStats{}, err
	}
	if err := writeJSON(filepath.Join(tmp, dbIndexFile), struct {
		Modified time.Time `json:"modified"`
	}{modified}); err != nil {
		return DBStats{}, err
	}
	if err := os.Rename(tmp, outDir); err != nil {
		return DBStats{}, err
	}
	return DBStats{Entries: len(files), Modules: len(index)}, nil
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// validID reports whether s is a Go vulnerability database id.
func validID(s string) bool { return idPattern.MatchString(strings.TrimSpace(s)) }

// Download is what `go mod download -json MODULE@VERSION` says about the
// module it fetched.
type Download struct {
	Path    string
	Version string
	Dir     string
	Sum     string
	Error   string
}

// ReadDownload reads the output of `go mod download -json
// golang.org/x/vulndb@VERSION` and checks that it is that module, at a
// pseudo-version, with the go.sum hash wantSum pinned in the repository.
func ReadDownload(r io.Reader, wantSum string) (Download, error) {
	var d Download
	if err := json.NewDecoder(r).Decode(&d); err != nil {
		return d, fmt.Errorf("not the output of `go mod download -json`: %w", err)
	}
	switch {
	case d.Error != "":
		return d, fmt.Errorf("go mod download %s@%s: %s", d.Path, d.Version, d.Error)
	case d.Path != VulnDBModule:
		return d, fmt.Errorf("downloaded %s, want %s", d.Path, VulnDBModule)
	case d.Dir == "":
		return d, fmt.Errorf("go mod download %s@%s gave no directory", d.Path, d.Version)
	case d.Sum != wantSum:
		return d, fmt.Errorf("%s@%s has hash %s, but internal/tools/vulndb.txt pins %s: the version or the pin is wrong (take both from one `go mod download -json`)", d.Path, d.Version, d.Sum, wantSum)
	}
	return d, nil
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package vulncheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeOSV(t *testing.T, dir, name, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
}

const osvA = `{"schema_version":"1.3.1","id":"GO-2099-0002","modified":"0001-01-01T00:00:00Z","details":"two modules",
"affected":[{"package":{"name":"example.com/b","ecosystem":"Go"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.0.0"}]}]},
{"package":{"name":"example.com/a","ecosystem":"Go"}},{"package":{"name":"example.com/a","ecosystem":"Go"}}]}`

const osvB = `{"schema_version":"1.3.1","id":"GO-2099-0001","modified":"0001-01-01T00:00:00Z","details":"one",
"affected":[{"package":{"name":"example.com/a","ecosystem":"Go"}}]}`

func TestBuildDBLayout(t *testing.T) {
	src := t.TempDir()
	writeOSV(t, src, "GO-2099-0002.json", osvA)
	writeOSV(t, src, "GO-2099-0001.json", osvB)
	writeOSV(t, src, "README.md", "not an entry")
	out := filepath.Join(t.TempDir(), "db")
	when := time.Date(2026, 11, 5, 23, 49, 57, 0, time.UTC)

	st, err := BuildDB(src, out, when)
	require.NoError(t, err)
	assert.Equal(t, DBStats{Entries: 2, Modules: 2}, st)

	// index/modules.json: modules sorted by path, ids sorted, each id once
	// per module although GO-2099-0002 names example.com/a twice.
	var mods []struct {
		Path  string `json:"path"`
		Vulns []struct {
			ID string `json:"id"`
		} `json:"vulns"`
	}
	b, err := os.ReadFile(filepath.Join(out, "index", "modules.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &mods))
	require.Len(t, mods, 2)
	assert.Equal(t, "example.com/a", mods[0].Path)
	require.Len(t, mods[0].Vulns, 2)
	assert.Equal(t, "GO-2099-0001", mods[0].Vulns[0].ID)
	assert.Equal(t, "GO-2099-0002", mods[0].Vulns[1].ID)
	assert.Equal(t, "example.com/b", mods[1].Path)
	assert.NotContains(t, string(b), `"fixed"`, "a fixed version would let the client skip entries")

	// index/db.json: the fallback time, as the entries carry none.
	var db struct {
		Modified time.Time `json:"modified"`
	}
	b, err = os.ReadFile(filepath.Join(out, "index", "db.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &db))
	assert.True(t, db.Modified.Equal(when), "db modified %v, want %v", db.Modified, when)

	// ID/<id>.json: the OSV record unchanged.
	b, err = os.ReadFile(filepath.Join(out, "ID", "GO-2099-0002.json"))
	require.NoError(t, err)
	assert.Equal(t, osvA, string(b)) //nolint:testifylint // byte for byte: the record is copied, not re-encoded

	// Nothing left beside the database.
	left, err := os.ReadDir(filepath.Dir(out))
	require.NoError(t, err)
	assert.Len(t, left, 1)

	_, err = BuildDB(src, out, when)
	assert.ErrorContains(t, err, "already exists")
}

func TestBuildDBRejects(t *testing.T) {
	for name, c := range map[string]struct{ file, body, want string }{
		"id not the file name": {"GO-2099-0009.json", osvB, "does not match the file name"},
		"not JSON":             {"GO-2099-0001.json", "{", "not an OSV record"},
		"no package name":      {"GO-2099-0001.json", `{"id":"GO-2099-0001","affected":[{"package":{}}]}`, "no package name"},
	} {
		t.Run(name, func(t *testing.T) {
			src := t.TempDir()
			writeOSV(t, src, c.file, c.body)
			parent := t.TempDir()
			_, err := BuildDB(src, filepath.Join(parent, "db"), time.Time{})
			require.ErrorContains(t, err, c.want)
			left, _ := os.ReadDir(parent)
			assert.Empty(t, left, "a failed build leaves nothing behind")
		})
	}
	_, err := BuildDB(t.TempDir(), filepath.Join(t.TempDir(), "db"), time.Time{})
	assert.ErrorContains(t, err, "no OSV files")
}

func TestVersionTime(t *testing.T) {
	got, err := VersionTime("v0.0.0-20261105234957-e22db6528018")
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 11, 5, 23, 49, 57, 0, time.UTC), got)
	_, err = VersionTime("v1.9.0")
	assert.ErrorContains(t, err, "not a module pseudo-version")
}

func readScan(t *testing.T) []Finding {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "scan.json"))
	require.NoError(t, err)
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	found, err := ReadFindings(f, "root")
	require.NoError(t, err)
	return found
}

func TestReadFindingsOnlyReachable(t *testing.T) {
	found := readScan(t)
	// GO-2099-0002 is only imported, never called: not a finding. GO-2099-0001
	// has two symbol traces: one finding, the first one.
	require.Len(t, found, 2)
	assert.Equal(t, Finding{ID: "GO-2099-0001", Module: "example.com/a", Version: "v1.2.0", Fixed: "v1.2.3", Symbol: "example.com/a/p.Server.Serve", Scan: "root"}, found[0])
	assert.Equal(t, "GO-2099-0003", found[1].ID)
	assert.Equal(t, "stdlib", found[1].Module)
}

func TestReadFindingsRejectsTruncated(t *testing.T) {
	_, err := ReadFindings(strings.NewReader(""), "x")
	require.ErrorContains(t, err, "no config message")
	_, err = ReadFindings(strings.NewReader(`{"config":{"protocol_version":"v1.0.0"}}{"finding":`), "x")
	require.ErrorContains(t, err, "not govulncheck JSON output")
	_, err = ReadFindings(strings.NewReader(`{"config":{"protocol_version":"v2.0.0"}}`), "x")
	assert.ErrorContains(t, err, "protocol")
}

func TestReadAllowlist(t *testing.T) {
	allow, err := ReadAllowlist(strings.NewReader("# why\n\nGO-2099-0001  not reachable as configured\nGO-2099-0003\tstdlib: fixed in a later Go\n"), "allow.txt")
	require.NoError(t, err)
	assert.Equal(t, Allowlist{"GO-2099-0001": "not reachable as configured", "GO-2099-0003": "stdlib: fixed in a later Go"}, allow)

	for in, want := range map[string]string{
		"GO-2099-0001\n":                   "allow.txt:1: GO-2099-0001 has no reason",
		"CVE-2099-1  reason\n":             `allow.txt:1: "CVE-2099-1" is not a vulnerability id`,
		"GO-2099-0001 a\nGO-2099-0001 b\n": "allow.txt:2: GO-2099-0001 is listed twice",
	} {
		_, err := ReadAllowlist(strings.NewReader(in), "allow.txt")
		assert.ErrorContains(t, err, want, "input %q", in)
	}
}

func TestCheck(t *testing.T) {
	found := readScan(t)

	// Everything listed: passes.
	require.NoError(t, Check(found, Allowlist{"GO-2099-0001": "r", "GO-2099-0003": "r"}, "allow.txt"))

	// An unlisted finding fails, saying where the fix is.
	err := Check(found, Allowlist{"GO-2099-0003": "r"}, "allow.txt")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GO-2099-0001 in example.com/a@v1.2.0, reachable through example.com/a/p.Server.Serve (root): fixed in v1.2.3: move example.com/a to it")
	assert.NotContains(t, err.Error(), "GO-2099-0003")

	// One without a fix says to list it.
	err = Check(found, Allowlist{"GO-2099-0001": "r"}, "allow.txt")
	require.ErrorContains(t, err, "GO-2099-0003 in stdlib@v1.26.8")
	require.ErrorContains(t, err, "no fixed version yet")

	// A listed id nothing finds any more fails too, the list stays true;
	// GO-2099-0002 is found only as an import, which does not count.
	err = Check(found, Allowlist{"GO-2099-0001": "r", "GO-2099-0002": "r", "GO-2099-0003": "r"}, "allow.txt")
	require.EqualError(t, err, "GO-2099-0002 is listed in allow.txt but no scan finds it any more: remove its line")

	// The allowlist covers the union of the scans.
	other := []Finding{{ID: "GO-2099-0004", Module: "m", Version: "v1", Symbol: "m.F", Scan: "build"}}
	require.NoError(t, Check(append(found, other...), Allowlist{"GO-2099-0001": "r", "GO-2099-0003": "r", "GO-2099-0004": "r"}, "allow.txt"))
}

func TestReadDownload(t *testing.T) {
	const ok = `{"Path":"golang.org/x/vulndb","Version":"v0.0.0-20261105234957-e22db6528018","Dir":"/m/vulndb","Sum":"h1:abc="}`
	d, err := ReadDownload(strings.NewReader(ok), "h1:abc=")
	require.NoError(t, err)
	assert.Equal(t, "/m/vulndb", d.Dir)

	_, err = ReadDownload(strings.NewReader(ok), "h1:other=")
	require.ErrorContains(t, err, "but internal/tools/vulndb.txt pins h1:other=")
	_, err = ReadDownload(strings.NewReader(`{"Path":"golang.org/x/vulndb","Version":"v0.0.0-2","Error":"unknown revision"}`), "h1:abc=")
	require.ErrorContains(t, err, "unknown revision")
	_, err = ReadDownload(strings.NewReader(`{"Path":"golang.org/x/vuln","Version":"v1.9.0","Dir":"/d","Sum":"h1:abc="}`), "h1:abc=")
	assert.ErrorContains(t, err, "want golang.org/x/vulndb")
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package profileimportreceiver

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/metadata"
)

// The watched directory's confinement: a matched file whose real location
// (after every symbolic link, of the file or of a directory on its way) is
// outside the directory of its include pattern is refused, never opened.

// observed starts a receiver with a logger the test can read.
func observed(t *testing.T, dir string, st *memStorage, mutate func(*Config)) (running, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	return startWith(t, dir, st, mutate, set), logs
}

// sentinel is the name of the file settle writes to know that the
// receiver has polled several more times.
const sentinel = "zz-sentinel.json.gz"

// importedFiles lists the llm.profile.file of every imported trace but the
// sentinel's.
func importedFiles(traces []ptrace.Traces) []string {
	var out []string
	for _, td := range traces {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			if v, ok := td.ResourceSpans().At(i).Resource().Attributes().Get(spec.AttrProfileFile); ok && filepath.Base(v.Str()) != sentinel {
				out = append(out, v.Str())
			}
		}
	}
	return out
}

func allImported(traces []ptrace.Traces) (n int) {
	for _, td := range traces {
		n += td.ResourceSpans().Len()
	}
	return n
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
}

// refusals returns the warnings about refused links.
func refusals(logs *observer.ObservedLogs) []observer.LoggedEntry {
	return logs.FilterMessageSnippet("outside the watched directory").All()
}

// settle waits for the n legitimate imports, then writes a sentinel file
// into sentinelDir and waits for its import: settle_time is three polls,
// so by then every file present before has been polled at least three
// more times.
func settle(t *testing.T, r running, sentinelDir string, n int) {
	t.Helper()
	waitFor(t, "the legitimate imports", func() bool { return len(importedFiles(r.traces.AllTraces())) >= n })
	writeAtomically(t, filepath.Join(sentinelDir, sentinel), fixture(t, "hta-simple_add.json.gz"))
	waitFor(t, "the sentinel's import", func() bool { return allImported(r.traces.AllTraces()) > n })
}

func TestSymlinkOutsideTheDirectoryIsRefused(t *testing.T) {
	base := t.TempDir()
	dir, outside := filepath.Join(base, "profiles"), filepath.Join(base, "elsewhere")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	trace := fixture(t, "hta-simple_add.json.gz")
	writeAtomically(t, filepath.Join(outside, "secret.json.gz"), trace)
	symlink(t, filepath.Join(outside, "secret.json.gz"), filepath.Join(dir, "evil.json.gz"))
	symlink(t, "../elsewhere/secret.json.gz", filepath.Join(dir, "relative.json.gz"))
	// A chain that starts inside and ends outside.
	symlink(t, "evil.json.gz", filepath.Join(dir, "chain.json.gz"))

	st := &memStorage{data: map[string][]byte{}}
	r, logs := observed(t, dir, st, nil)
	writeAtomically(t, filepath.Join(dir, "ok.json.gz"), trace)
	settle(t, r, dir, 1)

	if got := importedFiles(r.traces.AllTraces()); len(got) != 1 || !strings.HasSuffix(got[0], "ok.json.gz") {
		t.Fatalf("imported %v; only ok.json.gz is inside the directory", got)
	}
	if n := len(r.metrics.AllMetrics()) + len(r.logs.AllLogs()); n > 2 {
		t.Fatalf("%d metric/log batches: the outside file's data came through", n)
	}
	warned := map[string]string{}
	for _, e := range refusals(logs) {
		if e.Level != zapcore.WarnLevel {
			t.Errorf("refusal logged at %s, want warn", e.Level)
		}
		fields := e.ContextMap()
		warned[filepath.Base(fields["file"].(string))] = fields["target"].(string)
	}
	for _, link := range []string{"evil.json.gz", "relative.json.gz", "chain.json.gz"} {
		target, ok := warned[link]
		if !ok {
			t.Errorf("no warning for %s (warned about %v)", link, warned)
			continue
		}
		if resolved, _ := filepath.EvalSymlinks(filepath.Join(outside, "secret.json.gz")); target != resolved {
			t.Errorf("warning for %s names target %q, want %q", link, target, resolved)
		}
	}
	// Refused once each, not retried every poll at error level.
	if n := len(refusals(logs)); n != 3 {
		t.Errorf("%d refusal warnings for 3 links over several polls", n)
	}
	if n := logs.FilterLevelExact(zapcore.ErrorLevel).Len(); n != 0 {
		t.Errorf("%d error-level logs: %v", n, logs.FilterLevelExact(zapcore.ErrorLevel).All())
	}
	// The importer may still be saving ok.json.gz's progress.
	refused := 0
	st.mu.Lock()
	for _, v := range st.data {
		if strings.HasPrefix(string(v), "refused") {
			refused++
		}
	}
	st.mu.Unlock()
	if refused != 3 {
		t.Errorf("%d refusals remembered in storage, want 3", refused)
	}
}

func TestSymlinkInsideTheDirectoryIsImported(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "profiles")
	if err := os.MkdirAll(filepath.Join(dir, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	trace := fixture(t, "hta-simple_add.json.gz")
	// Targets in a subdirectory the pattern does not match, so that only
	// the links are imported.
	writeAtomically(t, filepath.Join(dir, "keep", "a.json.gz"), trace)
	writeAtomically(t, filepath.Join(dir, "keep", "b.json.gz"), trace)
	symlink(t, "keep/a.json.gz", filepath.Join(dir, "relative.json.gz"))
	symlink(t, filepath.Join(dir, "keep", "b.json.gz"), filepath.Join(dir, "absolute.json.gz"))
	r, logs := observed(t, dir, nil, nil)
	settle(t, r, dir, 2)
	if got := importedFiles(r.traces.AllTraces()); len(got) != 2 {
		t.Fatalf("imported %v; want both links", got)
	}
	if n := len(refusals(logs)); n != 0 {
		t.Fatalf("a link inside the directory was refused: %v", refusals(logs))
	}
}

// TestSymlinkedSubdirectoryOutsideIsRefused: with a pattern that reaches
// into subdirectories, a subdirectory that is a link to elsewhere does not
// take the import there.
func TestSymlinkedSubdirectoryOutsideIsRefused(t *testing.T) {
	base := t.TempDir()
	dir, outside := filepath.Join(base, "profiles"), filepath.Join(base, "elsewhere")
	for _, d := range []string{filepath.Join(dir, "rank0"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	trace := fixture(t, "hta-simple_add.json.gz")
	writeAtomically(t, filepath.Join(outside, "secret.json.gz"), trace)
	symlink(t, outside, filepath.Join(dir, "rank1"))
	r, logs := observed(t, dir, nil, func(c *Config) { c.Include = []string{filepath.Join(dir, "*", "*.json.gz")} })
	writeAtomically(t, filepath.Join(dir, "rank0", "ok.json.gz"), trace)
	settle(t, r, filepath.Join(dir, "rank0"), 1)
	if got := importedFiles(r.traces.AllTraces()); len(got) != 1 || !strings.Contains(got[0], "rank0") {
		t.Fatalf("imported %v; the rank1 directory is a link to outside", got)
	}
	if len(refusals(logs)) != 1 {
		t.Fatalf("want one refusal naming rank1/secret.json.gz, got %v", refusals(logs))
	}
}

// TestSiblingWithTheSamePrefixIsOutside: /x/profiles-old is not inside
// /x/profiles, although its name starts with it.
func TestSiblingWithTheSamePrefixIsOutside(t *testing.T) {
	base := t.TempDir()
	dir, sibling := filepath.Join(base, "profiles"), filepath.Join(base, "profiles-old")
	for _, d := range []string{dir, sibling} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	trace := fixture(t, "hta-simple_add.json.gz")
	writeAtomically(t, filepath.Join(sibling, "s.json.gz"), trace)
	symlink(t, filepath.Join(sibling, "s.json.gz"), filepath.Join(dir, "s.json.gz"))
	r, logs := observed(t, dir, nil, nil)
	writeAtomically(t, filepath.Join(dir, "ok.json.gz"), trace)
	settle(t, r, dir, 1)
	if got := importedFiles(r.traces.AllTraces()); len(got) != 1 {
		t.Fatalf("imported %v; the link points into a sibling directory", got)
	}
	if len(refusals(logs)) != 1 {
		t.Fatalf("refusals: %v", refusals(logs))
	}
}

// TestDirectoryConfiguredThroughASymlink: the watched directory may itself
// be reached through a link (/tmp -> /private/tmp on macOS): it is resolved
// once, and a file linked by an absolute path through the configured name
// is inside.
func TestDirectoryConfiguredThroughASymlink(t *testing.T) {
	base := t.TempDir()
	resolved := filepath.Join(base, "real")
	if err := os.MkdirAll(filepath.Join(resolved, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	configured := filepath.Join(base, "link")
	symlink(t, resolved, configured)
	trace := fixture(t, "hta-simple_add.json.gz")
	writeAtomically(t, filepath.Join(resolved, "keep", "k.json.gz"), trace)
	symlink(t, filepath.Join(configured, "keep", "k.json.gz"), filepath.Join(resolved, "via-configured-name.json.gz"))
	r, logs := observed(t, configured, nil, nil)
	writeAtomically(t, filepath.Join(configured, "direct.json.gz"), trace)
	settle(t, r, configured, 2)
	if got := importedFiles(r.traces.AllTraces()); len(got) != 2 {
		t.Fatalf("imported %v through a configured symlinked directory; want 2", got)
	}
	if len(refusals(logs)) != 0 {
		t.Fatalf("refusals: %v", refusals(logs))
	}
}

// TestSwappedAfterThePollIsNotRead: the file the poll checked is replaced
// before it is opened — by a link to outside, by a link to another file
// inside, or through a directory on its way becoming a link to outside.
// None of them is opened.
func TestSwappedAfterThePollIsNotRead(t *testing.T) {
	base := t.TempDir()
	dir, outside := filepath.Join(base, "profiles"), filepath.Join(base, "elsewhere")
	for _, d := range []string{filepath.Join(dir, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "secret.json")
	for path, content := range map[string]string{
		secret:                              "SECRET a",
		filepath.Join(dir, "a.json"):        "inside a",
		filepath.Join(dir, "b.json"):        "inside b",
		filepath.Join(dir, "sub", "c.json"): "inside c",
		filepath.Join(outside, "c.json"):    "SECRET c",
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	roots, err := newWatchRoots([]string{filepath.Join(dir, "*", "*.json")})
	if err != nil {
		t.Fatal(err)
	}
	w := roots[0]
	if err := w.refresh(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.close)
	checked := func(path string) (string, os.FileInfo) {
		t.Helper()
		_, rel, err := w.locate(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		fi, err := w.root.Stat(rel)
		if err != nil {
			t.Fatal(err)
		}
		return rel, fi
	}
	replace := func(link, target string) {
		t.Helper()
		if err := os.RemoveAll(link); err != nil {
			t.Fatal(err)
		}
		symlink(t, target, link)
	}
	mustNotOpen := func(what, rel string, fi os.FileInfo) {
		t.Helper()
		f, _, err := w.open(rel, fi)
		if err == nil {
			b, _ := io.ReadAll(f)
			_ = f.Close()
			t.Fatalf("%s: opened, read %q", what, b)
		}
	}

	rel, fi := checked(filepath.Join(dir, "a.json"))
	if f, _, err := w.open(rel, fi); err != nil {
		t.Fatalf("the unchanged file: %v", err)
	} else {
		_ = f.Close()
	}
	replace(filepath.Join(dir, "a.json"), secret)
	mustNotOpen("replaced by a link to outside", rel, fi)

	rel, fi = checked(filepath.Join(dir, "b.json"))
	replace(filepath.Join(dir, "b.json"), "a.json.other")
	if err := os.WriteFile(filepath.Join(dir, "a.json.other"), []byte("inside X"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustNotOpen("replaced by a link to another file inside", rel, fi)

	rel, fi = checked(filepath.Join(dir, "sub", "c.json"))
	replace(filepath.Join(dir, "sub"), outside)
	mustNotOpen("its directory replaced by a link to outside", rel, fi)
	// And the next poll refuses it by name.
	if _, _, err := w.locate(filepath.Join(dir, "sub", "c.json")); !errors.Is(err, errOutside) {
		t.Fatalf("after the swap locate says %v", err)
	}
}

// TestRecreatedDirectoryIsWatched: a job that deletes and makes again its
// output directory: the receiver follows the new directory (same path).
func TestRecreatedDirectoryIsWatched(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "profiles")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := start(t, dir, nil, nil)
	trace := fixture(t, "hta-simple_add.json.gz")
	writeAtomically(t, filepath.Join(dir, "a.json.gz"), trace)
	waitFor(t, "the first import", func() bool { return len(importedFiles(r.traces.AllTraces())) == 1 })
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeAtomically(t, filepath.Join(dir, "b.json.gz"), trace)
	waitFor(t, "the import from the new directory", func() bool { return len(importedFiles(r.traces.AllTraces())) == 2 })
}

// TestDirectoryCreatedAfterStart: the directory (vLLM makes it when it
// starts) may appear after the collector.
func TestDirectoryCreatedAfterStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "later")
	r := start(t, dir, nil, nil)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeAtomically(t, filepath.Join(dir, "a.json.gz"), fixture(t, "hta-simple_add.json.gz"))
	waitFor(t, "the import", func() bool { return len(importedFiles(r.traces.AllTraces())) == 1 })
}

func TestStaticDir(t *testing.T) {
	for pattern, want := range map[string]string{
		"/tmp/vllm-profiles/*.json.gz":  "/tmp/vllm-profiles",
		"/data/runs/*/rank*.json":       "/data/runs",
		"/data/run[0-9]/x/*.json":       "/data",
		"/data/trace.json":              "/data",
		"/data/a?c/b/*.json":            "/data",
		`/data/esc\*aped/*.json`:        "/data",
		"*.json":                        ".",
		"/*.json":                       "/",
		"profiles/*/*.pt.trace.json.gz": "profiles",
	} {
		if got := staticDir(filepath.FromSlash(pattern)); got != filepath.FromSlash(want) {
			t.Errorf("staticDir(%q) = %q, want %q", pattern, got, want)
		}
	}
}

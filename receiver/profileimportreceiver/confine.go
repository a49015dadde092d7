// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package profileimportreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// A profile directory is often writable by others than the collector (the
// inference server, a job, anyone on a shared /tmp), and the collector can
// often read more than they can. So a matched file is read only if it lies
// inside the watched directory of its include pattern: a symbolic link (of
// the file, or of a directory on its way) that leads elsewhere is refused
// and the file never opened — its content would otherwise go out as spans,
// metrics or errors.
//
// The watched directory of a pattern is its static prefix: the directories
// before the first component holding a wildcard (`*`, `?`, `[`, or a `\`
// escape), e.g. /tmp/vllm-profiles for /tmp/vllm-profiles/*.json.gz and
// /data/runs for /data/runs/*/rank*.json. It is made absolute and resolved
// with filepath.EvalSymlinks once, when it first exists (so a directory
// configured through a link, such as /tmp -> /private/tmp, works), and
// opened as an os.Root: files are opened through it, which refuses, on
// every component and at the moment of the open, a link that leaves it.

// watchRoot is the watched directory of one or more include patterns.
type watchRoot struct {
	prefix string   // the static prefix, absolute, as configured
	real   string   // prefix resolved, once; "" until the directory exists
	root   *os.Root // opened on real
}

// staticDir returns the directory part of pattern before its first
// wildcard.
func staticDir(pattern string) string {
	meta := `*?[\`
	if runtime.GOOS == "windows" {
		meta = `*?[` // `\` separates there
	}
	dir := filepath.Dir(pattern)
	for strings.ContainsAny(dir, meta) {
		dir = filepath.Dir(dir)
	}
	return dir
}

// newWatchRoots returns the watched directory of each include pattern
// (patterns with the same static prefix share one).
func newWatchRoots(include []string) ([]*watchRoot, error) {
	byPrefix := map[string]*watchRoot{}
	out := make([]*watchRoot, len(include))
	for i, p := range include {
		prefix, err := filepath.Abs(staticDir(p))
		if err != nil {
			return nil, fmt.Errorf("include[%d]: %q: %w", i, p, err)
		}
		if byPrefix[prefix] == nil {
			byPrefix[prefix] = &watchRoot{prefix: prefix}
		}
		out[i] = byPrefix[prefix]
	}
	return out, nil
}

// refresh opens the directory the first time it exists, and again if it
// was replaced by another directory (deleted and made again, as a job that
// cleans its output directory does); a root left pointing at the old one
// would never see a new file. The path stays the one resolved first: if
// the directory is later replaced by a link, it is not followed (the files
// seen through the link resolve elsewhere and are refused).
func (w *watchRoot) refresh() error {
	if w.root == nil {
		resolved, err := filepath.EvalSymlinks(w.prefix)
		if err != nil {
			return err // not there yet: looked for again next poll
		}
		if resolved, err = filepath.Abs(resolved); err != nil {
			return err
		}
		root, err := os.OpenRoot(resolved)
		if err != nil {
			return err
		}
		w.real, w.root = resolved, root
		return nil
	}
	cur, err := w.root.Stat(".")
	if err != nil {
		return err
	}
	now, err := os.Lstat(w.real)
	if err != nil || !now.IsDir() || os.SameFile(cur, now) {
		return nil //nolint:nilerr // a path that cannot be stat'ed now keeps the root already open, as one that did not move does
	}
	root, err := os.OpenRoot(w.real)
	if err != nil {
		return err
	}
	// Files opened through the old root stay open: only the poll uses it.
	_ = w.root.Close()
	w.root = root
	return nil
}

func (w *watchRoot) close() {
	if w.root != nil {
		_ = w.root.Close()
		w.root = nil
	}
}

// errOutside says a matched file resolves outside its watched directory.
var errOutside = errors.New("resolves outside the watched directory")

// locate resolves a matched path: where it really is, and that location
// relative to the watched directory. errOutside when it is not inside;
// another error when it cannot be resolved now (gone, a dangling link).
func (w *watchRoot) locate(path string) (resolved, rel string, err error) {
	resolved, err = filepath.EvalSymlinks(path)
	if err != nil {
		return "", "", err
	}
	if resolved, err = filepath.Abs(resolved); err != nil {
		return "", "", err
	}
	rel, err = filepath.Rel(w.real, resolved)
	// A lexical test on resolved, clean paths: /x/profiles-old is not
	// inside /x/profiles although it starts with it.
	if err != nil || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return resolved, "", errOutside
	}
	return resolved, rel, nil
}

// open opens rel through the root and checks that it is the file the poll
// looked at (fi): the same file, neither replaced nor changed since. A
// link swapped in since locate is refused by the root if it leaves the
// directory, and by the identity check if it leads to another file inside.
func (w *watchRoot) open(rel string, fi os.FileInfo) (*os.File, os.FileInfo, error) {
	f, err := w.root.Open(rel)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() || !os.SameFile(st, fi) || st.Size() != fi.Size() || !st.ModTime().Equal(fi.ModTime()) {
		_ = f.Close()
		return nil, nil, errors.New("the file changed between the poll and its opening")
	}
	return f, st, nil
}

// stillNames reports whether path still resolves, inside the watched
// directory, to the open file f: checked after a parser that opens the
// file by name (the SQLite driver, the snapshot importer, which need a
// path) and before its result is used.
func stillNames(w *watchRoot, path string, st os.FileInfo) bool {
	resolved, _, err := w.locate(path)
	if err != nil {
		return false
	}
	now, err := os.Stat(resolved)
	return err == nil && os.SameFile(now, st)
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SharedFixture is the path of name under ../shared/fixtures (dir is that
// directory as seen from the test's package, e.g.
// "../../../shared/fixtures/traces"). A missing fixture skips the test on a
// developer's machine, where the shared data may not be checked out beside
// the repository, but fails it under CI (CI set): there a moved package or
// a wrong relative path must not turn into a silent pass.
//
// LLMOPS_SHARED_FIXTURES, when set, is the shared fixtures directory to use
// instead (dir's part after "shared/fixtures/" is kept): a git worktree
// checked out elsewhere has no ../shared beside it.
func SharedFixture(t testing.TB, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if root := os.Getenv("LLMOPS_SHARED_FIXTURES"); root != "" {
		sub := filepath.ToSlash(dir)
		if i := strings.Index(sub, "shared/fixtures"); i >= 0 {
			sub = strings.TrimPrefix(sub[i+len("shared/fixtures"):], "/")
		}
		p = filepath.Join(root, sub, name)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("fixture %s missing under CI: %v", p, err)
		}
		t.Skipf("fixture %s not available: %v", p, err)
	}
	return p
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package hygiene holds the repository's own checks that are not about any
// one component: every source file carries the copyright and license header
// (spdx.go, fixed by `make spdx`), and every link in the documentation
// resolves (links.go). Both run under `go test ./...`.
package hygiene

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

const (
	// CopyrightText and LicenseText are the two header lines, without their
	// comment marker.
	CopyrightText = "Copyright The otelcol-llmops Authors"
	LicenseText   = "SPDX-License-Identifier: Apache-2.0"
)

// Syntax is how a file writes a line comment.
type Syntax int

const (
	// NoHeader: a file the header rule does not cover.
	NoHeader Syntax = iota
	// Slashes: Go and C, "// ".
	Slashes
	// Hash: shell scripts, "# ", after the shebang.
	Hash
)

func (s Syntax) marker() string {
	if s == Hash {
		return "#"
	}
	return "//"
}

// generatedRE is Go's convention for a file written by a tool
// (https://go.dev/s/generatedcode). Such a file is rewritten whole on every
// regeneration, so a header added by hand would not survive: it is exempt.
var generatedRE = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// isShellShebang reports whether a first line is a shebang running a POSIX
// shell or bash, directly or through env.
func isShellShebang(first string) bool {
	rest, ok := strings.CutPrefix(first, "#!")
	if !ok {
		return false
	}
	f := strings.Fields(rest)
	if len(f) > 1 && filepath.Base(f[0]) == "env" {
		f = f[1:]
	}
	if len(f) == 0 {
		return false
	}
	switch filepath.Base(f[0]) {
	case "sh", "bash", "dash":
		return true
	}
	return false
}

// SyntaxOf tells which header, if any, a file must carry, from its name and
// its content. Generated Go files need none.
func SyntaxOf(path string, content []byte) Syntax {
	switch filepath.Ext(path) {
	case ".go":
		if generatedRE.Match(content) {
			return NoHeader
		}
		return Slashes
	case ".c", ".h":
		return Slashes
	case ".sh":
		return Hash
	}
	first, _, _ := bytes.Cut(content, []byte("\n"))
	if isShellShebang(string(first)) {
		return Hash
	}
	return NoHeader
}

// leadingBlock returns the lines of the file's leading comment block and the
// index of the first of them: everything before the first line that is
// neither blank nor a line comment, stopping early at a build constraint
// (the header must come before it). A shebang is skipped.
func leadingBlock(lines []string, syn Syntax) (start int, block []string) {
	if syn == Hash && len(lines) > 0 && strings.HasPrefix(lines[0], "#!") {
		start = 1
	}
	m := syn.marker()
	end := start
	for end < len(lines) {
		l := strings.TrimRight(lines[end], " \t\r")
		if syn == Slashes && (strings.HasPrefix(l, "//go:build") || strings.HasPrefix(l, "// +build")) {
			break
		}
		if l != "" && !strings.HasPrefix(l, m) {
			break
		}
		end++
	}
	return start, lines[start:end]
}

func headerLine(syn Syntax, text string) string { return syn.marker() + " " + text }

// HasHeader reports whether the leading comment block holds both header
// lines exactly.
func HasHeader(syn Syntax, content []byte) bool {
	_, block := leadingBlock(strings.Split(string(content), "\n"), syn)
	var c, l bool
	for _, line := range block {
		line = strings.TrimRight(line, " \t\r")
		c = c || line == headerLine(syn, CopyrightText)
		l = l || line == headerLine(syn, LicenseText)
	}
	return c && l
}

// oldCopyrightRE matches the project's earlier spellings of its copyright
// line, which the fixer rewrites in place rather than adding a second one.
var oldCopyrightRE = regexp.MustCompile(`(?i)^(//|#)\s*copyright\s+(the\s+)?otelcol-llmops\s+authors\s*$`)

// AddHeader returns content with the header in its leading comment block,
// and whether that changed anything. A file that has it is returned as it
// is, so running the fixer twice changes nothing. An earlier spelling of the
// copyright line is corrected where it stands (keeping any upstream
// copyright lines above it, as in a file adapted from another project); a
// missing license line goes right after the copyright line; a file with
// neither gets both, then a blank line, at its very top (after a shebang).
// Build constraints, the package clause and its `// import` comment are
// never touched: they come after the inserted lines.
func AddHeader(syn Syntax, content []byte) ([]byte, bool) {
	if syn == NoHeader || HasHeader(syn, content) {
		return content, false
	}
	lines := strings.Split(string(content), "\n")
	start, block := leadingBlock(lines, syn)
	copyright, license := headerLine(syn, CopyrightText), headerLine(syn, LicenseText)
	ci, li := -1, -1
	for i, line := range block {
		line = strings.TrimRight(line, " \t\r")
		switch {
		case line == copyright || oldCopyrightRE.MatchString(line) && strings.HasPrefix(line, syn.marker()):
			if ci < 0 {
				ci = start + i
			}
		case line == license:
			if li < 0 {
				li = start + i
			}
		}
	}
	var out []string
	switch {
	case ci >= 0 && li >= 0:
		out = append(out, lines...)
		out[ci] = copyright
	case ci >= 0:
		out = append(out, lines[:ci]...)
		out = append(out, copyright, license)
		out = append(out, lines[ci+1:]...)
	case li >= 0:
		out = append(out, lines[:li]...)
		out = append(out, copyright)
		out = append(out, lines[li:]...)
	default:
		out = append(out, lines[:start]...)
		out = append(out, copyright, license, "")
		out = append(out, lines[start:]...)
	}
	return []byte(strings.Join(out, "\n")), true
}

// RepoRoot is the top of the git work tree holding dir.
func RepoRoot(dir string) (string, error) {
	cmd := exec.CommandContext(context.Background(), "git", "rev-parse", "--show-toplevel")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("finding the repository root with git (install git, and run from inside the checkout): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// ListFiles lists the files git knows of under root, relative to it: tracked
// ones and new ones not ignored (so a file is checked before it is added),
// leaving out tracked files deleted from the work tree.
func ListFiles(root string) ([]string, error) {
	cmd := exec.CommandContext(context.Background(), "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("git ls-files in %s: %w: %s", root, err, ee.Stderr)
		}
		return nil, fmt.Errorf("git ls-files in %s (is git installed?): %w", root, err)
	}
	seen := map[string]bool{}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		if st, err := os.Lstat(filepath.Join(root, f)); err != nil || !st.Mode().IsRegular() {
			continue
		}
		files = append(files, f)
	}
	return files, nil
}

// MissingHeaders returns, of files (relative to root), those that must carry
// the header and do not.
func MissingHeaders(root string, files []string) ([]string, error) {
	var missing []string
	for _, f := range files {
		content, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, err
		}
		if syn := SyntaxOf(f, content); syn != NoHeader && !HasHeader(syn, content) {
			missing = append(missing, f)
		}
	}
	return missing, nil
}

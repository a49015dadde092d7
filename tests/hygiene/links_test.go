// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package hygiene

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinks fails on every relative link of the repository's Markdown files
// that names no file or directory, or an anchor no heading has. External
// links cannot be fetched here: they are checked for syntax and listed
// (go test -v).
func TestLinks(t *testing.T) {
	root, err := RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	files, err := ListFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	md := MarkdownFiles(files)
	if len(md) == 0 {
		t.Fatal("no Markdown file found: is this the repository?")
	}
	rep, err := CheckLinks(root, md, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range rep.Broken {
		t.Errorf("broken link %s", b)
	}
	t.Logf("%d Markdown files; %d external links, checked for syntax only:", len(md), len(rep.External))
	for _, l := range rep.External {
		t.Logf("  %s", l)
	}
}

// TestCheckLinksFindsBrokenLinks runs the checker on a small tree whose
// broken links are known, so TestLinks passing means something.
func TestCheckLinksFindsBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", strings.Join([]string{
		"# Project — overview",
		"",
		"## Drill-down: GPU sample → span",
		"## Usage",
		"## Usage",
		"### `hw.gpu.memory.usage`",
		"",
		"[ok file](docs/guide.md) [ok dir](docs) [ok dir slash](docs/)",
		"[ok anchor](docs/guide.md#the-config_file-option) [ok here](#usage-1)",
		"[ok code heading](#hwgpumemoryusage) [ok dashes](#drill-down-gpu-sample--span)",
		"[ok title](docs/guide.md \"Guide\") ![ok image](img/a.png) [ok ext](https://example.com/x?y=1#z)",
		"[ok source line](main.go#L3) [ok ref][guide] [ok root](/docs/guide.md)",
		"",
		"[broken file](docs/missing.md)",
		"[broken anchor](docs/guide.md#no-such-heading)",
		"[broken here](#usage-2)",
		"[broken untracked](notes.md)",
		"[broken ref][nowhere]",
		"[broken outside](../elsewhere.md)",
		"[broken host](https://)",
		`<a href="gone.html">broken html</a>`,
		"`[not a link](nowhere.md)`",
		"",
		"```",
		"[not a link either](nowhere.md)",
		"```",
		"",
		"[guide]: docs/guide.md",
		"[ref broken]: docs/gone.md",
	}, "\n"))
	write("docs/guide.md", "# Guide\n\n## The `config_file` option\n\n[back](../README.md#project--overview) [broken back](../README.md#Usage)\n")
	write("img/a.png", "png")
	write("main.go", "package main\n")
	write("notes.md", "not in the listing\n")

	known := []string{"README.md", "docs/guide.md", "img/a.png", "main.go"}
	rep, err := CheckLinks(root, MarkdownFiles(known), known)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range rep.Broken {
		got = append(got, b.Link.String())
	}
	want := []string{
		"README.md:14: docs/missing.md",
		"README.md:15: docs/guide.md#no-such-heading",
		"README.md:16: #usage-2",
		"README.md:17: notes.md",
		"README.md:18: nowhere",
		"README.md:19: ../elsewhere.md",
		"README.md:20: https://",
		"README.md:21: gone.html",
		"README.md:29: docs/gone.md",
		"docs/guide.md:5: ../README.md#Usage",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("broken links:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		for _, b := range rep.Broken {
			t.Log(b)
		}
	}
	if len(rep.External) != 2 {
		t.Errorf("external links %v, want the two https ones", rep.External)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"How it is tested":                          "how-it-is-tested",
		"Drill-down: GPU sample → profiler span":    "drill-down-gpu-sample--profiler-span",
		"hw.gpu.memory.usage":                       "hwgpumemoryusage",
		"Renamed in this release (aliases kept)":    "renamed-in-this-release-aliases-kept",
		"max_subjects and `x`":                      "max_subjects-and-x",
		"When the backend is down, or the agent is": "when-the-backend-is-down-or-the-agent-is",
		"Élan 2×": "élan-2",
	} {
		if got := Slug(headingText(in)); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

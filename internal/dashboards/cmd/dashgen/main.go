// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command dashgen writes the Grafana dashboards of internal/dashboards to a
// directory, one <uid>.json each:
//
//	go run ./internal/dashboards/cmd/dashgen -out distro/grafana
//
// A file is rewritten only when its content changed; JSON files of the
// directory that no dashboard has any more are reported, not deleted.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmops-otel/otelcol-llmops/internal/dashboards"
)

func main() {
	out := flag.String("out", "distro/grafana", "directory to write <uid>.json into")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "dashgen:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	all, err := dashboards.All()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	want := map[string]bool{}
	for _, d := range all {
		path := filepath.Join(dir, d.FileName())
		want[d.FileName()] = true
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, d.JSON) {
			continue
		}
		if err := os.WriteFile(path, d.JSON, 0o644); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") && !want[e.Name()] {
			fmt.Fprintf(os.Stderr, "dashgen: %s is no generated dashboard (remove it if it is an old one)\n", filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

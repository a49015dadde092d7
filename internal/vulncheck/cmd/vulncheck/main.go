// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command vulncheck is the offline half of `make vulncheck`:
//
//	vulncheck db -download DOWNLOAD.json -sum h1:... -out DIR
//	    writes the database govulncheck reads with -db file://DIR from the
//	    data/osv files of the golang.org/x/vulndb module that
//	    `go mod download -json` fetched (DOWNLOAD.json is its output)
//	vulncheck check -allow vulncheck-allow.txt SCAN.json...
//	    fails on reachable findings the allowlist does not list, and on
//	    listed ids no scan finds any more
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/llmops-otel/otelcol-llmops/internal/vulncheck"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "db":
		err = runDB(os.Args[2:])
	case "check":
		err = runCheck(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulncheck:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: vulncheck db -download FILE -sum H1 -out DIR\n       vulncheck check -allow FILE SCAN.json...")
	os.Exit(2)
}

func runDB(args []string) error {
	fs := flag.NewFlagSet("db", flag.ExitOnError)
	download := fs.String("download", "", "output of `go mod download -json golang.org/x/vulndb@VERSION`")
	sum := fs.String("sum", "", "the go.sum hash (h1:...) the download must have")
	out := fs.String("out", "", "database directory to create")
	_ = fs.Parse(args)
	if *download == "" || *sum == "" || *out == "" {
		return fmt.Errorf("db needs -download, -sum and -out")
	}
	f, err := os.Open(*download)
	if err != nil {
		return err
	}
	d, err := vulncheck.ReadDownload(f, *sum)
	_ = f.Close() // read only: a failed close loses nothing
	if err != nil {
		return err
	}
	t, err := vulncheck.VersionTime(d.Version)
	if err != nil {
		return err
	}
	st, err := vulncheck.BuildDB(filepath.Join(d.Dir, "data", "osv"), *out, t)
	if err != nil {
		return err
	}
	fmt.Printf("vulnerability database %s: %d entries for %d modules (%s@%s)\n", *out, st.Entries, st.Modules, d.Path, d.Version)
	return nil
}

func runCheck(args []string) error {
	fs := flag.NewFlagSet("check", flag.ExitOnError)
	allowPath := fs.String("allow", "", "allowlist file: GO-YYYY-NNNN  reason, one a line")
	_ = fs.Parse(args)
	if *allowPath == "" || fs.NArg() == 0 {
		return fmt.Errorf("check needs -allow FILE and at least one govulncheck JSON file")
	}
	af, err := os.Open(*allowPath)
	if err != nil {
		return err
	}
	defer func() { _ = af.Close() }() // read only: a failed close loses nothing
	allow, err := vulncheck.ReadAllowlist(af, *allowPath)
	if err != nil {
		return err
	}
	var all []vulncheck.Finding
	for _, p := range fs.Args() {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		found, err := vulncheck.ReadFindings(f, filepath.Base(p))
		_ = f.Close() // read only: a failed close loses nothing
		if err != nil {
			return err
		}
		for _, x := range found {
			mark := "new"
			if _, ok := allow[x.ID]; ok {
				mark = "allowed"
			}
			fmt.Printf("%-8s %s  %s@%s  %s  (%s)\n", mark, x.ID, x.Module, x.Version, x.Symbol, x.Scan)
		}
		all = append(all, found...)
	}
	if err := vulncheck.Check(all, allow, *allowPath); err != nil {
		return err
	}
	fmt.Printf("vulncheck: %d reachable findings, all in %s\n", countIDs(all), *allowPath)
	return nil
}

func countIDs(fs []vulncheck.Finding) int {
	ids := map[string]bool{}
	for _, f := range fs {
		ids[f.ID] = true
	}
	return len(ids)
}

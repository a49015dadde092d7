// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Command enginereplay serves an inference engine's Prometheus metrics from a
// fixture, optionally moved through a scenario, on a local address:
//
//	enginereplay -engine vllm [-fixture F] [-scenario S] [-speed 10] \
//	    [-format text|openmetrics|negotiate] [-listen 127.0.0.1:0] [-v]
//
// Once it listens it prints exactly one line to stdout,
// "listening http://127.0.0.1:PORT", which harnesses wait for. With -v it
// logs each request to stderr. SIGINT or SIGTERM stops it cleanly (exit 0).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/llmops-otel/otelcol-llmops/tests/enginereplay"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("enginereplay", flag.ContinueOnError)
	var names []string
	for _, e := range enginereplay.Engines() {
		names = append(names, string(e))
	}
	engine := fs.String("engine", "", "engine to imitate: "+strings.Join(names, ", "))
	fixture := fs.String("fixture", "", "exposition to serve (default: the engine's fixture in tests/enginereplay/fixtures)")
	scenario := fs.String("scenario", "", "scenario file that moves the fixture's series over time")
	speed := fs.Float64("speed", 1, "scenario seconds per wall-clock second")
	format := fs.String("format", "text", "text, openmetrics, or negotiate (OpenMetrics when the Accept header prefers it)")
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	verbose := fs.Bool("v", false, "log requests to stderr")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "enginereplay: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return 2
	}
	if *engine == "" {
		fmt.Fprintln(os.Stderr, "enginereplay: -engine is required")
		fs.Usage()
		return 2
	}
	opts := enginereplay.Options{
		Engine:   enginereplay.Engine(*engine),
		Fixture:  *fixture,
		Scenario: *scenario,
		Speed:    *speed,
		Format:   *format,
	}
	if *verbose {
		logger := log.New(os.Stderr, "enginereplay: ", log.LstdFlags|log.Lmicroseconds)
		opts.Logf = logger.Printf
	}
	srv, err := enginereplay.New(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "enginereplay: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	url, err := srv.Start(*listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "enginereplay: %v\n", err)
		return 1
	}
	fmt.Printf("listening %s\n", url)
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "enginereplay: %v\n", err)
		return 1
	}
	return 0
}

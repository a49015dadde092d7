// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/llmops-otel/otelcol-llmops/tests/enginereplay"
)

// Every generated engine holds at least seriesTarget series, passes the
// replay server's strict parser with its scenario, and changes from one
// second to the next; rendering one second on (what a 1 s scrape asks of
// the server) stays well under the scrape interval.
func TestGeneratedEngines(t *testing.T) {
	dir := t.TempDir()
	for _, es := range engineSpecs() {
		g, err := generateEngine(dir, es)
		if err != nil {
			t.Fatal(err)
		}
		if g.series < seriesTarget || g.series > seriesTarget+2*es.seriesPerCombo()*es.ranks {
			t.Errorf("%s: %d series, want %d to %d", es.name, g.series, seriesTarget, seriesTarget+2*es.seriesPerCombo()*es.ranks)
		}
		srv, err := enginereplay.New(enginereplay.Options{Engine: es.engine, Fixture: g.fixture, Scenario: g.scenario})
		if err != nil {
			t.Fatalf("%s: %v", es.name, err)
		}
		a, err := srv.RenderAt(10, "text")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		b, err := srv.RenderAt(11, "text")
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("%s: rendering t=11 after t=10 took %s", es.name, d)
		}
		if bytes.Equal(a, b) {
			t.Errorf("%s: the exposition is the same at t=10 and t=11", es.name)
		}
		t.Logf("%s: %d series, %d models × %d ranks, %d KB, render %s", es.name, g.series, g.models, es.ranks, len(b)/1024, time.Since(start))
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"testing"
)

func TestParseTelemetry(t *testing.T) {
	tel := parseTelemetry([]byte(`# HELP otelcol_exporter_queue_size Current size of the retry queue (in batches).
# TYPE otelcol_exporter_queue_size gauge
otelcol_exporter_queue_size{data_type="metrics",exporter="otlp/sink"} 3
otelcol_exporter_queue_size{data_type="traces",exporter="otlp/sink"} 4
otelcol_receiver_accepted_metric_points_total{receiver="nvml",transport=""} 1.5e+06
otelcol_receiver_accepted_metric_points_total{receiver="llmengine",transport="http"} 200
otelcol_process_uptime_seconds_total 12.5
`))
	if got := tel.sum("otelcol_exporter_queue_size"); got != 7 {
		t.Errorf("queue size sum = %v, want 7", got)
	}
	if got := tel.sum("otelcol_receiver_accepted_metric_points", `receiver="nvml"`); got != 1.5e6 {
		t.Errorf("nvml points = %v, want 1.5e6", got)
	}
	if got := tel.byLabel("otelcol_receiver_accepted_metric_points_total", "receiver"); got["llmengine"] != 200 || len(got) != 2 {
		t.Errorf("by receiver = %v", got)
	}
	if got := tel.sum("otelcol_process_uptime"); got != 12.5 {
		t.Errorf("uptime = %v", got)
	}
}

func TestReadProc(t *testing.T) {
	rss, anon, file, err := readStatus(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 || anon <= 0 || file <= 0 || anon+file > rss+64 {
		t.Errorf("VmRSS %d, RssAnon %d, RssFile %d kB: want positive, anon+file about rss", rss, anon, file)
	}
	x := 0
	for i := 0; i < 50_000_000; i++ {
		x += i % 7
	}
	cpu, err := readCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if cpu <= 0 || x == 0 {
		t.Errorf("utime+stime = %s after a busy loop, want > 0", cpu)
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The floor (-floor): a collector built by the same ocb release with only
// the OTLP receiver, the batch processor (the shipped configuration's
// settings) and the OTLP exporter to the sink, under the same span load.
// What it takes is what the collector core alone costs on this machine.

// ocbVersion is the Makefile's OCB_VERSION, which names the directory
// `make floor` builds the floor in.
func ocbVersion(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":="); ok && strings.TrimSpace(k) == "OCB_VERSION" {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("%s: no OCB_VERSION := line", filepath.Join(root, "Makefile"))
}

// floorConfig is the floor's configuration: the batch processor as the
// shipped configuration sets it, OTLP/gRPC in, OTLP/gRPC to the sink, the
// same Prometheus telemetry reader the samples scrape.
func floorConfig(shipped string, ports agentPorts, sinkAddr string) (string, error) {
	data, err := os.ReadFile(shipped)
	if err != nil {
		return "", err
	}
	var cfg struct {
		Processors map[string]any `yaml:"processors"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return "", fmt.Errorf("%s: %w", shipped, err)
	}
	batch := cfg.Processors["batch"]
	if batch == nil {
		batch = map[string]any{}
	}
	doc := map[string]any{
		"receivers": map[string]any{"otlp": map[string]any{"protocols": map[string]any{
			"grpc": map[string]any{"endpoint": fmt.Sprintf("127.0.0.1:%d", ports.otlpGRPC)},
		}}},
		"processors": map[string]any{"batch": batch},
		"exporters": map[string]any{"otlp/sink": map[string]any{
			"endpoint": sinkAddr, "tls": map[string]any{"insecure": true},
		}},
		"service": map[string]any{
			"telemetry": map[string]any{"metrics": map[string]any{"level": "normal", "readers": []any{
				map[string]any{"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{
					"host": "127.0.0.1", "port": ports.telemetry,
				}}}},
			}}},
			"pipelines": map[string]any{"traces": map[string]any{
				"receivers": []string{"otlp"}, "processors": []string{"batch"}, "exporters": []string{"otlp/sink"},
			}},
		},
	}
	out, err := yaml.Marshal(doc)
	return string(out), err
}

// floorRun is the floor's idle phase and load, as the agent's.
type floorRun struct {
	idle, load         []sample
	drain              sample
	tr                 *traffic
	idleMaps, loadMaps mappings
}

func runFloor(ctx context.Context, o options, shipped, tmp string, track func(*agent)) (*floorRun, error) {
	sk, err := startSink()
	if err != nil {
		return nil, fmt.Errorf("starting the floor's OTLP sink: %w", err)
	}
	defer sk.stop()
	start := func(name string) (*agent, error) {
		ports, err := freePorts()
		if err != nil {
			return nil, err
		}
		cfg, err := floorConfig(shipped, ports, sk.addr)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(tmp, name+".yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			return nil, err
		}
		a, err := startCollector(o.floorBin, []string{path}, tmp, name, ports, o.env, fmt.Sprintf("http://127.0.0.1:%d/metrics", ports.telemetry))
		if err != nil {
			return nil, err
		}
		track(a)
		return a, nil
	}
	var r floorRun
	if o.idle > 0 {
		a, err := start("floor-idle")
		if err != nil {
			return nil, err
		}
		fmt.Printf("floor: idle for %s ...\n", o.idle)
		if r.idle, err = sampleFor(ctx, a, sk, nil, o.idle, 0); err != nil {
			return nil, err
		}
		r.idleMaps, _ = readSmaps(a.pid())
		if err := a.stop(); err != nil {
			return nil, fmt.Errorf("stopping the idle floor: %w", err)
		}
	}
	a, err := start("floor-load")
	if err != nil {
		return nil, err
	}
	if r.tr, err = newTraffic(fmt.Sprintf("127.0.0.1:%d", a.ports.otlpGRPC), o.rate, o.batch); err != nil {
		return nil, err
	}
	r.tr.start()
	defer r.tr.stop()
	fmt.Printf("floor: %d spans/s, %s warm-up + %s measured ...\n", o.rate, o.warmup, o.duration)
	if r.load, err = sampleFor(ctx, a, sk, r.tr, o.warmup+o.duration, o.warmup); err != nil {
		return nil, err
	}
	r.loadMaps, _ = readSmaps(a.pid())
	r.tr.stop()
	if r.drain, err = drainSpans(ctx, a, sk, 20*time.Second); err != nil {
		return nil, err
	}
	if err := a.stop(); err != nil {
		fmt.Printf("note: stopping the floor: %v\n", err)
	}
	return &r, nil
}

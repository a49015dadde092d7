// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package rootcauseconnector detects what is going wrong on a GPU inference
// node (GPU memory leaks, KV-cache saturation, cache hit-rate drops, latency
// spikes, throughput drops, queue build-up, throttling, XID/ECC errors and
// user rules), explains each incident with the evidence it was decided on,
// and drills down from the GPU sample to the profiler spans and the model
// layer behind it. Incidents are emitted as log records (docs/architecture.md,
// "Incident records").
//
// It is a connector: one state (the diagnoser) is shared by its
// metrics→metrics, metrics→logs, traces→logs and logs→logs pairs. Metrics
// feed the detectors and pass through with derived metrics and exemplars;
// traces and logs (profiler spans, leak suspects) feed the drill-down;
// incidents go out through the logs pipelines the connector is a receiver
// of. Each detector (detect_*.go) sits behind the detector interface and is
// configured by one block of Config.
//
//go:generate ../../.tools/mdatagen metadata.yaml
package rootcauseconnector // import "github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector"

// Package rootcauseconnector detects what is going wrong on a GPU inference
// node (GPU memory leaks, KV-cache saturation, cache hit-rate drops, latency
// spikes, throughput drops, queue build-up, throttling, XID/ECC errors and
// user rules), explains each incident with the evidence it was decided on,
// and drills down from the GPU sample to the profiler spans and the model
// layer behind it. Incidents are emitted as log records (DESIGN.md §4).
//
// One state is shared by every pipeline the processor is placed in: metrics
// feed the detectors, traces and logs (profiler spans, leak suspects) feed
// the drill-down, and incidents go out through the logs pipelines.
//
//go:generate ../../.tools/mdatagen metadata.yaml
package rootcauseconnector // import "github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector"

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package configcheck holds checks over the collector configurations this
// repository ships (distro/, its overlays, and the Helm chart's renderings),
// shared by the tests of each.
//
// Durable: every exporter that sends over the network keeps what the agent
// acknowledged on disk until the backend has it (issue 18 §1). That means a
// persistent sending queue on file_storage, bounded in bytes, retried on
// failure, and no batch processor in front of it in any pipeline (a batch
// held in memory is what a killed agent loses; the exporter batches after
// its queue instead). The exporters that do not send anywhere a backend can
// refuse are exempt, each for the reason in exempt.
package configcheck

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// exempt are the exporter types that need no persistent sending queue.
var exempt = map[string]string{
	"debug":      "writes to the agent's own log; nothing to deliver later",
	"file":       "writes to a local file (the demo); the disk is the backend",
	"prometheus": "serves /metrics for Prometheus to pull: the current value of each series, nothing queued",
}

// queued are the exporter types that must have a persistent sending queue.
var queued = map[string]bool{
	"otlp": true, "otlp_grpc": true, "otlp_http": true, "otlphttp": true,
	"alertwebhook": true,
}

// Config is a collector configuration as parsed YAML.
type Config = map[string]any

// Load reads a configuration file.
func Load(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Config
	if err := yaml.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Merge merges overlay over base as the collector merges --config files:
// maps merge key by key, everything else (lists, scalars) replaces.
func Merge(base, overlay Config) Config {
	out := Config{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range overlay {
		bm, ok1 := out[k].(map[string]any)
		om, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			out[k] = Merge(bm, om)
			continue
		}
		out[k] = v
	}
	return out
}

// Durable lists every way cfg falls short of durable delivery; none means
// it is durable.
func Durable(cfg Config) []string {
	var problems []string
	exporters, _ := cfg["exporters"].(map[string]any)
	needsQueue := map[string]bool{}
	for _, id := range sortedKeys(exporters) {
		typ, _, _ := strings.Cut(id, "/")
		ex, _ := exporters[id].(map[string]any)
		switch {
		case exempt[typ] != "":
		case typ == "prometheus_remote_write":
			needsQueue[id] = true
			problems = append(problems, remoteWrite(id, ex)...)
		case queued[typ]:
			needsQueue[id] = true
			problems = append(problems, sendingQueue(id, ex)...)
		default:
			problems = append(problems, fmt.Sprintf("exporter %s: type %q is neither known to have a persistent sending queue nor exempt; add it to tests/configcheck with its reason", id, typ))
		}
	}
	service, _ := cfg["service"].(map[string]any)
	pipelines, _ := service["pipelines"].(map[string]any)
	for _, name := range sortedKeys(pipelines) {
		p, _ := pipelines[name].(map[string]any)
		var durable []string
		for _, e := range list(p["exporters"]) {
			if needsQueue[e] {
				durable = append(durable, e)
			}
		}
		if len(durable) == 0 {
			continue
		}
		for _, proc := range list(p["processors"]) {
			if typ, _, _ := strings.Cut(proc, "/"); typ == "batch" {
				problems = append(problems, fmt.Sprintf("pipeline %s: processor %s holds acknowledged data in memory before %s; batch in the exporter's sending_queue instead", name, proc, strings.Join(durable, ", ")))
			}
		}
	}
	return problems
}

func sendingQueue(id string, ex map[string]any) []string {
	var problems []string
	q, ok := ex["sending_queue"].(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("exporter %s: no sending_queue", id)}
	}
	if e, ok := q["enabled"].(bool); ok && !e {
		problems = append(problems, fmt.Sprintf("exporter %s: sending_queue.enabled is false", id))
	}
	if s, _ := q["storage"].(string); s != "file_storage" && !strings.HasPrefix(s, "file_storage/") {
		problems = append(problems, fmt.Sprintf("exporter %s: sending_queue.storage is %q, want file_storage (a queue in memory is lost with the agent)", id, s))
	}
	if s, _ := q["sizer"].(string); s != "bytes" {
		problems = append(problems, fmt.Sprintf("exporter %s: sending_queue.sizer is %q, want bytes (a bound in requests or items says nothing about the disk it takes)", id, s))
	}
	if n, ok := q["queue_size"].(int); !ok || n <= 0 {
		problems = append(problems, fmt.Sprintf("exporter %s: sending_queue.queue_size %v is not a positive number of bytes", id, q["queue_size"]))
	}
	if wait, _ := q["wait_for_result"].(bool); wait {
		problems = append(problems, fmt.Sprintf("exporter %s: sending_queue.wait_for_result is not supported with a persistent queue", id))
	}
	return append(problems, retry(id, ex)...)
}

func remoteWrite(id string, ex map[string]any) []string {
	var problems []string
	wal, ok := ex["wal"].(map[string]any)
	if !ok {
		problems = append(problems, fmt.Sprintf("exporter %s: no wal (this exporter has no sending_queue: its write-ahead log is the persistent queue)", id))
	} else if d, _ := wal["directory"].(string); d == "" {
		problems = append(problems, fmt.Sprintf("exporter %s: wal.directory is empty", id))
	}
	rq, _ := ex["remote_write_queue"].(map[string]any)
	if e, ok := rq["enabled"].(bool); !ok || e {
		problems = append(problems, fmt.Sprintf("exporter %s: remote_write_queue.enabled must be false, so that a batch is in the WAL before the pipeline is answered", id))
	}
	return append(problems, retry(id, ex)...)
}

func retry(id string, ex map[string]any) []string {
	r, ok := ex["retry_on_failure"].(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("exporter %s: no retry_on_failure", id)}
	}
	if e, ok := r["enabled"].(bool); ok && !e {
		return []string{fmt.Sprintf("exporter %s: retry_on_failure.enabled is false", id)}
	}
	return nil
}

func list(v any) []string {
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, it := range items {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

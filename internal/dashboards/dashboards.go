// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package dashboards builds the Grafana dashboards of distro/grafana from the
// unified metric registry (internal/spec): every metric and label name in a
// query is the registry's, translated as the Prometheus exporters translate
// it, so renaming a metric changes the dashboards instead of blanking a
// panel. cmd/dashgen writes them; a test fails when the committed files
// differ from what this package generates.
//
// The queries read the raw unified metrics only (no recording rules), so the
// dashboards work on any Prometheus the agent writes to, with or without the
// rule files of distro/prometheus.
package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// Dashboard is one generated dashboard.
type Dashboard struct {
	UID   string
	Title string
	// JSON is the dashboard model as Grafana imports it: indented, with a
	// trailing newline, the same bytes every time.
	JSON []byte
}

// FileName is where cmd/dashgen writes a dashboard: <uid>.json.
func (d Dashboard) FileName() string { return d.UID + ".json" }

// boards are the dashboards, by constructor.
var boards = []func() *board{
	nodeOverview,
	quadrants,
	gpuMemoryBoard,
	kvCacheBoard,
	drilldownBoard,
}

// All builds every dashboard, sorted by UID.
func All() ([]Dashboard, error) {
	var out []Dashboard
	for _, mk := range boards {
		db, err := mk().build()
		if err != nil {
			return nil, err
		}
		js, err := marshal(db)
		if err != nil {
			return nil, err
		}
		if db.Uid == nil || db.Title == nil {
			return nil, fmt.Errorf("dashboards: a dashboard without uid or title")
		}
		out = append(out, Dashboard{UID: *db.Uid, Title: *db.Title, JSON: js})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UID < out[j].UID })
	return out, nil
}

// marshal writes a dashboard as indented JSON without HTML escaping (PromQL
// has > and <), ending in a newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

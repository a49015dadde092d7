// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package testutil holds helpers shared by the components' unit tests.
package testutil

import (
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

// LoadConfig unmarshals the section `typ/name` (or `typ` when name is "")
// of the component's testdata/config.yaml into cfg, which should hold the
// component's defaults.
func LoadConfig(t testing.TB, typ component.Type, name string, cfg component.Config) error {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cm.Sub(component.NewIDWithName(typ, name).String())
	if err != nil {
		t.Fatal(err)
	}
	return sub.Unmarshal(cfg)
}

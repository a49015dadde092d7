// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"path/filepath"
	"testing"

	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// TestChromiumRendersReport renders a report of synthetic data in headless
// Chromium: screenshot, laid-out charts, no network requests.
func TestChromiumRendersReport(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.html")
	if err := WriteFile(report, synthetic(), Options{Title: "Chromium check", Generated: at(700)}); err != nil {
		t.Fatal(err)
	}
	harness.CheckReportInChromium(t, report, ChartKeys)
}

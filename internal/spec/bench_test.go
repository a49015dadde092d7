// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import "testing"

// LookupMetric runs once per metric in llmnormalize's and rootcause's hot
// paths, so it must not allocate beyond the attribute copy.
func BenchmarkLookupMetric(b *testing.B) {
	names := []string{HwGpuMemoryUsage, EngineKvCacheUtilization, GenAIServerTimeToFirstToken, "vllm:num_requests_running"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, _ = LookupMetric(names[i%len(names)])
	}
}

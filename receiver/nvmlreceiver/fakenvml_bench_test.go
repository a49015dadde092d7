// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver/internal/metadata"
)

// BenchmarkScrapeFakeNVML runs one scrape of 8 GPUs with 16 processes each
// through the real go-nvml cgo path and the fake NVML library of
// tests/fakenvml (`make bench` builds it and sets OTELCOL_LLMOPS_FAKENVML).
// Compare with BenchmarkScrape8GPUs16Procs, which has no library cost.
func BenchmarkScrapeFakeNVML(b *testing.B) {
	lib := os.Getenv("OTELCOL_LLMOPS_FAKENVML")
	if lib == "" {
		b.Skip("OTELCOL_LLMOPS_FAKENVML not set; run `make bench`")
	}
	dir := b.TempDir()
	procRoot := filepath.Join(dir, "proc")
	var sc strings.Builder
	sc.WriteString("driver_version version=550.54.15 cuda=12040\n")
	pid := 20000
	for g := range 8 {
		fmt.Fprintf(&sc, "gpu index=%d uuid=GPU-bench000-0000-4000-8000-%012d name=\"NVIDIA H100 80GB HBM3\" "+
			"memory_total=85899345920 memory_reserved=503316480 memory_used=1073741824 util=50 power_w=500 "+
			"sm_clock=1980 mem_clock=2619 pcie_tx_kbps=1000 pcie_rx_kbps=1000\n", g, g)
		for range 16 {
			fmt.Fprintf(&sc, "process gpu=%d pid=%d memory=1073741824 growth=1024 sm_util=30\n", g, pid)
			writeProc(b, procRoot, pid, "python3",
				"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"+
					"0f1d2c3b_4a5e_6f70_8192_a3b4c5d6e7f8.slice/cri-containerd-"+ctrID+".scope\n", 1000)
			pid++
		}
	}
	scenario := filepath.Join(dir, "bench.scenario")
	if err := os.WriteFile(scenario, []byte(sc.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Setenv("FAKE_NVML_SCENARIO", scenario)

	cfg := createDefaultConfig().(*Config)
	cfg.LibraryPath = lib
	cfg.ProcRoot = procRoot
	cfg.XIDEvents = false
	s, err := newScraper(cfg, receivertest.NewNopSettings(metadata.Type), nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.start(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.shutdown(context.Background()) }()
	if !s.initialized {
		b.Fatal("fake NVML did not initialise")
	}
	b.ReportAllocs()
	for b.Loop() {
		m, err := s.scrape(context.Background())
		if err != nil || m.ResourceMetrics().Len() != 8 {
			b.Fatalf("scrape: %v, %d GPUs", err, m.ResourceMetrics().Len())
		}
	}
}

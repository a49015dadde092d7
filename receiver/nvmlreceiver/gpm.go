// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver"

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"
)

// setupGPM allocates the two GPM samples of a GPU when gpm is enabled and
// the GPU supports it (Hopper and newer). GPM metrics are computed from two
// samples, so the first values appear on the second scrape.
func (s *nvmlScraper) setupGPM(g *gpu) {
	if !s.cfg.GPM {
		return
	}
	support, ret := g.handle.GpmQueryDeviceSupport()
	if ret != nvml.SUCCESS || support.IsSupportedDevice == 0 {
		s.logger.Info("GPM not supported on this GPU; SM, tensor and DRAM activity are not reported for it",
			zap.String("hw.id", g.uuid))
		return
	}
	a, ret1 := s.lib.GpmSampleAlloc()
	b, ret2 := s.lib.GpmSampleAlloc()
	if ret1 != nvml.SUCCESS || ret2 != nvml.SUCCESS {
		s.logger.Warn("GPM sample allocation failed", zap.String("hw.id", g.uuid))
		if ret1 == nvml.SUCCESS {
			_ = s.lib.GpmSampleFree(a)
		}
		if ret2 == nvml.SUCCESS {
			_ = s.lib.GpmSampleFree(b)
		}
		return
	}
	g.gpmPrev, g.gpmCur = a, b
}

var gpmMetricIDs = [...]nvml.GpmMetricId{nvml.GPM_METRIC_SM_UTIL, nvml.GPM_METRIC_ANY_TENSOR_UTIL, nvml.GPM_METRIC_DRAM_BW_UTIL}

func (s *nvmlScraper) sampleGPM(g *gpu, smp *sample) {
	if g.gpmPrev == nil || g.unsupported[callGPM] {
		return
	}
	if !s.check(g, callGPM, g.handle.GpmSampleGet(g.gpmCur)) {
		return
	}
	if g.gpmPrimed {
		req := nvml.GpmMetricsGetType{NumMetrics: uint32(len(gpmMetricIDs)), Sample1: g.gpmPrev, Sample2: g.gpmCur}
		for i, id := range gpmMetricIDs {
			req.Metrics[i].MetricId = uint32(id)
		}
		if s.check(g, callGPM, s.lib.GpmMetricsGet(&req)) {
			dst := [...]*optional[float64]{&smp.gpmSM, &smp.gpmTensor, &smp.gpmDRAM}
			for i := range gpmMetricIDs {
				if nvml.Return(req.Metrics[i].NvmlReturn) == nvml.SUCCESS {
					dst[i].set(req.Metrics[i].Value)
				}
			}
		}
	}
	g.gpmPrev, g.gpmCur = g.gpmCur, g.gpmPrev
	g.gpmPrimed = true
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver/internal/metadata"
)

// recordProcesses records the per-process points of one GPU, attributed to
// the process's executable, container and pod.
func (s *nvmlScraper) recordProcesses(g *gpu, smp *sample, ts pcommon.Timestamp) {
	for i := range smp.procs {
		p := &smp.procs[i]
		s.seen[p.pid] = struct{}{}
		opts := s.attribution(g, p.pid)
		pid := int64(p.pid)
		if p.memory.ok {
			s.mb.RecordProcessGpuMemoryUsageDataPoint(ts, int64(p.memory.v), g.uuid, pid, opts...)
		}
		if p.smUtil.ok {
			s.mb.RecordProcessGpuUtilizationDataPoint(ts, float64(p.smUtil.v)/100, g.uuid, metadata.AttributeHwGpuTaskGeneral, pid, opts...)
			s.mb.RecordProcessGpuUtilizationDataPoint(ts, float64(p.encUtil.v)/100, g.uuid, metadata.AttributeHwGpuTaskEncoder, pid, opts...)
			s.mb.RecordProcessGpuUtilizationDataPoint(ts, float64(p.decUtil.v)/100, g.uuid, metadata.AttributeHwGpuTaskDecoder, pid, opts...)
		}
	}
}

// attribution returns the optional process attributes: the executable and
// container/pod from /proc (best effort: a process that just exited has
// none), and the pod the kubelet assigned this GPU to. A GPU shared by
// several pods (time slicing) is not attributed by pod-resources, because
// the GPU alone cannot tell which of them the process belongs to; the
// cgroup's pod UID still is.
func (s *nvmlScraper) attribution(g *gpu, pid uint32) []metadata.MetricAttributeOption {
	var opts []metadata.MetricAttributeOption
	info, err := s.procs.Lookup(pid)
	if err == nil || info.ExecutableName != "" {
		if info.ExecutableName != "" {
			opts = append(opts, metadata.WithProcessExecutableNameMetricAttribute(info.ExecutableName))
		}
		if info.ContainerID != "" {
			opts = append(opts, metadata.WithContainerIDMetricAttribute(info.ContainerID))
		}
		if info.PodUID != "" {
			opts = append(opts, metadata.WithK8sPodUIDMetricAttribute(info.PodUID))
		}
	}
	if s.pods != nil {
		if pods := s.pods.LookupAll(g.uuid); len(pods) == 1 {
			opts = append(opts,
				metadata.WithK8sPodNameMetricAttribute(pods[0].Name),
				metadata.WithK8sNamespaceNameMetricAttribute(pods[0].Namespace),
				metadata.WithK8sContainerNameMetricAttribute(pods[0].Container))
		}
	}
	return opts
}

// forgetExitedProcesses keeps the /proc cache bounded to live GPU processes.
func (s *nvmlScraper) forgetExitedProcesses() {
	s.procs.Forget(func(pid uint32) bool {
		_, ok := s.seen[pid]
		return ok
	})
	clear(s.seen)
}

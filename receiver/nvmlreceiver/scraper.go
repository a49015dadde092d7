// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver"

import (
	"context"
	"fmt"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/llmops-otel/otelcol-llmops/internal/ratelimit"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver/internal/metadata"
	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver/internal/podresources"
	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver/internal/procinfo"
)

// newLibraryFunc builds the NVML binding. Tests substitute mocks from
// go-nvml's pkg/nvml/mock; production loads cfg.LibraryPath.
type newLibraryFunc func(path string) nvml.Interface

func loadLibrary(path string) nvml.Interface { return nvml.New(nvml.WithLibraryPath(path)) }

// podLookup is the part of the pod-resources client the scraper uses.
type podLookup interface {
	LookupAll(deviceID string) []podresources.Pod
}

type nvmlScraper struct {
	cfg       *Config
	logger    *zap.Logger
	newLib    newLibraryFunc
	mb        *metadata.MetricsBuilder
	telemetry *metadata.TelemetryBuilder
	procs     *procinfo.Reader
	podClient *podresources.Client
	pods      podLookup
	warn      *ratelimit.Limiter
	now       func() time.Time

	host component.Host

	lib           nvml.Interface
	initialized   bool
	triedInit     bool
	lastInitTry   time.Time
	driverVersion string
	gpus          []*gpu

	xid *xidWatcher

	// scratch buffers reused across scrapes (the scraper is not concurrent).
	reasons []string
	seen    map[uint32]struct{}
}

func newScraper(cfg *Config, set receiver.Settings, newLib newLibraryFunc) (*nvmlScraper, error) {
	if newLib == nil {
		newLib = loadLibrary
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &nvmlScraper{
		cfg:       cfg,
		logger:    set.Logger,
		newLib:    newLib,
		mb:        metadata.NewMetricsBuilder(cfg.MetricsBuilderConfig, set),
		telemetry: tb,
		procs:     procinfo.NewReader(cfg.ProcRoot),
		warn:      ratelimit.New(cfg.WarningInterval),
		now:       time.Now,
		seen:      map[uint32]struct{}{},
	}, nil
}

func (s *nvmlScraper) start(ctx context.Context, host component.Host) error {
	s.host = host
	if s.cfg.PodResourcesSocket != "" && s.pods == nil {
		s.podClient = podresources.New(s.cfg.PodResourcesSocket, s.logger,
			podresources.WithRefreshInterval(s.cfg.PodResourcesRefreshInterval))
		// Start fails only for a socket path gRPC cannot parse; the client
		// then answers no pods, as it does before its first refresh.
		_ = s.podClient.Start(ctx)
		s.pods = s.podClient
	}
	s.tryInit()
	return nil
}

// tryInit loads and initialises NVML and discovers the GPUs. Failure is not
// fatal: the collector keeps running its other pipelines, the status is
// reported as recoverable, and the scraper retries every init_retry_interval.
func (s *nvmlScraper) tryInit() {
	s.triedInit = true
	s.lastInitTry = s.now()
	lib := s.newLib(s.cfg.LibraryPath)
	if ret := lib.Init(); ret != nvml.SUCCESS {
		err := fmt.Errorf("NVML could not be initialised from library_path %q: %s; "+
			"on a node without an NVIDIA driver this is expected, otherwise check that the driver is installed "+
			"and its libnvidia-ml.so.1 is visible to the collector (retrying every %s)",
			s.cfg.LibraryPath, errorString(lib, ret), s.cfg.InitRetryInterval)
		if s.warn.Allow("init") {
			s.logger.Warn(err.Error())
		}
		s.reportStatus(componentstatus.NewRecoverableErrorEvent(err))
		return
	}
	s.lib = lib
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		s.driverVersion = v
	}
	if err := s.discover(); err != nil {
		s.logger.Warn("NVML initialised but GPU discovery failed; retrying", zap.Error(err))
		_ = lib.Shutdown()
		s.lib = nil
		s.gpus = nil
		s.reportStatus(componentstatus.NewRecoverableErrorEvent(err))
		return
	}
	s.initialized = true
	s.logger.Info("NVML initialised", zap.String("library_path", s.cfg.LibraryPath),
		zap.String("driver_version", s.driverVersion), zap.Int("devices", len(s.gpus)))
	s.reportStatus(componentstatus.NewEvent(componentstatus.StatusOK))
	if s.cfg.XIDEvents {
		s.xid = startXIDWatcher(lib, s.physicalGPUs(), s.logger, s.telemetry)
	}
}

func (s *nvmlScraper) reportStatus(ev *componentstatus.Event) {
	if s.host != nil {
		componentstatus.ReportStatus(s.host, ev)
	}
}

func (s *nvmlScraper) physicalGPUs() []*gpu {
	var out []*gpu
	for _, g := range s.gpus {
		if !g.isMIG() {
			out = append(out, g)
		}
	}
	return out
}

// discover enumerates the physical GPUs and, where MIG mode is on, their MIG
// devices.
func (s *nvmlScraper) discover() error {
	n, ret := s.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return fmt.Errorf("DeviceGetCount: %s", errorString(s.lib, ret))
	}
	for i := 0; i < n; i++ {
		h, ret := s.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			s.logger.Warn("GPU skipped: no handle", zap.Int("index", i), zap.String("nvml", errorString(s.lib, ret)))
			continue
		}
		g, err := s.describe(h, i)
		if err != nil {
			s.logger.Warn("GPU skipped", zap.Int("index", i), zap.Error(err))
			continue
		}
		s.gpus = append(s.gpus, g)
		s.setupGPM(g)
		s.discoverMIG(g)
	}
	return nil
}

func (s *nvmlScraper) describe(h nvml.Device, index int) (*gpu, error) {
	uuid, ret := h.GetUUID()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("GetUUID: %s", errorString(s.lib, ret))
	}
	g := &gpu{handle: h, uuid: uuid, index: index}
	if name, ret := h.GetName(); ret == nvml.SUCCESS {
		g.name = name
	}
	if pci, ret := h.GetPciInfo(); ret == nvml.SUCCESS {
		g.pciBusID = pciBusID(pci)
	}
	return g, nil
}

func (s *nvmlScraper) discoverMIG(parent *gpu) {
	current, _, ret := parent.handle.GetMigMode()
	if ret != nvml.SUCCESS || current != nvml.DEVICE_MIG_ENABLE {
		return
	}
	maxDevices, ret := parent.handle.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		s.logger.Warn("MIG mode is on but the MIG device count is unavailable", zap.String("hw.id", parent.uuid),
			zap.String("nvml", errorString(s.lib, ret)))
		return
	}
	for i := 0; i < maxDevices; i++ {
		h, ret := parent.handle.GetMigDeviceHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue // an unpopulated slot
		}
		g, err := s.describe(h, i)
		if err != nil {
			s.logger.Warn("MIG device skipped", zap.String("parent", parent.uuid), zap.Int("index", i), zap.Error(err))
			continue
		}
		g.parentUUID = parent.uuid
		g.name = parent.name
		g.pciBusID = parent.pciBusID
		if id, ret := h.GetGpuInstanceId(); ret == nvml.SUCCESS {
			g.gpuInstanceID = id
		}
		if id, ret := h.GetComputeInstanceId(); ret == nvml.SUCCESS {
			g.computeInstanceID = id
		}
		s.gpus = append(s.gpus, g)
	}
}

func (s *nvmlScraper) shutdown(context.Context) error {
	if s.xid != nil {
		s.xid.stop()
		s.xid = nil
	}
	if s.podClient != nil {
		_ = s.podClient.Close() // shutting down goes on, as for NVML below
	}
	if s.lib != nil {
		for _, g := range s.gpus {
			if g.gpmPrev != nil {
				_ = s.lib.GpmSampleFree(g.gpmPrev)
				_ = s.lib.GpmSampleFree(g.gpmCur)
			}
		}
		_ = s.lib.Shutdown()
		s.lib = nil
	}
	return nil
}

// scrape samples every GPU, then records what it sampled. A GPU that fails
// during sampling contributes only its hw.status; the others are unaffected.
func (s *nvmlScraper) scrape(context.Context) (pmetric.Metrics, error) {
	if !s.initialized {
		if !s.triedInit || s.now().Sub(s.lastInitTry) >= s.cfg.InitRetryInterval {
			s.tryInit()
		}
		if !s.initialized {
			return pmetric.NewMetrics(), nil
		}
	}
	now := s.now()
	ts := pcommon.NewTimestampFromTime(now)
	var smp sample
	for _, g := range s.gpus {
		smp.reset()
		s.sampleGPU(g, &smp, now)
		s.record(g, &smp, ts)
	}
	s.forgetExitedProcesses()
	md := s.mb.Emit()
	setSchemaURL(md)
	return md, nil
}

// check classifies an NVML return code for one call of one GPU and says
// whether the value may be used.
func (s *nvmlScraper) check(g *gpu, c call, ret nvml.Return) bool {
	switch ret {
	case nvml.SUCCESS:
		return true
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND:
		// Some GPUs (and every MIG device) lack some queries: drop the
		// query for this GPU for good, once, without noise.
		g.unsupported[c] = true
		s.logger.Debug("NVML query not supported; not asked again", zap.String("hw.id", g.uuid), zap.Stringer("call", c))
		return false
	case nvml.ERROR_GPU_IS_LOST, nvml.ERROR_UNKNOWN:
		if !g.failed && !g.wasFailed {
			s.telemetry.NvmlGpusLost.Add(context.Background(), 1, metric.WithAttributes(attribute.String("hw.id", g.uuid)))
		}
		g.failed = true
		s.countError(g, c, ret)
		return false
	case nvml.ERROR_NOT_FOUND:
		return false // e.g. no new process-utilization samples
	default:
		s.countError(g, c, ret)
		return false
	}
}

func (s *nvmlScraper) countError(g *gpu, c call, ret nvml.Return) {
	s.telemetry.NvmlScrapeErrors.Add(context.Background(), 1, metric.WithAttributes(attribute.String("hw.id", g.uuid)))
	if s.warn.Allow(g.uuid + "/" + c.String() + "/" + fmt.Sprint(int32(ret))) {
		s.logger.Warn("NVML query failed; the GPU's points are skipped this scrape",
			zap.String("hw.id", g.uuid), zap.Stringer("call", c), zap.String("nvml", errorString(s.lib, ret)))
	}
}

func errorString(lib nvml.Interface, ret nvml.Return) string {
	// ErrorString calls into the library, which may not be loaded.
	defer func() { _ = recover() }()
	s := lib.ErrorString(ret)
	if s == "" {
		return fmt.Sprintf("NVML error %d", int32(ret))
	}
	return s
}

// setSchemaURL marks what the receiver writes with the semantic-conventions
// release its names follow, which also tells llmnormalize not to apply the
// renames meant for an older agent's data.
func setSchemaURL(md pmetric.Metrics) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		rm.SetSchemaUrl(spec.SchemaURL)
		for j := 0; j < rm.ScopeMetrics().Len(); j++ {
			rm.ScopeMetrics().At(j).SetSchemaUrl(spec.SchemaURL)
		}
	}
}

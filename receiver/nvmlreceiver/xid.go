// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nvmlreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver"

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver/internal/metadata"
)

// xidWaitMillis bounds one EventSet.Wait, and so how long shutdown waits.
const xidWaitMillis = 500

const watchedEvents = nvml.EventTypeXidCriticalError | nvml.EventTypeSingleBitEccError | nvml.EventTypeDoubleBitEccError

// xidWatcher counts XID events per GPU and code in the background. XIDs are
// events, not states: a last-value gauge would lose a second XID of the same
// code between two scrapes, so they are kept as monotonic counts since the
// receiver started.
type xidWatcher struct {
	lib    nvml.Interface
	set    nvml.EventSet
	logger *zap.Logger
	tb     *metadata.TelemetryBuilder
	byUUID map[nvml.Device]string

	mu    sync.Mutex
	count map[string]map[uint64]int64

	cancel context.CancelFunc
	done   chan struct{}
}

func startXIDWatcher(lib nvml.Interface, gpus []*gpu, logger *zap.Logger, tb *metadata.TelemetryBuilder) *xidWatcher {
	set, ret := lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		logger.Warn("XID events unavailable: EventSetCreate failed", zap.String("nvml", errorString(lib, ret)))
		return nil
	}
	w := &xidWatcher{lib: lib, set: set, logger: logger, tb: tb, byUUID: map[nvml.Device]string{},
		count: map[string]map[uint64]int64{}, done: make(chan struct{})}
	registered := 0
	for _, g := range gpus {
		supported, ret := g.handle.GetSupportedEventTypes()
		if ret != nvml.SUCCESS {
			continue
		}
		mask := supported & watchedEvents
		if mask == 0 {
			continue
		}
		if ret := g.handle.RegisterEvents(mask, set); ret != nvml.SUCCESS {
			logger.Warn("XID events not registered for GPU", zap.String("hw.id", g.uuid), zap.String("nvml", errorString(lib, ret)))
			continue
		}
		w.byUUID[g.handle] = g.uuid
		registered++
	}
	if registered == 0 {
		_ = set.Free()
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go w.run(ctx)
	return w
}

func (w *xidWatcher) run(ctx context.Context) {
	defer close(w.done)
	for ctx.Err() == nil {
		ev, ret := w.set.Wait(xidWaitMillis)
		switch ret {
		case nvml.SUCCESS:
			w.handle(ev)
		case nvml.ERROR_TIMEOUT:
		default:
			// GPU_IS_LOST and friends: keep waiting on the others, but do
			// not spin if the set itself is broken.
			select {
			case <-ctx.Done():
			case <-time.After(xidWaitMillis * time.Millisecond):
			}
		}
	}
}

func (w *xidWatcher) handle(ev nvml.EventData) {
	uuid, ok := w.byUUID[ev.Device]
	if !ok && ev.Device != nil {
		if u, ret := ev.Device.GetUUID(); ret == nvml.SUCCESS {
			uuid, ok = u, true
		}
	}
	if !ok {
		return
	}
	w.tb.NvmlXidEvents.Add(context.Background(), 1, metric.WithAttributes(attribute.String("hw.id", uuid)))
	if ev.EventType != nvml.EventTypeXidCriticalError {
		// ECC events: the volatile ECC counters already count them, so they
		// are only logged here to avoid counting an error twice.
		w.logger.Info("GPU ECC error event", zap.String("hw.id", uuid), zap.Uint64("event_type", ev.EventType))
		return
	}
	w.logger.Warn("GPU XID error", zap.String("hw.id", uuid), zap.Uint64("xid", ev.EventData))
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.count[uuid]
	if m == nil {
		m = map[uint64]int64{}
		w.count[uuid] = m
	}
	m[ev.EventData]++
}

type xidCount struct {
	code uint64
	n    int64
}

// counts returns the XID counts of one GPU, ordered by code.
func (w *xidWatcher) counts(uuid string) []xidCount {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.count[uuid]) == 0 {
		return nil
	}
	out := make([]xidCount, 0, len(w.count[uuid]))
	for k, v := range w.count[uuid] {
		out = append(out, xidCount{k, v})
	}
	slices.SortFunc(out, func(a, b xidCount) int { return cmp.Compare(a.code, b.code) })
	return out
}

func (w *xidWatcher) stop() {
	w.cancel()
	<-w.done
	_ = w.set.Free()
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package rootcauseconnector

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector/internal/metadata"
	"github.com/llmops-otel/otelcol-llmops/internal/sharedcomponent"
)

// diagnoser is the connector's state: the subjects' windows, the span index
// of the drill-down and the open incidents. The collector builds one
// connector instance per pair of signals (metrics→metrics, metrics→logs,
// traces→logs, logs→logs); all of them share one diagnoser, because a leak
// incident needs the metrics of one pair and the spans of another.
type diagnoser struct {
	cfg       *Config
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
	// now is the only clock: evaluations, the drill-down's retention and a
	// subject's first sighting all read it, so tests can drive time.
	now func() time.Time

	mu        sync.Mutex
	subjects  *subjectLRU
	drill     *drilldown
	detectors []detector
	// rules: the user's rules and the default application-quality ones
	// (Config.effectiveRules); rulesByMetric indexes them by metric name.
	rules []RuleConfig
	// ev is the evaluation scratch evaluate reuses.
	ev            evaluation
	rulesByMetric map[string][]int
	incidents     map[string]*incident
	scratch       evalScratch
	exemplars     map[*subject]exemplarRef
	subjectsShown int64 // what the subjects gauge last reported
	spansEvicted  int64 // what the spans-evicted counter last reported
	// The incidents as metrics (incident_metrics.go).
	incMetrics incidentMetricsState
	// pending holds incident records the logs pipeline refused (its
	// exporters' sending queues full), offered again before the next
	// evaluation's records: an incident that explains an outage must not be
	// lost because the backend was down for longer than the queue lasts.
	// Only the ticker's goroutine touches it.
	pending plog.Logs

	// wiring is set while the collector builds the pipelines, before any
	// Start: which pairs exist decides who ingests metrics and where
	// incidents go.
	wiring struct {
		sync.Mutex
		// passThrough: a metrics→metrics instance exists; it ingests
		// (and enriches) every batch, so metrics→logs must not ingest it
		// a second time.
		passThrough bool
		// metrics is the pass-through pair's consumer, where the incident
		// metrics go too. Nil once that instance shut down.
		metrics consumer.Metrics
		// logs is where incidents go: every X→logs instance of one
		// connector feeds the same logs pipelines, so the first one's
		// consumer serves them all. Nil once that instance shut down.
		logs consumer.Logs
		// logsUsers counts the X→logs instances still running.
		logsUsers int
	}

	stop chan struct{}
	done chan struct{}
}

// exemplarRef is the span an incident points at, attached as an exemplar to
// the subject's points while the incident fires.
type exemplarRef struct {
	traceID [16]byte
	spanID  [8]byte
}

func newDiagnoser(cfg *Config, set connector.Settings) (*diagnoser, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	d := &diagnoser{cfg: cfg, logger: set.Logger, telemetry: tb, now: time.Now,
		incidents: map[string]*incident{}, exemplars: map[*subject]exemplarRef{}, rulesByMetric: map[string][]int{}, pending: plog.NewLogs()}
	d.incMetrics.start = d.nowNanos()
	d.rules = cfg.effectiveRules()
	for i, r := range d.rules {
		d.rulesByMetric[r.Metric] = append(d.rulesByMetric[r.Metric], i)
	}
	d.subjects = newSubjectLRU(cfg.MaxSubjects, d.nowNanos)
	d.drill = newDrilldown(cfg.DrillDown, d.nowNanos)
	d.detectors = newDetectors(cfg, d.rules)
	d.subjects.onEvicted = func(s *subject) { delete(d.exemplars, s) }
	return d, nil
}

func (d *diagnoser) nowNanos() int64 { return d.now().UnixNano() }

// Start begins evaluating on the ticker.
func (d *diagnoser) Start(context.Context, component.Host) error {
	d.wiring.Lock()
	noLogs := d.wiring.logs == nil
	d.wiring.Unlock()
	if noLogs {
		d.logger.Warn("rootcause is the receiver of no logs pipeline: its incidents have nowhere to go; list it under a logs pipeline's receivers")
	}
	d.stop, d.done = make(chan struct{}), make(chan struct{})
	go d.loop()
	return nil
}

// Shutdown stops the evaluations. Firing incidents are not resolved: the
// condition did not clear, the collector stopped.
func (d *diagnoser) Shutdown(context.Context) error {
	if d.stop != nil {
		close(d.stop)
		<-d.done
		d.stop = nil
	}
	d.telemetry.Shutdown()
	return nil
}

func (d *diagnoser) loop() {
	defer close(d.done)
	t := time.NewTicker(d.cfg.EvaluationInterval)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.tick(d.now())
		}
	}
}

// tick evaluates every detector and sends the incident records to the logs
// pipelines and the incident metrics to the metrics pipeline (outside the
// lock: downstream may be slow).
func (d *diagnoser) tick(now time.Time) {
	ld, fired, resolved := d.evaluateAt(now.UnixNano())
	ctx := context.Background()
	d.sendIncidentMetrics(ctx, now.UnixNano())
	if fired > 0 {
		d.telemetry.RootcauseIncidentsFired.Add(ctx, int64(fired))
	}
	if resolved > 0 {
		d.telemetry.RootcauseIncidentsResolved.Add(ctx, int64(resolved))
	}
	d.deliverIncidents(ctx, ld)
}

// maxPendingIncidentRecords bounds the incident records kept while the logs
// pipeline refuses them: at one record per incident change, thousands of
// incidents' worth; a record is a few hundred bytes.
const maxPendingIncidentRecords = 4096

// deliverIncidents hands the records still pending, then ld, to the logs
// pipeline. If it refuses them (a full sending queue, a memory_limiter),
// they are all kept, oldest dropped past maxPendingIncidentRecords, and
// offered again at the next evaluation. The pipeline's exporters that had
// already taken them then see them twice: at least once, never a gap.
func (d *diagnoser) deliverIncidents(ctx context.Context, ld plog.Logs) {
	if d.pending.LogRecordCount() > 0 {
		if ld.LogRecordCount() > 0 {
			ld.ResourceLogs().MoveAndAppendTo(d.pending.ResourceLogs())
		}
		ld, d.pending = d.pending, plog.NewLogs()
	}
	if ld.LogRecordCount() == 0 {
		return
	}
	d.wiring.Lock()
	next := d.wiring.logs
	d.wiring.Unlock()
	if next == nil {
		d.logger.Warn("rootcause has incidents to report but is the receiver of no logs pipeline", zap.Int("records", ld.LogRecordCount()))
		return
	}
	// The pipeline owns ld once called, refused or not: keep a copy to
	// offer again (a tick's records are few: only what changed).
	kept := plog.NewLogs()
	ld.CopyTo(kept)
	err := next.ConsumeLogs(ctx, ld)
	if err == nil {
		return
	}
	ld = kept
	dropped := dropOldestRecords(ld, ld.LogRecordCount()-maxPendingIncidentRecords)
	d.pending = ld
	d.telemetry.RootcauseIncidentRecordsRetried.Add(ctx, int64(ld.LogRecordCount()))
	if dropped > 0 {
		d.telemetry.RootcauseIncidentRecordsDropped.Add(ctx, int64(dropped))
	}
	d.logger.Warn("the logs pipeline refused incident records; kept to offer again at the next evaluation",
		zap.Int("kept", ld.LogRecordCount()), zap.Int("dropped_oldest", dropped), zap.Error(err))
}

// dropOldestRecords removes the first n log records of ld (records are
// appended in evaluation order, so the first are the oldest) and returns
// how many it removed.
func dropOldestRecords(ld plog.Logs, n int) int {
	removed := 0
	ld.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool {
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool {
			sl.LogRecords().RemoveIf(func(plog.LogRecord) bool {
				if removed < n {
					removed++
					return true
				}
				return false
			})
			return sl.LogRecords().Len() == 0
		})
		return rl.ScopeLogs().Len() == 0
	})
	return removed
}

// evaluateAt runs one evaluation (tests call it with their own clock).
func (d *diagnoser) evaluateAt(now int64) (plog.Logs, int, int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ld, fired, resolved := d.track(now, d.evaluate(now))
	ctx := context.Background()
	if n := int64(d.subjects.count) - d.subjectsShown; n != 0 {
		d.telemetry.RootcauseSubjects.Add(ctx, n)
		d.subjectsShown += n
	}
	if d.subjects.evicted > 0 {
		d.telemetry.RootcauseSubjectsEvicted.Add(ctx, d.subjects.evicted)
		d.subjects.evicted = 0
	}
	if n := d.drill.evicted - d.spansEvicted; n > 0 {
		d.telemetry.RootcauseSpansEvicted.Add(ctx, n)
		d.spansEvicted = d.drill.evicted
	}
	return ld, fired, resolved
}

// consumeMetrics feeds a batch to the detectors' windows and, when the
// batch passes through, adds the derived metrics and exemplars computed
// from it: the growth rate of a GPU is that of the window including this
// batch's sample, not the previous one's.
func (d *diagnoser) consumeMetrics(md pmetric.Metrics, enrich bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ingestMetrics(md)
	if enrich && (d.cfg.Derived.Metrics || d.cfg.Derived.Exemplars) {
		d.enrich(md)
	}
}

// metricsToMetrics is the pass-through pair: it ingests every batch and
// forwards it with derived metrics and exemplars added.
type metricsToMetrics struct {
	*sharedcomponent.Component[*diagnoser]
	d    *diagnoser
	next consumer.Metrics
}

func (c *metricsToMetrics) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

func (c *metricsToMetrics) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	c.d.consumeMetrics(md, true)
	return c.next.ConsumeMetrics(ctx, md)
}

// Shutdown stops sending incident metrics into the pipeline it feeds, which
// the collector shuts down after this connector.
func (c *metricsToMetrics) Shutdown(ctx context.Context) error {
	c.d.wiring.Lock()
	c.d.wiring.metrics = nil
	c.d.wiring.Unlock()
	return c.Component.Shutdown(ctx)
}

// metricsToLogs ingests metrics for the detectors when no pass-through pair
// does, and owns (with the other X→logs pairs) the incidents' way out.
type metricsToLogs struct {
	*logsOut
}

func (c *metricsToLogs) ConsumeMetrics(_ context.Context, md pmetric.Metrics) error {
	c.d.wiring.Lock()
	ingested := c.d.wiring.passThrough
	c.d.wiring.Unlock()
	if !ingested {
		c.d.consumeMetrics(md, false)
	}
	return nil
}

// tracesToLogs indexes profiler (and application) spans for the drill-down.
type tracesToLogs struct {
	*logsOut
}

func (c *tracesToLogs) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	c.d.mu.Lock()
	c.d.drill.ingestTraces(td)
	c.d.mu.Unlock()
	return nil
}

// logsToLogs indexes the leak-suspect records of imported profiles and
// takes operators' acknowledgments of hardware errors.
type logsToLogs struct {
	*logsOut
}

func (c *logsToLogs) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	c.d.mu.Lock()
	c.d.drill.ingestLogs(ld)
	c.d.ingestAcknowledgments(ld)
	c.d.mu.Unlock()
	return nil
}

// logsOut is what every X→logs pair shares: the shared state and the
// registration of its logs consumer as the incidents' destination.
type logsOut struct {
	*sharedcomponent.Component[*diagnoser]
	d    *diagnoser
	next consumer.Logs
}

func newLogsOut(c *sharedcomponent.Component[*diagnoser], next consumer.Logs) *logsOut {
	d := c.Unwrap()
	d.wiring.Lock()
	if d.wiring.logs == nil {
		d.wiring.logs = next
	}
	d.wiring.logsUsers++
	d.wiring.Unlock()
	return &logsOut{Component: c, d: d, next: next}
}

func (c *logsOut) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// Shutdown stops sending incidents once the last X→logs pair stops: the
// collector shuts a connector down before the pipelines it feeds, and an
// incident handed to a stopped pipeline would be lost silently.
func (c *logsOut) Shutdown(ctx context.Context) error {
	c.d.wiring.Lock()
	c.d.wiring.logsUsers--
	if c.d.wiring.logsUsers == 0 {
		c.d.wiring.logs = nil
	}
	c.d.wiring.Unlock()
	return c.Component.Shutdown(ctx)
}

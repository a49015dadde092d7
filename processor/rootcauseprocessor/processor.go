package rootcauseprocessor

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/llmops-otel/otelcol-llmops/internal/sharedcomponent"
	"github.com/llmops-otel/otelcol-llmops/processor/rootcauseprocessor/internal/metadata"
)

// engine is the state shared by every pipeline the processor is in.
type engine struct {
	cfg       *Config
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder

	mu              sync.Mutex
	reg             *registry
	drill           *drilldown
	incidents       map[string]*incident
	rulesByMetric   map[string][]int
	scratch         evalScratch
	jointSuppressed map[*subject]bool
	exemplars       map[*subject]exemplarRef
	subjectsShown   int64 // what the subjects gauge last reported
	spansEvicted    int64

	logsMu sync.Mutex
	logs   []consumer.Logs

	stop        chan struct{}
	done        chan struct{}
	checkedLogs bool  // the no-logs-pipeline warning was considered
	leakWidth   int64 // how often a memory window is refitted, ns
	now         func() time.Time
}

// exemplarRef is the span an incident points at, attached as an exemplar to
// the subject's points while the incident fires.
type exemplarRef struct {
	traceID [16]byte
	spanID  [8]byte
	until   int64
}

func newEngine(cfg *Config, set processor.Settings) (*engine, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	e := &engine{cfg: cfg, logger: set.Logger, telemetry: tb, reg: newRegistry(cfg.MaxSubjects),
		drill: newDrilldown(cfg.DrillDown), incidents: map[string]*incident{}, rulesByMetric: map[string][]int{},
		jointSuppressed: map[*subject]bool{}, exemplars: map[*subject]exemplarRef{}, now: time.Now}
	// A leak fit is redone every 1/20 of the window (30 s of a 10 min
	// window): a trend that needs 3/4 of the window to show does not need
	// a fresh fit every second, and 500 processes × 19 µs would.
	e.leakWidth = int64(max(cfg.EvaluationInterval, cfg.Leak.Window/20))
	for i, r := range cfg.Rules {
		e.rulesByMetric[r.Metric] = append(e.rulesByMetric[r.Metric], i)
	}
	e.reg.onEvicted = func(s *subject) { delete(e.exemplars, s) }
	return e, nil
}

// Start begins evaluating on the ticker.
func (e *engine) Start(context.Context, component.Host) error {
	e.stop, e.done = make(chan struct{}), make(chan struct{})
	go e.loop()
	return nil
}

// Shutdown stops the evaluations. Firing incidents are not resolved: the
// condition did not clear, the collector stopped.
func (e *engine) Shutdown(context.Context) error {
	if e.stop != nil {
		close(e.stop)
		<-e.done
		e.stop = nil
	}
	e.telemetry.Shutdown()
	return nil
}

func (e *engine) loop() {
	defer close(e.done)
	t := time.NewTicker(e.cfg.EvaluationInterval)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case now := <-t.C:
			e.tick(now)
		}
	}
}

// tick evaluates every detector and sends the incident records to the logs
// pipelines (outside the lock: downstream may be slow).
func (e *engine) tick(now time.Time) {
	if !e.checkedLogs {
		e.checkedLogs = true
		e.logsMu.Lock()
		n := len(e.logs)
		e.logsMu.Unlock()
		if n == 0 {
			e.logger.Warn("rootcause is in no logs pipeline: its incidents have nowhere to go; add it to a logs pipeline's processors")
		}
	}
	ld, fired, resolved := e.evaluateAt(now.UnixNano())
	ctx := context.Background()
	if fired > 0 {
		e.telemetry.RootcauseIncidentsFired.Add(ctx, int64(fired))
	}
	if resolved > 0 {
		e.telemetry.RootcauseIncidentsResolved.Add(ctx, int64(resolved))
	}
	if ld.LogRecordCount() == 0 {
		return
	}
	e.logsMu.Lock()
	targets := append([]consumer.Logs(nil), e.logs...)
	e.logsMu.Unlock()
	if len(targets) == 0 {
		e.logger.Warn("rootcause has incidents to report but is in no logs pipeline: add it to one", zap.Int("records", ld.LogRecordCount()))
		return
	}
	for i, next := range targets {
		out := ld
		if i < len(targets)-1 {
			out = plog.NewLogs()
			ld.CopyTo(out)
		}
		if err := next.ConsumeLogs(ctx, out); err != nil {
			e.logger.Warn("could not hand incidents to the logs pipeline", zap.Error(err))
		}
	}
}

// evaluateAt runs one evaluation (tests call it with their own clock).
func (e *engine) evaluateAt(now int64) (plog.Logs, int, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	findings := e.evaluate(now)
	ld, fired, resolved := e.track(now, findings)
	ctx := context.Background()
	if d := int64(e.reg.count) - e.subjectsShown; d != 0 {
		e.telemetry.RootcauseSubjects.Add(ctx, d)
		e.subjectsShown += d
	}
	if e.reg.evicted > 0 {
		e.telemetry.RootcauseSubjectsEvicted.Add(ctx, e.reg.evicted)
		e.reg.evicted = 0
	}
	if d := e.drill.evicted - e.spansEvicted; d > 0 {
		e.telemetry.RootcauseSpansEvicted.Add(ctx, d)
		e.spansEvicted = e.drill.evicted
	}
	return ld, fired, resolved
}

func (e *engine) addLogs(next consumer.Logs) {
	e.logsMu.Lock()
	defer e.logsMu.Unlock()
	e.logs = append(e.logs, next)
}

func (e *engine) removeLogs(next consumer.Logs) {
	e.logsMu.Lock()
	defer e.logsMu.Unlock()
	for i, l := range e.logs {
		if l == next {
			e.logs = append(e.logs[:i], e.logs[i+1:]...)
			return
		}
	}
}

func (e *engine) consumeMetrics(md pmetric.Metrics) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ingestMetrics(md)
	if e.cfg.Derived.Metrics || e.cfg.Derived.Exemplars {
		e.enrich(md)
	}
}

type metricsProcessor struct {
	*sharedcomponent.Component[*engine]
	eng  *engine
	next consumer.Metrics
}

func (p *metricsProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

func (p *metricsProcessor) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	p.eng.consumeMetrics(md)
	return p.next.ConsumeMetrics(ctx, md)
}

type tracesProcessor struct {
	*sharedcomponent.Component[*engine]
	eng  *engine
	next consumer.Traces
}

func (p *tracesProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

func (p *tracesProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	p.eng.mu.Lock()
	p.eng.drill.ingestTraces(td)
	p.eng.mu.Unlock()
	return p.next.ConsumeTraces(ctx, td)
}

type logsProcessor struct {
	*sharedcomponent.Component[*engine]
	eng  *engine
	next consumer.Logs
}

func (p *logsProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

func (p *logsProcessor) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	p.eng.mu.Lock()
	p.eng.drill.ingestLogs(ld)
	p.eng.mu.Unlock()
	return p.next.ConsumeLogs(ctx, ld)
}

// Shutdown stops sending incidents into this pipeline before releasing the
// shared state.
func (p *logsProcessor) Shutdown(ctx context.Context) error {
	p.eng.removeLogs(p.next)
	return p.Component.Shutdown(ctx)
}

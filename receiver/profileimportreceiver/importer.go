// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package profileimportreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/llmops-otel/otelcol-llmops/internal/offheap"
	"github.com/llmops-otel/otelcol-llmops/internal/profiles"
	"github.com/llmops-otel/otelcol-llmops/internal/ratelimit"
	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/metadata"
)

// importer watches the configured patterns and imports each complete file
// once.
type importer struct {
	cfg       *Config
	set       receiver.Settings
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
	obs       *receiverhelper.ObsReport
	warn      *ratelimit.Limiter

	mu      sync.Mutex
	traces  consumer.Traces
	metrics consumer.Metrics
	logs    consumer.Logs

	// roots are the watched directories, one per include pattern (shared
	// by patterns with the same one); only the poll goroutine uses them.
	roots []*watchRoot

	client   storage.Client
	pending  map[string]observation // path → last observation, while settling
	done     map[string]bool        // keys imported or failed this run (storage-less memory)
	inflight map[string]bool        // keys being imported now: never started twice
	progress map[string]progress    // keys partly handed downstream (also in storage)
	sem      chan struct{}

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// observation is what a poll saw of a file.
type observation struct {
	size    int64
	modTime time.Time
	since   time.Time // when this size/mtime was first seen
}

func newImporter(cfg *Config, set receiver.Settings) (*importer, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	// What the Kineto import maps outside the Go heap (internal/offheap):
	// the one figure of the receiver's memory GOMEMLIMIT cannot see.
	if err := tb.RegisterProfileimportOffheapMemoryCallback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(offheap.Held())
		return nil
	}); err != nil {
		return nil, err
	}
	obs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID: set.ID, Transport: "file", ReceiverCreateSettings: set})
	if err != nil {
		return nil, err
	}
	roots, err := newWatchRoots(cfg.Include)
	if err != nil {
		return nil, err
	}
	return &importer{cfg: cfg, set: set, logger: set.Logger, telemetry: tb, obs: obs, warn: ratelimit.New(time.Minute), roots: roots,
		pending: map[string]observation{}, done: map[string]bool{}, inflight: map[string]bool{}, progress: map[string]progress{}, sem: make(chan struct{}, cfg.MaxConcurrent)}, nil
}

func (im *importer) setTraces(c consumer.Traces)   { im.mu.Lock(); im.traces = c; im.mu.Unlock() }
func (im *importer) setMetrics(c consumer.Metrics) { im.mu.Lock(); im.metrics = c; im.mu.Unlock() }
func (im *importer) setLogs(c consumer.Logs)       { im.mu.Lock(); im.logs = c; im.mu.Unlock() }

func (im *importer) Start(ctx context.Context, host component.Host) error {
	if im.cfg.Storage != nil {
		ext, ok := host.GetExtensions()[*im.cfg.Storage]
		if !ok {
			return fmt.Errorf("storage: extension %q is not configured (add it to service.extensions)", im.cfg.Storage)
		}
		se, ok := ext.(storage.Extension)
		if !ok {
			return fmt.Errorf("storage: extension %q is not a storage extension", im.cfg.Storage)
		}
		client, err := se.GetClient(ctx, component.KindReceiver, im.set.ID, "imported")
		if err != nil {
			return fmt.Errorf("storage: %w", err)
		}
		im.client = client
	} else {
		im.logger.Warn("no storage extension configured: files still matching include after a restart will be imported again; set `storage` to a file_storage extension to remember them")
	}
	runCtx, cancel := context.WithCancel(context.Background())
	im.cancel = cancel
	im.wg.Add(1)
	go func() {
		defer im.wg.Done()
		im.run(runCtx)
	}()
	return nil
}

func (im *importer) Shutdown(ctx context.Context) error {
	if im.cancel != nil {
		im.cancel()
	}
	im.wg.Wait()
	im.telemetry.Shutdown()
	for _, w := range im.roots {
		w.close()
	}
	if im.client != nil {
		return im.client.Close(ctx)
	}
	return nil
}

func (im *importer) run(ctx context.Context) {
	tick := time.NewTicker(im.cfg.PollInterval)
	defer tick.Stop()
	for {
		im.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// candidate is a matched file and the watched directory of the pattern
// that matched it first.
type candidate struct {
	path string
	root *watchRoot
}

// candidates lists the files the patterns match now, sorted. A pattern
// whose directory does not exist (yet) matches nothing.
func (im *importer) candidates() []candidate {
	seen := map[string]bool{}
	var out []candidate
	for i, p := range im.cfg.Include {
		w := im.roots[i]
		if err := w.refresh(); err != nil || w.root == nil {
			continue
		}
		matches, _ := filepath.Glob(p)
		for _, m := range matches {
			if seen[m] || !isTraceFile(m) || im.excluded(m) {
				continue
			}
			seen[m] = true
			out = append(out, candidate{path: m, root: w})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// isTraceFile keeps finished profile files — Chrome-trace JSON and CUDA
// memory snapshots (pickle or JSON) — and skips the rest, such as the
// `<name>.tmp` Kineto writes first and renames when done.
func isTraceFile(path string) bool {
	for _, ext := range []string{".json", ".json.gz", ".pickle", ".pkl", ".pickle.gz", ".pkl.gz", ".sqlite"} {
		if strings.HasSuffix(path, ext) {
			return true
		}
	}
	return false
}

func (im *importer) excluded(path string) bool {
	for _, p := range im.cfg.Exclude {
		if ok, _ := filepath.Match(p, path); ok {
			return true
		}
		if ok, _ := filepath.Match(p, filepath.Base(path)); ok {
			return true
		}
	}
	return false
}

// fileKey identifies one version of a file: a rewritten file is new.
func fileKey(path string, fi os.FileInfo) string {
	return fmt.Sprintf("%s|%d|%d", path, fi.Size(), fi.ModTime().UnixNano())
}

func (im *importer) poll(ctx context.Context) {
	now := time.Now()
	live := map[string]bool{}
	for _, c := range im.candidates() {
		if ctx.Err() != nil {
			return
		}
		path := c.path
		live[path] = true
		resolved, rel, err := c.root.locate(path)
		if errors.Is(err, errOutside) {
			im.refuse(ctx, path, resolved, c.root)
			continue
		}
		if err != nil {
			continue // gone, or a dangling link: as a file that is not there
		}
		// Through the root: a link swapped in since locate that leaves
		// the directory fails here.
		fi, err := c.root.root.Stat(rel)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		key := fileKey(path, fi)
		if im.seen(ctx, key) {
			delete(im.pending, path)
			continue
		}
		prev, ok := im.pending[path]
		if !ok || prev.size != fi.Size() || !prev.modTime.Equal(fi.ModTime()) {
			im.pending[path] = observation{size: fi.Size(), modTime: fi.ModTime(), since: now}
			if im.cfg.SettleTime > 0 {
				continue
			}
		} else if now.Sub(prev.since) < im.cfg.SettleTime {
			continue
		}
		delete(im.pending, path)
		select {
		case im.sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		// Opened here, through the root, and checked to be the file that
		// settled: the import reads this open file, whatever the name
		// points to by then.
		f, st, err := c.root.open(rel, fi)
		if err != nil {
			<-im.sem
			continue // changed or replaced: the next poll looks again
		}
		w := c.root
		im.mu.Lock()
		im.inflight[key] = true
		im.mu.Unlock()
		im.wg.Add(1)
		go func() {
			defer im.wg.Done()
			defer func() {
				im.mu.Lock()
				delete(im.inflight, key)
				im.mu.Unlock()
				<-im.sem
			}()
			defer func() { _ = f.Close() }() // read only: a failed close loses nothing
			im.importFile(ctx, path, key, w, f, st)
		}()
	}
	for path := range im.pending {
		if !live[path] {
			delete(im.pending, path)
		}
	}
}

// seen reports whether this version of a file was imported (or failed)
// before, in this run or, with storage, any earlier one.
func (im *importer) seen(ctx context.Context, key string) bool {
	im.mu.Lock()
	done := im.done[key] || im.inflight[key]
	im.mu.Unlock()
	if done || im.client == nil {
		return done
	}
	v, err := im.client.Get(ctx, key)
	return err == nil && v != nil
}

func (im *importer) remember(ctx context.Context, key, outcome string) {
	im.mu.Lock()
	im.done[key] = true
	im.mu.Unlock()
	if im.client != nil {
		if err := im.client.Set(ctx, key, []byte(outcome)); err != nil {
			im.logger.Warn("could not record the import in storage; the file may be imported again after a restart",
				zap.String("key", key), zap.Error(err))
		}
	}
}

// progress is how much of one file's import a pipeline has already taken:
// the span batches (in FinishBatches' order, which is the same on every
// import of the same file, with the same ids), then the metrics and the
// logs. It is recorded after each of them is accepted, in storage when
// there is one, so that an import interrupted by a refusing pipeline or a
// killed agent resumes where it stopped instead of sending the first
// batches again: behind an exporter with a persistent queue, a profile is
// imported exactly once. (The one gap: killed between a batch's acceptance
// and its record, that one batch is sent again.)
type progress struct {
	batches       int
	metrics, logs bool
}

func progressKey(key string) string { return "progress|" + key }

func (p progress) String() string { return fmt.Sprintf("%d|%t|%t", p.batches, p.metrics, p.logs) }

func parseProgress(s string) (progress, bool) {
	var p progress
	_, err := fmt.Sscanf(s, "%d|%t|%t", &p.batches, &p.metrics, &p.logs)
	return p, err == nil && p.batches >= 0
}

// loadProgress is where an earlier, interrupted import of this version of
// the file stopped (zero when none).
func (im *importer) loadProgress(ctx context.Context, key string) progress {
	im.mu.Lock()
	p, ok := im.progress[key]
	im.mu.Unlock()
	if ok || im.client == nil {
		return p
	}
	v, err := im.client.Get(ctx, progressKey(key))
	if err != nil || v == nil {
		return progress{}
	}
	if p, ok = parseProgress(string(v)); !ok {
		im.logger.Warn("unreadable import progress in storage; importing the file from its start", zap.String("key", key), zap.ByteString("progress", v))
		p = progress{}
	}
	im.mu.Lock()
	im.progress[key] = p // so that clearProgress deletes the stored record
	im.mu.Unlock()
	return p
}

func (im *importer) saveProgress(ctx context.Context, key string, p progress) {
	im.mu.Lock()
	im.progress[key] = p
	im.mu.Unlock()
	if im.client != nil {
		if err := im.client.Set(ctx, progressKey(key), []byte(p.String())); err != nil {
			im.logger.Warn("could not record the import's progress in storage; after a restart its first batches may be sent again",
				zap.String("key", key), zap.Error(err))
		}
	}
}

func (im *importer) clearProgress(ctx context.Context, key string) {
	im.mu.Lock()
	_, had := im.progress[key]
	delete(im.progress, key)
	im.mu.Unlock()
	if im.client != nil && had {
		_ = im.client.Delete(ctx, progressKey(key))
	}
}

// importFile imports one file through profiles.Import. The rule on errors
// is all or nothing for the file's own faults: a file that cannot be read
// to its end emits nothing further, is recorded as failed (not retried
// until it changes), and is reported. A refusing pipeline is not the
// file's fault: the import is retried on a later poll, resuming after what
// was accepted (pipelineSink).
//
// f is the file, opened and checked by the poll; path names it in the
// signals and logs. Nsight exports are opened again by name (SQLite opens
// a path), so their result is used only if path still names f afterwards.
func (im *importer) importFile(ctx context.Context, path, key string, w *watchRoot, f *os.File, fi os.FileInfo) {
	if fi.Size() > im.cfg.MaxFileSize {
		im.fail(ctx, path, key, fmt.Errorf("%d bytes exceeds max_file_size (%d)", fi.Size(), im.cfg.MaxFileSize))
		return
	}
	start := time.Now()
	im.mu.Lock()
	sink := &pipelineSink{im: im, key: key, traces: im.traces, metrics: im.metrics, logs: im.logs}
	im.mu.Unlock()
	sink.resumed = im.loadProgress(ctx, key)
	sink.prog = sink.resumed
	res, err := profiles.Import(ctx, path, profiles.Options{
		MinDuration: im.cfg.MinDuration, FoldPythonFrames: im.cfg.FoldPythonFrames, SpanBudget: im.cfg.SpanBudget,
		LeakSuspects: im.cfg.LeakSuspects, MinLeakBytes: im.cfg.MinLeakBytes,
		MaxDecompressedSize: im.cfg.MaxDecompressedSize, ParseWorkers: im.cfg.ParseWorkers,
		File: f,
		AfterRead: func(res *profiles.Result) error {
			if res.Format.ReadByName() && !stillNames(w, path, fi) {
				return errReplaced
			}
			return nil
		},
	}, sink)
	kind := res.Format.String()
	var sinkErr *profiles.SinkError
	switch {
	case errors.Is(err, errReplaced):
		// Not the file's fault: it is looked at again on the next poll
		// (rate-limited: something may keep swapping it). Its new version
		// is a new key: this one's progress is of no further use.
		im.clearProgress(ctx, key)
		if im.warn.Allow(path + "|replaced") {
			im.logger.Warn(kind+" replaced while it was imported; its data is dropped and the file is looked at again", zap.String("file", path))
		}
		return
	case errors.As(err, &sinkErr):
		// The pipeline refused the data (e.g. memory_limiter, a full
		// sending queue): try again on a later poll rather than losing the
		// profile. A refused span batch stops the import there (later
		// batches, metrics and logs are not sent); the retry resumes after
		// what was accepted.
		im.logger.Warn("the pipeline refused an imported "+kind+"; it will be retried from where it stopped", zap.String("file", path),
			zap.Int("span_batches_accepted", sink.prog.batches), zap.Error(sinkErr.Err))
		return
	case err != nil:
		im.clearProgress(ctx, key)
		im.fail(ctx, path, key, err)
		return
	}
	fields := []zap.Field{zap.String("file", path), zap.Int("spans", res.Spans),
		zap.Int("memory_points", res.MemoryPoints), zap.Int("log_records", res.LogRecords),
		zap.Duration("took", time.Since(start))}
	switch res.Format {
	case profiles.FormatSnapshot:
		fields = append(fields, zap.Int64("segments", res.Snapshot.Segments), zap.Int64("outstanding_bytes", res.Snapshot.OutstandingBytes))
	case profiles.FormatNsys:
		fields = append(fields, zap.Int64("kernels", res.Nsys.Kernels))
	default:
		fields = append(fields, zap.Int64("events", res.Kineto.Events))
	}
	if sink.resumed != (progress{}) {
		fields = append(fields, zap.Int("spans_sent_before", sink.skipped), zap.Int("resumed_after_batches", sink.resumed.batches))
	}
	im.remember(ctx, key, "imported")
	im.clearProgress(ctx, key)
	im.telemetry.ProfileimportFilesImported.Add(ctx, 1)
	im.logger.Info(kind+" imported", fields...)
	im.afterImport(path)
}

// errReplaced says the name of a file imported by name no longer names the
// file that was checked.
var errReplaced = errors.New("the file was replaced while it was imported")

// pipelineSink hands one import's signals to the receiver's consumers:
// what an interrupted earlier import of the same file version already
// handed over (resumed) is skipped, and progress is recorded after each
// span batch, the metrics and the logs are accepted. Each hand-over is
// counted in the collector's standard receiver telemetry
// (otelcol_receiver_accepted_* / _refused_*, transport "file").
type pipelineSink struct {
	im      *importer
	key     string
	format  string // the file's format (the obsreport "format"), set by Import
	traces  consumer.Traces
	metrics consumer.Metrics
	logs    consumer.Logs

	resumed progress // where an earlier import stopped
	prog    progress // what is accepted by now
	batch   int      // span batches seen in this import
	skipped int      // spans not sent again because an earlier import had
}

func (s *pipelineSink) SetFormat(f profiles.Format) { s.format = f.String() }

func (s *pipelineSink) ConsumeSpans(ctx context.Context, td ptrace.Traces) error {
	s.batch++
	if s.traces == nil {
		return nil
	}
	if s.batch <= s.resumed.batches {
		s.skipped += td.SpanCount()
		return nil
	}
	n := td.SpanCount()
	opCtx := s.im.obs.StartTracesOp(ctx)
	err := s.traces.ConsumeTraces(opCtx, td)
	s.im.obs.EndTracesOp(opCtx, s.format, n, err)
	if err == nil {
		s.prog.batches = s.batch
		s.im.saveProgress(ctx, s.key, s.prog)
	}
	return err
}

func (s *pipelineSink) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	if s.metrics == nil || s.prog.metrics {
		return nil
	}
	n := md.DataPointCount()
	opCtx := s.im.obs.StartMetricsOp(ctx)
	err := s.metrics.ConsumeMetrics(opCtx, md)
	s.im.obs.EndMetricsOp(opCtx, s.format, n, err)
	if err == nil {
		s.prog.metrics = true
		s.im.saveProgress(ctx, s.key, s.prog)
	}
	return err
}

func (s *pipelineSink) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	if s.logs == nil || s.prog.logs {
		return nil
	}
	n := ld.LogRecordCount()
	opCtx := s.im.obs.StartLogsOp(ctx)
	err := s.logs.ConsumeLogs(opCtx, ld)
	s.im.obs.EndLogsOp(opCtx, s.format, n, err)
	if err == nil {
		s.prog.logs = true
		s.im.saveProgress(ctx, s.key, s.prog)
	}
	return err
}

// refuse reports a matched file that resolves outside its watched
// directory, once per link and target: remembered (and counted in
// profileimport_files_failed) like a failed file, at warn level since the
// collector did nothing wrong. It is never opened.
func (im *importer) refuse(ctx context.Context, path, resolved string, w *watchRoot) {
	key := path + "|outside|" + resolved
	if im.seen(ctx, key) {
		return
	}
	im.remember(ctx, key, "refused: resolves to "+resolved+", outside "+w.real)
	im.telemetry.ProfileimportFilesFailed.Add(ctx, 1)
	if im.warn.Allow(path) {
		im.logger.Warn("profile file not imported: it is a symbolic link (or is reached through one) to a file outside the watched directory of its include pattern; it is not opened, and not looked at again while it points there. Move the file into the directory, or add an include pattern for where it is",
			zap.String("file", path), zap.String("target", resolved), zap.String("directory", w.real))
	}
}

func (im *importer) fail(ctx context.Context, path, key string, err error) {
	im.remember(ctx, key, "failed: "+err.Error())
	im.telemetry.ProfileimportFilesFailed.Add(ctx, 1)
	if im.warn.Allow(path) {
		im.logger.Error("profile not imported; it will not be retried until it changes",
			zap.String("file", path), zap.Error(err))
	}
}

func (im *importer) afterImport(path string) {
	action, dir := im.cfg.afterImport()
	var err error
	switch action {
	case AfterImportDelete:
		err = os.Remove(path)
	case AfterImportMoveTo:
		if err = os.MkdirAll(dir, 0o755); err == nil {
			err = os.Rename(path, filepath.Join(dir, filepath.Base(path)))
		}
	}
	if err != nil {
		im.logger.Warn("after_import failed", zap.String("file", path), zap.String("after_import", im.cfg.AfterImport), zap.Error(err))
	}
}

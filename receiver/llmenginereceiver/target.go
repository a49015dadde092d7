// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmenginereceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver"

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/llmops-otel/otelcol-llmops/internal/pdatautil"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver/internal/expo"
	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver/internal/metadata"
)

// acceptHeader asks for OpenMetrics first, as Prometheus does: it carries
// _created start times and ends with # EOF, so a truncated body is detected.
const acceptHeader = "application/openmetrics-text;version=1.0.0;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

// infoRefresh is how often a target's model is re-read from its info
// endpoint (TGI /info, llama.cpp /props), besides after a detected change.
const infoRefresh = 10 * time.Minute

// What an oversize body's error suggests.
const (
	scrapeHint = "raise max_body_size if this is expected"
	infoHint   = "an info endpoint's answer is read up to 1 MiB (or max_body_size if smaller); set `model` on the target so that it is not read"
)

type target struct {
	r        *engineReceiver
	cfg      TargetConfig
	endpoint string
	client   *http.Client
	conv     *expo.Converter
	mb       *metadata.MetricsBuilder

	engine      string // configured, detected, or "" while unknown
	autoDetect  bool
	fingerprint uint64
	names       []string

	infoModel string
	infoAt    time.Time
	failing   bool

	// labelModel caches the model named by the series' labels: it only
	// changes with the series, so it is re-read when the names change and
	// otherwise every labelModelEvery scrapes.
	labelModel     string
	labelModelOK   bool
	labelModelAge  int
	labelModelSeen uint64

	// buf is reused for every scrape body: a body is about the same size
	// each time, so after the first scrape reading it allocates nothing.
	buf bytes.Buffer
}

func newTarget(ctx context.Context, r *engineReceiver, tc TargetConfig, host component.Host) (*target, error) {
	cc := tc.ClientConfig
	cc.Timeout = r.timeout(tc)
	client, err := cc.ToClient(ctx, host.GetExtensions(), r.set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	t := &target{
		r: r, cfg: tc, endpoint: tc.Endpoint, client: client,
		conv: expo.NewConverter(expo.Options{MaxSeries: r.cfg.MaxSeriesPerTarget}),
		mb:   metadata.NewMetricsBuilder(r.cfg.MetricsBuilderConfig, r.set),
	}
	switch tc.Engine {
	case "", EngineAuto:
		t.autoDetect = true
	default:
		t.engine = tc.Engine
	}
	return t, nil
}

func (t *target) run(ctx context.Context) {
	if d := t.r.cfg.InitialDelay; d > 0 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
	}
	tick := time.NewTicker(t.r.interval(t.cfg))
	defer tick.Stop()
	for {
		t.scrapeOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// scrapeOnce scrapes the target and hands the result to the pipeline. A
// failed scrape still reports llm.engine.up = 0 and the time it took.
func (t *target) scrapeOnce(ctx context.Context) {
	start := time.Now()
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)

	err := t.scrape(ctx, start, sm.Metrics())
	up := int64(1)
	if err != nil {
		up = 0
		sm.Metrics().RemoveIf(func(pmetric.Metric) bool { return true })
		t.r.telemetry.LlmengineScrapeFailures.Add(ctx, 1, metric.WithAttributes(attribute.String(spec.AttrEngineTarget, t.endpoint)))
		if t.r.warn.Allow(t.endpoint) {
			t.r.logger().Warn("engine scrape failed; llm.engine.up=0 until it recovers",
				zap.String("target", t.endpoint), zap.String("engine", t.engineName()), zap.Error(err))
		}
		t.failing = true
	} else if t.failing {
		t.failing = false
		t.r.warn.Reset(t.endpoint)
		t.r.logger().Info("engine target recovered", zap.String("target", t.endpoint))
	}

	name := t.engineName()
	now := pcommon.NewTimestampFromTime(time.Now())
	t.mb.RecordLlmEngineUpDataPoint(now, up, name, t.endpoint)
	t.mb.RecordLlmEngineScrapeDurationDataPoint(now, time.Since(start).Seconds(), name, t.endpoint)
	own := t.mb.Emit()
	if own.ResourceMetrics().Len() > 0 {
		own.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().MoveAndAppendTo(sm.Metrics())
	}

	rb := t.mb.NewResourceBuilder()
	rb.SetLlmEngineName(name)
	rb.SetLlmEngineTarget(t.endpoint)
	if m := t.model(sm.Metrics()); m != "" {
		rb.SetGenAiRequestModel(m)
	}
	rb.Emit().CopyTo(rm.Resource())
	for k, v := range t.cfg.ResourceAttributes {
		rm.Resource().Attributes().PutStr(k, v)
	}

	obsCtx := t.r.obsrecv.StartMetricsOp(ctx)
	points := md.DataPointCount()
	cerr := t.r.next.ConsumeMetrics(ctx, md)
	t.r.obsrecv.EndMetricsOp(obsCtx, metadata.Type.String(), points, cerr)
}

func (t *target) engineName() string {
	if t.engine == "" {
		return spec.EngineCustom
	}
	return t.engine
}

// scrape fetches and converts one exposition into dst. On any error dst is
// left for the caller to discard: no partial data leaves a failed scrape.
func (t *target) scrape(ctx context.Context, now time.Time, dst pmetric.MetricSlice) error {
	t.buf.Reset()
	contentType, err := t.fetchInto(ctx, &t.buf, t.endpoint, acceptHeader, t.r.cfg.MaxBodySize, scrapeHint)
	if err != nil {
		return err
	}
	body := t.buf.Bytes()
	stats, err := t.conv.Convert(body, expo.FormatFromContentType(contentType), now, dst)
	if err != nil {
		return fmt.Errorf("unparsable exposition from %s: %w", t.endpoint, err)
	}
	targetAttr := metric.WithAttributes(attribute.String(spec.AttrEngineTarget, t.endpoint))
	if stats.Resets > 0 {
		t.r.telemetry.LlmengineCounterResets.Add(ctx, int64(stats.Resets), targetAttr)
	}
	if stats.UntrackedSeries > 0 {
		t.r.telemetry.LlmengineSeriesUntracked.Add(ctx, int64(stats.UntrackedSeries), targetAttr)
		if t.r.warn.Allow(t.endpoint + "/untracked") {
			t.r.logger().Warn("engine exposes more cumulative series than max_series_per_target: the rest are emitted without start times or reset detection; raise max_series_per_target",
				zap.String("target", t.endpoint), zap.Int("untracked", stats.UntrackedSeries),
				zap.Int("max_series_per_target", t.r.cfg.MaxSeriesPerTarget))
		}
	}
	if skipped := stats.DuplicateSeries + stats.InvalidSeries; skipped > 0 {
		t.r.telemetry.LlmengineSeriesSkipped.Add(ctx, int64(skipped), targetAttr)
		if t.r.warn.Allow(t.endpoint + "/skipped") {
			t.r.logger().Warn("engine exposition has series that were skipped",
				zap.String("target", t.endpoint), zap.Int("duplicate", stats.DuplicateSeries),
				zap.Int("invalid", stats.InvalidSeries), zap.Strings("problems", stats.Problems))
		}
	}
	t.names = t.names[:0]
	for i := 0; i < dst.Len(); i++ {
		t.names = append(t.names, dst.At(i).Name())
	}
	if fp := namesFingerprint(t.names); fp != t.fingerprint {
		changed := t.fingerprint != 0
		t.fingerprint = fp
		t.infoAt = time.Time{} // re-read the model too
		if t.autoDetect {
			if e := detectEngine(t.names, t.endpoint); e != t.engine {
				if changed || t.engine != "" {
					t.r.logger().Info("engine re-detected after its metric names changed",
						zap.String("target", t.endpoint), zap.String("from", t.engineName()), zap.String("to", e))
				}
				t.engine = e
			}
		}
	}
	return nil
}

// fetchInto GETs url into buf, refusing a body over limit bytes (the
// announced length, or what was read: a body without Content-Length is cut
// at limit+1 bytes), and returns the Content-Type.
// hint is what the error of an oversize body tells the operator to do.
func (t *target) fetchInto(ctx context.Context, buf *bytes.Buffer, u, accept string, limit int64, hint string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", accept)
	resp, err := t.client.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }() // read to the end or abandoned: a failed close loses nothing
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return "", fmt.Errorf("%s answered %s", u, resp.Status)
	}
	if resp.ContentLength > limit {
		return "", fmt.Errorf("%s announced %d bytes, more than the limit of %d; %s", u, resp.ContentLength, limit, hint)
	}
	if resp.ContentLength > 0 {
		buf.Grow(int(resp.ContentLength))
	}
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, limit+1)); err != nil {
		return "", fmt.Errorf("reading %s: %w", u, err)
	}
	if int64(buf.Len()) > limit {
		return "", fmt.Errorf("%s sent more than the limit of %d bytes; %s", u, limit, hint)
	}
	return resp.Header.Get("Content-Type"), nil
}

// model returns the model the target serves: the configured one, else the
// one its series name (when they name exactly one), else the one its info
// endpoint reports.
func (t *target) model(ms pmetric.MetricSlice) string {
	if t.cfg.Model != "" {
		return t.cfg.Model
	}
	// A failed scrape (only up and duration) says nothing about the model.
	if failedScrape := ms.Len() <= 2; !failedScrape && (t.labelModelSeen != t.fingerprint || t.labelModelAge >= labelModelEvery) {
		t.labelModel, t.labelModelOK = modelFromLabels(ms)
		t.labelModelSeen, t.labelModelAge = t.fingerprint, 0
	}
	t.labelModelAge++
	if t.labelModelOK {
		return t.labelModel
	}
	return t.modelFromInfo()
}

var modelLabels = []string{"model_name", "model"}

// labelModelEvery bounds how stale the label-derived model may get when a
// target swaps models without changing its metric names.
const labelModelEvery = 30

// modelFromLabels returns the single model named by the points' labels;
// false when none or several are named (a Triton serving many models).
func modelFromLabels(ms pmetric.MetricSlice) (string, bool) {
	found, conflict := "", false
	for i := 0; i < ms.Len() && !conflict; i++ {
		pdatautil.EachAttributes(ms.At(i), func(attrs pcommon.Map) bool {
			for _, l := range modelLabels {
				if v, ok := attrs.Get(l); ok && v.Str() != "" {
					if found != "" && found != v.Str() {
						conflict = true
						return false
					}
					found = v.Str()
					break
				}
			}
			return true
		})
	}
	if conflict {
		return "", false
	}
	return found, found != ""
}

// modelFromInfo asks TGI's /info or llama.cpp's /props and /v1/models, at
// most every infoRefresh; a failure keeps the last known model.
func (t *target) modelFromInfo() string {
	if t.engine != spec.EngineTGI && t.engine != spec.EngineLlamaCpp {
		return ""
	}
	if !t.infoAt.IsZero() && time.Since(t.infoAt) < infoRefresh {
		return t.infoModel
	}
	t.infoAt = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), t.r.timeout(t.cfg))
	defer cancel()
	var m string
	var err error
	if t.engine == spec.EngineTGI {
		m, err = t.jsonField(ctx, "/info", modelFromTGIInfo)
	} else {
		m, err = t.jsonField(ctx, "/props", modelFromLlamaCppProps)
		if err != nil {
			// Both reasons, should the fallback fail too.
			perr := err
			if m, err = t.jsonField(ctx, "/v1/models", modelFromModelList); err != nil {
				err = errors.Join(perr, err)
			}
		}
	}
	if err != nil {
		if t.r.warn.Allow(t.endpoint + "/info") {
			t.r.logger().Warn("could not read the model from the engine's info endpoint; set `model` on the target to name it",
				zap.String("target", t.endpoint), zap.Error(err))
		}
		return t.infoModel
	}
	t.infoModel = m
	return m
}

func (t *target) jsonField(ctx context.Context, p string, decode func([]byte) (string, error)) (string, error) {
	u, err := url.Parse(t.endpoint)
	if err != nil {
		return "", err
	}
	u.Path, u.RawQuery = p, ""
	var body bytes.Buffer
	if _, err := t.fetchInto(ctx, &body, u.String(), "application/json", min(maxInfoBody, t.r.cfg.MaxBodySize), infoHint); err != nil {
		return "", err
	}
	return decode(body.Bytes())
}

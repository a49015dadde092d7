// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package alertwebhookexporter

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/llmops-otel/otelcol-llmops/exporter/alertwebhookexporter/internal/metadata"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// target is one HTTP destination with its own client and signing.
type target struct {
	url        string
	format     string
	client     *http.Client
	bearer     configopaque.String
	secret     configopaque.String
	sigHeader  string
	clientConf confighttp.ClientConfig
}

type alertExporter struct {
	cfg       *Config
	set       exporter.Settings
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
	node      string

	main    *target
	actions map[string]*target

	// firing: Alertmanager alerts re-sent until resolved (or not refreshed
	// for firing_ttl), bounded by max_firing.
	mu     sync.Mutex
	firing map[string]*firingAlert

	stop chan struct{}
	done chan struct{}
	now  func() time.Time
}

type firingAlert struct {
	alert   amAlert
	updated time.Time
}

func newExporter(cfg *Config, set exporter.Settings) (*alertExporter, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	node := cfg.Node
	if node == "" {
		node = os.Getenv("NODE_NAME")
	}
	if node == "" {
		node, _ = os.Hostname()
	}
	e := &alertExporter{cfg: cfg, set: set, logger: set.Logger, telemetry: tb, node: node,
		firing: map[string]*firingAlert{}, actions: map[string]*target{}, now: time.Now}
	url := cfg.ClientConfig.Endpoint
	if cfg.Format == FormatAlertmanager {
		url = strings.TrimRight(url, "/") + "/api/v2/alerts"
	}
	e.main = &target{url: url, format: cfg.Format, bearer: cfg.BearerToken, secret: cfg.HMACSecret,
		sigHeader: cfg.SignatureHeader, clientConf: cfg.ClientConfig}
	for kind, a := range cfg.Actions {
		f := a.Format
		if f == "" {
			f = FormatJSON
		}
		e.actions[kind] = &target{url: a.ClientConfig.Endpoint, format: f, bearer: a.BearerToken, secret: a.HMACSecret,
			sigHeader: a.SignatureHeader, clientConf: a.ClientConfig}
	}
	return e, nil
}

func (e *alertExporter) start(ctx context.Context, host component.Host) error {
	for _, t := range append([]*target{e.main}, e.actionList()...) {
		c, err := t.clientConf.ToClient(ctx, host.GetExtensions(), e.set.TelemetrySettings)
		if err != nil {
			return fmt.Errorf("HTTP client for %s: %w", t.url, err)
		}
		t.client = c
	}
	if e.cfg.Format == FormatAlertmanager {
		e.stop, e.done = make(chan struct{}), make(chan struct{})
		go e.resendLoop()
	}
	return nil
}

func (e *alertExporter) shutdown(context.Context) error {
	if e.stop != nil {
		close(e.stop)
		<-e.done
		e.stop = nil
	}
	e.telemetry.Shutdown()
	return nil
}

func (e *alertExporter) actionList() []*target {
	keys := make([]string, 0, len(e.actions))
	for k := range e.actions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*target, 0, len(keys))
	for _, k := range keys {
		out = append(out, e.actions[k])
	}
	return out
}

// push sends one batch. Any retryable failure fails the whole batch, which
// exporterhelper retries: receivers see duplicates (harmless: Alertmanager
// deduplicates by labels, JSON documents carry a stable incident id), never
// gaps.
func (e *alertExporter) push(ctx context.Context, ld plog.Logs) error {
	all, skipped := incidents(ld)
	if skipped > 0 {
		e.logger.Debug("skipped log records that are not incidents", zap.Int("records", skipped))
	}
	minRank := severityRank(e.cfg.MinSeverity)
	var send []incident
	for _, in := range all {
		// Resolutions always go out: the firing record may have passed
		// the filter at a lower threshold or before a config change.
		if in.State == spec.StateResolved || severityRank(in.Severity) >= minRank {
			send = append(send, in)
		}
	}
	if len(send) == 0 {
		return nil
	}
	if err := e.sendTo(ctx, e.main, send); err != nil {
		return err
	}
	e.telemetry.AlertwebhookIncidentsSent.Add(ctx, int64(len(send)))
	if e.cfg.Format == FormatAlertmanager {
		e.remember(send)
	}
	for kind, t := range e.actions {
		a := e.cfg.Actions[kind]
		var matched []incident
		for _, in := range send {
			if actionKeyMatches(kind, in) && actionWants(a, in) {
				matched = append(matched, in)
			}
		}
		if len(matched) > 0 {
			if err := e.sendTo(ctx, t, matched); err != nil {
				return fmt.Errorf("action for %s: %w", kind, err)
			}
		}
	}
	return nil
}

// actionKeyMatches says whether an actions entry is for the incident: its
// key is "*", the incident's kind, or the response it calls for
// (incident.action.id, e.g. circuit_break), so a hook can carry out one
// response whichever rule asked for it.
func actionKeyMatches(key string, in incident) bool {
	return key == "*" || key == in.Kind || (in.ActionID != "" && key == in.ActionID)
}

func actionWants(a ActionConfig, in incident) bool {
	if a.MinSeverity != "" && severityRank(in.Severity) < severityRank(a.MinSeverity) {
		return false
	}
	states := a.States
	if len(states) == 0 {
		states = []string{spec.StateFiring}
	}
	for _, s := range states {
		if s == in.State {
			return true
		}
	}
	return false
}

// sendTo delivers incidents to one target in its format: Alertmanager takes
// them all in one request; webhooks one request per incident.
func (e *alertExporter) sendTo(ctx context.Context, t *target, ins []incident) error {
	switch t.format {
	case FormatAlertmanager:
		alerts := make([]amAlert, 0, len(ins))
		for i := range ins {
			alerts = append(alerts, e.alertOf(&ins[i]))
		}
		body, err := json.Marshal(alerts)
		if err != nil {
			return consumererror.NewPermanent(err)
		}
		return e.post(ctx, t, body, len(ins))
	default:
		for i := range ins {
			var body []byte
			var err error
			if t.format == FormatSlack {
				body, err = json.Marshal(e.slackOf(&ins[i]))
			} else {
				body, err = json.Marshal(e.documentOf(&ins[i]))
			}
			if err != nil {
				return consumererror.NewPermanent(err)
			}
			if err := e.post(ctx, t, body, 1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *alertExporter) post(ctx context.Context, t *target, body []byte, n int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return consumererror.NewPermanent(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "otelcol-llmops-alertwebhook")
	if t.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+string(t.bearer))
	}
	if t.secret != "" {
		mac := hmac.New(sha256.New, []byte(t.secret))
		mac.Write(body)
		req.Header.Set(t.sigHeader, "sha256="+hex.EncodeToString(mac.Sum(nil)))
	}
	resp, err := t.client.Do(req)
	if err != nil {
		// Connection refused, timeout: retried with backoff, kept queued.
		return fmt.Errorf("POST %s: %w", t.url, err)
	}
	defer func() { _ = resp.Body.Close() }() // drained below; the delivery's outcome is the status
	// The start of the body for the error, then a bounded drain so that
	// the connection can be reused (an endless body is cut: the
	// connection is closed instead).
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+1))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	maxWait := e.cfg.RetryConfig.MaxInterval
	if maxWait <= 0 {
		maxWait = defaultMaxRetryAfter
	}
	wait, err := judgeResponse(t.url, n, resp.StatusCode, resp.Status, resp.Header.Get("Retry-After"), snippet, maxWait, time.Now())
	if consumererror.IsPermanent(err) {
		e.telemetry.AlertwebhookIncidentsRejected.Add(ctx, int64(n))
	}
	if wait > 0 {
		return exporterhelper.NewThrottleRetry(err, wait)
	}
	return err
}

// remember keeps firing alerts for re-sending and forgets resolved ones.
func (e *alertExporter) remember(ins []incident) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	for i := range ins {
		in := &ins[i]
		if in.State == spec.StateResolved {
			delete(e.firing, in.ID)
			continue
		}
		if in.Kind == kindLeakSuspect {
			continue
		}
		if _, ok := e.firing[in.ID]; !ok && len(e.firing) >= e.cfg.MaxFiring {
			e.evictOldest()
		}
		e.firing[in.ID] = &firingAlert{alert: e.alertOf(in), updated: now}
	}
}

func (e *alertExporter) evictOldest() {
	var oldest string
	var t time.Time
	for id, f := range e.firing {
		if oldest == "" || f.updated.Before(t) {
			oldest, t = id, f.updated
		}
	}
	delete(e.firing, oldest)
}

// resendLoop re-posts firing alerts every resend_interval with a fresh
// endsAt, so Alertmanager keeps them active. An alert not refreshed by a
// new record for firing_ttl is let go (its source stopped re-notifying):
// Alertmanager then resolves it at its endsAt.
func (e *alertExporter) resendLoop() {
	defer close(e.done)
	tick := time.NewTicker(e.cfg.ResendInterval)
	defer tick.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-tick.C:
			e.resend()
		}
	}
}

func (e *alertExporter) resend() {
	e.mu.Lock()
	now := e.now()
	alerts := make([]amAlert, 0, len(e.firing))
	for id, f := range e.firing {
		if now.Sub(f.updated) > e.cfg.FiringTTL {
			delete(e.firing, id)
			continue
		}
		a := f.alert
		a.EndsAt = now.Add(4 * e.cfg.ResendInterval).UTC().Format(time.RFC3339Nano)
		alerts = append(alerts, a)
	}
	e.mu.Unlock()
	if len(alerts) == 0 {
		return
	}
	body, err := json.Marshal(alerts)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), max(e.cfg.ResendInterval, time.Second))
	defer cancel()
	if err := e.post(ctx, e.main, body, len(alerts)); err != nil {
		e.logger.Warn("could not re-send firing alerts to Alertmanager; trying again next interval",
			zap.Int("alerts", len(alerts)), zap.Error(err))
		return
	}
	e.telemetry.AlertwebhookResends.Add(ctx, int64(len(alerts)))
}

// incidentSeverity maps through severity_map.
func (e *alertExporter) severityOf(in *incident) string {
	if v, ok := e.cfg.SeverityMap[in.Severity]; ok {
		return v
	}
	return in.Severity
}

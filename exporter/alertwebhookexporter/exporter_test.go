// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package alertwebhookexporter

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/llmops-otel/otelcol-llmops/exporter/alertwebhookexporter/internal/metadata"
	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// recorder is a webhook that records requests and answers with the codes
// given, then 200.
type recorder struct {
	mu     sync.Mutex
	reqs   []recorded
	codes  []int
	answer string
}

type recorded struct {
	path   string
	header http.Header
	body   []byte
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{path: req.URL.Path, header: req.Header.Clone(), body: body})
	code := http.StatusOK
	if len(r.codes) > 0 {
		code, r.codes = r.codes[0], r.codes[1:]
	}
	r.mu.Unlock()
	w.WriteHeader(code)
	_, _ = io.WriteString(w, r.answer)
}

func (r *recorder) requests() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

type inc struct {
	id, kind, severity, state string
	pod                       string
}

// logsOf builds incident records as rootcause emits them, plus one record
// that is not an incident.
func logsOf(incs ...inc) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "otelcol-llmops")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	lrs.AppendEmpty().Body().SetStr("just a log line")
	for _, in := range incs {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Date(2026, 11, 29, 12, 0, 30, 0, time.UTC)))
		lr.Body().SetStr("GPU memory of vllm pid 31337 grows 96 MiB/min, full in 41m")
		lr.SetTraceID(pcommon.TraceID{0xaa, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
		lr.SetSpanID(pcommon.SpanID{0xbb, 1, 2, 3, 4, 5, 6, 7})
		a := lr.Attributes()
		a.PutStr(spec.IncidentID, in.id)
		a.PutStr(spec.IncidentKind, in.kind)
		a.PutStr(spec.IncidentQuadrant, "saturation")
		a.PutStr(spec.IncidentSeverity, in.severity)
		a.PutStr(spec.IncidentState, in.state)
		a.PutDouble(spec.IncidentScore, 0.8)
		a.PutStr(spec.IncidentStartTime, "2026-11-29T12:00:00Z")
		a.PutStr(spec.IncidentAction, "Drain the instance.")
		a.PutStr(spec.IncidentLayer, "LlamaForCausalLM/LlamaModel/LlamaDecoderLayer_12")
		ev := a.PutEmptySlice(spec.IncidentEvidence).AppendEmpty().SetEmptyMap()
		ev.PutStr("signal", "process.gpu.memory.usage")
		ev.PutDouble("value", 4e10)
		ev.PutDouble("threshold", 80)
		ls := a.PutEmptySlice(spec.IncidentLayerStack).AppendEmpty().SetEmptyMap()
		ls.PutStr("module_path", "LlamaForCausalLM")
		ls.PutInt("bytes", 1<<30)
		a.PutStr(spec.AttrHwID, "GPU-3f2c")
		a.PutInt(spec.AttrProcessPid, 31337)
		if in.pod != "" {
			a.PutStr(spec.AttrK8sPodName, in.pod)
			a.PutStr(spec.AttrK8sNamespaceName, "llm")
		}
		a.PutStr(spec.AttrEngineName, "vllm")
	}
	return ld
}

func newTestExporter(t *testing.T, url string, mutate func(*Config)) *alertExporter {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.ClientConfig.Endpoint = url
	cfg.Node = "node-a"
	cfg.ResendInterval = time.Hour // tests call resend themselves
	cfg.FiringTTL = 90 * time.Minute
	if mutate != nil {
		mutate(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	e, err := newExporter(cfg, exportertest.NewNopSettings(metadata.Type))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.shutdown(context.Background()) })
	return e
}

func TestAlertmanagerFormat(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	e := newTestExporter(t, srv.URL+"/", func(c *Config) {
		c.BearerToken = "s3cret"
		c.TraceURLTemplate = "http://tempo/trace/{trace_id}?span={span_id}"
		c.GeneratorURL = "http://grafana/d/gpu"
		c.SeverityMap = map[string]string{"critical": "page"}
	})
	if err := e.push(context.Background(), logsOf(inc{"id-1", "gpu_memory_leak", "critical", "firing", "vllm-7b-2"},
		inc{"id-2", "xid_error", "warning", "firing", ""})); err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if len(reqs) != 1 || reqs[0].path != "/api/v2/alerts" || reqs[0].header.Get("Authorization") != "Bearer s3cret" {
		t.Fatalf("%d requests, first %+v", len(reqs), reqs)
	}
	var alerts []amAlert
	if err := json.Unmarshal(reqs[0].body, &alerts); err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 2 {
		t.Fatalf("%d alerts", len(alerts))
	}
	a := alerts[0]
	want := map[string]string{"alertname": "gpu_memory_leak", "severity": "page", "quadrant": "saturation", "incident_id": "id-1",
		"hw_id": "GPU-3f2c", "pod": "vllm-7b-2", "namespace": "llm", "engine": "vllm", "node": "node-a"}
	for k, v := range want {
		if a.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, a.Labels[k], v)
		}
	}
	if _, ok := alerts[1].Labels["pod"]; ok {
		t.Error("empty pod label sent")
	}
	if a.StartsAt != "2026-11-29T12:00:00Z" || a.GeneratorURL != "http://grafana/d/gpu" {
		t.Errorf("startsAt %s generatorURL %s", a.StartsAt, a.GeneratorURL)
	}
	end, err := time.Parse(time.RFC3339Nano, a.EndsAt)
	if err != nil || time.Until(end) < 3*time.Hour {
		t.Errorf("firing endsAt %s should be 4 resend intervals ahead", a.EndsAt)
	}
	if !strings.Contains(a.Annotations["summary"], "96 MiB/min") || a.Annotations["trace_url"] != "http://tempo/trace/aa0102030405060708090a0b0c0d0e0f?span=bb01020304050607" ||
		!strings.Contains(a.Annotations["description"], "process.gpu.memory.usage") || !strings.Contains(a.Annotations["description"], "LlamaForCausalLM: 1073741824 bytes") ||
		a.Annotations["action"] != "Drain the instance." || a.Annotations["span_id"] != "bb01020304050607" {
		t.Errorf("annotations %v", a.Annotations)
	}
}

func TestResendKeepsFiringAlertsAliveUntilResolved(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	e := newTestExporter(t, srv.URL, nil)
	clock := time.Now()
	e.now = func() time.Time { return clock }
	ctx := context.Background()
	if err := e.push(ctx, logsOf(inc{"a", "gpu_memory_leak", "warning", "firing", ""}, inc{"b", "kv_cache_saturation", "warning", "firing", ""},
		inc{"c", kindLeakSuspect, "warning", "firing", ""})); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Minute)
	e.resend()
	var resent []amAlert
	_ = json.Unmarshal(rec.requests()[1].body, &resent)
	if len(resent) != 2 {
		t.Fatalf("re-sent %d alerts, want the two with a lifecycle (not the leak suspect)", len(resent))
	}
	if end, _ := time.Parse(time.RFC3339Nano, resent[0].EndsAt); !end.Equal(clock.Add(4 * time.Hour).UTC()) {
		t.Fatalf("endsAt %s not moved on", resent[0].EndsAt)
	}
	if err := e.push(ctx, logsOf(inc{"a", "gpu_memory_leak", "warning", "resolved", ""})); err != nil {
		t.Fatal(err)
	}
	var res []amAlert
	_ = json.Unmarshal(rec.requests()[2].body, &res)
	if res[0].EndsAt != "2026-11-29T12:00:30Z" || res[0].Labels["incident_id"] != "a" {
		t.Fatalf("resolution %+v", res[0])
	}
	e.resend()
	var after []amAlert
	_ = json.Unmarshal(rec.requests()[3].body, &after)
	if len(after) != 1 || after[0].Labels["incident_id"] != "b" {
		t.Fatalf("after resolution re-sent %+v", after)
	}
	// Not refreshed for firing_ttl: let go.
	clock = clock.Add(2 * time.Hour)
	n := len(rec.requests())
	e.resend()
	if len(rec.requests()) != n || len(e.firing) != 0 {
		t.Fatal("an alert nobody refreshed for firing_ttl is still re-sent")
	}
}

func TestJSONWebhookSignedOnePerIncident(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	e := newTestExporter(t, srv.URL+"/hook", func(c *Config) {
		c.Format = FormatJSON
		c.HMACSecret = "k3y"
		c.MinSeverity = SeverityCritical
	})
	err := e.push(context.Background(), logsOf(inc{"id-1", "gpu_memory_leak", "critical", "firing", ""},
		inc{"id-2", "queue_buildup", "warning", "firing", ""}, inc{"id-3", "xid_error", "critical", "firing", ""},
		inc{"id-4", "queue_buildup", "warning", "resolved", ""}))
	if err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests: critical ones and every resolution expected", len(reqs))
	}
	for i, r := range reqs {
		mac := hmac.New(sha256.New, []byte("k3y"))
		mac.Write(r.body)
		if got := r.header.Get("X-Llmops-Signature-256"); got != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
			t.Fatalf("request %d: signature %q does not verify", i, got)
		}
		var doc map[string]any
		if err := json.Unmarshal(r.body, &doc); err != nil {
			t.Fatal(err)
		}
		attrs := doc["attributes"].(map[string]any)
		if doc["id"] != attrs["incident.id"] || doc["kind"] == "" || doc["trace_id"] != "aa0102030405060708090a0b0c0d0e0f" || doc["evidence"] == nil {
			t.Fatalf("document %v", doc)
		}
	}
}

func TestSlackFormat(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	e := newTestExporter(t, srv.URL, func(c *Config) { c.Format = FormatSlack })
	if err := e.push(context.Background(), logsOf(inc{"id-1", "gpu_memory_leak", "critical", "firing", ""})); err != nil {
		t.Fatal(err)
	}
	var msg map[string]string
	_ = json.Unmarshal(rec.requests()[0].body, &msg)
	if !strings.HasPrefix(msg["text"], ":rotating_light: *[FIRING CRITICAL] gpu_memory_leak* on node-a\n") || !strings.Contains(msg["text"], "> Drain the instance.") {
		t.Fatalf("%q", msg["text"])
	}
}

func TestActionsPerKindAndSeverity(t *testing.T) {
	main, drain := &recorder{}, &recorder{}
	ms, ds := httptest.NewServer(main), httptest.NewServer(drain)
	defer ms.Close()
	defer ds.Close()
	e := newTestExporter(t, ms.URL, func(c *Config) {
		a := ActionConfig{MinSeverity: SeverityCritical}
		a.ClientConfig.Endpoint = ds.URL + "/drain"
		c.Actions = map[string]ActionConfig{"gpu_memory_leak": a}
	})
	if err := e.push(context.Background(), logsOf(inc{"id-1", "gpu_memory_leak", "critical", "firing", ""},
		inc{"id-2", "gpu_memory_leak", "warning", "firing", ""}, inc{"id-3", "xid_error", "critical", "firing", ""})); err != nil {
		t.Fatal(err)
	}
	reqs := drain.requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].body), `"id":"id-1"`) {
		t.Fatalf("drain got %d requests", len(reqs))
	}
}

func TestClientErrorIsPermanentServerErrorRetried(t *testing.T) {
	rec := &recorder{codes: []int{http.StatusBadRequest}, answer: `{"code":400,"message":"bad alert"}`}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	e := newTestExporter(t, srv.URL, nil)
	err := e.push(context.Background(), logsOf(inc{"id-1", "xid_error", "critical", "firing", ""}))
	if !consumererror.IsPermanent(err) || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "bad alert") {
		t.Fatalf("want a permanent error naming the response, got %v", err)
	}
	rec.codes = []int{http.StatusServiceUnavailable}
	err = e.push(context.Background(), logsOf(inc{"id-1", "xid_error", "critical", "firing", ""}))
	if err == nil || consumererror.IsPermanent(err) {
		t.Fatalf("5xx must be retryable, got %v", err)
	}
}

// TestRetriesThroughExporterHelper: the built exporter retries 5xx and
// connection errors with backoff until delivered; a 4xx is tried once.
func TestRetriesThroughExporterHelper(t *testing.T) {
	rec := &recorder{codes: []int{http.StatusBadGateway, http.StatusServiceUnavailable}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.ClientConfig.Endpoint = srv.URL
	cfg.Format = FormatJSON
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.RetryConfig.InitialInterval = 10 * time.Millisecond
	cfg.RetryConfig.MaxInterval = 20 * time.Millisecond
	exp, err := f.CreateLogs(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = exp.Shutdown(context.Background()) }()
	if err := exp.ConsumeLogs(context.Background(), logsOf(inc{"id-1", "xid_error", "critical", "firing", ""})); err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if len(reqs) != 3 || string(reqs[0].body) != string(reqs[2].body) {
		t.Fatalf("%d attempts, want 2 failures then the same document delivered", len(reqs))
	}
	rec.codes = []int{http.StatusUnprocessableEntity}
	if err := exp.ConsumeLogs(context.Background(), logsOf(inc{"id-2", "xid_error", "critical", "firing", ""})); err == nil {
		t.Fatal("4xx accepted")
	}
	if n := len(rec.requests()); n != 4 {
		t.Fatalf("a 4xx was retried: %d requests", n)
	}
}

func TestConfigValidation(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Format = "pagerduty"
	cfg.MinSeverity = "high"
	cfg.HMACSecret = "x"
	cfg.SignatureHeader = ""
	cfg.TraceURLTemplate = "tempo/{trace_id}"
	cfg.Actions = map[string]ActionConfig{"gpu_memory_leak": {Format: "xml", States: []string{"firing", "pending"}}}
	err := cfg.Validate()
	for _, want := range []string{"endpoint is required", `format must be "alertmanager", "json" or "slack", got "pagerduty"`,
		`min_severity must be info, warning or critical, got "high"`, "signature_header must be set when hmac_secret is",
		`trace_url_template "tempo/{trace_id}" is not a URL`, "actions[gpu_memory_leak].endpoint is required",
		`actions[gpu_memory_leak].format must be "json" or "slack", got "xml"`, `actions[gpu_memory_leak].states: "pending" is not firing or resolved`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// An action hook keyed by a response (incident.action.id) receives every
// incident that calls for it, whatever its kind, with the action id and
// the instance in the payload; Alertmanager gets them as labels.
func TestActionsKeyedByActionID(t *testing.T) {
	main, breaker := &recorder{}, &recorder{}
	ms, bs := httptest.NewServer(main), httptest.NewServer(breaker)
	defer ms.Close()
	defer bs.Close()
	e := newTestExporter(t, ms.URL, func(c *Config) {
		a := ActionConfig{}
		a.ClientConfig.Endpoint = bs.URL + "/break"
		c.Actions = map[string]ActionConfig{spec.ActionCircuitBreak: a}
	})
	ld := logsOf(inc{"id-1", spec.IncidentKindHallucinationRate, "critical", "firing", ""},
		inc{"id-2", "my_own_rule", "critical", "firing", ""}, inc{"id-3", spec.IncidentKindPromptInjection, "critical", "firing", ""})
	lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i, id := range []string{spec.ActionCircuitBreak, spec.ActionCircuitBreak, spec.ActionBlockSession} {
		a := lrs.At(i + 1).Attributes() // record 0 is not an incident
		a.PutStr(spec.IncidentActionID, id)
		a.PutStr(spec.AttrServiceInstanceID, "support-bot-7f9c")
	}
	if err := e.push(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	reqs := breaker.requests()
	if len(reqs) != 2 {
		t.Fatalf("the circuit breaker got %d requests, want the two incidents that call for it", len(reqs))
	}
	for _, r := range reqs {
		var doc map[string]any
		if err := json.Unmarshal(r.body, &doc); err != nil {
			t.Fatal(err)
		}
		if doc["action_id"] != spec.ActionCircuitBreak || doc["attributes"].(map[string]any)[spec.AttrServiceInstanceID] != "support-bot-7f9c" {
			t.Errorf("payload lacks the action id or the instance: %s", r.body)
		}
	}
	var alerts []amAlert
	if err := json.Unmarshal(main.requests()[0].body, &alerts); err != nil {
		t.Fatal(err)
	}
	if alerts[0].Labels["action_id"] != spec.ActionCircuitBreak || alerts[0].Labels["instance"] != "support-bot-7f9c" {
		t.Errorf("Alertmanager labels %v", alerts[0].Labels)
	}
}

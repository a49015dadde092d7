// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// The alertwebhook exporter end to end: incidents (log records following the
// incident schema, as rootcause emits them) enter the built binary over OTLP
// gRPC and leave through alertwebhook, either into a real Alertmanager
// (tests/harness.StartAlertmanager, whose webhook receiver shows what
// Alertmanager made of them) or into a test HTTP server for the json format.

const (
	// awResend is resend_interval of the Alertmanager configurations.
	awResend = 5 * time.Second
	// awNode is the node label the exporter is configured with.
	awNode = "node-a"
	// awTraceURL is trace_url_template; awIncident.fillIDs fills it as the
	// exporter must.
	awTraceURL = "http://tempo.example/trace/{trace_id}?span={span_id}"
	// awGeneratorURL is generator_url, filled like the trace URL.
	awGeneratorURL = "http://grafana.example/d/llmops-gpu?trace={trace_id}"
	// awScope is the instrumentation scope of rootcause's incident records.
	awScope = "github.com/llmops-otel/otelcol-llmops/connector/rootcauseconnector"
)

// awEvidence is one entry of incident.evidence.
type awEvidence struct {
	signal                  string
	value, baseline, thresh float64
	unit                    string
}

// awLayer is one entry of incident.layer_stack.
type awLayer struct {
	path  string
	bytes int64
}

// awIncident is one incident log record as the test sends it.
type awIncident struct {
	id, kind, quadrant, severity, state string
	score                               float64
	start                               time.Time // incident.start_time
	at                                  time.Time // the record's timestamp
	body, action, subject               string
	layer                               string
	layers                              []awLayer
	evidence                            []awEvidence
	hwID                                string
	pid                                 int64
	pod, namespace, model, engine       string
}

// traceID and spanID are derived from the id, so a re-sent incident points
// at the same span and every test can compute what the exporter must put in
// trace_id, span_id, trace_url and generatorURL.
func (in awIncident) traceID() pcommon.TraceID {
	sum := sha256.Sum256([]byte("trace/" + in.id))
	return pcommon.TraceID(sum[:16])
}

func (in awIncident) spanID() pcommon.SpanID {
	sum := sha256.Sum256([]byte("span/" + in.id))
	return pcommon.SpanID(sum[:8])
}

func (in awIncident) fillIDs(template string) string {
	return strings.NewReplacer("{trace_id}", in.traceID().String(), "{span_id}", in.spanID().String()).Replace(template)
}

// resolved is the record that ends in at: the same subject and labels, state
// resolved, severity INFO and a resolution body, as rootcause writes it.
func (in awIncident) resolved(at time.Time) awIncident {
	out := in
	out.state = "resolved"
	out.at = at
	out.body = fmt.Sprintf("resolved after %s: %s", at.Sub(in.start).Round(time.Second), in.body)
	return out
}

func (in awIncident) fill(lr plog.LogRecord) {
	at := in.at
	if at.IsZero() {
		at = time.Now()
	}
	lr.SetTimestamp(pcommon.NewTimestampFromTime(at))
	lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(at))
	switch {
	case in.state == "resolved":
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
	case in.severity == "critical":
		lr.SetSeverityNumber(plog.SeverityNumberError)
		lr.SetSeverityText("ERROR")
	default:
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
		lr.SetSeverityText("WARN")
	}
	lr.Body().SetStr(in.body)
	lr.SetTraceID(in.traceID())
	lr.SetSpanID(in.spanID())
	a := lr.Attributes()
	a.PutStr(spec.IncidentID, in.id)
	a.PutStr(spec.IncidentKind, in.kind)
	a.PutStr(spec.IncidentQuadrant, in.quadrant)
	a.PutStr(spec.IncidentSeverity, in.severity)
	a.PutStr(spec.IncidentState, in.state)
	a.PutDouble(spec.IncidentScore, in.score)
	a.PutStr(spec.IncidentStartTime, in.start.UTC().Format(time.RFC3339Nano))
	a.PutStr(spec.IncidentAction, in.action)
	a.PutStr(spec.IncidentSubject, in.subject)
	ev := a.PutEmptySlice(spec.IncidentEvidence)
	for _, e := range in.evidence {
		m := ev.AppendEmpty().SetEmptyMap()
		m.PutStr("signal", e.signal)
		m.PutDouble("value", e.value)
		m.PutDouble("baseline", e.baseline)
		m.PutDouble("threshold", e.thresh)
		m.PutStr("unit", e.unit)
	}
	a.PutStr(spec.IncidentLayer, in.layer)
	ls := a.PutEmptySlice(spec.IncidentLayerStack)
	for _, l := range in.layers {
		m := ls.AppendEmpty().SetEmptyMap()
		m.PutStr("module_path", l.path)
		m.PutInt("bytes", l.bytes)
	}
	for k, v := range map[string]string{
		spec.AttrHwID:              in.hwID,
		spec.AttrK8sPodName:        in.pod,
		spec.AttrK8sNamespaceName:  in.namespace,
		spec.AttrGenAIRequestModel: in.model,
		spec.AttrEngineName:        in.engine,
	} {
		if v != "" {
			a.PutStr(k, v)
		}
	}
	if in.pid != 0 {
		a.PutInt(spec.AttrProcessPid, in.pid)
	}
}

// awSend exports the incidents as one OTLP request to the collector's gRPC
// receiver. Success means the collector accepted them (with a sending queue:
// queued them).
func awSend(t *testing.T, endpoint string, incs ...awIncident) {
	t.Helper()
	logs := plog.NewLogs()
	rl := logs.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "otelcol-llmops")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(awScope)
	for _, in := range incs {
		in.fill(sl.LogRecords().AppendEmpty())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := plogotlp.NewGRPCClient(dial(t, endpoint)).Export(ctx, plogotlp.NewExportRequestFromLogs(logs)); err != nil {
		t.Fatalf("exporting %d incident(s): %v", len(incs), err)
	}
}

// awLeak is a GPU memory leak incident (critical, with a layer stack).
func awLeak(id, gpu string, pid int64, start time.Time) awIncident {
	return awIncident{
		id: id, kind: "gpu_memory_leak", quadrant: "saturation", severity: "critical", state: "firing",
		score: 0.91, start: start,
		body:    fmt.Sprintf("vllm (pid %d) on %s leaks 212 MiB/min; 9.8 GiB outstanding in model.layers.17.mlp", pid, gpu),
		action:  "restart the engine pod before the GPU runs out of memory; capture a memory snapshot first",
		subject: fmt.Sprintf("process %d on %s (pod inference/vllm-0)", pid, gpu),
		layer:   "model.layers.17.mlp",
		layers:  []awLayer{{"model", 10 << 30}, {"model.layers.17", 9 << 30}, {"model.layers.17.mlp", 8 << 30}},
		evidence: []awEvidence{
			{"process.gpu.memory.usage slope", 212, 0, 80, "MiBy/min"},
			{"process.gpu.memory.usage", 71.2e9, 60.1e9, 0, "By"},
		},
		hwID: gpu, pid: pid, pod: "vllm-0", namespace: "inference",
		model: "meta-llama/Llama-3.1-8B-Instruct", engine: "vllm",
	}
}

// awKV is a KV-cache saturation incident (warning, engine subject).
func awKV(id, gpu string, start time.Time) awIncident {
	return awIncident{
		id: id, kind: "kv_cache_saturation", quadrant: "saturation", severity: "warning", state: "firing",
		score: 0.64, start: start,
		body:    "vllm serving mistralai/Mistral-7B-Instruct-v0.3 has its KV cache 97% full for 2m; 14 requests wait",
		action:  "raise gpu_memory_utilization or lower max_num_seqs; add a replica",
		subject: "engine vllm (mistralai/Mistral-7B-Instruct-v0.3) on " + gpu,
		layer:   "model.layers.3.self_attn",
		layers:  []awLayer{{"model", 6 << 30}, {"model.layers.3.self_attn", 2 << 30}},
		evidence: []awEvidence{
			{"llm.engine.kv_cache.utilization", 0.97, 0.41, 0.9, "1"},
			{"llm.engine.requests.waiting", 14, 0, 10, "{request}"},
		},
		hwID: gpu, pid: 41002, pod: "vllm-1", namespace: "inference",
		model: "mistralai/Mistral-7B-Instruct-v0.3", engine: "vllm",
	}
}

// awStart is an incident start with sub-second precision, so comparing
// startsAt to the second checks the exporter parsed incident.start_time
// rather than rounded or replaced it.
func awStart(ago time.Duration) time.Time {
	return time.Now().Add(-ago).Add(-123456789 * time.Nanosecond).UTC()
}

// awAMConfig is the collector of the Alertmanager tests: OTLP gRPC in,
// alertwebhook out to Alertmanager, its queue persisted in queueDir.
func awAMConfig(grpcPort, healthPort int, amURL, queueDir string) string {
	return fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
exporters:
  alertwebhook:
    endpoint: %s
    format: alertmanager
    resend_interval: %s
    node: %s
    trace_url_template: %q
    generator_url: %q
    timeout: 2s
    # max_elapsed_time 0: retry until Alertmanager is back.
    retry_on_failure: {enabled: true, initial_interval: 200ms, max_interval: 1s, max_elapsed_time: 0s}
    sending_queue: {enabled: true, storage: file_storage, queue_size: 1000}
extensions:
  health_check:
    endpoint: 127.0.0.1:%d
  file_storage:
    directory: %s
service:
  extensions: [health_check, file_storage]
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [alertwebhook]
`, grpcPort, amURL, awResend, awNode, awTraceURL, awGeneratorURL, healthPort, queueDir)
}

// awJSONConfig is the collector of the json-format tests, posting to url
// with extra exporter settings (indented for the exporter's body).
func awJSONConfig(grpcPort, healthPort int, url, extra string) string {
	return fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
exporters:
  alertwebhook:
    endpoint: %s
    format: json
    node: %s
    timeout: 2s
    retry_on_failure: {enabled: true, initial_interval: 200ms, max_interval: 1s, max_elapsed_time: 0s}
    sending_queue: {enabled: true}
%s
extensions:
  health_check:
    endpoint: 127.0.0.1:%d
service:
  extensions: [health_check]
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [alertwebhook]
`, grpcPort, url, awNode, strings.TrimRight(extra, "\n"), healthPort)
}

// awCollector starts the collector under test and returns its OTLP gRPC
// endpoint.
func awCollector(t *testing.T, name, cfg string, healthPort, grpcPort int) (*harness.Collector, string) {
	t.Helper()
	c := harness.StartCollector(t, harness.Options{Name: name, Config: cfg, HealthPort: healthPort})
	return c, fmt.Sprintf("127.0.0.1:%d", grpcPort)
}

// awByID indexes Alertmanager's alerts by their incident_id label.
func awByID(alerts []harness.AMAlert) map[string][]harness.AMAlert {
	out := map[string][]harness.AMAlert{}
	for _, a := range alerts {
		out[a.Labels["incident_id"]] = append(out[a.Labels["incident_id"]], a)
	}
	return out
}

// awNotified returns, per incident id, the statuses ("firing", "resolved")
// the webhook has received for it, in arrival order.
func awNotified(am *harness.Alertmanager) map[string][]string {
	out := map[string][]string{}
	for _, n := range am.Notifications() {
		for _, a := range n.Alerts {
			id := a.Labels["incident_id"]
			out[id] = append(out[id], a.Status)
		}
	}
	return out
}

func awDescribe(alerts []harness.AMAlert) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d alert(s) in Alertmanager:", len(alerts))
	for _, a := range alerts {
		fmt.Fprintf(&b, "\n  %v state=%s startsAt=%s endsAt=%s", a.Labels, a.Status.State,
			a.StartsAt.Format(time.RFC3339Nano), a.EndsAt.Format(time.RFC3339Nano))
	}
	return b.String()
}

// awHolds fails the test as soon as bad reports a problem during d (polling
// every 100ms). An absence, or a state that must last, can only be observed
// over a window; d is that window, not a wait for something to happen.
func awHolds(t *testing.T, d time.Duration, bad func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if msg := bad(); msg != "" {
			t.Fatal(msg)
		}
		if time.Now().After(deadline) {
			return
		}
		<-tick.C
	}
}

// awWaitAlerts waits until Alertmanager holds an alert for each id and
// returns them by id.
func awWaitAlerts(t *testing.T, am *harness.Alertmanager, timeout time.Duration, ids ...string) map[string][]harness.AMAlert {
	t.Helper()
	var by map[string][]harness.AMAlert
	harness.Eventually(t, timeout, func() (bool, string) {
		alerts := am.Alerts(t)
		by = awByID(alerts)
		for _, id := range ids {
			if len(by[id]) == 0 {
				return false, fmt.Sprintf("no alert for %s yet; %s", id, awDescribe(alerts))
			}
		}
		return true, ""
	})
	return by
}

// awWaitNotified waits until the webhook has received an alert of status
// for each id.
func awWaitNotified(t *testing.T, am *harness.Alertmanager, status string, ids ...string) {
	t.Helper()
	harness.Eventually(t, 15*time.Second, func() (bool, string) {
		got := awNotified(am)
		for _, id := range ids {
			if !slices.Contains(got[id], status) {
				return false, fmt.Sprintf("webhook has no %s notification for %s; it has %v", status, id, got)
			}
		}
		return true, ""
	})
}

// awCheckAlert checks one firing alert against the exporter's contract.
func awCheckAlert(t *testing.T, a harness.AMAlert, in awIncident) {
	t.Helper()
	wantLabels := map[string]string{
		"alertname":   in.kind,
		"severity":    in.severity,
		"quadrant":    in.quadrant,
		"incident_id": in.id,
		"hw_id":       in.hwID,
		"pod":         in.pod,
		"namespace":   in.namespace,
		"model":       in.model,
		"engine":      in.engine,
		"node":        awNode,
	}
	for k, want := range wantLabels {
		if got := a.Labels[k]; got != want {
			t.Errorf("%s: label %s = %q, want %q (labels %v)", in.id, k, got, want, a.Labels)
		}
	}
	wantAnn := map[string]string{
		"summary":   in.body,
		"action":    in.action,
		"layer":     in.layer,
		"trace_id":  in.traceID().String(),
		"span_id":   in.spanID().String(),
		"trace_url": in.fillIDs(awTraceURL),
	}
	for k, want := range wantAnn {
		if got := a.Annotations[k]; got != want {
			t.Errorf("%s: annotation %s = %q, want %q", in.id, k, got, want)
		}
	}
	if want := in.fillIDs(awGeneratorURL); a.GeneratorURL != want {
		t.Errorf("%s: generatorURL %q, want %q", in.id, a.GeneratorURL, want)
	}
	// The description is free text for a person: it must name every
	// evidence signal and every layer of the stack, whatever the wording.
	desc := a.Annotations["description"]
	for _, e := range in.evidence {
		if !strings.Contains(desc, e.signal) {
			t.Errorf("%s: description lacks evidence signal %q:\n%s", in.id, e.signal, desc)
		}
	}
	for _, l := range in.layers {
		if !strings.Contains(desc, l.path) {
			t.Errorf("%s: description lacks layer %q:\n%s", in.id, l.path, desc)
		}
	}
	if d := a.StartsAt.Sub(in.start).Abs(); d >= time.Second {
		t.Errorf("%s: startsAt %s, incident.start_time %s (%s apart)", in.id,
			a.StartsAt.Format(time.RFC3339Nano), in.start.Format(time.RFC3339Nano), d)
	}
	// Alertmanager stamps updatedAt when it receives the alert, and the
	// exporter sets endsAt to its send time + 4×resend_interval.
	if d := a.EndsAt.Sub(a.UpdatedAt.Add(4 * awResend)).Abs(); d > 2*time.Second {
		t.Errorf("%s: endsAt %s is not updatedAt %s + 4×%s", in.id,
			a.EndsAt.Format(time.RFC3339Nano), a.UpdatedAt.Format(time.RFC3339Nano), awResend)
	}
	if a.Status.State != "active" {
		t.Errorf("%s: state %q, want active", in.id, a.Status.State)
	}
}

// TestAlertwebhookToAlertmanager: two firing incidents become two alerts in
// a real Alertmanager with the contract's labels and annotations and are
// notified as firing; resolving one resolves its alert and notifies it as
// resolved, while the other, still firing, is kept alive by re-sends.
func TestAlertwebhookToAlertmanager(t *testing.T) {
	am := harness.StartAlertmanager(t, harness.AlertmanagerOptions{})
	grpcPort, healthPort := harness.FreePort(t), harness.FreePort(t)
	_, otlp := awCollector(t, "alertwebhook", awAMConfig(grpcPort, healthPort, am.URL, t.TempDir()), healthPort, grpcPort)

	leak := awLeak("inc-leak-0001", "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000a0000", 41001, awStart(3*time.Minute))
	kv := awKV("inc-kv-0002", "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000a0001", awStart(2*time.Minute))
	awSend(t, otlp, leak, kv)
	sentKV := time.Now()

	by := awWaitAlerts(t, am, 15*time.Second, leak.id, kv.id)
	for _, in := range []awIncident{leak, kv} {
		if n := len(by[in.id]); n != 1 {
			t.Errorf("%s: %d alerts, want 1:\n%s", in.id, n, awDescribe(am.Alerts(t)))
			continue
		}
		awCheckAlert(t, by[in.id][0], in)
	}
	if len(by) != 2 {
		t.Errorf("want exactly the 2 incidents' alerts; %s", awDescribe(am.Alerts(t)))
	}
	awWaitNotified(t, am, "firing", leak.id, kv.id)
	firstEnd := by[kv.id][0].EndsAt

	// Resolve the leak: its alert must end, and Alertmanager must tell the
	// webhook so.
	resolvedAt := time.Now().UTC()
	awSend(t, otlp, leak.resolved(resolvedAt))
	harness.Eventually(t, 15*time.Second, func() (bool, string) {
		alerts := am.Alerts(t)
		for _, a := range awByID(alerts)[leak.id] {
			if a.Status.State == "active" && a.EndsAt.After(time.Now()) {
				return false, "the leak alert is still active; " + awDescribe(alerts)
			}
		}
		return true, ""
	})
	awWaitNotified(t, am, "resolved", leak.id)
	for _, n := range am.Notifications() {
		for _, a := range n.Alerts {
			if a.Labels["incident_id"] != leak.id || a.Status != "resolved" {
				continue
			}
			// endsAt of a resolution is the resolved record's time.
			if d := a.EndsAt.Sub(resolvedAt).Abs(); d >= time.Second {
				t.Errorf("resolved notification endsAt %s, the resolved record's time %s", a.EndsAt.Format(time.RFC3339Nano), resolvedAt.Format(time.RFC3339Nano))
			}
			if a.Labels["severity"] != leak.severity || a.Labels["alertname"] != leak.kind {
				t.Errorf("resolved notification has other labels than the firing one: %v", a.Labels)
			}
		}
	}

	// The KV-cache incident still fires: for more than 3 resend intervals
	// it must stay active and never be notified resolved, and its endsAt
	// must move forward with each re-send.
	lastEnd := firstEnd
	awHolds(t, time.Until(sentKV.Add(3*awResend+time.Second)), func() string {
		alerts := am.Alerts(t)
		kvs := awByID(alerts)[kv.id]
		if len(kvs) != 1 || kvs[0].Status.State != "active" {
			return "the still-firing KV-cache alert is not exactly one active alert; " + awDescribe(alerts)
		}
		if slices.Contains(awNotified(am)[kv.id], "resolved") {
			return "the still-firing KV-cache alert was notified as resolved"
		}
		lastEnd = kvs[0].EndsAt
		return ""
	})
	// In the 3+ intervals since it was sent, at least two re-sends each
	// pushed endsAt one interval further.
	moved := lastEnd.Sub(firstEnd)
	t.Logf("the firing alert's endsAt moved %s in %s", moved, time.Since(sentKV).Round(time.Millisecond))
	if moved < 2*awResend-time.Second {
		t.Errorf("the firing KV-cache alert's endsAt moved %s in %s (from %s to %s): it is not re-sent every %s",
			moved, time.Since(sentKV).Round(time.Second), firstEnd.Format(time.RFC3339Nano), lastEnd.Format(time.RFC3339Nano), awResend)
	}
	if st := awNotified(am)[kv.id]; !slices.Equal(st, []string{"firing"}) {
		t.Errorf("the KV-cache alert was notified %v, want exactly one firing notification (re-sends are not new notifications)", st)
	}
}

// TestAlertwebhookSurvivesAlertmanagerOutage: Alertmanager is down for 30s,
// during which incidents arrive and the collector itself restarts; the
// persistent sending queue must deliver them once Alertmanager is back,
// each as exactly one alert.
func TestAlertwebhookSurvivesAlertmanagerOutage(t *testing.T) {
	const outage = 30 * time.Second
	am := harness.StartAlertmanager(t, harness.AlertmanagerOptions{StorageDir: t.TempDir()})
	grpcPort, healthPort, queueDir := harness.FreePort(t), harness.FreePort(t), t.TempDir()
	cfg := awAMConfig(grpcPort, healthPort, am.URL, queueDir)
	first, otlp := awCollector(t, "alertwebhook-1", cfg, healthPort, grpcPort)

	gpu := func(i int) string { return fmt.Sprintf("GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000f000%d", i) }
	before := []awIncident{
		awLeak("inc-outage-1", gpu(1), 42001, awStart(5*time.Minute)),
		awKV("inc-outage-2", gpu(2), awStart(4*time.Minute)),
	}
	during := []awIncident{
		awLeak("inc-outage-3", gpu(3), 42003, awStart(time.Minute)),
		awKV("inc-outage-4", gpu(4), awStart(50*time.Second)),
		awLeak("inc-outage-5", gpu(5), 42005, awStart(40*time.Second)),
	}
	all := append(slices.Clone(before), during...)

	awSend(t, otlp, before...)
	awWaitAlerts(t, am, 15*time.Second, before[0].id, before[1].id)
	awWaitNotified(t, am, "firing", before[0].id, before[1].id)

	am.Stop()
	down := time.Now()
	// Separate requests, as separate rootcause evaluations would send them.
	for _, in := range during {
		awSend(t, otlp, in)
	}
	// The queue holds them now; a graceful stop must leave them on disk
	// and the next collector must pick them up.
	stopStart := time.Now()
	first.Stop(t)
	t.Logf("first collector stopped in %s", time.Since(stopStart).Round(time.Millisecond))
	second, otlp := awCollector(t, "alertwebhook-2", cfg, healthPort, grpcPort)

	// The outage's length is what the test is about (the issue asks for
	// 30s), not a condition to wait for; the collector must live through it.
	select {
	case <-second.Exited():
		t.Fatal("the restarted collector exited while Alertmanager was down")
	case <-time.After(time.Until(down.Add(outage))):
	}
	am.Restart()
	back := time.Now()
	t.Logf("Alertmanager was down for %s", back.Sub(down).Round(time.Millisecond))
	// A restarted collector has forgotten which incidents fire, so the ones
	// from before the outage come again as rootcause's re-notification
	// would send them: same ids, same labels.
	awSend(t, otlp, before...)

	ids := make([]string, len(all))
	for i, in := range all {
		ids[i] = in.id
	}
	by := awWaitAlerts(t, am, 20*time.Second, ids...)
	t.Logf("all %d incidents in Alertmanager %s after it came back", len(all), time.Since(back).Round(time.Millisecond))
	for _, in := range all {
		if len(by[in.id]) == 1 && by[in.id][0].Annotations["summary"] != in.body {
			t.Errorf("%s: summary %q, want %q", in.id, by[in.id][0].Annotations["summary"], in.body)
		}
	}
	awWaitNotified(t, am, "firing", ids...)

	// Exactly once each, and nothing else, also across the re-sends of the
	// next resend interval (a re-send with other labels would be a second
	// alert).
	awHolds(t, awResend+time.Second, func() string {
		alerts := am.Alerts(t)
		got := awByID(alerts)
		for _, id := range ids {
			if len(got[id]) != 1 {
				return fmt.Sprintf("%s: %d alerts, want 1; %s", id, len(got[id]), awDescribe(alerts))
			}
		}
		if len(got) != len(ids) {
			return "alerts for incidents that were never sent; " + awDescribe(alerts)
		}
		return ""
	})
}

// awServer is a webhook endpoint recording every request; answer decides
// the response.
type awServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []awRequest
}

type awRequest struct {
	header http.Header
	body   []byte
}

func startAWServer(t *testing.T, answer func(w http.ResponseWriter, body []byte)) *awServer {
	s := &awServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.requests = append(s.requests, awRequest{header: r.Header.Clone(), body: body})
		s.mu.Unlock()
		answer(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *awServer) got() []awRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// TestAlertwebhookClientErrorIsNotRetried: a 4xx answer is permanent. The
// collector logs it once, with the status and the start of the body, and
// does not send that batch again (retries are for 5xx and connection
// errors).
func TestAlertwebhookClientErrorIsNotRetried(t *testing.T) {
	const reason = "rejected by e2e: unknown routing key for gpu_memory_leak"
	srv := startAWServer(t, func(w http.ResponseWriter, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"status":"error","error":%q}`, reason)
	})
	grpcPort, healthPort := harness.FreePort(t), harness.FreePort(t)
	c, otlp := awCollector(t, "alertwebhook", awJSONConfig(grpcPort, healthPort, srv.URL, ""), healthPort, grpcPort)

	awSend(t, otlp, awLeak("inc-4xx-1", "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000e0000", 43001, awStart(time.Minute)))
	errorLines := func() []string {
		var out []string
		for _, line := range strings.Split(c.Log(), "\n") {
			if strings.Contains(line, "\terror\t") && strings.Contains(line, "unknown routing key") {
				out = append(out, line)
			}
		}
		return out
	}
	harness.Eventually(t, 15*time.Second, func() (bool, string) {
		return len(errorLines()) > 0, fmt.Sprintf("no error naming the server's answer in the log yet; the server had %d request(s)", len(srv.got()))
	})
	line := errorLines()[0]
	t.Logf("the rejection as logged: %s", line)
	if !strings.Contains(line, "400") {
		t.Errorf("the error does not name the status 400: %s", line)
	}
	// Retries would come after 200ms, 400ms, 800ms, 1s…: 3s shows several.
	awHolds(t, 3*time.Second, func() string {
		if n := len(srv.got()); n != 1 {
			return fmt.Sprintf("the server was called %d times for one incident answered 400; a 4xx must not be retried", n)
		}
		if n := len(errorLines()); n != 1 {
			return fmt.Sprintf("%d error lines for one rejected request, want 1:\n%s", n, strings.Join(errorLines(), "\n"))
		}
		return ""
	})
}

// TestAlertwebhookJSONSigned: format json posts one document per incident,
// signed with HMAC-SHA256 over the exact body.
func TestAlertwebhookJSONSigned(t *testing.T) {
	const (
		secret = "e2e-webhook-secret-7f3a"
		header = "X-LLMOps-Signature"
	)
	srv := startAWServer(t, func(w http.ResponseWriter, _ []byte) { w.WriteHeader(http.StatusNoContent) })
	grpcPort, healthPort := harness.FreePort(t), harness.FreePort(t)
	extra := fmt.Sprintf("    hmac_secret: %q\n    signature_header: %s\n", secret, header)
	_, otlp := awCollector(t, "alertwebhook", awJSONConfig(grpcPort, healthPort, srv.URL, extra), healthPort, grpcPort)

	incs := []awIncident{
		awLeak("inc-json-1", "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000c0000", 44001, awStart(time.Minute)),
		awKV("inc-json-2", "GPU-7c1e4a2b-5d3f-4e6a-9b8c-0000000c0001", awStart(30*time.Second)),
	}
	awSend(t, otlp, incs...)
	harness.Eventually(t, 15*time.Second, func() (bool, string) {
		n := len(srv.got())
		return n >= len(incs), fmt.Sprintf("%d POST(s), want %d", n, len(incs))
	})

	seen := map[string]int{}
	for i, r := range srv.got() {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(r.body)
		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		if got := r.header.Get(header); !hmac.Equal([]byte(got), []byte(want)) {
			t.Errorf("POST %d: %s = %q, want %q (HMAC-SHA256 of the body)", i, header, got, want)
		}
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("POST %d: Content-Type %q, want application/json", i, ct)
		}
		// The document is the incident in full: its fields at the top
		// level, every record attribute under "attributes".
		var doc struct {
			ID         string         `json:"id"`
			Kind       string         `json:"kind"`
			Severity   string         `json:"severity"`
			State      string         `json:"state"`
			StartTime  string         `json:"start_time"`
			Summary    string         `json:"summary"`
			Node       string         `json:"node"`
			TraceID    string         `json:"trace_id"`
			Attributes map[string]any `json:"attributes"`
		}
		if err := json.Unmarshal(r.body, &doc); err != nil {
			t.Errorf("POST %d: body is not the incident document: %v\n%s", i, err, r.body)
			continue
		}
		seen[doc.ID]++
		var in awIncident
		for _, x := range incs {
			if x.id == doc.ID {
				in = x
			}
		}
		if in.id == "" {
			t.Errorf("POST %d: id %q was never sent:\n%s", i, doc.ID, r.body)
			continue
		}
		for _, c := range []struct {
			field     string
			got, want any
		}{
			{"kind", doc.Kind, in.kind},
			{"severity", doc.Severity, in.severity},
			{"state", doc.State, in.state},
			{"summary", doc.Summary, in.body},
			{"node", doc.Node, awNode},
			{"trace_id", doc.TraceID, in.traceID().String()},
			{"attributes." + spec.IncidentID, doc.Attributes[spec.IncidentID], in.id},
			{"attributes." + spec.AttrHwID, doc.Attributes[spec.AttrHwID], in.hwID},
		} {
			if c.got != c.want {
				t.Errorf("POST %d (%s): %s = %v, want %v", i, in.id, c.field, c.got, c.want)
			}
		}
		if st, err := time.Parse(time.RFC3339Nano, doc.StartTime); err != nil || st.Sub(in.start).Abs() >= time.Second {
			t.Errorf("POST %d (%s): start_time %q, want %s", i, in.id, doc.StartTime, in.start.Format(time.RFC3339Nano))
		}
	}
	for _, in := range incs {
		if seen[in.id] != 1 {
			t.Errorf("%s: %d POST(s), want exactly 1 (one per incident); ids seen %v", in.id, seen[in.id], seen)
		}
	}
}

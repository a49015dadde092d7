// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package alertwebhookexporter

import (
	"strings"
	"time"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// amAlert is one alert of Alertmanager's v2 API (POST /api/v2/alerts).
type amAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     string            `json:"startsAt,omitempty"`
	EndsAt       string            `json:"endsAt,omitempty"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

// alertOf builds the Alertmanager alert of an incident. Its labels identify
// it (incident_id keeps two incidents of one kind on one node apart, and a
// re-send or the resolution of the same incident lands on the same alert).
func (e *alertExporter) alertOf(in *incident) amAlert {
	labels := map[string]string{
		"alertname":   in.Kind,
		"severity":    e.severityOf(in),
		"incident_id": in.ID,
	}
	if in.Quadrant != "" {
		labels["quadrant"] = in.Quadrant
	}
	for label, attr := range map[string]string{
		"hw_id": spec.AttrHwID, "pod": spec.AttrK8sPodName, "namespace": spec.AttrK8sNamespaceName,
		"model": spec.AttrGenAIRequestModel, "engine": spec.AttrEngineName,
		// An application-quality incident names the service instance, and
		// its response: Alertmanager routes can match action_id.
		"service": spec.AttrServiceName, "instance": spec.AttrServiceInstanceID, "action_id": spec.IncidentActionID,
	} {
		if v := in.attr(attr); v != "" {
			labels[label] = v
		}
	}
	if e.node != "" {
		labels["node"] = e.node
	}
	ann := map[string]string{"summary": in.Body}
	if d := in.description(); d != "" {
		ann["description"] = d
	}
	for k, v := range map[string]string{"action": in.Action, "layer": in.Layer, "trace_id": in.TraceID, "span_id": in.SpanID,
		"trace_url": fillIDs(e.cfg.TraceURLTemplate, in)} {
		if v != "" {
			ann[k] = v
		}
	}
	a := amAlert{Labels: labels, Annotations: ann, StartsAt: in.Start.UTC().Format(time.RFC3339Nano),
		GeneratorURL: fillIDs(e.cfg.GeneratorURL, in)}
	if in.State == spec.StateResolved {
		a.EndsAt = in.Time.UTC().Format(time.RFC3339Nano)
	} else {
		// Active until a re-send moves endsAt on (or the resolution).
		a.EndsAt = e.now().Add(4 * e.cfg.ResendInterval).UTC().Format(time.RFC3339Nano)
	}
	return a
}

// document is the generic JSON webhook's body: the incident in full.
type document struct {
	ID         string         `json:"id"`
	Kind       string         `json:"kind"`
	Quadrant   string         `json:"quadrant,omitempty"`
	Severity   string         `json:"severity"`
	State      string         `json:"state"`
	Score      float64        `json:"score"`
	StartTime  string         `json:"start_time"`
	Time       string         `json:"time"`
	Summary    string         `json:"summary"`
	Action     string         `json:"action,omitempty"`
	ActionID   string         `json:"action_id,omitempty"`
	Subject    string         `json:"subject,omitempty"`
	Layer      string         `json:"layer,omitempty"`
	Node       string         `json:"node,omitempty"`
	TraceID    string         `json:"trace_id,omitempty"`
	SpanID     string         `json:"span_id,omitempty"`
	TraceURL   string         `json:"trace_url,omitempty"`
	Evidence   any            `json:"evidence,omitempty"`
	LayerStack any            `json:"layer_stack,omitempty"`
	Attributes map[string]any `json:"attributes"`
	Resource   map[string]any `json:"resource,omitempty"`
}

func (e *alertExporter) documentOf(in *incident) document {
	return document{ID: in.ID, Kind: in.Kind, Quadrant: in.Quadrant, Severity: e.severityOf(in), State: in.State,
		Score: in.Score, StartTime: in.Start.UTC().Format(time.RFC3339Nano), Time: in.Time.UTC().Format(time.RFC3339Nano),
		Summary: in.Body, Action: in.Action, ActionID: in.ActionID, Subject: in.Subject, Layer: in.Layer, Node: e.node,
		TraceID: in.TraceID, SpanID: in.SpanID, TraceURL: fillIDs(e.cfg.TraceURLTemplate, in),
		Evidence: in.Attrs[spec.IncidentEvidence], LayerStack: in.Attrs[spec.IncidentLayerStack],
		Attributes: in.Attrs, Resource: in.Resource}
}

// slackMessage is a Slack-compatible incoming-webhook message.
type slackMessage struct {
	Text string `json:"text"`
}

func (e *alertExporter) slackOf(in *incident) slackMessage {
	icon := ":warning:"
	switch {
	case in.State == spec.StateResolved:
		icon = ":white_check_mark:"
	case in.Severity == SeverityCritical:
		icon = ":rotating_light:"
	}
	var b strings.Builder
	b.WriteString(icon + " *[" + strings.ToUpper(in.State) + " " + strings.ToUpper(e.severityOf(in)) + "] " + in.Kind + "*")
	if e.node != "" {
		b.WriteString(" on " + e.node)
	}
	b.WriteString("\n" + in.Body)
	if in.Action != "" && in.State != spec.StateResolved {
		b.WriteString("\n> " + in.Action)
	}
	if u := fillIDs(e.cfg.TraceURLTemplate, in); u != "" {
		b.WriteString("\n<" + u + "|implicated span>")
	}
	return slackMessage{Text: b.String()}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package alertwebhookexporter sends the incidents of the rootcause
// processor (and profileimport's leak suspects) to Alertmanager's v2 API or
// to webhooks: a generic JSON document per incident (optionally signed with
// HMAC-SHA256) or a Slack-compatible message. It is built on exporterhelper
// (timeout, retry with backoff, a sending queue that persists across
// restarts when it names a storage extension); 5xx and connection errors are
// retried, 4xx are logged once and dropped. Firing Alertmanager alerts are
// re-sent before Alertmanager would resolve them on its own.
//
//go:generate ../../.tools/mdatagen metadata.yaml
package alertwebhookexporter // import "github.com/llmops-otel/otelcol-llmops/exporter/alertwebhookexporter"

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package alertwebhookexporter // import "github.com/llmops-otel/otelcol-llmops/exporter/alertwebhookexporter"

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// Formats.
const (
	FormatAlertmanager = "alertmanager"
	FormatJSON         = "json"
	FormatSlack        = "slack"
)

// Severities, lowest first.
const (
	SeverityInfo     = "info"
	SeverityWarning  = spec.SeverityWarning
	SeverityCritical = spec.SeverityCritical
)

// Config is the alertwebhook exporter's configuration.
type Config struct {
	// Endpoint, TLS, headers, timeout, proxy: the HTTP client. For
	// format alertmanager the endpoint is Alertmanager's base URL
	// (http://alertmanager:9093): alerts go to <endpoint>/api/v2/alerts.
	// For json and slack it is the webhook URL itself. A named field, not
	// an embedded one: embedding would promote ClientConfig's own Unmarshal
	// to Config, and every other field would be silently ignored.
	ClientConfig confighttp.ClientConfig                                  `mapstructure:",squash"`
	QueueConfig  configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	RetryConfig  configretry.BackOffConfig                                `mapstructure:"retry_on_failure"`

	// Format: alertmanager, json (one document per incident) or slack.
	Format string `mapstructure:"format"`
	// BearerToken is sent as "Authorization: Bearer <token>".
	BearerToken configopaque.String `mapstructure:"bearer_token"`
	// HMACSecret signs each body with HMAC-SHA256; the signature goes in
	// SignatureHeader as "sha256=<hex>".
	HMACSecret      configopaque.String `mapstructure:"hmac_secret"`
	SignatureHeader string              `mapstructure:"signature_header"`

	// MinSeverity: incidents below it are not sent (info, warning,
	// critical; resolutions of sent incidents always are).
	MinSeverity string `mapstructure:"min_severity"`
	// SeverityMap renames incident severities for the receiver (e.g.
	// critical: page, warning: ticket): the alert's severity label.
	SeverityMap map[string]string `mapstructure:"severity_map"`
	// TraceURLTemplate builds a link to the implicated span: {trace_id}
	// and {span_id} are replaced (e.g. a Grafana Explore / Tempo URL).
	TraceURLTemplate string `mapstructure:"trace_url_template"`
	// GeneratorURL is the alerts' generatorURL (a dashboard, a runbook).
	// {trace_id} and {span_id} are replaced here too.
	GeneratorURL string `mapstructure:"generator_url"`
	// Node is the node label of every alert (default: $NODE_NAME, else
	// the host name).
	Node string `mapstructure:"node"`
	// ResendInterval (alertmanager): firing alerts are re-sent this often
	// with endsAt = now + 4×ResendInterval, so Alertmanager does not
	// resolve them on its own while they still fire.
	ResendInterval time.Duration `mapstructure:"resend_interval"`
	// MaxFiring bounds the firing alerts remembered for re-sending.
	MaxFiring int `mapstructure:"max_firing"`
	// FiringTTL: a firing alert no new record refreshed for this long (its
	// source stopped re-notifying, e.g. it restarted) is no longer re-sent;
	// Alertmanager resolves it at its endsAt. Keep it above rootcause's
	// renotify_interval.
	FiringTTL time.Duration `mapstructure:"firing_ttl"`

	// Actions: extra webhooks keyed by incident kind, by the response an
	// incident calls for (its incident.action.id: circuit_break,
	// start_quantized_pipeline, ...) or "*" for every incident, for the
	// automatic responses (drain an instance, switch to a degraded pool).
	Actions map[string]ActionConfig `mapstructure:"actions"`
}

// ActionConfig is one extra webhook for incidents of one kind.
type ActionConfig struct {
	ClientConfig confighttp.ClientConfig `mapstructure:",squash"` // named: see Config

	// Format: json (default) or slack.
	Format      string `mapstructure:"format"`
	MinSeverity string `mapstructure:"min_severity"`
	// States: which transitions trigger it (default [firing]).
	States          []string            `mapstructure:"states"`
	BearerToken     configopaque.String `mapstructure:"bearer_token"`
	HMACSecret      configopaque.String `mapstructure:"hmac_secret"`
	SignatureHeader string              `mapstructure:"signature_header"`
}

func severityRank(s string) int {
	switch s {
	case SeverityInfo:
		return 0
	case SeverityWarning:
		return 1
	case SeverityCritical:
		return 2
	}
	return -1
}

func checkEndpoint(field, endpoint string) error {
	if endpoint == "" {
		return fmt.Errorf("%s is required", field)
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %q must be an http:// or https:// URL", field, endpoint)
	}
	return nil
}

// Validate checks the configuration at start; messages name the field.
func (cfg *Config) Validate() error {
	var errs []error
	if err := checkEndpoint("endpoint", cfg.ClientConfig.Endpoint); err != nil {
		errs = append(errs, err)
	}
	switch cfg.Format {
	case FormatAlertmanager, FormatJSON, FormatSlack:
	default:
		errs = append(errs, fmt.Errorf("format must be %q, %q or %q, got %q", FormatAlertmanager, FormatJSON, FormatSlack, cfg.Format))
	}
	if severityRank(cfg.MinSeverity) < 0 {
		errs = append(errs, fmt.Errorf("min_severity must be info, warning or critical, got %q", cfg.MinSeverity))
	}
	for k, v := range cfg.SeverityMap {
		if severityRank(k) < 0 {
			errs = append(errs, fmt.Errorf("severity_map key %q must be info, warning or critical", k))
		}
		if v == "" {
			errs = append(errs, fmt.Errorf("severity_map[%s] must not be empty", k))
		}
	}
	if cfg.HMACSecret != "" && cfg.SignatureHeader == "" {
		errs = append(errs, errors.New("signature_header must be set when hmac_secret is"))
	}
	if cfg.Format == FormatAlertmanager && cfg.ResendInterval <= 0 {
		errs = append(errs, fmt.Errorf("resend_interval must be positive for format alertmanager, got %s", cfg.ResendInterval))
	}
	if cfg.Format == FormatAlertmanager && cfg.FiringTTL <= cfg.ResendInterval {
		errs = append(errs, fmt.Errorf("firing_ttl (%s) must be longer than resend_interval (%s)", cfg.FiringTTL, cfg.ResendInterval))
	}
	if cfg.MaxFiring <= 0 {
		errs = append(errs, fmt.Errorf("max_firing must be positive, got %d", cfg.MaxFiring))
	}
	for _, t := range []struct{ field, v string }{{"trace_url_template", cfg.TraceURLTemplate}, {"generator_url", cfg.GeneratorURL}} {
		if t.v == "" {
			continue
		}
		probe := strings.NewReplacer("{trace_id}", "0", "{span_id}", "0").Replace(t.v)
		if u, err := url.Parse(probe); err != nil || u.Scheme == "" {
			errs = append(errs, fmt.Errorf("%s %q is not a URL", t.field, t.v))
		}
	}
	for kind, a := range cfg.Actions {
		at := "actions[" + kind + "]"
		if err := checkEndpoint(at+".endpoint", a.ClientConfig.Endpoint); err != nil {
			errs = append(errs, err)
		}
		switch a.Format {
		case "", FormatJSON, FormatSlack:
		default:
			errs = append(errs, fmt.Errorf("%s.format must be %q or %q, got %q", at, FormatJSON, FormatSlack, a.Format))
		}
		if a.MinSeverity != "" && severityRank(a.MinSeverity) < 0 {
			errs = append(errs, fmt.Errorf("%s.min_severity must be info, warning or critical, got %q", at, a.MinSeverity))
		}
		for _, s := range a.States {
			if s != spec.StateFiring && s != spec.StateResolved {
				errs = append(errs, fmt.Errorf("%s.states: %q is not firing or resolved", at, s))
			}
		}
		if a.HMACSecret != "" && a.SignatureHeader == "" {
			errs = append(errs, fmt.Errorf("%s.signature_header must be set when hmac_secret is", at))
		}
	}
	return errors.Join(errs...)
}

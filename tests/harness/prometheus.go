// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// PrometheusBinary is where Debian's prometheus package puts the server;
// PrometheusBinaryEnv overrides it (another version, another layout).
const (
	PrometheusBinary    = "/usr/bin/prometheus"
	PrometheusBinaryEnv = "OTELCOL_LLMOPS_PROMETHEUS"
)

// PrometheusOptions describe one Prometheus server to start.
type PrometheusOptions struct {
	// ScrapeInterval is the global scrape_interval (default 1s), so a
	// scraped agent shows up within a second or two.
	ScrapeInterval time.Duration
	// EvaluationInterval is the global evaluation_interval of the rule
	// files (default 1s).
	EvaluationInterval time.Duration
	// JobName is the job of the scrape configuration (default
	// "otelcol-llmops"); it is the `job` label of every scraped series.
	JobName string
	// ScrapeTargets are host:port addresses scraped at /metrics. None means
	// no scrape configuration: the server only receives remote writes.
	ScrapeTargets []string
	// RuleFiles are rule files (absolute paths) to load.
	RuleFiles []string
	// ReadyTimeout bounds the wait for /-/ready (default 30s).
	ReadyTimeout time.Duration
}

// Prometheus is a real Prometheus server on a loopback port: it scrapes the
// targets it is given, accepts remote writes and evaluates rule files, and
// answers the HTTP API the tests query.
type Prometheus struct {
	url     string
	cfgPath string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	err     error // the exit status, valid once exited is closed

	stopOnce sync.Once
}

// PromSample is one sample of an instant vector (or the one value of a
// scalar result, with no labels).
type PromSample struct {
	Labels map[string]string
	Value  float64
}

// String renders the sample as PromQL prints it: name{labels} value.
func (s PromSample) String() string {
	return fmt.Sprintf("%s %g", FormatLabels(s.Labels), s.Value)
}

// PromAlert is an alert of GET /api/v1/alerts or of a rule of /api/v1/rules.
type PromAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"` // pending or firing
	ActiveAt    time.Time         `json:"activeAt"`
	Value       string            `json:"value"`
}

// PromRule is one rule of GET /api/v1/rules. Health is "ok", "err" or
// "unknown" (not evaluated yet); LastError says why a rule is unhealthy.
type PromRule struct {
	Name           string            `json:"name"`
	Query          string            `json:"query"`
	Type           string            `json:"type"`  // alerting or recording
	State          string            `json:"state"` // alerting rules: inactive, pending or firing
	Duration       float64           `json:"duration"`
	Labels         map[string]string `json:"labels"`
	Annotations    map[string]string `json:"annotations"`
	Alerts         []PromAlert       `json:"alerts"`
	Health         string            `json:"health"`
	LastError      string            `json:"lastError"`
	EvaluationTime float64           `json:"evaluationTime"`
	LastEvaluation time.Time         `json:"lastEvaluation"`
}

// PromRuleGroup is one rule group of GET /api/v1/rules.
type PromRuleGroup struct {
	Name           string     `json:"name"`
	File           string     `json:"file"`
	Rules          []PromRule `json:"rules"`
	Interval       float64    `json:"interval"`
	EvaluationTime float64    `json:"evaluationTime"`
	LastEvaluation time.Time  `json:"lastEvaluation"`
}

// StartPrometheus writes a prometheus.yml from opts, starts the server on a
// free loopback port with the remote-write receiver and the lifecycle API
// enabled, and waits until /-/ready answers. The server is stopped when the
// test ends, passed or failed; on failure the tail of its log is attached.
// Without the binary the test is skipped, unless CI is set: there the binary
// is a requirement (.ci/run installs it), and a skip would hide that the
// tests never ran.
func StartPrometheus(t testing.TB, opts PrometheusOptions) *Prometheus {
	t.Helper()
	bin := os.Getenv(PrometheusBinaryEnv)
	if bin == "" {
		bin = PrometheusBinary
	}
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("Prometheus not found at %s (%v): install the Debian package prometheus, or set %s", bin, err, PrometheusBinaryEnv)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if opts.ScrapeInterval == 0 {
		opts.ScrapeInterval = time.Second
	}
	if opts.EvaluationInterval == 0 {
		opts.EvaluationInterval = time.Second
	}
	if opts.JobName == "" {
		opts.JobName = "otelcol-llmops"
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 30 * time.Second
	}
	for _, f := range opts.RuleFiles {
		if !filepath.IsAbs(f) {
			// Prometheus resolves relative rule files against the
			// configuration's directory, a temporary one here.
			t.Fatalf("rule file %q is not an absolute path", f)
		}
	}

	dir := t.TempDir()
	p := &Prometheus{
		cfgPath: filepath.Join(dir, "prometheus.yml"),
		logPath: filepath.Join(dir, "prometheus.log"),
		exited:  make(chan struct{}),
	}
	cfg, err := prometheusConfig(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	port := FreePort(t)
	p.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	p.cmd = exec.CommandContext(context.Background(), bin,
		"--config.file="+p.cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
		"--web.enable-remote-write-receiver",
		"--web.enable-lifecycle",
	)
	p.cmd.Stdout = logFile
	p.cmd.Stderr = logFile
	p.cmd.Dir = dir
	// Own process group, and die with the test process if it is killed
	// outright, as the collectors do.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		_ = logFile.Close()
		t.Fatalf("starting prometheus: %v", err)
	}
	go func() {
		p.err = p.cmd.Wait()
		_ = logFile.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.Stop(t)
		if t.Failed() {
			t.Logf("---- prometheus.yml ----\n%s\n---- last lines of the log of prometheus ----\n%s", cfg, p.LogTail(60))
		}
	})
	if err := p.waitReady(opts.ReadyTimeout); err != nil {
		// The cleanup above attaches the log, which says why.
		t.Fatalf("prometheus did not become ready: %v", err)
	}
	return p
}

// prometheusConfig renders the server's configuration. JSON is YAML, and
// encoding/json quotes every path and address correctly.
func prometheusConfig(opts PrometheusOptions) ([]byte, error) {
	// Prometheus durations take no fractions ("1.5s"): milliseconds always
	// parse.
	dur := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }
	type staticConfig struct {
		Targets []string `json:"targets"`
	}
	type scrapeConfig struct {
		JobName       string         `json:"job_name"`
		MetricsPath   string         `json:"metrics_path"`
		StaticConfigs []staticConfig `json:"static_configs"`
	}
	cfg := struct {
		Global struct {
			ScrapeInterval     string `json:"scrape_interval"`
			ScrapeTimeout      string `json:"scrape_timeout"`
			EvaluationInterval string `json:"evaluation_interval"`
		} `json:"global"`
		RuleFiles     []string       `json:"rule_files,omitempty"`
		ScrapeConfigs []scrapeConfig `json:"scrape_configs,omitempty"`
	}{RuleFiles: opts.RuleFiles}
	cfg.Global.ScrapeInterval = dur(opts.ScrapeInterval)
	// The timeout may not exceed the interval (Prometheus refuses the
	// configuration); the default 10s would with a 1s interval.
	cfg.Global.ScrapeTimeout = dur(opts.ScrapeInterval)
	cfg.Global.EvaluationInterval = dur(opts.EvaluationInterval)
	if len(opts.ScrapeTargets) > 0 {
		cfg.ScrapeConfigs = []scrapeConfig{{
			JobName:       opts.JobName,
			MetricsPath:   "/metrics",
			StaticConfigs: []staticConfig{{Targets: opts.ScrapeTargets}},
		}}
	}
	return json.MarshalIndent(cfg, "", "  ")
}

// waitReady polls /-/ready until it answers 200, the process exits, or
// timeout passes.
func (p *Prometheus) waitReady(timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		resp, err := httpGet(client, p.url+"/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("/-/ready answered %s", resp.Status)
		} else {
			last = err
		}
		select {
		case <-p.exited:
			// As text: a clean exit's nil error has nothing to wrap.
			return fmt.Errorf("prometheus exited before it was ready: %s", fmt.Sprint(p.err))
		case <-deadline.C:
			return fmt.Errorf("no ready answer from %s/-/ready within %s: %w", p.url, timeout, last)
		case <-tick.C:
		}
	}
}

// URL is the server's base URL, http://127.0.0.1:PORT.
func (p *Prometheus) URL() string { return p.url }

// RemoteWriteURL is where the server accepts remote writes.
func (p *Prometheus) RemoteWriteURL() string { return p.url + "/api/v1/write" }

// Stop shuts the server down (SIGTERM; SIGKILL to the whole process group
// after 10s) and waits. It reports an unclean exit as a test error.
func (p *Prometheus) Stop(t testing.TB) {
	p.stopOnce.Do(func() {
		pgid := p.cmd.Process.Pid
		select {
		case <-p.exited:
		default:
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
				<-p.exited
				t.Errorf("prometheus did not stop within 10s of SIGTERM and was killed")
				return
			}
		}
		// Whatever the outcome, nothing of the group outlives the test.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		if p.err != nil {
			t.Errorf("prometheus exited uncleanly: %v", p.err)
		}
	})
}

// Reload asks the server to re-read its configuration and rule files
// (POST /-/reload, the lifecycle API).
func (p *Prometheus) Reload(t testing.TB) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, p.url+"/-/reload", nil)
	if err != nil {
		t.Fatalf("reloading prometheus: %v", err)
	}
	req.Header.Set("Content-Type", "")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("reloading prometheus: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("reloading prometheus: %s: %s", resp.Status, bytes.TrimSpace(body))
	}
}

// Log returns what the server has written so far.
func (p *Prometheus) Log() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	return string(b)
}

// LogTail returns the last n lines of the log: Prometheus logs every WAL
// segment and compaction, and the end is where a failure shows.
func (p *Prometheus) LogTail(n int) string {
	lines := strings.Split(strings.TrimRight(p.Log(), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("(%d earlier lines left out; the whole log is %s)", len(lines)-n, p.logPath)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// apiError is the API's answer when a request fails: a PromQL parse error,
// an unknown function, a bad matcher.
type apiError struct {
	path, errorType, msg string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.path, e.errorType, e.msg)
}

// get calls GET path?params of the HTTP API and decodes the envelope's data
// into out. A failed request returns the API's own error text.
func (p *Prometheus) get(path string, params url.Values, out any) error {
	client := &http.Client{Timeout: 10 * time.Second}
	u := p.url + path
	if len(params) > 0 {
		u += "?" + params.Encode()
	}
	resp, err := httpGet(client, u)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	var env struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("GET %s: %s: not an API answer (%w): %.300s", path, resp.Status, err, body)
	}
	if env.Status != "success" {
		return &apiError{path: path, errorType: env.ErrorType, msg: env.Error}
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("GET %s: decoding data: %w: %.300s", path, err, env.Data)
	}
	return nil
}

// QueryE runs an instant query (GET /api/v1/query) at the current time and
// returns its samples: one per series of a vector, one without labels for a
// scalar. A query that does not parse or evaluate returns the API's error
// text.
func (p *Prometheus) QueryE(promql string) ([]PromSample, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := p.get("/api/v1/query", url.Values{"query": {promql}}, &data); err != nil {
		return nil, err
	}
	parse := func(v [2]any) (float64, error) {
		s, ok := v[1].(string)
		if !ok {
			return 0, fmt.Errorf("sample value %v is not a string", v[1])
		}
		// ParseFloat reads Prometheus' NaN, +Inf and -Inf too.
		return strconv.ParseFloat(s, 64)
	}
	switch data.ResultType {
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(data.Result, &vec); err != nil {
			return nil, fmt.Errorf("query %q: decoding vector: %w", promql, err)
		}
		out := make([]PromSample, 0, len(vec))
		for _, s := range vec {
			v, err := parse(s.Value)
			if err != nil {
				return nil, fmt.Errorf("query %q: %w", promql, err)
			}
			out = append(out, PromSample{Labels: s.Metric, Value: v})
		}
		return out, nil
	case "scalar":
		var s [2]any
		if err := json.Unmarshal(data.Result, &s); err != nil {
			return nil, fmt.Errorf("query %q: decoding scalar: %w", promql, err)
		}
		v, err := parse(s)
		if err != nil {
			return nil, fmt.Errorf("query %q: %w", promql, err)
		}
		return []PromSample{{Labels: map[string]string{}, Value: v}}, nil
	default:
		return nil, fmt.Errorf("query %q: result type %q, want an instant vector or a scalar", promql, data.ResultType)
	}
}

// Query is QueryE failing the test on error.
func (p *Prometheus) Query(t testing.TB, promql string) []PromSample {
	t.Helper()
	s, err := p.QueryE(promql)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// SeriesNamesE returns every metric name the server holds
// (GET /api/v1/label/__name__/values), sorted.
func (p *Prometheus) SeriesNamesE() ([]string, error) {
	var names []string
	if err := p.get("/api/v1/label/__name__/values", nil, &names); err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// SeriesNames is SeriesNamesE failing the test on error.
func (p *Prometheus) SeriesNames(t testing.TB) []string {
	t.Helper()
	names, err := p.SeriesNamesE()
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// SeriesE returns the label sets of the series a selector matches
// (GET /api/v1/series), over everything the server holds.
func (p *Prometheus) SeriesE(match string) ([]map[string]string, error) {
	var series []map[string]string
	if err := p.get("/api/v1/series", url.Values{"match[]": {match}}, &series); err != nil {
		return nil, err
	}
	return series, nil
}

// Series is SeriesE failing the test on error.
func (p *Prometheus) Series(t testing.TB, match string) []map[string]string {
	t.Helper()
	s, err := p.SeriesE(match)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// AlertsE returns the alerts of the alerting rules that are pending or
// firing now (GET /api/v1/alerts).
func (p *Prometheus) AlertsE() ([]PromAlert, error) {
	var data struct {
		Alerts []PromAlert `json:"alerts"`
	}
	if err := p.get("/api/v1/alerts", nil, &data); err != nil {
		return nil, err
	}
	return data.Alerts, nil
}

// Alerts is AlertsE failing the test on error.
func (p *Prometheus) Alerts(t testing.TB) []PromAlert {
	t.Helper()
	a, err := p.AlertsE()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// RuleGroupsE returns the loaded rule groups with each rule's health and
// last evaluation error (GET /api/v1/rules).
func (p *Prometheus) RuleGroupsE() ([]PromRuleGroup, error) {
	var data struct {
		Groups []PromRuleGroup `json:"groups"`
	}
	if err := p.get("/api/v1/rules", nil, &data); err != nil {
		return nil, err
	}
	return data.Groups, nil
}

// RuleGroups is RuleGroupsE failing the test on error.
func (p *Prometheus) RuleGroups(t testing.TB) []PromRuleGroup {
	t.Helper()
	g, err := p.RuleGroupsE()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// FormatLabels renders a label set as PromQL does, the metric name first:
// name{a="1", b="2"}.
func FormatLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		if k != "__name__" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(labels["__name__"])
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%q", k, labels[k])
	}
	b.WriteByte('}')
	return b.String()
}

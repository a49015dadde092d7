// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// AlertmanagerBinary is where Debian's prometheus-alertmanager package puts
// the binary; AlertmanagerBinaryEnv overrides it (another version, another
// distribution's layout).
const (
	AlertmanagerBinary    = "/usr/bin/prometheus-alertmanager"
	AlertmanagerBinaryEnv = "OTELCOL_LLMOPS_ALERTMANAGER"
)

// AlertmanagerOptions describe one Alertmanager to start.
type AlertmanagerOptions struct {
	// StorageDir is --storage.path (silences and the notification log).
	// Pass the same directory to keep them across restarts; empty means a
	// fresh temporary directory.
	StorageDir string
	// ReadyTimeout bounds the wait for /-/ready (default 30s).
	ReadyTimeout time.Duration
}

// Alertmanager is a real Alertmanager on a loopback port whose only route
// sends every alert, as its own group, to a webhook receiver in the test
// process that records each notification.
type Alertmanager struct {
	// URL is the base URL (http://127.0.0.1:PORT) of the API and UI.
	URL string

	t          testing.TB
	bin        string
	port       int
	cfgPath    string
	storageDir string
	logPath    string
	timeout    time.Duration
	webhook    *httptest.Server

	mu            sync.Mutex
	cmd           *exec.Cmd
	exited        chan struct{}
	notifications []WebhookNotification
}

// AMAlert is one alert of GET /api/v2/alerts (Alertmanager's gettableAlert).
type AMAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	UpdatedAt    time.Time         `json:"updatedAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
	Status       struct {
		State       string   `json:"state"` // active, suppressed or unprocessed
		SilencedBy  []string `json:"silencedBy"`
		InhibitedBy []string `json:"inhibitedBy"`
	} `json:"status"`
	Receivers []struct {
		Name string `json:"name"`
	} `json:"receivers"`
}

// WebhookNotification is one POST of Alertmanager's webhook receiver
// (payload version 4).
type WebhookNotification struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   int               `json:"truncatedAlerts"`
	Status            string            `json:"status"` // firing or resolved
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []WebhookAlert    `json:"alerts"`
	// Received is when the webhook got it (not part of the payload).
	Received time.Time `json:"-"`
}

// WebhookAlert is one alert of a webhook notification.
type WebhookAlert struct {
	Status       string            `json:"status"` // firing or resolved
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

// StartAlertmanager starts Alertmanager on a free loopback port and waits
// until /-/ready answers. It is stopped when the test ends; on failure its
// log is attached to the test output. Without the binary the test is skipped,
// unless CI is set: there the binary is a requirement (.ci/run installs it),
// and a skip would hide that the tests never ran.
func StartAlertmanager(t testing.TB, opts AlertmanagerOptions) *Alertmanager {
	t.Helper()
	bin := os.Getenv(AlertmanagerBinaryEnv)
	if bin == "" {
		bin = AlertmanagerBinary
	}
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("Alertmanager not found at %s (%v): install the Debian package prometheus-alertmanager, or set %s", bin, err, AlertmanagerBinaryEnv)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 30 * time.Second
	}
	dir := t.TempDir()
	if opts.StorageDir == "" {
		opts.StorageDir = filepath.Join(dir, "data")
	}
	am := &Alertmanager{
		t:          t,
		bin:        bin,
		port:       FreePort(t),
		cfgPath:    filepath.Join(dir, "alertmanager.yml"),
		storageDir: opts.StorageDir,
		logPath:    filepath.Join(dir, "alertmanager.log"),
		timeout:    opts.ReadyTimeout,
	}
	am.URL = fmt.Sprintf("http://127.0.0.1:%d", am.port)
	// httptest listens on 127.0.0.1; it outlives Alertmanager restarts, so
	// notifications sent before and after a restart land in one list.
	am.webhook = httptest.NewServer(http.HandlerFunc(am.receive))
	t.Cleanup(am.webhook.Close)

	// group_by '...' groups by every label: each alert is its own group, so
	// each gets its own firing and resolved notification. The 1s waits
	// keep notifications prompt; the 1h repeat keeps an unchanged firing
	// alert from being notified again while a test runs.
	cfg := fmt.Sprintf(`route:
  receiver: webhook
  group_by: ['...']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: webhook
    webhook_configs:
      - url: %s/
        send_resolved: true
`, am.webhook.URL)
	if err := os.WriteFile(am.cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		am.Stop()
		if t.Failed() {
			t.Logf("---- log of alertmanager ----\n%s", am.Log())
		}
	})
	am.start()
	return am
}

// start runs the binary (appending to the one log across restarts) and
// waits for readiness.
func (am *Alertmanager) start() {
	am.t.Helper()
	logFile, err := os.OpenFile(am.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		am.t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), am.bin,
		"--config.file="+am.cfgPath,
		"--storage.path="+am.storageDir,
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", am.port),
		// Empty disables clustering: no gossip port, and no waiting for
		// peers to settle before the first notification.
		"--cluster.listen-address=",
	)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// Own process group, and die with the test process if it is killed
	// outright, as the collectors do.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		am.t.Fatalf("starting alertmanager: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		close(exited)
	}()
	am.mu.Lock()
	am.cmd, am.exited = cmd, exited
	am.mu.Unlock()

	client := &http.Client{Timeout: time.Second}
	deadline := time.NewTimer(am.timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		resp, err := httpGet(client, am.URL+"/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Errorf("/-/ready answered %s", resp.Status)
		} else {
			last = err
		}
		select {
		case <-exited:
			// The cleanup attaches the log, which says why.
			am.t.Fatal("alertmanager exited before it was ready")
		case <-deadline.C:
			am.t.Fatalf("alertmanager not ready within %s: %v", am.timeout, last)
		case <-tick.C:
		}
	}
}

// Stop shuts Alertmanager down (SIGTERM, so it snapshots its notification
// log and silences; SIGKILL after 10s). Stopping a stopped one does nothing.
func (am *Alertmanager) Stop() {
	am.mu.Lock()
	cmd, exited := am.cmd, am.exited
	am.cmd = nil
	am.mu.Unlock()
	if cmd == nil {
		return
	}
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		am.t.Errorf("alertmanager did not stop within 10s of SIGTERM; killing it")
	}
	// Whatever the outcome, nothing of the group outlives the stop.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-exited
}

// Restart stops Alertmanager if it runs and starts it again on the same
// port and storage. Its alerts live only in memory, so they are gone; the
// notification log and silences are kept.
func (am *Alertmanager) Restart() {
	am.t.Helper()
	am.Stop()
	am.start()
}

// Log returns what Alertmanager has written so far (all runs).
func (am *Alertmanager) Log() string {
	b, err := os.ReadFile(am.logPath)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	return string(b)
}

// FetchAlerts returns GET /api/v2/alerts: the alerts Alertmanager holds that
// have not ended (resolved ones are not listed).
func (am *Alertmanager) FetchAlerts() ([]AMAlert, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := httpGet(client, am.URL+"/api/v2/alerts")
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /api/v2/alerts: %s: %s", resp.Status, body)
	}
	var alerts []AMAlert
	if err := json.Unmarshal(body, &alerts); err != nil {
		return nil, fmt.Errorf("GET /api/v2/alerts: %w: %s", err, body)
	}
	return alerts, nil
}

// Alerts is FetchAlerts failing the test on error.
func (am *Alertmanager) Alerts(t testing.TB) []AMAlert {
	t.Helper()
	alerts, err := am.FetchAlerts()
	if err != nil {
		t.Fatal(err)
	}
	return alerts
}

// Notifications returns every notification the webhook has received, in
// arrival order.
func (am *Alertmanager) Notifications() []WebhookNotification {
	am.mu.Lock()
	defer am.mu.Unlock()
	return append([]WebhookNotification(nil), am.notifications...)
}

// receive records one webhook notification. A body that does not parse is
// answered 400 and reported as a test error: it would mean the payload
// format changed under the tests.
func (am *Alertmanager) receive(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var n WebhookNotification
	if err := json.Unmarshal(body, &n); err != nil {
		am.t.Errorf("alertmanager webhook: unparsable notification: %v: %s", err, body)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n.Received = time.Now()
	am.mu.Lock()
	am.notifications = append(am.notifications, n)
	am.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package enginereplay

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable scenario clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1700000000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type response struct {
	status int
	header http.Header
	body   string
	err    error
}

func get(t *testing.T, url string, header ...string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{err: err}
	}
	defer func() { _ = resp.Body.Close() }() // read only: a failed close loses nothing
	b, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b), err: err}
}

func serve(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	s := mustNew(t, opts)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts.URL
}

func TestEndpoints(t *testing.T) {
	for _, c := range []struct {
		engine Engine
		ok     []string
		absent []string
	}{
		{VLLM, []string{"/metrics"}, []string{"/v1/metrics", "/info", "/props", "/v1/models"}},
		{NIM, []string{"/v1/metrics"}, []string{"/metrics", "/info", "/props"}},
		{TGI, []string{"/metrics", "/info"}, []string{"/v1/metrics", "/props", "/v1/models"}},
		{LlamaCpp, []string{"/metrics", "/props", "/v1/models"}, []string{"/info", "/v1/metrics"}},
		{Triton, []string{"/metrics"}, []string{"/v1/metrics", "/info"}},
		{SGLang, []string{"/metrics"}, []string{"/info"}},
		{TRTLLM, []string{"/metrics"}, []string{"/props"}},
	} {
		t.Run(string(c.engine), func(t *testing.T) {
			s, url := serve(t, Options{Engine: c.engine})
			for _, p := range c.ok {
				r := get(t, url+p)
				if r.err != nil || r.status != http.StatusOK {
					t.Errorf("GET %s: %d %v", p, r.status, r.err)
				}
			}
			for _, p := range c.absent {
				if r := get(t, url+p); r.status != http.StatusNotFound {
					t.Errorf("GET %s: %d, want 404", p, r.status)
				}
			}
			if got := s.Requests(); got != 1 {
				t.Errorf("Requests() = %d, want 1 (only metrics requests count)", got)
			}
			r := get(t, url+MetricsPath(c.engine))
			if ct := r.header.Get("Content-Type"); ct != ContentTypeText {
				t.Errorf("Content-Type %q", ct)
			}
			want := render(t, s, 0, FormatText)
			if r.body != want {
				t.Error("served body differs from the rendering")
			}
		})
	}
}

func TestJSONEndpoints(t *testing.T) {
	decode := func(t *testing.T, r response) map[string]any {
		t.Helper()
		if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("status %d, Content-Type %q", r.status, r.header.Get("Content-Type"))
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(r.body), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	_, tgi := serve(t, Options{Engine: TGI})
	if info := decode(t, get(t, tgi+"/info")); info["model_id"] != "mistralai/Mistral-7B-Instruct-v0.3" || info["max_total_tokens"] != 8192.0 {
		t.Errorf("/info: %v", info)
	}
	_, lc := serve(t, Options{Engine: LlamaCpp})
	props := decode(t, get(t, lc+"/props"))
	if !strings.HasSuffix(props["model_path"].(string), ".gguf") {
		t.Errorf("/props: %v", props)
	}
	models := decode(t, get(t, lc+"/v1/models"))
	if models["object"] != "list" {
		t.Errorf("/v1/models: %v", models)
	}
}

func TestOpenMetricsFormats(t *testing.T) {
	const prometheusAccept = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
	_, neg := serve(t, Options{Engine: VLLM, Format: FormatNegotiate})
	_, om := serve(t, Options{Engine: VLLM, Format: FormatOpenMetrics})
	_, txt := serve(t, Options{Engine: VLLM})
	for _, c := range []struct {
		url, accept, want string
	}{
		{neg, prometheusAccept, ContentTypeOpenMetrics},
		{neg, "application/openmetrics-text; version=1.0.0", ContentTypeOpenMetrics},
		{neg, "text/plain;version=0.0.4;q=0.9,application/openmetrics-text;q=0.5", ContentTypeText},
		{neg, "text/plain", ContentTypeText},
		{neg, "", ContentTypeText},
		{neg, "*/*", ContentTypeText},
		{om, "text/plain", ContentTypeOpenMetrics},
		{txt, prometheusAccept, ContentTypeText},
	} {
		r := get(t, c.url+"/metrics", "Accept", c.accept)
		if ct := r.header.Get("Content-Type"); ct != c.want {
			t.Errorf("Accept %q: Content-Type %q, want %q", c.accept, ct, c.want)
			continue
		}
		probs, x := validateExposition(r.body, c.want == ContentTypeOpenMetrics)
		for _, p := range probs {
			t.Errorf("Accept %q: %s", c.accept, p)
		}
		if c.want == ContentTypeOpenMetrics {
			if !strings.HasSuffix(r.body, "# EOF\n") {
				t.Error("no # EOF")
			}
			if f := x.family("vllm:prompt_tokens"); f == nil || f.typ != "counter" || f.samples[0].name != "vllm:prompt_tokens_total" {
				t.Errorf("counter not named for OpenMetrics: %+v", f)
			}
		}
	}
	if _, err := New(Options{Engine: VLLM, Format: "xml"}); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestFaults(t *testing.T) {
	s, url := serve(t, Options{Engine: TGI})
	metrics := url + "/metrics"

	s.SetFault(Fault{Status: http.StatusServiceUnavailable})
	if r := get(t, metrics); r.status != 503 || r.body != "Service Unavailable\n" {
		t.Errorf("status fault: %d %q", r.status, r.body)
	}
	s.SetFault(Fault{Status: 500, Body: "engine dead\n"})
	if r := get(t, metrics); r.status != 500 || r.body != "engine dead\n" {
		t.Errorf("status+body fault: %d %q", r.status, r.body)
	}
	s.SetFault(Fault{Body: "<html>oops</html>"})
	if r := get(t, metrics); r.status != 200 || r.body != "<html>oops</html>" {
		t.Errorf("body fault: %d %q", r.status, r.body)
	}
	s.SetFault(Fault{Truncate: true})
	r := get(t, metrics)
	if r.err == nil || !errors.Is(r.err, io.ErrUnexpectedEOF) {
		t.Errorf("truncate fault: err %v, %d bytes", r.err, len(r.body))
	}
	full := render(t, s, 0, FormatText)
	if len(r.body) == 0 || len(r.body) >= len(full) || !strings.HasPrefix(full, r.body) {
		t.Errorf("truncate fault sent %d of %d bytes", len(r.body), len(full))
	}
	s.SetFault(Fault{Huge: 5 << 20})
	r = get(t, metrics)
	if r.err != nil || len(r.body) != 5<<20 {
		t.Errorf("huge fault: %v, %d bytes", r.err, len(r.body))
	}
	if probs, _ := validateExposition(r.body[:4096]+"\n", false); len(probs) == 0 {
		t.Error("huge fault body is a valid exposition")
	}

	s.SetFault(Fault{Delay: 300 * time.Millisecond})
	began := time.Now()
	r = get(t, metrics)
	if took := time.Since(began); r.status != 200 || took < 300*time.Millisecond {
		t.Errorf("delay fault: %d after %v", r.status, took)
	}
	// A scraper with a shorter timeout gives up, and the server lets go.
	s.SetFault(Fault{Delay: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, metrics, nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close() // the test fails on the answer itself
		t.Error("a one-minute delay answered within 100ms")
	}
	cancel()

	s.SetFault(Fault{})
	if r := get(t, metrics); r.status != 200 || r.body != full {
		t.Errorf("after clearing: %d", r.status)
	}
}

func TestScenarioFaultWindows(t *testing.T) {
	clock := newFakeClock()
	sc := writeFile(t, "f.scenario", `
fault start=10 end=20 status=503
fault start=20 end=30 garbage=true
fault start=30 end=40 delay=150ms
fault start=40 end=50 truncate=true
fault start=50 end=60 huge=1MiB
counter tgi_request_success rate=1
`)
	s, url := serve(t, Options{Engine: TGI, Scenario: sc, Speed: 10, Now: clock.Now})
	metrics := url + "/metrics"
	step := func(scenarioSeconds float64) {
		clock.Advance(time.Duration(scenarioSeconds / 10 * float64(time.Second)))
	}

	step(5) // t=5
	if r := get(t, metrics); r.status != 200 || !strings.Contains(r.body, "tgi_request_success 114\n") {
		t.Errorf("t=5: %d", r.status)
	}
	step(10) // t=15
	if r := get(t, metrics); r.status != 503 {
		t.Errorf("t=15: %d, want 503", r.status)
	}
	step(10) // t=25
	if r := get(t, metrics); r.status != 200 || r.body != garbageBody {
		t.Errorf("t=25: %d %q", r.status, r.body)
	}
	step(10) // t=35
	began := time.Now()
	if r := get(t, metrics); r.status != 200 || time.Since(began) < 150*time.Millisecond {
		t.Errorf("t=35: %d after %v", r.status, time.Since(began))
	}
	step(10) // t=45
	if r := get(t, metrics); !errors.Is(r.err, io.ErrUnexpectedEOF) {
		t.Errorf("t=45: %v", r.err)
	}
	step(10) // t=55
	if r := get(t, metrics); len(r.body) != 1<<20 {
		t.Errorf("t=55: %d bytes", len(r.body))
	}
	// A fault set at run time wins over the scenario's.
	s.SetFault(Fault{Status: 502})
	if r := get(t, metrics); r.status != 502 {
		t.Errorf("SetFault during a scenario fault: %d", r.status)
	}
	s.SetFault(Fault{})
	step(10) // t=65
	if r := get(t, metrics); r.status != 200 || !strings.Contains(r.body, "tgi_request_success 174\n") {
		t.Errorf("t=65: %d", r.status)
	}
	if got := s.Requests(); got != 8 {
		t.Errorf("Requests() = %d, want 8", got)
	}
}

func TestMethodsAndHead(t *testing.T) {
	s, url := serve(t, Options{Engine: VLLM})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodHead, url+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close() // only the headers are checked
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(render(t, s, 0, FormatText))) {
		t.Errorf("HEAD: %d, length %d", resp.StatusCode, resp.ContentLength)
	}
	req, err = http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/metrics", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close() // only the status is checked
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}
}

func TestStartAndClose(t *testing.T) {
	var logs []string
	var mu sync.Mutex
	s := mustNew(t, Options{Engine: NIM, Logf: func(f string, a ...any) {
		mu.Lock()
		logs = append(logs, f)
		mu.Unlock()
	}})
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("url %q", url)
	}
	if r := get(t, url+"/v1/metrics"); r.status != 200 {
		t.Fatalf("GET: %d %v", r.status, r.err)
	}
	if _, err := s.Start("127.0.0.1:0"); err == nil {
		t.Error("second Start succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if r := get(t, url+"/v1/metrics"); r.err == nil {
		t.Error("server still answers after Close")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logs) != 1 {
		t.Errorf("%d log lines, want 1", len(logs))
	}
}

func TestNewValidatesOptions(t *testing.T) {
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Engine: "ollama"}, `unknown engine "ollama"`},
		{Options{Engine: VLLM, Speed: -1}, "speed -1 must be positive"},
		{Options{Engine: VLLM, Fixture: "/nonexistent/x.prom"}, "no such file"},
		{Options{Engine: VLLM, Scenario: "/nonexistent/x.scenario"}, "no such file"},
	} {
		if _, err := New(c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.opts, err, c.want)
		}
	}
}

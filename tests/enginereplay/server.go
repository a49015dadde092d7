// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package enginereplay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Engine names an inference engine whose metrics endpoint the server imitates.
type Engine string

// The engines the server knows.
const (
	VLLM     Engine = "vllm"
	TGI      Engine = "tgi"
	SGLang   Engine = "sglang"
	TRTLLM   Engine = "trtllm"
	Triton   Engine = "triton"
	NIM      Engine = "nim"
	LlamaCpp Engine = "llamacpp"
)

// Engines lists the known engines in a stable order.
func Engines() []Engine {
	return []Engine{VLLM, TGI, SGLang, TRTLLM, Triton, NIM, LlamaCpp}
}

// engineInfo is what differs between engines: where the metrics are and
// which other JSON endpoints exist.
type engineInfo struct {
	metricsPath string
	json        map[string]string // URL path -> file under fixtures/
}

var engineTable = map[Engine]engineInfo{
	VLLM:     {metricsPath: "/metrics"},
	TGI:      {metricsPath: "/metrics", json: map[string]string{"/info": "tgi_info.json"}},
	SGLang:   {metricsPath: "/metrics"},
	TRTLLM:   {metricsPath: "/metrics"},
	Triton:   {metricsPath: "/metrics"},
	NIM:      {metricsPath: "/v1/metrics"},
	LlamaCpp: {metricsPath: "/metrics", json: map[string]string{"/props": "llamacpp_props.json", "/v1/models": "llamacpp_models.json"}},
}

// MetricsPath is the path an engine serves its metrics on ("/v1/metrics" for
// NIM, "/metrics" for the others).
func MetricsPath(e Engine) string { return engineTable[e].metricsPath }

// Output formats.
const (
	FormatText        = "text"
	FormatOpenMetrics = "openmetrics"
	FormatNegotiate   = "negotiate"
)

// Content types of the two formats.
const (
	ContentTypeText        = "text/plain; version=0.0.4; charset=utf-8"
	ContentTypeOpenMetrics = "application/openmetrics-text; version=1.0.0; charset=utf-8"
)

// Options configures a Server.
type Options struct {
	// Engine selects the endpoints and the default fixture.
	Engine Engine
	// Fixture is the exposition to serve (Prometheus text format 0.0.4).
	// Default: fixtures/<engine>.prom next to this package's source.
	Fixture string
	// Scenario is an optional scenario file that changes the fixture's
	// series over time; see README.md.
	Scenario string
	// Speed is scenario seconds per wall-clock second (default 1): at 10,
	// a one-minute scenario plays in six seconds.
	Speed float64
	// Format is "text" (default), "openmetrics", or "negotiate" (OpenMetrics
	// when the request's Accept header prefers it, text otherwise).
	Format string
	// Now replaces time.Now for the scenario clock (tests). The clock reads
	// 0 when New returns.
	Now func() time.Time
	// Logf, if set, receives one line per request.
	Logf func(format string, args ...any)
}

// Fault is a failure the server injects into metrics responses.
type Fault struct {
	// Status, if not 0 or 200, is the response status; the body is Body or
	// the status text.
	Status int
	// Delay holds the response back (wall-clock time).
	Delay time.Duration
	// Body, with Status 0 or 200, replaces the exposition.
	Body string
	// Truncate announces the full Content-Length, sends half the body and
	// drops the connection.
	Truncate bool
	// Huge serves this many bytes of junk instead of the exposition.
	Huge int64
}

func (f Fault) isZero() bool { return f == Fault{} }

// Server serves one engine's endpoints from a fixture and a scenario.
type Server struct {
	opts       Options
	info       engineInfo
	expo       *exposition
	scn        *scenario
	jsonBodies map[string][]byte
	now        func() time.Time
	start      time.Time

	mu sync.Mutex // guards the scenario's integration caches

	fault    atomic.Pointer[Fault]
	requests atomic.Int64

	srvMu   sync.Mutex
	httpSrv *http.Server
	served  chan struct{}
	closed  bool
}

// packageDir is the directory of this package's source, where fixtures/
// lives.
func packageDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "."
	}
	return filepath.Dir(file)
}

// FixturePath returns the default fixture of an engine.
func FixturePath(e Engine) string {
	return filepath.Join(packageDir(), "fixtures", string(e)+".prom")
}

// New loads and validates the fixture and the scenario. Errors name the file
// and line at fault.
func New(opts Options) (*Server, error) {
	info, ok := engineTable[opts.Engine]
	if !ok {
		names := make([]string, 0, len(engineTable))
		for _, e := range Engines() {
			names = append(names, string(e))
		}
		return nil, fmt.Errorf("unknown engine %q (want one of %s)", opts.Engine, strings.Join(names, ", "))
	}
	if opts.Speed == 0 {
		opts.Speed = 1
	}
	if !(opts.Speed > 0) || math.IsInf(opts.Speed, 0) {
		return nil, fmt.Errorf("speed %v must be positive", opts.Speed)
	}
	switch opts.Format {
	case "":
		opts.Format = FormatText
	case FormatText, FormatOpenMetrics, FormatNegotiate:
	default:
		return nil, fmt.Errorf("unknown format %q (want text, openmetrics or negotiate)", opts.Format)
	}
	if opts.Fixture == "" {
		opts.Fixture = FixturePath(opts.Engine)
	}
	data, err := os.ReadFile(opts.Fixture)
	if err != nil {
		return nil, err
	}
	expo, err := parseExposition(opts.Fixture, data)
	if err != nil {
		return nil, err
	}
	scn := emptyScenario(expo)
	if opts.Scenario != "" {
		sdata, err := os.ReadFile(opts.Scenario)
		if err != nil {
			return nil, err
		}
		if scn, err = parseScenario(opts.Scenario, sdata, expo); err != nil {
			return nil, err
		}
	}
	s := &Server{opts: opts, info: info, expo: expo, scn: scn, jsonBodies: map[string][]byte{}, now: opts.Now}
	for path, file := range info.json {
		full := filepath.Join(packageDir(), "fixtures", file)
		b, err := os.ReadFile(full)
		if err != nil {
			return nil, err
		}
		if !json.Valid(b) {
			return nil, fmt.Errorf("%s: not valid JSON", full)
		}
		s.jsonBodies[path] = b
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.start = s.now()
	return s, nil
}

// ScenarioTime is the current scenario time in seconds.
func (s *Server) ScenarioTime() float64 {
	return s.now().Sub(s.start).Seconds() * s.opts.Speed
}

// RenderAt returns the exposition at scenario time t in the given format
// ("text" or "openmetrics"). The same t always gives the same bytes.
func (s *Server) RenderAt(t float64, format string) ([]byte, error) {
	if format != FormatText && format != FormatOpenMetrics {
		return nil, fmt.Errorf("unknown format %q", format)
	}
	s.mu.Lock()
	vals := s.expo.baseValues()
	s.scn.eval(t, vals)
	s.mu.Unlock()
	if format == FormatOpenMetrics {
		return s.expo.renderOpenMetrics(vals), nil
	}
	return s.expo.renderText(vals), nil
}

// SetFault makes metrics responses fail as f says, overriding any fault of
// the scenario; SetFault(Fault{}) clears it.
func (s *Server) SetFault(f Fault) {
	if f.isZero() {
		s.fault.Store(nil)
		return
	}
	s.fault.Store(&f)
}

// Requests is the number of metrics requests handled so far (faulty
// responses included; other endpoints are not counted). A request is counted
// before the first byte of its response is written: once a client has a
// response, Requests includes it.
func (s *Server) Requests() int { return int(s.requests.Load()) }

// Handler serves the engine's endpoints.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serveHTTP)
}

// Start listens on addr (e.g. "127.0.0.1:0") and serves in the background.
// It returns the base URL, "http://127.0.0.1:PORT".
func (s *Server) Start(addr string) (string, error) {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.httpSrv != nil || s.closed {
		return "", errors.New("enginereplay: server already started or closed")
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr)
	if err != nil {
		return "", err
	}
	s.httpSrv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.served = make(chan struct{})
	go func(srv *http.Server, done chan struct{}) {
		defer close(done)
		_ = srv.Serve(ln)
	}(s.httpSrv, s.served)
	return "http://" + ln.Addr().String(), nil
}

// Close stops the listener and drops open connections. It is safe to call
// more than once and without Start.
func (s *Server) Close() error {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	s.closed = true
	if s.httpSrv == nil {
		return nil
	}
	err := s.httpSrv.Close()
	<-s.served
	s.httpSrv = nil
	return err
}

// reply is a response decided before any byte of it is written, so that the
// request is counted and logged before the client can see it.
type reply struct {
	status   int
	header   map[string]string
	body     []byte
	junk     int64 // bytes of junk to stream instead of body
	truncate bool  // send half the body, then drop the connection
	metrics  bool  // a request to the metrics path
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	began := time.Now()
	rep := s.decide(r)
	if rep.metrics {
		s.requests.Add(1)
	}
	size := int64(len(rep.body))
	if rep.junk > 0 {
		size = rep.junk
	}
	if s.opts.Logf != nil {
		note := ""
		switch {
		case rep.status == 0:
			note = " (client gone)"
		case rep.truncate:
			note = " (truncated)"
		}
		s.opts.Logf("%s %s %d %dB %s%s", r.Method, r.URL.Path, rep.status, size, time.Since(began).Round(time.Microsecond), note)
	}
	if rep.status == 0 {
		return
	}
	h := w.Header()
	for k, v := range rep.header {
		h.Set(k, v)
	}
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(rep.status)
	if r.Method == http.MethodHead {
		return
	}
	switch {
	case rep.junk > 0:
		writeJunk(r.Context(), w, rep.junk)
	case rep.truncate:
		_, _ = w.Write(rep.body[:len(rep.body)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		// Abort the response: the client sees fewer bytes than announced.
		panic(http.ErrAbortHandler)
	default:
		_, _ = w.Write(rep.body)
	}
}

func textReply(status int, body string) reply {
	return reply{status: status, header: map[string]string{"Content-Type": "text/plain; charset=utf-8"}, body: []byte(body)}
}

// decide works out the response to r. It waits out a delay fault; if the
// client goes away meanwhile, the reply has status 0 and nothing is written.
func (s *Server) decide(r *http.Request) reply {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rep := textReply(http.StatusMethodNotAllowed, "method not allowed\n")
		rep.header["Allow"] = "GET, HEAD"
		return rep
	}
	if r.URL.Path != s.info.metricsPath {
		if b, ok := s.jsonBodies[r.URL.Path]; ok {
			return reply{status: http.StatusOK, header: map[string]string{"Content-Type": "application/json"}, body: b}
		}
		return textReply(http.StatusNotFound, "404 page not found\n")
	}
	rep := s.decideMetrics(r)
	rep.metrics = true
	return rep
}

func (s *Server) decideMetrics(r *http.Request) reply {
	t := s.ScenarioTime()
	var f Fault
	var ok bool
	if p := s.fault.Load(); p != nil {
		f, ok = *p, true
	} else {
		f, ok = s.scn.activeFault(t)
	}
	if ok && f.Delay > 0 {
		timer := time.NewTimer(f.Delay)
		select {
		case <-timer.C:
		case <-r.Context().Done():
			timer.Stop()
			return reply{}
		}
	}
	switch {
	case ok && f.Status != 0 && f.Status != http.StatusOK:
		body := f.Body
		if body == "" {
			body = http.StatusText(f.Status) + "\n"
		}
		return textReply(f.Status, body)
	case ok && f.Huge > 0:
		return reply{status: http.StatusOK, header: map[string]string{"Content-Type": ContentTypeText}, junk: f.Huge}
	}
	format := s.opts.Format
	if format == FormatNegotiate {
		format = negotiate(r.Header.Get("Accept"))
	}
	rep := reply{status: http.StatusOK, header: map[string]string{"Content-Type": ContentTypeText}, truncate: ok && f.Truncate}
	if ok && f.Body != "" {
		rep.body = []byte(f.Body)
		return rep
	}
	rep.body, _ = s.RenderAt(t, format)
	if format == FormatOpenMetrics {
		rep.header["Content-Type"] = ContentTypeOpenMetrics
	}
	return rep
}

// writeJunk streams n bytes that are not a valid exposition.
func writeJunk(ctx context.Context, w io.Writer, n int64) {
	const line = "junk junk junk junk junk junk junk junk junk junk junk junk junk junk junk\n"
	chunk := []byte(strings.Repeat(line, 64<<10/len(line)))
	for n > 0 {
		if ctx.Err() != nil {
			return
		}
		c := chunk
		if int64(len(c)) > n {
			c = c[:n]
		}
		m, err := w.Write(c)
		n -= int64(m)
		if err != nil {
			return
		}
	}
}

// negotiate picks OpenMetrics when the Accept header gives it a higher
// quality than plain text, text otherwise.
func negotiate(accept string) string {
	qOM, qText := -1.0, -1.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		switch mt {
		case "application/openmetrics-text":
			qOM = max(qOM, q)
		case "text/plain", "text/*", "*/*":
			qText = max(qText, q)
		}
	}
	if qOM > 0 && qOM > qText {
		return FormatOpenMetrics
	}
	return FormatText
}

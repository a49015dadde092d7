// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package alertwebhookexporter

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/collector/consumer/consumererror"
)

// rawServer answers every request on loopback with the bytes of raw (a
// whole HTTP response, status line included), so that a test can send what
// httptest cannot: any reason phrase, any header, any body bytes.
func rawServer(t *testing.T, raw func() []byte) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }() // the test's server side, done answering
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				_, _ = c.Write(raw())
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

func postOnce(t *testing.T, url string) error {
	t.Helper()
	e := newTestExporter(t, url, func(c *Config) { c.Format = FormatJSON })
	return e.post(context.Background(), e.main, []byte(`{}`), 1)
}

func checkPrintable(t *testing.T, msg string, limit int) {
	t.Helper()
	if len(msg) > limit {
		t.Fatalf("error of %d bytes (max %d): %.120q...", len(msg), limit, msg)
	}
	if !utf8.ValidString(msg) {
		t.Fatalf("error is not UTF-8: %.120q", msg)
	}
	for _, r := range msg {
		if !unicode.IsPrint(r) {
			t.Fatalf("error holds %U: %.200q", r, msg)
		}
	}
}

func TestRefusalMessageIsBoundedAndPrintable(t *testing.T) {
	body := "\x00\x1b[2J<html>\r\n\tbad\xff\xfe alert\u2028" + strings.Repeat("é", 2000)
	reason := "Bad \x7fRequest " + strings.Repeat("\x01z", 5000)
	url := rawServer(t, func() []byte {
		return []byte("HTTP/1.1 400 " + reason + "\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body)
	})
	err := postOnce(t, url)
	if !consumererror.IsPermanent(err) {
		t.Fatalf("a 400 gave %v; want a permanent error", err)
	}
	msg := err.Error()
	checkPrintable(t, msg, len(url)+800)
	if !strings.Contains(msg, "400") || !strings.Contains(msg, "bad alert") {
		t.Fatalf("the error lost the status or the body's text: %q", msg)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestRetryAfterIsClamped(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   string // the throttle's delay as exporterhelper prints it; "" = none
	}{
		{"86400", "30s"},                // a day: cut to max_interval
		{"99999999999999999999", "30s"}, // overflows an int64 of nanoseconds
		{"9223372036", "30s"},           // overflows once multiplied by 1e9
		{"Fri, 31 Dec 9999 23:59:59 GMT", "30s"},
		{"5", "5s"},
		{"0", ""},
		{"-5", ""},
		{"soon", ""},
		{"Thu, 01 Jan 1970 00:00:00 GMT", ""}, // in the past
	} {
		t.Run(tc.header, func(t *testing.T) {
			url := rawServer(t, func() []byte {
				return []byte("HTTP/1.1 503 Service Unavailable\r\nRetry-After: " + tc.header + "\r\nContent-Length: 0\r\n\r\n")
			})
			err := postOnce(t, url)
			if err == nil || consumererror.IsPermanent(err) {
				t.Fatalf("a 503 gave %v; want a retryable error", err)
			}
			got := ""
			if s, ok := strings.CutPrefix(err.Error(), "Throttle ("); ok {
				got, _, _ = strings.Cut(s, ")")
			}
			if got != tc.want {
				t.Fatalf("Retry-After %q: throttled for %q, want %q (%v)", tc.header, got, tc.want, err)
			}
		})
	}
}

// countingTransport counts the response body bytes the client read.
type countingTransport struct{ read atomic.Int64 }

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.read}
	return resp, nil
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func TestEndlessResponseIsNotReadUnbounded(t *testing.T) {
	for _, code := range []int{200, 400, 503} {
		l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
			chunk := []byte(strings.Repeat("x", 64<<10))
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		})}
		go func() { _ = srv.Serve(l) }()
		e := newTestExporter(t, "http://"+l.Addr().String(), func(c *Config) { c.Format = FormatJSON })
		ct := &countingTransport{}
		e.main.client = &http.Client{Transport: ct, Timeout: 20 * time.Second}
		start := time.Now()
		err = e.post(context.Background(), e.main, []byte(`{}`), 1)
		took := time.Since(start)
		_ = srv.Close()
		if (code == 200) != (err == nil) {
			t.Fatalf("%d with an endless body: %v", code, err)
		}
		if n := ct.read.Load(); n > maxErrorBody+1+1<<20 {
			t.Fatalf("%d: read %d bytes of an endless body", code, n)
		}
		if took > 10*time.Second {
			t.Fatalf("%d: an endless body held the request for %s", code, took)
		}
		if err != nil {
			checkPrintable(t, err.Error(), 1000)
		}
	}
}

// FuzzJudgeResponse feeds what a receiver controls in its answer — status
// code, status line, Retry-After, body — to the exporter's judgement of it.
// Properties: no panic; success exactly for 2xx; permanent exactly for what
// the README calls not retryable (not 2xx, 408, 429 or >= 500); a wait only
// for a retryable answer and never above the cap; an error message that is
// printable UTF-8 and bounded whatever the body and reason; printable is
// idempotent; and a delay-seconds Retry-After within the cap is honoured to
// the second.
func FuzzJudgeResponse(f *testing.F) {
	f.Add(400, "400 Bad Request", "", []byte(`{"code":400,"message":"json: cannot unmarshal string into Go value of type []*models.PostableAlert"}`))
	f.Add(503, "503 Service Unavailable", "120", []byte("<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>\r\n"))
	f.Add(429, "429 Too Many Requests", "Wed, 21 Oct 2015 07:28:00 GMT", []byte(`{"ok":false,"error":"rate_limited"}`))
	f.Add(200, "200 OK", "", []byte(""))
	f.Add(302, "302 Found", "", []byte("redirect"))
	f.Add(999, "999 \x00\xff", "99999999999999999999999", []byte("\x1b[31m\xc3\x28"))
	f.Add(-1, "", "-5", []byte(strings.Repeat("\u2028", 300)))
	f.Fuzz(func(t *testing.T, code int, status, header string, body []byte) {
		const url = "http://alertmanager.test:9093/api/v2/alerts"
		const maxWait = 30 * time.Second
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		wait, err := judgeResponse(url, 3, code, status, header, body, maxWait, now)
		ok := code >= 200 && code < 300
		retryable := !ok && (code == 408 || code == 429 || code >= 500)
		switch {
		case ok != (err == nil):
			t.Fatalf("code %d: error %v", code, err)
		case err != nil && consumererror.IsPermanent(err) == retryable:
			t.Fatalf("code %d: permanent=%v", code, consumererror.IsPermanent(err))
		case wait < 0 || wait > maxWait || (wait > 0 && !retryable):
			t.Fatalf("code %d, Retry-After %q: wait %s", code, header, wait)
		}
		if err != nil {
			// URL, the fixed words, the code, the cut reason and body.
			checkPrintable(t, err.Error(), len(url)+80+20+maxReason+3+maxErrorBody+3)
		}
		for _, limit := range []int{0, 5, maxErrorBody} {
			p := printable(body, limit)
			if again := printable([]byte(p), limit+3); again != p {
				t.Fatalf("printable is not idempotent: %q then %q", p, again)
			}
		}
		if retryable {
			if s, err := strconv.ParseUint(strings.TrimSpace(header), 10, 64); err == nil && s > 0 && s <= 30 && wait != time.Duration(s)*time.Second {
				t.Fatalf("Retry-After %q gave %s", header, wait)
			}
		}
	})
}

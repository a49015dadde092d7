// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmenginereceiver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/llmops-otel/otelcol-llmops/internal/ratelimit"
	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver/internal/metadata"
)

// The engines' real answers, as the engine replay serves them.
const replayFixtures = "../../tests/enginereplay/fixtures"

func readReplayFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(replayFixtures, name))
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return b
}

func TestModelFromInfoAnswers(t *testing.T) {
	long := strings.Repeat("x", maxModelName+1)
	for _, tc := range []struct {
		name   string
		parse  func([]byte) (string, error)
		body   string
		want   string
		errHas string
	}{
		{"tgi", modelFromTGIInfo, string(readReplayFixture(t, "tgi_info.json")), "mistralai/Mistral-7B-Instruct-v0.3", ""},
		{"props path", modelFromLlamaCppProps, string(readReplayFixture(t, "llamacpp_props.json")), "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", ""},
		{"props alias", modelFromLlamaCppProps, `{"model_alias":"llama-8b","model_path":"/m/x.gguf"}`, "llama-8b", ""},
		{"models", modelFromModelList, string(readReplayFixture(t, "llamacpp_models.json")), "/models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", ""},
		// Older llama.cpp named the file only inside default_generation_settings:
		// /props then fails and the caller asks /v1/models.
		{"old props", modelFromLlamaCppProps, `{"default_generation_settings":{"model":"/m/x.gguf","n_ctx":4096},"total_slots":1}`, "", "no model_alias or model_path"},
		{"props root", modelFromLlamaCppProps, `{"model_path":"/"}`, "", "no model_alias"},
		{"tgi empty", modelFromTGIInfo, `{"model_id":""}`, "", "no model_id"},
		{"tgi wrong type", modelFromTGIInfo, `{"model_id":5}`, "", "cannot unmarshal"},
		{"tgi not json", modelFromTGIInfo, `<html>502</html>`, "", "TGI /info"},
		{"tgi too long", modelFromTGIInfo, `{"model_id":"` + long + `"}`, "", "more than 256"},
		{"tgi control", modelFromTGIInfo, `{"model_id":"a\u0000b"}`, "", "unprintable"},
		{"tgi newline", modelFromTGIInfo, `{"model_id":"a\nb"}`, "", "unprintable"},
		{"tgi trimmed", modelFromTGIInfo, `{"model_id":"  org/m  "}`, "org/m", ""},
		{"tgi blank", modelFromTGIInfo, `{"model_id":"   "}`, "", "blank"},
		{"models empty", modelFromModelList, `{"data":[]}`, "", "no models listed"},
		{"models wrong type", modelFromModelList, `{"data":"x"}`, "", "cannot unmarshal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.parse([]byte(tc.body))
			if tc.errHas == "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.errHas) || got != "" {
				t.Fatalf("got %q, %v; want an error saying %q", got, err, tc.errHas)
			}
			if len(err.Error()) > 300 {
				t.Fatalf("error of %d bytes: %.100s...", len(err.Error()), err)
			}
		})
	}
	// Invalid UTF-8 straight in the JSON string (encoding/json turns it
	// into U+FFFD, which is printable: the name is kept, still valid UTF-8).
	if got, err := modelFromTGIInfo([]byte("{\"model_id\":\"a\xffb\"}")); err != nil || !utf8.ValidString(got) {
		t.Fatalf("invalid UTF-8 gave %q, %v", got, err)
	}
	if _, err := checkModelName("a\xffb"); err == nil {
		t.Fatal("checkModelName accepted invalid UTF-8")
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

// endless answers every request with a body that never ends (chunked, no
// Content-Length), until the client goes away.
func endless(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	chunk := bytes.Repeat([]byte(`{"model_id":"x",`), 4096)
	for r.Context().Err() == nil {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

func testTarget(t *testing.T, handler http.HandlerFunc) (*target, *countingTransport) {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	ct := &countingTransport{}
	t.Cleanup(func() { http.DefaultTransport.(*http.Transport).CloseIdleConnections() })
	cfg := createDefaultConfig().(*Config)
	r := &engineReceiver{cfg: cfg, set: receivertest.NewNopSettings(metadata.Type), warn: ratelimit.New(time.Minute)}
	return &target{r: r, endpoint: srv.URL + "/metrics", client: &http.Client{Transport: ct}}, ct
}

func TestHostileInfoModelKeepsTheLastOne(t *testing.T) {
	var answer atomic.Value
	answer.Store(`{"model_id":"org/good"}`)
	tg, _ := testTarget(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, answer.Load().(string)) })
	tg.engine = "tgi"
	if m := tg.modelFromInfo(); m != "org/good" {
		t.Fatalf("model %q", m)
	}
	// 100,000 BEL characters: refused, the last known model stays.
	answer.Store(`{"model_id":"` + strings.Repeat(`\u0007`, 100000) + `"}`)
	tg.infoAt = time.Time{}
	if m := tg.modelFromInfo(); m != "org/good" {
		t.Fatalf("after a hostile answer the model is %d bytes: %.40q", len(m), m)
	}
}

func TestInfoBodyIsBounded(t *testing.T) {
	tg, ct := testTarget(t, endless)
	_, err := tg.jsonField(context.Background(), "/info", modelFromTGIInfo)
	if err == nil || !strings.Contains(err.Error(), "more than the limit of 1048576 bytes") {
		t.Fatalf("an endless /info answer gave %v; want it refused at 1 MiB", err)
	}
	// Read: the limit and the one byte that shows it is exceeded.
	if n := ct.read.Load(); n > maxInfoBody+1 {
		t.Fatalf("read %d bytes of an endless /info answer; the limit is %d", n, maxInfoBody)
	}

	// An announced length over the limit is refused before reading.
	tg, ct = testTarget(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "2000000")
		_, _ = w.Write(bytes.Repeat([]byte(" "), 2000000))
	})
	if _, err := tg.jsonField(context.Background(), "/info", modelFromTGIInfo); err == nil || !strings.Contains(err.Error(), "announced 2000000 bytes") {
		t.Fatalf("an announced 2 MB /info answer gave %v", err)
	}
	if n := ct.read.Load(); n > 64<<10 {
		t.Fatalf("read %d bytes of an answer refused by its Content-Length", n)
	}
}

func TestScrapeBodyIsBounded(t *testing.T) {
	tg, ct := testTarget(t, endless)
	tg.r.cfg.MaxBodySize = 256 << 10
	_, err := tg.fetchInto(context.Background(), &tg.buf, tg.endpoint, acceptHeader, tg.r.cfg.MaxBodySize, scrapeHint)
	if err == nil || !strings.Contains(err.Error(), "raise max_body_size") {
		t.Fatalf("an endless exposition gave %v", err)
	}
	if n := ct.read.Load(); n > tg.r.cfg.MaxBodySize+1 {
		t.Fatalf("read %d bytes of an endless exposition; max_body_size is %d", n, tg.r.cfg.MaxBodySize)
	}
}

// infoParsers are the info answers' parsers, and how to write a document
// naming a model for each (the fuzz target's round trip).
var infoParsers = []struct {
	parse func([]byte) (string, error)
	doc   func(string) any
}{
	{modelFromTGIInfo, func(m string) any { return map[string]string{"model_id": m} }},
	{modelFromLlamaCppProps, func(m string) any { return map[string]string{"model_alias": m} }},
	{modelFromModelList, func(m string) any { return map[string][]map[string]string{"data": {{"id": m}}} }},
}

// FuzzInfoModel feeds an engine's info answer (TGI /info, llama.cpp /props,
// /v1/models; which picks the parser) to its parser. Properties: no panic;
// either a model name or an error, never both; the name is non-blank,
// printable UTF-8 of at most maxModelName bytes; the error is short; and
// the name is a fixed point — a fresh answer naming it yields it again.
func FuzzInfoModel(f *testing.F) {
	for i, name := range []string{"tgi_info.json", "llamacpp_props.json", "llamacpp_models.json"} {
		f.Add(uint8(i), readReplayFixture(f, name))
	}
	f.Add(uint8(0), []byte(`{"model_id":"`+strings.Repeat("a", 300)+`"}`))
	f.Add(uint8(1), []byte(`{"default_generation_settings":{"model":"/m/x.gguf"}}`))
	f.Add(uint8(0), []byte(strings.Repeat("[", 20000)))
	f.Add(uint8(0), []byte("{\"model_id\":\"\xff\xfe\"}"))
	f.Add(uint8(2), []byte(`{"data":[{"id":1e999999}]}`))
	f.Add(uint8(1), []byte(`{"model_path":"C:\\models\\x.gguf","total_slots":123456789012345678901234567890}`))
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		p := infoParsers[int(which)%len(infoParsers)]
		m, err := p.parse(body)
		if err != nil {
			if m != "" {
				t.Fatalf("both a model %q and an error %v", m, err)
			}
			if len(err.Error()) > 300 {
				t.Fatalf("error of %d bytes: %.100s...", len(err.Error()), err)
			}
			return
		}
		if m == "" || len(m) > maxModelName || !utf8.ValidString(m) || strings.TrimSpace(m) != m {
			t.Fatalf("model %q (%d bytes) is not a sane name", m, len(m))
		}
		for _, r := range m {
			if !unicode.IsPrint(r) {
				t.Fatalf("model %q holds %U", m, r)
			}
		}
		doc, err := json.Marshal(p.doc(m))
		if err != nil {
			t.Fatal(err)
		}
		if again, err := p.parse(doc); err != nil || again != m {
			t.Fatalf("a fresh answer naming %q gave %q, %v", m, again, err)
		}
	})
}

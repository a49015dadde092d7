// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmenginereceiver

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver/internal/metadata"
	"github.com/llmops-otel/otelcol-llmops/tests/enginereplay"
)

// startEngine serves an engine's fixture on loopback.
func startEngine(t *testing.T, engine enginereplay.Engine) (*enginereplay.Server, string) {
	t.Helper()
	srv, err := enginereplay.New(enginereplay.Options{Engine: engine})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	path := "/metrics"
	if engine == "nim" {
		path = "/v1/metrics"
	}
	return srv, hs.URL + path
}

// run starts a receiver on cfg and returns its sink; the receiver is shut
// down when the test ends.
func run(t *testing.T, cfg *Config) *consumertest.MetricsSink {
	t.Helper()
	sink := new(consumertest.MetricsSink)
	r, err := newReceiver(cfg, receivertest.NewNopSettings(metadata.Type), sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return sink
}

func configFor(endpoints ...string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.CollectionInterval = time.Hour // one scrape at start; tests wait for it
	cfg.InitialDelay = 0
	for _, e := range endpoints {
		cfg.Targets = append(cfg.Targets, TargetConfig{ClientConfig: newClientConfig(e)})
	}
	return cfg
}

// waitScrapes waits until the sink holds n scrapes.
func waitScrapes(t *testing.T, sink *consumertest.MetricsSink, n int) []pmetric.Metrics {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for len(sink.AllMetrics()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d scrapes after 15s, want %d", len(sink.AllMetrics()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return sink.AllMetrics()
}

func resourceAttr(m pmetric.Metrics, key string) string {
	v, _ := m.ResourceMetrics().At(0).Resource().Attributes().Get(key)
	return v.AsString()
}

func gaugeValue(m pmetric.Metrics, name string) (float64, bool) {
	ms := m.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Name() == name {
			dp := ms.At(i).Gauge().DataPoints().At(0)
			if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
				return float64(dp.IntValue()), true
			}
			return dp.DoubleValue(), true
		}
	}
	return 0, false
}

func metricNames(m pmetric.Metrics) []string {
	var out []string
	ms := m.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		out = append(out, ms.At(i).Name())
	}
	return out
}

// TestEngines scrapes each engine's fixture and compares the exact points
// with a golden file (timestamps, the scrape duration and the random port
// excepted).
func TestEngines(t *testing.T) {
	for _, tc := range []struct {
		engine enginereplay.Engine
		model  string
	}{
		{"vllm", ""}, {"tgi", ""}, {"sglang", ""}, {"trtllm", ""}, {"triton", ""}, {"nim", ""}, {"llamacpp", ""},
	} {
		t.Run(string(tc.engine), func(t *testing.T) {
			_, endpoint := startEngine(t, tc.engine)
			got := waitScrapes(t, run(t, configFor(endpoint)), 1)[0]
			if e := resourceAttr(got, "llm.engine.name"); e != string(tc.engine) {
				t.Errorf("detected engine %q, want %q", e, tc.engine)
			}
			if up, _ := gaugeValue(got, "llm.engine.up"); up != 1 {
				t.Fatalf("llm.engine.up = %v", up)
			}
			for _, n := range metricNames(got) {
				if strings.HasSuffix(n, "_created") {
					t.Errorf("%s: _created series must be consumed, not emitted", n)
				}
			}
			maskTarget(got)
			path := filepath.Join("testdata", "engines", string(tc.engine)+".yaml")
			if os.Getenv("UPDATE_GOLDEN") != "" {
				if err := golden.WriteMetrics(t, path, got); err != nil {
					t.Fatal(err)
				}
			}
			want, err := golden.ReadMetrics(path)
			if err != nil {
				t.Fatalf("%v (UPDATE_GOLDEN=1 creates it)", err)
			}
			if err := pmetrictest.CompareMetrics(want, got,
				pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
				pmetrictest.IgnoreMetricValues("llm.engine.scrape.duration"),
				pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(),
				pmetrictest.IgnoreMetricDataPointsOrder()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// maskTarget replaces the test server's random URL, which golden files
// cannot hold, wherever the receiver records it.
func maskTarget(m pmetric.Metrics) {
	const masked = "http://engine.test/metrics"
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		rm.Resource().Attributes().PutStr("llm.engine.target", masked)
		ms := rm.ScopeMetrics().At(0).Metrics()
		for k := 0; k < ms.Len(); k++ {
			if mt := ms.At(k); strings.HasPrefix(mt.Name(), "llm.engine.") {
				mt.Gauge().DataPoints().At(0).Attributes().PutStr("llm.engine.target", masked)
			}
		}
	}
}

func TestModelDetection(t *testing.T) {
	// vLLM names it in labels, TGI in /info, llama.cpp in /props.
	for _, engine := range []enginereplay.Engine{"vllm", "tgi", "llamacpp"} {
		t.Run(string(engine), func(t *testing.T) {
			_, endpoint := startEngine(t, engine)
			got := waitScrapes(t, run(t, configFor(endpoint)), 1)[0]
			if model := resourceAttr(got, "gen_ai.request.model"); model == "" {
				t.Fatalf("no gen_ai.request.model for %s", engine)
			}
		})
	}
	_, endpoint := startEngine(t, "tgi")
	cfg := configFor(endpoint)
	cfg.Targets[0].Model = "my-finetune"
	if m := resourceAttr(waitScrapes(t, run(t, cfg), 1)[0], "gen_ai.request.model"); m != "my-finetune" {
		t.Fatalf("configured model not used: %q", m)
	}
}

func TestTargetFailuresReportDown(t *testing.T) {
	// A port nobody listens on.
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/metrics"
	_ = l.Close()

	for name, fault := range map[string]enginereplay.Fault{
		"5xx":       {Status: http.StatusServiceUnavailable},
		"slow":      {Delay: 3 * time.Second},
		"garbage":   {Body: "vllm:num_requests_running{model_name=\"x\" 1\n"},
		"truncated": {Truncate: true},
		"huge":      {Huge: 2 << 20},
		"dead":      {},
	} {
		t.Run(name, func(t *testing.T) {
			endpoint := dead
			if name != "dead" {
				srv, ep := startEngine(t, "vllm")
				srv.SetFault(fault)
				endpoint = ep
			}
			cfg := configFor(endpoint)
			cfg.Timeout = 500 * time.Millisecond
			cfg.MaxBodySize = 1 << 20
			start := time.Now()
			got := waitScrapes(t, run(t, cfg), 1)[0]
			if up, ok := gaugeValue(got, "llm.engine.up"); !ok || up != 0 {
				t.Fatalf("llm.engine.up = %v (present %v), want 0", up, ok)
			}
			if _, ok := gaugeValue(got, "llm.engine.scrape.duration"); !ok {
				t.Fatal("no scrape duration for a failed scrape")
			}
			if n := len(metricNames(got)); n != 2 {
				t.Fatalf("a failed scrape emitted %d metrics (%v); only up and duration allowed", n, metricNames(got))
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("a failing target took %s", time.Since(start))
			}
		})
	}
}

func TestOneDeadTargetDoesNotDelayOthers(t *testing.T) {
	slow, slowEP := startEngine(t, "tgi")
	slow.SetFault(enginereplay.Fault{Delay: 10 * time.Second})
	_, fastEP := startEngine(t, "vllm")
	cfg := configFor(slowEP, fastEP)
	cfg.CollectionInterval = 100 * time.Millisecond
	cfg.Timeout = 20 * time.Second
	cfg.Targets[0].CollectionInterval = time.Hour
	cfg.Targets[0].Timeout = 20 * time.Second
	sink := run(t, cfg)
	deadline := time.Now().Add(5 * time.Second)
	fast := 0
	for time.Now().Before(deadline) && fast < 5 {
		fast = 0
		for _, m := range sink.AllMetrics() {
			if resourceAttr(m, "llm.engine.target") == fastEP {
				fast++
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if fast < 5 {
		t.Fatalf("the healthy target was scraped %d times while the other hung", fast)
	}
}

// TestReDetectsAfterUpgrade serves TGI's metrics, then vLLM's from the same
// URL (a redeploy): the engine follows.
func TestReDetectsAfterUpgrade(t *testing.T) {
	tgi, err := enginereplay.New(enginereplay.Options{Engine: "tgi"})
	if err != nil {
		t.Fatal(err)
	}
	vllm, err := enginereplay.New(enginereplay.Options{Engine: "vllm"})
	if err != nil {
		t.Fatal(err)
	}
	var upgraded atomic.Bool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if upgraded.Load() {
			vllm.Handler().ServeHTTP(w, r)
			return
		}
		tgi.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	cfg := configFor(hs.URL + "/metrics")
	cfg.CollectionInterval = 50 * time.Millisecond
	sink := run(t, cfg)
	first := waitScrapes(t, sink, 1)[0]
	if e := resourceAttr(first, "llm.engine.name"); e != "tgi" {
		t.Fatalf("first detection %q", e)
	}
	upgraded.Store(true)
	deadline := time.Now().Add(10 * time.Second)
	for {
		all := sink.AllMetrics()
		if resourceAttr(all[len(all)-1], "llm.engine.name") == "vllm" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("engine not re-detected after the metric names changed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestResourceAttributesAndUpPoints(t *testing.T) {
	_, endpoint := startEngine(t, "vllm")
	cfg := configFor(endpoint)
	cfg.Targets[0].ResourceAttributes = map[string]string{"k8s.pod.name": "vllm-7b-0"}
	got := waitScrapes(t, run(t, cfg), 1)[0]
	if v := resourceAttr(got, "k8s.pod.name"); v != "vllm-7b-0" {
		t.Fatalf("extra resource attribute: %q", v)
	}
	if v := resourceAttr(got, "llm.engine.target"); v != endpoint {
		t.Fatalf("llm.engine.target %q", v)
	}
	ms := got.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Name() != "llm.engine.up" {
			continue
		}
		attrs := ms.At(i).Gauge().DataPoints().At(0).Attributes()
		for k, want := range map[string]string{"llm.engine.name": "vllm", "llm.engine.target": endpoint} {
			if v, _ := attrs.Get(k); v.Str() != want {
				t.Errorf("llm.engine.up %s = %q", k, v.Str())
			}
		}
	}
}

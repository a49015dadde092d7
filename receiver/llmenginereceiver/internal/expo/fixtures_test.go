// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package expo

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
)

func metricsByName(ms pmetric.MetricSlice) map[string]pmetric.Metric {
	out := make(map[string]pmetric.Metric, ms.Len())
	for i := range ms.Len() {
		out[ms.At(i).Name()] = ms.At(i)
	}
	return out
}

func TestFixtureVLLM(t *testing.T) {
	body := readFixture(t, "vllm.prom")
	c := NewConverter(Options{})
	ms, st := convert(t, c, string(body), FormatText, t0)
	if st.Families != 50 || st.InvalidSeries+st.DuplicateSeries != 0 || len(st.Problems) != 0 {
		t.Fatalf("stats %+v", st)
	}
	byName := metricsByName(ms)
	for name := range byName {
		if strings.HasSuffix(name, "_created") {
			t.Errorf("_created family emitted: %s", name)
		}
	}
	// Older and newer vLLM names side by side, emitted as the engine names them.
	for name, typ := range map[string]pmetric.MetricType{
		"vllm:gpu_cache_usage_perc":          pmetric.MetricTypeGauge, // older
		"vllm:kv_cache_usage_perc":           pmetric.MetricTypeGauge, // newer
		"vllm:num_requests_swapped":          pmetric.MetricTypeGauge, // older
		"vllm:time_per_output_token_seconds": pmetric.MetricTypeHistogram,
		"vllm:inter_token_latency_seconds":   pmetric.MetricTypeHistogram,
		"vllm:prompt_tokens_total":           pmetric.MetricTypeSum,
		"vllm:prefix_cache_hits_total":       pmetric.MetricTypeSum,
		"vllm:iteration_tokens_total":        pmetric.MetricTypeHistogram, // a histogram ending in _total
		"python_gc_objects_collected_total":  pmetric.MetricTypeSum,
		"process_start_time_seconds":         pmetric.MetricTypeGauge,
		"vllm:cache_config_info":             pmetric.MetricTypeGauge,
	} {
		m, ok := byName[name]
		if !ok {
			t.Errorf("%s missing", name)
			continue
		}
		if m.Type() != typ {
			t.Errorf("%s is a %s, want %s", name, m.Type(), typ)
		}
	}
	one := pmetric.NewMetricSlice()
	byName["vllm:time_to_first_token_seconds"].CopyTo(one.AppendEmpty())
	byName["vllm:prompt_tokens_by_source_total"].CopyTo(one.AppendEmpty())
	byName["vllm:cache_config_info"].CopyTo(one.AppendEmpty())
	want := trimDoc(`
		vllm:time_to_first_token_seconds histogram(Cumulative) help="Histogram of time to first token in seconds."
		  {model_name="facebook/opt-125m"} start=1700000000 ts=1700000000 count=1 sum=0.31326723098754883 bounds=[0.001 0.005 0.01 0.02 0.04 0.06 0.08 0.1 0.25 0.5 0.75 1 2.5 5 7.5 10] counts=[0 0 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0]
		vllm:prompt_tokens_by_source_total sum(Cumulative,monotonic=true) help="Number of prompt tokens by source."
		  {model_name="facebook/opt-125m",source="local_compute"} start=1700000000 ts=1700000000 v=53
		  {model_name="facebook/opt-125m",source="local_cache_hit"} start=1700000000 ts=1700000000 v=64
		  {model_name="facebook/opt-125m",source="external_kv_transfer"} start=1700000000 ts=1700000000 v=0
		vllm:cache_config_info gauge help="information of cache_config"
		  {block_size="16",cache_dtype="auto",cpu_kvcache_space_bytes="4294967296",enable_prefix_caching="False",gpu_memory_utilization="0.9",num_cpu_blocks="0",num_gpu_blocks="7281",num_gpu_blocks_override="None",sliding_window="None",swap_space_bytes="4294967296"} ts=1700000000 v=1
	`)
	if got := dump(one); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// A second scrape of the same body: same start times, no resets.
	ms2, st2 := convert(t, c, string(body), FormatText, at(15*time.Second))
	if st2.Resets != 0 {
		t.Errorf("resets on an identical scrape: %d", st2.Resets)
	}
	if a, b := dump(ms), strings.ReplaceAll(dump(ms2), "ts=1700000015", "ts=1700000000"); a != b {
		t.Errorf("second scrape differs beyond timestamps")
	}
}

// withCreatedFamilies adds what prometheus_client (Python) exposes when
// created timestamps are enabled: a gauge family X_created next to every
// counter X_total and histogram X, with the same labels. Counters get it
// after their samples, histograms before, to exercise both orders.
func withCreatedFamilies(t *testing.T, body []byte, created string) string {
	t.Helper()
	typeRe := regexp.MustCompile(`^# TYPE (\S+) (counter|histogram)$`)
	var out, pending strings.Builder
	var fam, typ, base string
	flush := func() {
		if pending.Len() == 0 {
			return
		}
		out.WriteString("# HELP " + base + "_created Created.\n# TYPE " + base + "_created gauge\n")
		out.WriteString(pending.String())
		pending.Reset()
	}
	var histLines []string // a histogram family held back to put its _created first
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# HELP ") {
			if typ == "histogram" {
				flush()
				out.WriteString(strings.Join(histLines, "\n") + "\n")
				histLines = nil
			} else {
				flush()
			}
			fam, typ = "", ""
		}
		if m := typeRe.FindStringSubmatch(line); m != nil {
			fam, typ = m[1], m[2]
			base = strings.TrimSuffix(fam, "_total")
			if typ == "histogram" {
				base = fam
			}
		}
		labels := ""
		if i := strings.IndexByte(line, '{'); i >= 0 {
			labels = line[i : strings.IndexByte(line, '}')+1]
		}
		switch {
		case typ == "counter" && strings.HasPrefix(line, fam+"{"), typ == "counter" && strings.HasPrefix(line, fam+" "):
			pending.WriteString(base + "_created" + labels + " " + created + "\n")
		case typ == "histogram" && strings.HasPrefix(line, fam+"_count"):
			pending.WriteString(base + "_created" + labels + " " + created + "\n")
		}
		if typ == "histogram" || (strings.HasPrefix(line, "# HELP ") && strings.Contains(line, " Histogram")) {
			histLines = append(histLines, line)
			continue
		}
		if len(histLines) > 0 {
			out.WriteString(strings.Join(histLines, "\n") + "\n")
			histLines = nil
		}
		out.WriteString(line + "\n")
	}
	if typ == "histogram" {
		flush()
		out.WriteString(strings.Join(histLines, "\n") + "\n")
	} else {
		flush()
	}
	return out.String()
}

func TestFixtureVLLMCreatedFamilies(t *testing.T) {
	body := readFixture(t, "vllm.prom")
	withCreated := withCreatedFamilies(t, body, "1.6999e+09")
	bases := len(regexp.MustCompile(`(?m)^# TYPE \S+ (counter|histogram)$`).FindAll(body, -1))
	if n := strings.Count(withCreated, "_created gauge"); n != bases || n == 0 {
		t.Fatalf("%d _created families injected for %d counters and histograms", n, bases)
	}
	plain, stPlain := convert(t, NewConverter(Options{}), string(body), FormatText, t0)
	got, st := convert(t, NewConverter(Options{}), withCreated, FormatText, t0)
	if st.Families != stPlain.Families || st.Series != stPlain.Series || st.Points <= stPlain.Points || len(st.Problems) != 0 {
		t.Fatalf("stats %+v, without _created %+v", st, stPlain)
	}
	// Everything identical, except that every counter and histogram now
	// starts at its _created time; gauges have no start time.
	want := strings.ReplaceAll(dump(plain), "start=1700000000", "start=1699900000")
	if g := dump(got); g != want {
		t.Errorf("with _created families:\n%s\nwant\n%s", g, want)
	}
	if !strings.Contains(withCreated, "# TYPE vllm:e2e_request_latency_seconds_created gauge\nvllm:e2e_request_latency_seconds_created{model_name=\"facebook/opt-125m\"} 1.6999e+09\n# HELP vllm:e2e_request_latency_seconds ") {
		t.Errorf("histogram _created family not placed before its base family")
	}
}

func TestFixtureVLLMSameNamesInBothFormats(t *testing.T) {
	body := readFixture(t, "vllm.prom")
	om := string(testutil.ToOpenMetrics(body))
	if !strings.Contains(om, "# TYPE vllm:prompt_tokens counter\n") {
		t.Fatalf("conversion to OpenMetrics did not rename the counter families")
	}
	text, _ := convert(t, NewConverter(Options{}), string(body), FormatText, t0)
	got, st := convert(t, NewConverter(Options{}), om, FormatOpenMetrics, t0)
	if len(st.Problems) != 0 {
		t.Fatalf("problems: %q", st.Problems)
	}
	if a, b := dump(got), dump(text); a != b {
		t.Errorf("OpenMetrics output differs from text:\n%s\nwant\n%s", a, b)
	}
}

func TestFixtureTGI(t *testing.T) {
	body := readFixture(t, "tgi.prom")
	c := NewConverter(Options{})
	ms, st := convert(t, c, string(body), FormatText, t0)
	if st.Families != 13 || st.InvalidSeries+st.DuplicateSeries != 0 || len(st.Problems) != 0 {
		t.Fatalf("stats %+v", st)
	}
	byName := metricsByName(ms)
	one := pmetric.NewMetricSlice()
	for _, n := range []string{"tgi_request_skipped_tokens", "tgi_request_count", "tgi_batch_inference_count", "tgi_queue_size"} {
		byName[n].CopyTo(one.AppendEmpty())
	}
	want := trimDoc(`
		tgi_request_skipped_tokens summary help="Speculated tokens per request"
		  {} start=1700000000 ts=1700000000 count=3423 sum=0 q=[0:0 0.5:0 0.9:0 0.95:0 0.99:0 0.999:0 1:0]
		tgi_request_count sum(Cumulative,monotonic=true) help="Total number of requests"
		  {} start=1700000000 ts=1700000000 v=111
		tgi_batch_inference_count sum(Cumulative,monotonic=true) help="Inference calls per method (prefill or decode)"
		  {method="decode"} start=1700000000 ts=1700000000 v=1509
		  {method="prefill"} start=1700000000 ts=1700000000 v=16
		tgi_queue_size gauge help="Current queue size"
		  {} ts=1700000000 v=0
	`)
	if got := dump(one); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	h := byName["tgi_request_input_length"].Histogram().DataPoints().At(0)
	if h.Count() != 109 || h.Sum() != 662 || h.BucketCounts().Len() != h.ExplicitBounds().Len()+1 ||
		h.ExplicitBounds().At(0) != 5.11 || h.BucketCounts().At(0) != 0 || h.BucketCounts().At(1) != 109 {
		t.Errorf("tgi_request_input_length: count %d sum %v, %d bounds starting %v, counts %v",
			h.Count(), h.Sum(), h.ExplicitBounds().Len(), h.ExplicitBounds().At(0), h.BucketCounts().AsRaw()[:3])
	}
	if _, ok := byName["tgi_batch_concat"]; !ok {
		t.Errorf("family without HELP missing")
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package enginereplay

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustNew(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func render(t *testing.T, s *Server, at float64, format string) string {
	t.Helper()
	b, err := s.RenderAt(at, format)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Without a scenario the fixture is served as recorded, at any time, and
// both renderings are valid.
func TestRenderWithoutScenarioIsTheFixture(t *testing.T) {
	for _, e := range Engines() {
		t.Run(string(e), func(t *testing.T) {
			want, err := os.ReadFile(FixturePath(e))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(string(want), "\n") {
				want = append(want, '\n')
			}
			s := mustNew(t, Options{Engine: e})
			for _, at := range []float64{0, 1234.5} {
				if got := render(t, s, at, FormatText); got != string(want) {
					t.Fatalf("t=%v: rendering differs from the fixture", at)
				}
			}
			om := render(t, s, 0, FormatOpenMetrics)
			probs, _ := validateExposition(om, true)
			for _, p := range probs {
				t.Error("openmetrics:", p)
			}
		})
	}
}

func TestPythonFloatSpelling(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0.0"},
		{5, "5.0"},
		{-2.5, "-2.5"},
		{0.1, "0.1"},
		{0.31326723098754883, "0.31326723098754883"},
		{1e-05, "1e-05"},
		{123456, "123456.0"},
		{123456.5, "123456.5"},
		{1048576, "1.048576e+06"}, // as in the vLLM fixture
		{6634254336, "6.634254336e+09"},
		{1718140558.3, "1.7181405583e+09"},
		{8128902, "8.128902e+06"},
		{1234567.5, "1.2345675e+06"},
		{10000000, "1e+07"},
		{115891634176, "1.15891634176e+011"}, // the Python client's quirk
		{1e16, "1e+16"},
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
		{math.NaN(), "NaN"},
	} {
		if got := formatValue(c.v, stylePython); got != c.want {
			t.Errorf("python %v: got %q, want %q", c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		v    float64
		want string
	}{
		{3423, "3423"},
		{0, "0"},
		{245.91743839099996, "245.91743839099996"},
		{4712531.6181, "4712531.6181"},
		{85899345920, "85899345920"},
		{1e20, "1e+20"},
		{0.00001, "1e-05"},
	} {
		if got := formatValue(c.v, stylePlain); got != c.want {
			t.Errorf("plain %v: got %q, want %q", c.v, got, c.want)
		}
	}
}

func TestOpenMetricsRendering(t *testing.T) {
	t.Run("python text format with _created gauges", func(t *testing.T) {
		om := render(t, mustNew(t, Options{Engine: TRTLLM}), 0, FormatOpenMetrics)
		if !strings.HasSuffix(om, "\n# EOF\n") {
			t.Fatal("does not end with # EOF")
		}
		for _, want := range []string{
			"# TYPE trtllm_request_success counter\n" +
				`trtllm_request_success_total{engine_type="trtllm",finished_reason="stop",model_name="meta-llama/Llama-3.1-8B-Instruct"} 18342.0` + "\n" +
				`trtllm_request_success_created{engine_type="trtllm",finished_reason="stop",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.7520817473521042e+09` + "\n" +
				`trtllm_request_success_total{engine_type="trtllm",finished_reason="length",`,
			`trtllm_e2e_request_latency_seconds_sum{engine_type="trtllm",model_name="meta-llama/Llama-3.1-8B-Instruct"} 103542.5012069223` + "\n" +
				`trtllm_e2e_request_latency_seconds_created{engine_type="trtllm",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.7520817473521042e+09` + "\n",
			"# TYPE python_gc_objects_collected counter\n",
			"# TYPE process_cpu_seconds counter\nprocess_cpu_seconds_total 9321.47\n",
		} {
			if !strings.Contains(om, want) {
				t.Errorf("missing:\n%s", want)
			}
		}
		for _, bad := range []string{"_created gauge", "# TYPE trtllm_request_success_total", "\n\n"} {
			if strings.Contains(om, bad) {
				t.Errorf("has %q", bad)
			}
		}
	})
	t.Run("counters without _total, summary", func(t *testing.T) {
		om := render(t, mustNew(t, Options{Engine: TGI}), 0, FormatOpenMetrics)
		for _, want := range []string{
			"# TYPE tgi_request_success counter\ntgi_request_success_total 109\n",
			"# TYPE tgi_batch_concat counter\ntgi_batch_concat_total{reason=\"chunking\"} 3\n",
			"# TYPE tgi_request_skipped_tokens summary\n",
			"tgi_request_skipped_tokens{quantile=\"1.0\"} 0\n",
			"tgi_request_max_new_tokens_bucket{le=\"512.0\"} 109\n",
		} {
			if !strings.Contains(om, want) {
				t.Errorf("missing:\n%s", want)
			}
		}
	})
	t.Run("untyped, escapes, timestamps", func(t *testing.T) {
		fx := writeFile(t, "x.prom", "# HELP odd A \\\\ backslash, a \"quote\"\\nand a new line.\nodd{path=\"C:\\\\x\",q=\"say \\\"hi\\\"\"} 1.5 1700000000123\n")
		s := mustNew(t, Options{Engine: VLLM, Fixture: fx})
		if got, want := render(t, s, 0, FormatText), "# HELP odd A \\\\ backslash, a \"quote\"\\nand a new line.\nodd{path=\"C:\\\\x\",q=\"say \\\"hi\\\"\"} 1.5 1700000000123\n"; got != want {
			t.Errorf("text:\n%s\nwant\n%s", got, want)
		}
		want := "# HELP odd A \\\\ backslash, a \\\"quote\\\"\\nand a new line.\n# TYPE odd unknown\nodd{path=\"C:\\\\x\",q=\"say \\\"hi\\\"\"} 1.5 1700000000.123\n# EOF\n"
		if got := render(t, s, 0, FormatOpenMetrics); got != want {
			t.Errorf("openmetrics:\n%s\nwant\n%s", got, want)
		}
	})
}

func TestFixtureErrorsNameFileAndLine(t *testing.T) {
	for _, c := range []struct {
		name, content, want string
	}{
		{"duplicate", "foo 1\nfoo 2\n", ":2: duplicate sample"},
		{"negative counter", "# TYPE foo counter\nfoo -1\n", ":2: foo has value -1"},
		{"not cumulative", "# TYPE h histogram\nh_bucket{le=\"1\"} 5\nh_bucket{le=\"+Inf\"} 3\nh_count 3\n", ":1: histogram h{}: bucket le=+Inf count 3 is below"},
		{"no +Inf", "# TYPE h histogram\nh_bucket{le=\"1\"} 5\nh_count 5\n", ":1: histogram h{} has no +Inf bucket"},
		{"count mismatch", "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 5\nh_count 4\n", "_count 4 differs from the +Inf bucket 5"},
		{"descending le", "# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\n", "must ascend"},
		{"unterminated label", "foo{a=\"1} 2\n", ":1: unterminated quoted string"},
		{"interleaved", "foo 1\nbar 1\nfoo{x=\"y\"} 3\n", ":3: sample foo is not next to"},
		{"interleaved histogram", "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_count 1\nbar 1\nh_sum 3\n", ":5: sample h_sum is not next to"},
		{"second TYPE", "# TYPE foo gauge\n# TYPE foo gauge\nfoo 1\n", ":2: second TYPE for foo"},
		{"bad value", "# TYPE foo gauge\nfoo abc\n", ":2: invalid value \"abc\""},
		{"bad type", "# TYPE foo blah\nfoo 1\n", ":1: unknown metric type \"blah\""},
		{"bad name", "9foo 1\n", ":1: invalid metric name \"9foo\""},
		{"bucket without le", "# TYPE h histogram\nh_bucket 1\n", ":2: bucket h_bucket has no le label"},
		{"trailing junk", "foo 1 123 456\n", ":1: unexpected \"456\" after the value"},
		{"empty", "", ":1: empty exposition"},
		// The syntax is internal/promtext's strict reading.
		{"carriage return", "foo 1\r\n", ":1: carriage return"},
		{"fractional timestamp", "foo 1 1.5\n", ":1: invalid timestamp \"1.5\""},
		{"unknown escape", "foo{a=\"\\t\"} 1\n", ":1: invalid escape sequence \\t"},
		{"label twice", "foo{a=\"1\",a=\"2\"} 1\n", ":1: label \"a\" appears twice"},
		{"OpenMetrics type", "# TYPE foo info\nfoo 1\n", ":1: unknown metric type \"info\""},
		{"sample in the way of a histogram", "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh 1\n", ":3: sample h does not fit histogram family h"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx := writeFile(t, "bad.prom", c.content)
			_, err := New(Options{Engine: VLLM, Fixture: fx})
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), "bad.prom"+c.want) && !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "bad.prom:") {
				t.Fatalf("error %q does not name the file", err)
			}
		})
	}
}

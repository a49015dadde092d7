// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package enginereplay

import (
	"math"
	"strings"
	"testing"

	"github.com/llmops-otel/otelcol-llmops/internal/promtext"
)

// read renders the server at t and returns what the independent validator
// read, failing on any problem.
func read(t *testing.T, s *Server, at float64) *exposed {
	t.Helper()
	text := render(t, s, at, FormatText)
	probs, x := validateExposition(text, false)
	for _, p := range probs {
		t.Fatalf("t=%v: %s", at, p)
	}
	return x
}

// value returns the value of the one sample called name whose labels
// include those given as "k=v" pairs.
func value(t *testing.T, x *exposed, name string, labels ...string) float64 {
	t.Helper()
	for _, f := range x.families {
	next:
		for _, s := range f.samples {
			if s.name != name {
				continue
			}
			for _, kv := range labels {
				k, v, _ := strings.Cut(kv, "=")
				if s.labels[k] != v {
					continue next
				}
			}
			return s.value
		}
	}
	t.Fatalf("no sample %s%v", name, labels)
	return 0
}

const mathScenario = `# A scenario exercising every rule on the vLLM fixture.
epoch unix=1700000000
counter vllm:prompt_tokens_total rate=100 rate_to=300 start=10 end=30
counter vllm:generation_tokens_total rate=7.5          # no window: forever
counter vllm:request_success_total{finished_reason=~"len.*"} rate=2
gauge vllm:gpu_cache_usage_perc ramp from=0.3 to=0.97 start=0 end=60
gauge vllm:num_requests_waiting step at=5 value=7
gauge vllm:num_requests_running sine mean=10 amplitude=5 period=20 round=true
gauge vllm:cpu_cache_usage_perc set value=0.25 start=2 end=4
gauge vllm:cpu_cache_usage_perc set value=2 start=4 end=6 max=0.5
histogram vllm:time_to_first_token_seconds rate=20 median=0.08 median_to=0.9 factor=1.6 end=60
histogram vllm:time_to_first_token_seconds rate=20 median=0.9 factor=1 start=60
restart at=100
`

func TestScenarioCountersAndGauges(t *testing.T) {
	s := mustNew(t, Options{Engine: VLLM, Scenario: writeFile(t, "math.scenario", mathScenario)})
	m := map[string]string{"model_name": "facebook/opt-125m"}
	_ = m
	type check struct {
		at   float64
		name string
		want float64
	}
	for _, c := range []check{
		// Counter ramping from 100/s to 300/s over [10, 30): 5 in the fixture.
		{0, "vllm:prompt_tokens_total", 5},
		{10, "vllm:prompt_tokens_total", 5},
		{20, "vllm:prompt_tokens_total", 5 + 10*(100+200)/2},
		{30, "vllm:prompt_tokens_total", 5 + 20*(100+300)/2},
		{99, "vllm:prompt_tokens_total", 5 + 20*(100+300)/2},
		{4, "vllm:generation_tokens_total", 7 + 30},
		{4.1, "vllm:generation_tokens_total", 7 + 30}, // integral counters advance in whole steps
		{10, "vllm:request_success_total", 1 + 20},
		// Ramps hit their endpoints and hold.
		{0, "vllm:gpu_cache_usage_perc", 0.3},
		{30, "vllm:gpu_cache_usage_perc", 0.635},
		{60, "vllm:gpu_cache_usage_perc", 0.97},
		{90, "vllm:gpu_cache_usage_perc", 0.97},
		// Step.
		{4.99, "vllm:num_requests_waiting", 0},
		{5, "vllm:num_requests_waiting", 7},
		// Sine with rounding.
		{0, "vllm:num_requests_running", 10},
		{5, "vllm:num_requests_running", 15},
		{15, "vllm:num_requests_running", 5},
		// Set in windows, with a clamp; the fixture's value outside.
		{1, "vllm:cpu_cache_usage_perc", 0},
		{3, "vllm:cpu_cache_usage_perc", 0.25},
		{5, "vllm:cpu_cache_usage_perc", 0.5},
		{6, "vllm:cpu_cache_usage_perc", 0},
		// Restart at 100: counters from 0, gauges go on.
		{99.9, "vllm:generation_tokens_total", 7 + math.Floor(99.9*7.5)},
		{100, "vllm:generation_tokens_total", 0},
		{100, "vllm:prompt_tokens_total", 0},
		{110, "vllm:generation_tokens_total", 75},
		{110, "vllm:request_success_total", 20},
		{110, "vllm:prefix_cache_hits_total", 0},
		{110, "vllm:gpu_cache_usage_perc", 0.97},
		{110, "process_start_time_seconds", 1700000100},
		{99, "process_start_time_seconds", 1.7181405583e+09},
	} {
		x := read(t, s, c.at)
		if got := value(t, x, c.name); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("t=%v %s = %v, want %v", c.at, c.name, got, c.want)
		}
	}
}

func TestScenarioHistograms(t *testing.T) {
	s := mustNew(t, Options{Engine: VLLM, Scenario: writeFile(t, "math.scenario", mathScenario)})
	const h = "vllm:time_to_first_token_seconds"
	// Walk t in small steps: counters and histogram series never go down
	// (except at the restart), buckets stay cumulative with +Inf equal to
	// _count. The internal values are checked at every step, the rendered
	// text with the independent validator at every tenth.
	var prev []float64
	prevT := -1.0
	for i, at := 0, 0.0; at < 200; i, at = i+1, at+0.37 {
		vals := s.expo.baseValues()
		s.mu.Lock()
		s.scn.eval(at, vals)
		s.mu.Unlock()
		restarted := prevT < 100 && at >= 100
		for _, smp := range s.expo.samples {
			mono := smp.role == promtext.RoleBucket || smp.role == promtext.RoleCount || smp.role == promtext.RoleSum ||
				(smp.role == promtext.RoleValue && smp.fam.typ == typeCounter)
			if mono && prev != nil && !restarted && vals[smp.idx] < prev[smp.idx] {
				t.Fatalf("t=%v: %s{%s} went down from %v to %v", at, smp.name, smp.seriesKey, prev[smp.idx], vals[smp.idx])
			}
		}
		for _, f := range s.expo.families {
			if f.typ != typeHistogram {
				continue
			}
			last, count := map[string]float64{}, map[string]float64{}
			for _, smp := range f.samples {
				switch smp.role {
				case promtext.RoleBucket:
					if v, ok := last[smp.seriesKey]; ok && vals[smp.idx] < v {
						t.Fatalf("t=%v: %s{le=%v} below the bucket before it", at, smp.name, smp.le)
					}
					last[smp.seriesKey] = vals[smp.idx]
				case promtext.RoleCount:
					count[smp.seriesKey] = vals[smp.idx]
				}
			}
			for k, c := range count {
				if last[k] != c {
					t.Fatalf("t=%v: %s{%s} +Inf bucket %v, _count %v", at, f.name, k, last[k], c)
				}
			}
		}
		if i%10 == 0 {
			read(t, s, at)
		}
		prev, prevT = vals, at
	}
	// Count: 1 in the fixture plus 20/s.
	x := read(t, s, 60)
	if got := value(t, x, h+"_count"); got != 1+1200 {
		t.Errorf("count at 60 = %v, want 1201", got)
	}
	// The median at the end of the ramp is 0.9 s: of the observations made
	// between 59 and 60 s, half are at most ~0.9, so the (0.75, 1.0]
	// bucket holds the middle one.
	a, b := read(t, s, 59), read(t, s, 60)
	delta := func(le string) float64 {
		return value(t, b, h+"_bucket", "le="+le) - value(t, a, h+"_bucket", "le="+le)
	}
	total := delta("+Inf")
	if total != 20 {
		t.Fatalf("20 observations expected in a second, got %v", total)
	}
	if lo, hi := delta("0.75"), delta("1.0"); !(lo < total/2 && hi >= total/2) {
		t.Errorf("median not in (0.75, 1.0]: %v below 0.75, %v below 1.0 of %v", lo, hi, total)
	}
	// With factor=1 every observation is exactly at the median: after 60 s
	// all new observations land in the (0.75, 1.0] bucket; the sum grows
	// by exactly 0.9 per observation.
	c, d := read(t, s, 70), read(t, s, 80)
	if got := value(t, d, h+"_bucket", "le=0.75") - value(t, c, h+"_bucket", "le=0.75"); got != 0 {
		t.Errorf("%v observations below 0.75 after 60 s", got)
	}
	if got := value(t, d, h+"_bucket", "le=1.0") - value(t, c, h+"_bucket", "le=1.0"); got != 200 {
		t.Errorf("%v observations in (0.75, 1.0] between 70 and 80 s, want 200", got)
	}
	if got := value(t, d, h+"_sum") - value(t, c, h+"_sum"); math.Abs(got-180) > 1e-6 {
		t.Errorf("sum grew by %v, want 180", got)
	}
	// After the restart the histogram starts from zero.
	r := read(t, s, 100)
	if got := value(t, r, h+"_count"); got != 0 {
		t.Errorf("count right after the restart = %v", got)
	}
	if got := value(t, r, h+"_sum"); got != 0 {
		t.Errorf("sum right after the restart = %v", got)
	}
	if got := value(t, read(t, s, 110), h+"_count"); got != 200 {
		t.Errorf("count 10 s after the restart = %v, want 200", got)
	}
}

func TestScenarioRestartMovesCreated(t *testing.T) {
	sc := writeFile(t, "r.scenario", "epoch unix=1752090000\ncounter trtllm_request_success_total rate=3\nrestart at=50\nrestart at=20\n")
	s := mustNew(t, Options{Engine: TRTLLM, Scenario: sc})
	before := read(t, s, 19)
	if got := value(t, before, "trtllm_request_success_created", "finished_reason=stop"); got != 1.7520817473521042e+09 {
		t.Errorf("created before the restart = %v", got)
	}
	if got := value(t, before, "trtllm_request_success_total", "finished_reason=stop"); got != 18342+57 {
		t.Errorf("success before the restart = %v", got)
	}
	for _, c := range []struct{ at, created, success float64 }{{20, 1752090020, 0}, {30, 1752090020, 30}, {50, 1752090050, 0}, {51, 1752090050, 3}} {
		x := read(t, s, c.at)
		if got := value(t, x, "trtllm_request_success_created", "finished_reason=stop"); got != c.created {
			t.Errorf("t=%v created = %v, want %v", c.at, got, c.created)
		}
		if got := value(t, x, "trtllm_e2e_request_latency_seconds_created"); got != c.created {
			t.Errorf("t=%v histogram created = %v, want %v", c.at, got, c.created)
		}
		if got := value(t, x, "trtllm_request_success_total", "finished_reason=stop"); got != c.success {
			t.Errorf("t=%v success = %v, want %v", c.at, got, c.success)
		}
		if got := value(t, x, "trtllm_e2e_request_latency_seconds_count"); got != 0 {
			t.Errorf("t=%v histogram count = %v, want 0", c.at, got)
		}
		if got := value(t, x, "python_gc_objects_collected_total", "generation=0"); got != 0 {
			t.Errorf("t=%v process counters survive the restart: %v", c.at, got)
		}
	}
	// In OpenMetrics the moved _created sits in the counter family.
	om := render(t, s, 30, FormatOpenMetrics)
	if !strings.Contains(om, `trtllm_request_success_created{engine_type="trtllm",finished_reason="stop",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.75209002e+09`) {
		t.Error("moved _created missing from the OpenMetrics rendering")
	}
}

func TestRenderingIsDeterministic(t *testing.T) {
	path := "scenarios/vllm-kv-saturation.scenario"
	a := mustNew(t, Options{Engine: VLLM, Scenario: path})
	b := mustNew(t, Options{Engine: VLLM, Scenario: path})
	first := render(t, a, 73.3, FormatText)
	for _, at := range []float64{10, 200, 0.1, 73.3, 73.2} {
		render(t, a, at, FormatText)
	}
	if render(t, a, 73.3, FormatText) != first || render(t, b, 73.3, FormatText) != first {
		t.Fatal("the same t rendered differently")
	}
	om := render(t, a, 73.3, FormatOpenMetrics)
	if om != render(t, b, 73.3, FormatOpenMetrics) {
		t.Fatal("the same t rendered differently in OpenMetrics")
	}
	probs, _ := validateExposition(om, true)
	for _, p := range probs {
		t.Error("openmetrics:", p)
	}
}

func TestShippedScenarios(t *testing.T) {
	t.Run("vllm-kv-saturation", func(t *testing.T) {
		s := mustNew(t, Options{Engine: VLLM, Scenario: "scenarios/vllm-kv-saturation.scenario"})
		ttftMedian := func(from, to float64) (lo, hi float64) {
			a, b := read(t, s, from), read(t, s, to)
			const h = "vllm:time_to_first_token_seconds_bucket"
			les := []string{"0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1", "0.25", "0.5", "0.75", "1.0", "2.5", "5.0", "7.5", "10.0", "+Inf"}
			total := value(t, b, h, "le=+Inf") - value(t, a, h, "le=+Inf")
			prev := 0.0
			for _, le := range les {
				if value(t, b, h, "le="+le)-value(t, a, h, "le="+le) >= total/2 {
					x, _ := parseFloat(le)
					return prev, x
				}
				prev, _ = parseFloat(le)
			}
			return prev, math.Inf(1)
		}
		if lo, hi := ttftMedian(0, 2); !(lo < 0.09 && hi >= 0.08) {
			t.Errorf("TTFT median at the start in (%v, %v], want about 0.08", lo, hi)
		}
		if lo, hi := ttftMedian(58, 60); !(lo <= 0.9 && hi >= 0.9) {
			t.Errorf("TTFT median at 60 s in (%v, %v], want about 0.9", lo, hi)
		}
		prevWaiting := -1.0
		for _, c := range []struct{ at, kv float64 }{{0, 0.3}, {30, 0.635}, {60, 0.97}, {90, 0.97}} {
			x := read(t, s, c.at)
			for _, g := range []string{"vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"} {
				if got := value(t, x, g); math.Abs(got-c.kv) > 1e-9 {
					t.Errorf("t=%v %s = %v, want %v", c.at, g, got, c.kv)
				}
			}
			w := value(t, x, "vllm:num_requests_waiting")
			if c.at >= 30 && w <= prevWaiting {
				t.Errorf("t=%v waiting %v did not grow from %v", c.at, w, prevWaiting)
			}
			prevWaiting = w
		}
		if got := value(t, read(t, s, 40), "vllm:num_preemptions_total"); got != 0 {
			t.Errorf("preemptions before 40 s: %v", got)
		}
		p50, p60 := value(t, read(t, s, 50), "vllm:num_preemptions_total"), value(t, read(t, s, 60), "vllm:num_preemptions_total")
		if !(p50 > 0 && p60 > p50) {
			t.Errorf("preemptions not rising after 40 s: %v at 50 s, %v at 60 s", p50, p60)
		}
		if a, b := value(t, read(t, s, 10), "vllm:prompt_tokens_total"), value(t, read(t, s, 20), "vllm:prompt_tokens_total"); b-a != 40960 {
			t.Errorf("prompt tokens advanced %v in 10 s, want 40960", b-a)
		}
	})
	t.Run("tgi-steady", func(t *testing.T) {
		s := mustNew(t, Options{Engine: TGI, Scenario: "scenarios/tgi-steady.scenario"})
		for _, at := range []float64{0, 7, 31, 600} {
			x := read(t, s, at)
			if q := value(t, x, "tgi_queue_size"); q < 0 || q > 4 || q != math.Round(q) {
				t.Errorf("t=%v queue %v", at, q)
			}
		}
		a, b := read(t, s, 100), read(t, s, 200)
		if got := value(t, b, "tgi_request_success") - value(t, a, "tgi_request_success"); got != 1200 {
			t.Errorf("success advanced %v in 100 s, want 1200", got)
		}
		if got := value(t, b, "tgi_request_inference_duration_count") - value(t, a, "tgi_request_inference_duration_count"); got != 1200 {
			t.Errorf("inference duration count advanced %v in 100 s, want 1200", got)
		}
	})
}

// medianBucket returns the bucket bounds (lo, hi] holding the median of a
// histogram's observations between scenario times from and to.
func medianBucket(t *testing.T, s *Server, name string, from, to float64) (lo, hi float64) {
	t.Helper()
	a, b := read(t, s, from), read(t, s, to)
	type bucket struct{ le, n float64 }
	var bs []bucket
	for _, f := range b.families {
		for _, smp := range f.samples {
			if smp.name != name+"_bucket" {
				continue
			}
			le, err := parseFloat(smp.labels["le"])
			if err != nil {
				t.Fatalf("%s le=%q: %v", name, smp.labels["le"], err)
			}
			bs = append(bs, bucket{le, smp.value - value(t, a, smp.name, "le="+smp.labels["le"])})
		}
	}
	if len(bs) == 0 || bs[len(bs)-1].n == 0 {
		t.Fatalf("%s: no observations between %v and %v", name, from, to)
	}
	total := bs[len(bs)-1].n
	prev := 0.0
	for _, x := range bs {
		if x.n >= total/2 {
			return prev, x.le
		}
		prev = x.le
	}
	return prev, math.Inf(1)
}

// TestRootcauseScenarios checks the stories the root-cause end-to-end tests
// (tests/e2e/rootcause_test.go) rely on.
func TestRootcauseScenarios(t *testing.T) {
	const (
		ttft    = "vllm:time_to_first_token_seconds"
		e2e     = "vllm:e2e_request_latency_seconds"
		waiting = "vllm:num_requests_waiting"
		kv      = "vllm:kv_cache_usage_perc"
		gen     = "vllm:generation_tokens_total"
	)
	median := func(t *testing.T, s *Server, name string, from, to, wantLo, wantHi float64) {
		t.Helper()
		if lo, hi := medianBucket(t, s, name, from, to); lo < wantLo || hi > wantHi {
			t.Errorf("%s median over %v..%v s in (%v, %v], want within (%v, %v]", name, from, to, lo, hi, wantLo, wantHi)
		}
	}
	rate := func(t *testing.T, s *Server, name string, from, to float64) float64 {
		t.Helper()
		return (value(t, read(t, s, to), name) - value(t, read(t, s, from), name)) / (to - from)
	}
	t.Run("vllm-healthy", func(t *testing.T) {
		s := mustNew(t, Options{Engine: VLLM, Scenario: "scenarios/vllm-healthy.scenario"})
		for at := 0.0; at <= 300; at += 7 {
			x := read(t, s, at)
			if v := value(t, x, kv); v < 0.3 || v > 0.4 {
				t.Errorf("t=%v KV cache %v", at, v)
			}
			if w := value(t, x, waiting); w < 0 || w > 3 {
				t.Errorf("t=%v waiting %v", at, w)
			}
		}
		for _, from := range []float64{10, 100, 290} {
			median(t, s, ttft, from, from+10, 0.08, 0.1)
			median(t, s, e2e, from, from+10, 2.5, 5)
			if r := rate(t, s, gen, from, from+10); r != 1100 {
				t.Errorf("generated tokens/s at %v s: %v", from, r)
			}
		}
	})
	t.Run("vllm-cpu-bound", func(t *testing.T) {
		s := mustNew(t, Options{Engine: VLLM, Scenario: "scenarios/vllm-cpu-bound.scenario"})
		prev := -1.0
		for at := 35.0; at <= 75; at += 5 {
			w := value(t, read(t, s, at), waiting)
			if w <= prev {
				t.Errorf("t=%v waiting %v did not grow from %v", at, w, prev)
			}
			prev = w
		}
		if w := value(t, read(t, s, 30), waiting); w > 1 {
			t.Errorf("waiting %v before the scheduler falls behind", w)
		}
		if w := value(t, read(t, s, 75), waiting); w <= 50 {
			t.Errorf("waiting %v at 75 s, want > 50", w)
		}
		for at := 0.0; at <= 150; at += 5 {
			if v := value(t, read(t, s, at), kv); v > 0.25 {
				t.Errorf("t=%v KV cache %v, want it low", at, v)
			}
		}
		if p := value(t, read(t, s, 150), "vllm:num_preemptions_total"); p != 0 {
			t.Errorf("%v preemptions", p)
		}
		median(t, s, ttft, 25, 35, 0.08, 0.1)
		median(t, s, ttft, 38, 41, 0.5, 1)
		median(t, s, ttft, 70, 80, 2.5, 5)
		median(t, s, e2e, 70, 80, 5, 10)
		if a, b := rate(t, s, gen, 20, 30), rate(t, s, gen, 80, 90); a != 1100 || b != 450 {
			t.Errorf("generated tokens/s %v before, %v after; want 1100 then 450", a, b)
		}
	})
	t.Run("vllm-cold-start", func(t *testing.T) {
		s := mustNew(t, Options{Engine: VLLM, Scenario: "scenarios/vllm-cold-start.scenario"})
		if n := value(t, read(t, s, 0), gen); n != 0 {
			t.Errorf("generated tokens %v at start, want a fresh engine", n)
		}
		median(t, s, ttft, 0, 15, 5, 7.5)
		median(t, s, e2e, 0, 15, 10, 15)
		median(t, s, ttft, 16, 30, 0.08, 0.1)
		median(t, s, e2e, 16, 30, 2.5, 5)
		if r := rate(t, s, gen, 0, 15); r != 60 {
			t.Errorf("generated tokens/s during warm-up: %v", r)
		}
		if r := rate(t, s, gen, 20, 120); r != 1100 {
			t.Errorf("generated tokens/s after warm-up: %v", r)
		}
		for at := 0.0; at <= 120; at += 3 {
			if w := value(t, read(t, s, at), waiting); w >= 10 {
				t.Errorf("t=%v waiting %v: a cold start must not look like a queue build-up", at, w)
			}
		}
	})
	t.Run("vllm-throughput-drop", func(t *testing.T) {
		s := mustNew(t, Options{Engine: VLLM, Scenario: "scenarios/vllm-throughput-drop.scenario"})
		if a, b := rate(t, s, gen, 20, 35), rate(t, s, gen, 38, 120); a != 1100 || b != 400 {
			t.Errorf("generated tokens/s %v before, %v after; want 1100 then 400", a, b)
		}
		// Over the fall the rate is linear: 750 tokens/s at 36.5 s.
		if r := rate(t, s, gen, 36, 37); math.Abs(r-750) > 2 {
			t.Errorf("generated tokens/s over 36..37 s %v, want ~750", r)
		}
		for at := 36.0; at <= 150; at += 1 {
			if w := value(t, read(t, s, at), waiting); w < 1 || w >= 10 {
				t.Errorf("t=%v waiting %v, want some (>= 1) but fewer than queue.min_waiting (10)", at, w)
			}
		}
		for at := 0.0; at <= 150; at += 5 {
			if v := value(t, read(t, s, at), kv); v > 0.4 {
				t.Errorf("t=%v KV cache %v, want it low", at, v)
			}
		}
		for _, from := range []float64{10, 60} {
			q, h := rate(t, s, "vllm:prefix_cache_queries_total", from, from+15), rate(t, s, "vllm:prefix_cache_hits_total", from, from+15)
			if r := h / q; math.Abs(r-0.4) > 0.01 {
				t.Errorf("prefix-cache hit ratio over %v..%v s %v, want 0.4", from, from+15, r)
			}
		}
		median(t, s, ttft, 60, 70, 0.1, 0.25)
		median(t, s, e2e, 60, 70, 2.5, 5)
	})
	t.Run("vllm-kv-fills", func(t *testing.T) {
		s := mustNew(t, Options{Engine: VLLM, Scenario: "scenarios/vllm-kv-fills.scenario"})
		for at, want := range map[float64][2]float64{20: {0.3, 0.4}, 42.5: {0.6, 0.68}, 47: {0.83, 0.87}, 60: {0.97, 0.97}} {
			if v := value(t, read(t, s, at), kv); v < want[0] || v > want[1] {
				t.Errorf("t=%v KV cache %v, want %v..%v", at, v, want[0], want[1])
			}
		}
		median(t, s, ttft, 20, 30, 0.08, 0.1)
		median(t, s, ttft, 43, 53, 1, 2.5)
		median(t, s, e2e, 43, 53, 5, 10)
		if w := value(t, read(t, s, 60), waiting); w != 30 {
			t.Errorf("waiting at 60 s: %v", w)
		}
	})
	t.Run("vllm-memory-pressure", func(t *testing.T) {
		s := mustNew(t, Options{Engine: VLLM, Scenario: "scenarios/vllm-memory-pressure.scenario"})
		ratio := func(from, to float64) float64 {
			return rate(t, s, "vllm:prefix_cache_hits_total", from, to) / rate(t, s, "vllm:prefix_cache_queries_total", from, to)
		}
		if r := ratio(20, 40); r != 0.8 {
			t.Errorf("hit ratio before 40 s %v, want 0.8", r)
		}
		if r := ratio(43, 60); r != 0.25 {
			t.Errorf("hit ratio after 43 s %v, want 0.25", r)
		}
		median(t, s, ttft, 25, 35, 0.08, 0.1)
		median(t, s, ttft, 45, 55, 1, 2.5)
		for at := 0.0; at <= 90; at += 9 {
			if v := value(t, read(t, s, at), kv); v < 0.35 || v > 0.45 {
				t.Errorf("t=%v KV cache %v", at, v)
			}
		}
	})
	t.Run("vllm-cache-hit-drop", func(t *testing.T) {
		s := mustNew(t, Options{Engine: VLLM, Scenario: "scenarios/vllm-cache-hit-drop.scenario"})
		ratio := func(from, to float64) float64 {
			return rate(t, s, "vllm:prefix_cache_hits_total", from, to) / rate(t, s, "vllm:prefix_cache_queries_total", from, to)
		}
		if r := ratio(20, 40); r != 0.9 {
			t.Errorf("hit ratio before 40 s %v, want 0.9", r)
		}
		if r := ratio(40, 55); r != 0.3 {
			t.Errorf("hit ratio after 40 s %v, want 0.3", r)
		}
		if q := rate(t, s, "vllm:prefix_cache_queries_total", 30, 60); q != 3000 {
			t.Errorf("prefix-cache queries %v/s, want a steady 3000", q)
		}
		if r := rate(t, s, gen, 20, 80); r != 1100 {
			t.Errorf("generated tokens/s %v, want a steady 1100", r)
		}
		for _, from := range []float64{25, 45, 60} {
			median(t, s, ttft, from, from+10, 0.08, 0.1)
			median(t, s, e2e, from, from+10, 2.5, 5)
		}
	})
}

func TestScenarioErrorsNameFileAndLine(t *testing.T) {
	for _, c := range []struct {
		name, engine, line, want string
	}{
		{"no such metric", "vllm", `counter vllm:nope rate=1`, "selector vllm:nope matches nothing"},
		{"no such series", "vllm", `counter vllm:prompt_tokens_total{model_name="other"} rate=1`, `matches no series of vllm:prompt_tokens_total`},
		{"gauge rule on counter", "vllm", `gauge vllm:prompt_tokens_total set value=1`, "vllm:prompt_tokens_total is a counter, this rule needs a gauge or untyped"},
		{"counter rule on gauge", "vllm", `counter vllm:num_requests_waiting rate=1`, "is a gauge, this rule needs a counter"},
		{"histogram rule on summary", "tgi", `histogram tgi_request_skipped_tokens rate=1 median=1`, "is a summary, this rule needs a histogram"},
		{"negative rate", "vllm", `counter vllm:prompt_tokens_total rate=-1`, "cannot be negative"},
		{"ramp without end", "vllm", `counter vllm:prompt_tokens_total rate=1 rate_to=2`, "needs an end="},
		{"gauge ramp without end", "vllm", `gauge vllm:num_requests_waiting ramp from=0 to=1`, "ramp needs end="},
		{"unknown record", "vllm", `bogus x=1`, `unknown record "bogus"`},
		{"unknown key", "vllm", `counter vllm:prompt_tokens_total rate=1 speed=2`, `unknown key "speed"`},
		{"duplicate key", "vllm", `counter vllm:prompt_tokens_total rate=1 rate=2`, `key "rate" given twice`},
		{"bad number", "vllm", `counter vllm:prompt_tokens_total rate=fast`, "rate=fast is not a number"},
		{"zero median", "vllm", `histogram vllm:time_to_first_token_seconds rate=1 median=0`, "median must be positive"},
		{"small factor", "vllm", `histogram vllm:time_to_first_token_seconds rate=1 median=1 factor=0.5`, "factor=0.5 must be at least 1"},
		{"empty window", "vllm", `counter vllm:prompt_tokens_total rate=1 start=5 end=5`, "end=5 must be after start=5"},
		{"fault without effect", "vllm", `fault start=1 end=2`, "fault does nothing"},
		{"bad status", "vllm", `fault start=1 end=2 status=42`, "status=42 is not an HTTP status"},
		{"bad delay", "vllm", `fault start=1 delay=soon`, "delay=soon is not a duration"},
		{"bad size", "vllm", `fault start=1 huge=lots`, "huge=lots is not a byte count"},
		{"missing selector", "vllm", `counter rate=1`, "counter needs a series selector"},
		{"bad selector", "vllm", `counter vllm:prompt_tokens_total{model_name~"x"} rate=1`, "expected =, !=, =~ or !~"},
		{"unbalanced", "vllm", `counter vllm:prompt_tokens_total{model_name="x" rate=1`, "unbalanced '{'"},
		{"gauge mode", "vllm", `gauge vllm:num_requests_waiting wobble value=1`, `unknown gauge mode "wobble"`},
		{"second epoch", "vllm", "epoch unix=1\nepoch unix=2", "second epoch (first on line 3)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Two harmless lines first, so the line number is checked.
			content := "# comment\n\n" + c.line + "\n"
			p := writeFile(t, "bad.scenario", content)
			_, err := New(Options{Engine: Engine(c.engine), Scenario: p})
			if err == nil {
				t.Fatal("no error")
			}
			wantLine := "bad.scenario:3: "
			if c.name == "second epoch" {
				wantLine = "bad.scenario:4: "
			}
			if !strings.Contains(err.Error(), wantLine) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want %q and %q", err, wantLine, c.want)
			}
		})
	}
}

func TestScenarioSelectors(t *testing.T) {
	sc := writeFile(t, "s.scenario", `
counter nv_inference_request_success{model=~"ensemble|tensorrt_llm"} rate=10
counter nv_inference_request_failure{model="tensorrt_llm",reason!="CANCELED"} rate=1
counter nv_inference_count_total{model!~"pre.*|post.*"} rate=2   # _total is optional
gauge nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="fraction"} ramp from=0.62 to=0.99 end=10
gauge nv_gpu_utilization{gpu_uuid="GPU-3b0c5a2e-7d41-4c9a-9f2e-1a6d0e5b8c47"} set value=1
`)
	s := mustNew(t, Options{Engine: Triton, Scenario: sc})
	x := read(t, s, 10)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"nv_inference_request_success", []string{"model=ensemble"}, 20553 + 100},
		{"nv_inference_request_success", []string{"model=tensorrt_llm"}, 20553 + 100},
		{"nv_inference_request_success", []string{"model=preprocessing"}, 20567},
		{"nv_inference_request_failure", []string{"model=tensorrt_llm", "reason=BACKEND"}, 10},
		{"nv_inference_request_failure", []string{"model=tensorrt_llm", "reason=CANCELED"}, 11},
		{"nv_inference_request_failure", []string{"model=ensemble", "reason=BACKEND"}, 0},
		{"nv_inference_count", []string{"model=ensemble"}, 20553 + 20},
		{"nv_inference_count", []string{"model=postprocessing"}, 5467564},
		{"nv_trt_llm_kv_cache_block_metrics", []string{"kv_cache_block_type=fraction"}, 0.99},
		{"nv_trt_llm_kv_cache_block_metrics", []string{"kv_cache_block_type=used"}, 11304},
		{"nv_gpu_utilization", nil, 1},
	} {
		if got := value(t, x, c.name, c.labels...); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Plain-style fixtures keep their spelling for changed values too.
	text := render(t, s, 10, FormatText)
	if !strings.Contains(text, `nv_inference_count{model="ensemble",version="1"} 20573`+"\n") {
		t.Error("changed Triton value not spelled as an integer")
	}
}

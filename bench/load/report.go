// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/llmops-otel/otelcol-llmops/bench/internal/benchutil"
)

// The targets of issue 18 §3 and of issue 22 ("Footprint").
const (
	flatRatio   = 1.10     // final-minute RSS / first-minute RSS after warm-up
	rssLimitKB  = 64 << 10 // agent RSS, peak in the window
	anonLimitKB = 32 << 10 // agent anonymous memory, peak in the window
)

func numCPU() int { return runtime.NumCPU() }

func mib(kb int64) string { return fmt.Sprintf("%.1f MiB", float64(kb)/1024) }

// dropped sums every counter of lost or refused data in one telemetry
// scrape: exporters that failed to send or to enqueue, receivers and
// processors that refused.
func dropped(t telemetry) float64 {
	return t.sum("otelcol_exporter_send_failed_") + t.sum("otelcol_exporter_enqueue_failed_") +
		t.sum("otelcol_receiver_refused_") + t.sum("otelcol_processor_refused_")
}

// limiterRefused is what memory_limiter refused, as far as the telemetry
// tells it apart: the processor refusal counters (memory_limiter is the
// only processor of the shipped pipelines that refuses data) and any
// memory_limiter-specific refusal counter.
func limiterRefused(t telemetry) float64 {
	s := t.sum("otelcol_processor_refused_")
	for k, v := range t {
		if strings.Contains(k, "memory_limiter") && strings.Contains(k, "refused") && !strings.HasPrefix(k, "otelcol_processor_refused_") {
			s += v
		}
	}
	return s
}

type footprint struct {
	peakRSS, peakAnon, peakFile    int64
	finalRSS, finalAnon, finalFile int64
	medRSS, medAnon                float64
	cpuPerSec                      float64
}

func footprintOf(ss []sample) footprint {
	var f footprint
	if len(ss) == 0 {
		return f
	}
	var rss, anon []float64
	for _, s := range ss {
		f.peakRSS, f.peakAnon, f.peakFile = max(f.peakRSS, s.rssKB), max(f.peakAnon, s.anonKB), max(f.peakFile, s.fileKB)
		rss, anon = append(rss, float64(s.rssKB)), append(anon, float64(s.anonKB))
	}
	last := ss[len(ss)-1]
	f.finalRSS, f.finalAnon, f.finalFile = last.rssKB, last.anonKB, last.fileKB
	f.medRSS, f.medAnon = benchutil.Median(rss), benchutil.Median(anon)
	if wall := (last.at - ss[0].at).Seconds(); wall > 0 {
		f.cpuPerSec = (last.cpu - ss[0].cpu).Seconds() / wall
	}
	return f
}

func verdict(ok bool) string {
	if ok {
		return "MET"
	}
	return "NOT MET"
}

// report prints the results and returns whether every target is met.
func report(o options, idle, load []sample, drain sample, tr *traffic, limiterLogs int, benchCPU time.Duration, series int,
	idleMaps, loadMaps mappings, fl *floorRun) bool {
	fmt.Println()
	var idleF footprint
	if len(idle) > 0 {
		idleF = idleFootprint(idle)
		fmt.Printf("idle footprint (%s, nothing to watch; last two thirds):\n", idle[len(idle)-1].at.Round(time.Second))
		fmt.Printf("  RSS %s median, %s final (anonymous %s, file-backed %s); peak %s; CPU %.4f s/s\n",
			mib(int64(idleF.medRSS)), mib(idleF.finalRSS), mib(idleF.finalAnon), mib(idleF.finalFile), mib(idleF.peakRSS), idleF.cpuPerSec)
		printMappings("at the end", idleMaps)
	}
	win := window(load)
	if len(win) < 2 {
		fmt.Println("load: fewer than two samples in the measured window")
		return false
	}
	first, last := win[0], win[len(win)-1]
	secs := (last.at - first.at).Seconds()
	f := footprintOf(win)
	all := footprintOf(load)
	fmt.Printf("load (%d series in 4 engines, %d GPU processes, %d spans/s offered; %s measured after %s warm-up):\n",
		series, nvmlGPUs*nvmlProcsPerGPU, o.rate, last.at.Round(time.Second), o.warmup)
	fmt.Printf("  RSS      peak %s, final %s (warm-up included: peak %s)\n", mib(f.peakRSS), mib(f.finalRSS), mib(all.peakRSS))
	fmt.Printf("  anon     peak %s, final %s\n", mib(f.peakAnon), mib(f.finalAnon))
	fmt.Printf("  file     peak %s, final %s\n", mib(f.peakFile), mib(f.finalFile))
	printMappings("at the end of the window", loadMaps)
	fmt.Printf("  CPU      %.3f s/s (agent); load generator and sink in this process: %.3f s/s\n", f.cpuPerSec, benchCPU.Seconds()/(o.warmup+o.duration).Seconds())

	rate := func(get func(sample) float64) float64 { return (get(last) - get(first)) / secs }
	byRecv := func(s sample, r string) float64 {
		return s.tel.sum("otelcol_receiver_accepted_metric_points", `receiver="`+r+`"`)
	}
	fmt.Printf("  received points/s: nvml %.0f, llmengine %.0f (all receivers %.0f); spans/s: otlp %.0f (sent by the generator %.0f)\n",
		rate(func(s sample) float64 { return byRecv(s, "nvml") }),
		rate(func(s sample) float64 { return byRecv(s, "llmengine") }),
		rate(func(s sample) float64 { return s.tel.sum("otelcol_receiver_accepted_metric_points") }),
		rate(func(s sample) float64 { return s.tel.sum("otelcol_receiver_accepted_spans", `receiver="otlp"`) }),
		rate(func(s sample) float64 { return float64(s.trafficSpans) }))
	fmt.Printf("  delivered to the sink: points/s %.0f, spans/s %.0f, log records (incidents, ...) %d in all\n",
		rate(func(s sample) float64 { return float64(s.sinkPoints) }),
		rate(func(s sample) float64 { return float64(s.sinkSpans) }), drain.sinkLogs)
	var peakHeap float64
	for _, s := range win {
		peakHeap = max(peakHeap, s.tel.sum("otelcol_process_runtime_heap_alloc_bytes"))
	}
	fmt.Printf("  Go heap  allocated (live and not yet collected): peak %.1f MiB, final %.1f MiB; runtime total sys %.1f MiB\n",
		peakHeap/(1<<20), last.tel.sum("otelcol_process_runtime_heap_alloc_bytes")/(1<<20),
		last.tel.sum("otelcol_process_runtime_total_sys_memory_bytes")/(1<<20))
	var peakQ, capQ float64
	for _, s := range load {
		peakQ = max(peakQ, s.tel.sum("otelcol_exporter_queue_size"))
		capQ = max(capQ, s.tel.sum("otelcol_exporter_queue_capacity"))
	}
	fmt.Printf("  exporter queue: peak %.0f of capacity %.0f\n", peakQ, capQ)

	// Losses over the whole run (warm-up and drain included).
	accepted := drain.tel.sum("otelcol_receiver_accepted_spans", `receiver="otlp"`)
	missingSpans := accepted - float64(drain.sinkSpans)
	fmt.Printf("  dropped/refused: exporter send failed %.0f, enqueue failed %.0f, receiver refused %.0f, processor refused %.0f (memory_limiter %.0f)\n",
		drain.tel.sum("otelcol_exporter_send_failed_"), drain.tel.sum("otelcol_exporter_enqueue_failed_"),
		drain.tel.sum("otelcol_receiver_refused_"), drain.tel.sum("otelcol_processor_refused_"), limiterRefused(drain.tel))
	fmt.Printf("  spans: %d acknowledged to the generator, %.0f accepted by the agent, %d at the sink after draining (%.0f missing); %d refused to the generator, %d batches not sent in time\n",
		tr.sent.Load(), accepted, drain.sinkSpans, missingSpans, tr.failed.Load(), tr.miss.Load())
	if e, ok := tr.lastErr.Load().(string); ok {
		fmt.Printf("  last error the generator saw: %s\n", e)
	}
	engaged := limiterLogs > 0 || limiterRefused(drain.tel) > 0
	fmt.Printf("  memory_limiter: %d log lines above its limits, %.0f refused (engaged: %v)\n", limiterLogs, limiterRefused(drain.tel), engaged)

	// Drops not explained by memory_limiter: losses in seconds in which it
	// refused nothing, and, if it never engaged, every span not delivered.
	seq := append(append([]sample{}, load...), drain)
	var unexplained float64
	for i := 1; i < len(seq); i++ {
		d := dropped(seq[i].tel) - dropped(seq[i-1].tel)
		if d > 0 && limiterRefused(seq[i].tel) == limiterRefused(seq[i-1].tel) {
			unexplained += d
		}
	}
	if !engaged {
		unexplained += max(missingSpans, 0) + float64(tr.failed.Load())
	}

	// Flatness: median RSS of the last minute over that of the first
	// minute after the warm-up (thirds of the window under 2 minutes).
	span := last.at
	headEnd, tailStart, what := time.Minute, span-time.Minute, "last 60 s / first 60 s"
	if span < 2*time.Minute {
		headEnd, tailStart, what = span/3, span-span/3, "last third / first third"
	}
	var head, tail []float64
	for _, s := range win {
		if s.at <= headEnd {
			head = append(head, float64(s.rssKB))
		}
		if s.at >= tailStart {
			tail = append(tail, float64(s.rssKB))
		}
	}
	mh, mt := benchutil.Median(head), benchutil.Median(tail)
	ratio := mt / mh
	fmt.Printf("  RSS flatness: median of the %s = %s / %s = %.3f\n", what, mib(int64(mt)), mib(int64(mh)), ratio)

	if fl != nil {
		reportFloor(o, f, idleF, len(idle) > 0, fl)
	}

	okDrop, okFlat := unexplained == 0, ratio <= flatRatio
	okRSS, okAnon := f.peakRSS <= rssLimitKB, f.peakAnon <= anonLimitKB
	fmt.Println()
	fmt.Printf("target: no data dropped while memory_limiter is not engaged: %s (%.0f items lost outside memory_limiter refusals)\n", verdict(okDrop), unexplained)
	fmt.Printf("target: RSS flat after warm-up (ratio <= %.2f): %s (%.3f)\n", flatRatio, verdict(okFlat), ratio)
	fmt.Printf("target: agent RSS <= 64 MiB under load: %s (peak %s)\n", verdict(okRSS), mib(f.peakRSS))
	fmt.Printf("target: agent anonymous memory <= 32 MiB under load: %s (peak %s)\n", verdict(okAnon), mib(f.peakAnon))
	if len(idle) > 0 {
		fmt.Printf("reported: idle RSS %s median (anonymous %s, file-backed %s)\n", mib(int64(idleF.medRSS)), mib(idleF.finalAnon), mib(idleF.finalFile))
	}

	if names := drain.tel.names("otelcol_processor_"); len(names) > 0 {
		sort.Strings(names)
		fmt.Printf("\n(processor telemetry the agent exposes: %s)\n", strings.Join(names, ", "))
	}
	return okDrop && okFlat && okRSS && okAnon
}

// idleFootprint is an idle phase's footprint without its first seconds,
// which are start-up: the last two thirds.
func idleFootprint(idle []sample) footprint {
	settled := idle
	if len(idle) > 10 {
		settled = idle[len(idle)/3:]
	}
	return footprintOf(settled)
}

// window is the samples of the measured window (after the warm-up).
func window(load []sample) []sample {
	var win []sample
	for _, s := range load {
		if s.at >= 0 {
			win = append(win, s)
		}
	}
	return win
}

// reportFloor prints the floor's footprint and ours ÷ floor.
func reportFloor(o options, ours, oursIdle footprint, haveIdle bool, fl *floorRun) {
	win := window(fl.load)
	if len(win) < 2 {
		fmt.Println("floor: fewer than two samples in the measured window")
		return
	}
	f := footprintOf(win)
	first, last := win[0], win[len(win)-1]
	secs := (last.at - first.at).Seconds()
	accepted := fl.drain.tel.sum("otelcol_receiver_accepted_spans", `receiver="otlp"`)
	fmt.Printf("\nfloor (%s: OTLP receiver, batch, OTLP exporter; the same %d spans/s, no GPUs, no engines):\n", o.floorBin, o.rate)
	if haveIdle && len(fl.idle) > 0 {
		fi := idleFootprint(fl.idle)
		fmt.Printf("  idle     RSS %s median (anonymous %s, file-backed %s)\n", mib(int64(fi.medRSS)), mib(fi.finalAnon), mib(fi.finalFile))
		printMappings("idle", fl.idleMaps)
		fmt.Printf("  ours ÷ floor, idle: RSS %.2f, anonymous %.2f, file-backed %.2f\n",
			oursIdle.medRSS/fi.medRSS, float64(oursIdle.finalAnon)/float64(fi.finalAnon), float64(oursIdle.finalFile)/float64(fi.finalFile))
	}
	fmt.Printf("  RSS      peak %s, final %s\n", mib(f.peakRSS), mib(f.finalRSS))
	fmt.Printf("  anon     peak %s, final %s\n", mib(f.peakAnon), mib(f.finalAnon))
	fmt.Printf("  file     peak %s, final %s\n", mib(f.peakFile), mib(f.finalFile))
	printMappings("at the end of the window", fl.loadMaps)
	fmt.Printf("  CPU      %.3f s/s; spans/s accepted %.0f, delivered %.0f; %d acknowledged, %.0f accepted, %d at the sink, %d refused to the generator\n",
		f.cpuPerSec,
		(last.tel.sum("otelcol_receiver_accepted_spans", `receiver="otlp"`)-first.tel.sum("otelcol_receiver_accepted_spans", `receiver="otlp"`))/secs,
		float64(last.sinkSpans-first.sinkSpans)/secs, fl.tr.sent.Load(), accepted, fl.drain.sinkSpans, fl.tr.failed.Load())
	fmt.Printf("  ours ÷ floor, load peaks: RSS %s / %s = %.2f, anonymous %s / %s = %.2f, file-backed %s / %s = %.2f\n",
		mib(ours.peakRSS), mib(f.peakRSS), float64(ours.peakRSS)/float64(f.peakRSS),
		mib(ours.peakAnon), mib(f.peakAnon), float64(ours.peakAnon)/float64(f.peakAnon),
		mib(ours.peakFile), mib(f.peakFile), float64(ours.peakFile)/float64(f.peakFile))
}

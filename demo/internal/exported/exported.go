// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package exported reads what the demo's collector wrote with contrib's file
// exporter (OTLP/JSON, one export request per line) into the few series,
// incidents and counts the demo's terminal view and HTML report show.
//
// The collector keeps appending while the demo runs, so a Reader is
// incremental: it remembers how far it got in each file and only consumes
// complete lines, leaving a line the exporter is still writing for the next
// Update.
package exported

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// File names the demo configures for the file exporters.
const (
	MetricsFile = "metrics.jsonl"
	LogsFile    = "logs.jsonl"
	TracesFile  = "traces.jsonl"
)

// MaxPoints bounds every Series. A long demo at one scrape per second would
// otherwise grow without limit; when a series is full every other point is
// dropped, which halves its resolution but keeps its whole time range (the
// charts need the start of a leak as much as its end).
const MaxPoints = 4000

// LatencyWindow is the window the p99 series are computed over.
const LatencyWindow = 10 * time.Second

// Point is one value at one time.
type Point struct {
	T time.Time
	V float64
}

// Series is a time-ordered list of points.
type Series []Point

// Last returns the newest point and whether there is one.
func (s Series) Last() (Point, bool) {
	if len(s) == 0 {
		return Point{}, false
	}
	return s[len(s)-1], true
}

// Layer is one level of an incident's model-layer path.
type Layer struct {
	Path   string
	Bytes  int64
	TimeNs int64
}

// Incident is one incident log record (rootcause) or leak-suspect record
// (profileimport).
type Incident struct {
	Time time.Time // record timestamp

	ID, Kind, State, Severity, Quadrant, Body, Action, Layer, Subject, Drilldown string

	HwID                       string
	PID                        int64 // 0 when absent
	Pod, Engine, Model, Target string

	Score float64
	Start time.Time

	TraceID, SpanID string // hex, "" when absent

	Evidence   []map[string]any
	LayerStack []Layer

	// As the incident unfolds: the update count and what changed, when the
	// fault began (zero when not estimated), what was ruled out, and on a
	// resolved record how it ended and which incident superseded it.
	Update                   int64
	Change                   string
	Onset                    time.Time
	RuledOut                 []string
	Resolution, SupersededBy string
}

// Process is one process on one GPU.
type Process struct {
	PID    int64
	Name   string
	Memory Series // process.gpu.memory.usage (bytes)
}

// GPU is one GPU (by hw.id).
type GPU struct {
	ID, Name string

	Memory, Limit, GrowthRate Series // hw.gpu.memory.usage, hw.gpu.memory.limit, hw.gpu.memory.growth_rate (By/s)
	Utilization               Series // hw.gpu.utilization (hw.gpu.task=general), 0..1

	Throttle     []string // reasons in the newest scrape that had hw.gpu.throttle points (empty: none)
	ThrottleSeen time.Time

	Processes map[int64]*Process
}

// Engine is one scraped inference engine target.
type Engine struct {
	Target, Name, Model string // resource llm.engine.target, llm.engine.name, gen_ai.request.model

	KV        Series // llm.engine.kv_cache.utilization (0..1; max over its points per scrape)
	P99       Series // p99 of gen_ai.server.request.duration over the last LatencyWindow, seconds
	TTFTP99   Series // the same for gen_ai.server.time_to_first_token
	TokenRate Series // output tokens/s between scrapes
	Waiting   Series // llm.engine.requests.waiting (summed over the points of a scrape)

	tokens  counterState
	latency histState
	ttft    histState
}

// Data is everything read so far.
type Data struct {
	Start, End   time.Time
	GPUs         map[string]*GPU    // by hw.id
	Engines      map[string]*Engine // by target
	Incidents    []Incident         // every incident record except leak suspects, in file order
	LeakSuspects []Incident         // incident.kind=leak_suspect records of imported profiles
	Spans        int
}

// Reader reads the three files of one directory incrementally. It is not
// safe for concurrent use; call Update and Data from one goroutine.
type Reader struct {
	dir     string
	offsets map[string]int64
	data    Data
	pend    pendingSet
}

// NewReader returns a Reader of the file exporter output in dir. Nothing is
// read until Update.
func NewReader(dir string) *Reader {
	return &Reader{
		dir:     dir,
		offsets: map[string]int64{},
		data: Data{
			GPUs:    map[string]*GPU{},
			Engines: map[string]*Engine{},
		},
	}
}

// Load reads everything in dir once.
func Load(dir string) (*Data, error) {
	r := NewReader(dir)
	err := r.Update()
	return r.Data(), err
}

// Data returns the accumulated data. The caller must not mutate it; it is
// valid until the next Update, which changes it in place.
func (r *Reader) Data() *Data { return &r.data }

// Update reads the complete lines appended to each file since the last call.
// A missing file is not an error (the collector creates them on its first
// export). Lines that are not OTLP/JSON are skipped and reported in the
// returned error; everything else read is still applied.
func (r *Reader) Update() error {
	var errs []error
	for _, f := range []struct {
		name  string
		apply func([]byte) error
	}{
		{MetricsFile, r.applyMetrics},
		{LogsFile, r.applyLogs},
		{TracesFile, r.applyTraces},
	} {
		if err := r.readFile(f.name, f.apply); err != nil {
			errs = append(errs, err)
		}
	}
	r.flush()
	return errors.Join(errs...)
}

func (r *Reader) readFile(name string, apply func([]byte) error) error {
	path := filepath.Join(r.dir, name)
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w (check the demo's output directory permissions)", path, err)
	}
	defer func() { _ = fh.Close() }() // read only: a failed close loses nothing
	off := r.offsets[name]
	if st, err := fh.Stat(); err == nil && st.Size() < off {
		// The file was truncated or replaced (a restarted demo): start over
		// on it rather than seek past its end and never read again.
		off = 0
	}
	if _, err := fh.Seek(off, io.SeekStart); err != nil {
		return fmt.Errorf("seek %s to %d: %w", path, off, err)
	}
	br := bufio.NewReaderSize(fh, 1<<20)
	var bad int
	var firstBad error
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			// io.EOF with a partial line: the exporter is mid-write. Leave
			// it for the next Update by not advancing past it.
			if !errors.Is(err, io.EOF) {
				r.offsets[name] = off
				return fmt.Errorf("read %s: %w", path, err)
			}
			break
		}
		lineOff := off
		off += int64(len(line))
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if err := apply(line); err != nil {
			bad++
			if firstBad == nil {
				firstBad = fmt.Errorf("byte offset %d: %w", lineOff, err)
			}
		}
	}
	r.offsets[name] = off
	if bad > 0 {
		return fmt.Errorf("%s: skipped %d line(s) that are not OTLP/JSON export requests (first at %s); configure the file exporter with format: json and no compression", path, bad, firstBad.Error()) // as text: the skipped line's error is not this one's cause
	}
	return nil
}

func (r *Reader) applyTraces(line []byte) error {
	var u ptrace.JSONUnmarshaler
	td, err := u.UnmarshalTraces(line)
	if err != nil {
		return err
	}
	r.data.Spans += td.SpanCount()
	return nil
}

func (r *Reader) applyMetrics(line []byte) error {
	var u pmetric.JSONUnmarshaler
	md, err := u.UnmarshalMetrics(line)
	if err != nil {
		return err
	}
	r.ingestMetrics(md)
	return nil
}

func (r *Reader) applyLogs(line []byte) error {
	var u plog.JSONUnmarshaler
	ld, err := u.UnmarshalLogs(line)
	if err != nil {
		return err
	}
	r.ingestLogs(ld)
	return nil
}

// observe widens the data's time range.
func (d *Data) observe(t time.Time) {
	if t.IsZero() {
		return
	}
	if d.Start.IsZero() || t.Before(d.Start) {
		d.Start = t
	}
	if t.After(d.End) {
		d.End = t
	}
}

// add appends p, keeping the series time-ordered and bounded.
func (s *Series) add(p Point) {
	if len(*s) >= MaxPoints {
		// Halve the resolution instead of forgetting the oldest points: see
		// MaxPoints. The newest point is always kept.
		old := *s
		n := 0
		for i := 0; i < len(old); i += 2 {
			old[n] = old[i]
			n++
		}
		if last := old[len(old)-1]; old[n-1] != last {
			old[n] = last
			n++
		}
		clear(old[n:])
		*s = old[:n]
	}
	*s = append(*s, p)
}

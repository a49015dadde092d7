// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Options tunes an import.
type Options struct {
	// MaxBytes refuses input (decompressed) past this many bytes; 0: no
	// limit. Memory use is proportional to the input read, so this bounds
	// it too.
	MaxBytes int64
	// LeakSuspects is how many leak suspects are reported (default 5; a
	// negative value reports none).
	LeakSuspects int
	// MinLeakBytes: a site holding less than this is not a suspect
	// (default 1 MiB).
	MinLeakBytes int64
	// ModTime is the snapshot's time when it records none (ImportFile
	// takes the file's modification time).
	ModTime time.Time

	// noPatterns skips the leak-pattern analysis (the benchmark's
	// baseline).
	noPatterns bool
}

func (o Options) withDefaults() Options {
	if o.LeakSuspects == 0 {
		o.LeakSuspects = 5
	}
	if o.MinLeakBytes <= 0 {
		o.MinLeakBytes = 1 << 20
	}
	return o
}

// Result is what an import produces.
type Result struct {
	Metrics pmetric.Metrics
	Logs    plog.Logs
	Summary Summary
}

// Summary counts what the snapshot held, for tests and llmprof.
type Summary struct {
	Format           string           `json:"format"` // "pickle" or "json"
	Segments         int64            `json:"segments"`
	Blocks           int64            `json:"blocks"`
	ActiveBlocks     int64            `json:"active_blocks"` // active_allocated
	TraceEntries     int64            `json:"trace_entries"`
	EntriesByAction  map[string]int64 `json:"entries_by_action"`
	Devices          int              `json:"devices"` // devices with a segment or a trace ring
	ReservedBytes    int64            `json:"reserved_bytes"`
	AllocatedBytes   int64            `json:"allocated_bytes"`   // active_allocated + active_pending_free
	OutstandingBytes int64            `json:"outstanding_bytes"` // active_allocated
	Sites            int              `json:"sites"`             // distinct allocation sites with outstanding bytes
	Frames           int              `json:"frames"`            // distinct frames
	Stacks           int              `json:"stacks"`            // distinct stacks
	OOMs             int64            `json:"ooms"`
	LeakSuspects     int              `json:"leak_suspects"`
	LeakPatterns     int              `json:"leak_patterns"`  // leak suspects with a pattern
	TraceIDJoins     int              `json:"trace_id_joins"` // log records given a trace id from user_metadata
	Annotations      int64            `json:"annotations"`    // external_annotations
	MetricPoints     int              `json:"metric_points"`
	SnapshotTimeUS   int64            `json:"snapshot_time_us"` // last trace entry's time (0: none)
}

// ImportFile imports a CUDA memory snapshot: a pickle (protocol 2-5, as
// torch.cuda.memory._dump_snapshot writes it) or the same structure
// serialised as JSON (.json, .json.gz), gzip recognised by content.
func ImportFile(path string, opts Options) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", path, err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	var mtime time.Time
	if st, err := f.Stat(); err == nil {
		mtime = st.ModTime()
	}
	return importReader(f, path, opts, mtime)
}

// Import is ImportFile on a reader; name is used in errors and as
// llm.profile.file.
func Import(r io.Reader, name string, opts Options) (Result, error) {
	return importReader(r, name, opts, opts.ModTime)
}

func importReader(r io.Reader, name string, opts Options, mtime time.Time) (Result, error) {
	opts = opts.withDefaults()
	br := bufio.NewReaderSize(r, 4096) // only to peek at the gzip magic
	head, _ := br.Peek(2)
	var in io.Reader = br
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return Result{}, fmt.Errorf("%s: not a valid gzip file: %w", name, err)
		}
		defer func() { _ = zr.Close() }() // the reads report the stream's errors
		in = zr
	}
	rd := newReader(in, name, opts.MaxBytes)
	s := newStore()
	var top value
	format := "pickle"
	first, err := rd.byte()
	if err != nil {
		if rd.err != nil && !errors.Is(rd.err, io.ErrUnexpectedEOF) {
			return Result{}, rd.err
		}
		return Result{}, fmt.Errorf("%s: empty file: not a CUDA memory snapshot", name)
	}
	rd.pos--
	switch first {
	case '{', '[', ' ', '\n', '\r', '\t', 0xef:
		format = "json"
		top, err = decodeJSON(rd, s)
	case 0x80:
		d := &decoder{r: rd, s: s}
		top, err = d.run()
	default:
		return Result{}, fmt.Errorf("%s: neither a pickle (protocol 2-5) nor JSON (first byte 0x%02x): not a CUDA memory snapshot; save one with torch.cuda.memory._dump_snapshot(path)", name, first)
	}
	if err != nil {
		return Result{}, err
	}
	a, err := interpret(s, top, name)
	if err != nil {
		return Result{}, err
	}
	a.sum.Format = format
	return a.emit(opts, mtime), nil
}

// IsSnapshotJSON tells a JSON-serialised memory snapshot (an object whose
// first key is "segments" or "device_traces") from a Kineto trace, from
// the first bytes of a file (gzip-compressed or not).
func IsSnapshotJSON(prefix []byte) bool {
	if len(prefix) >= 2 && prefix[0] == 0x1f && prefix[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(prefix))
		if err != nil {
			return false
		}
		buf := make([]byte, 256)
		n, _ := io.ReadFull(zr, buf)
		prefix = buf[:n]
	}
	p := bytes.TrimPrefix(prefix, []byte("\xef\xbb\xbf"))
	p = bytes.TrimLeft(p, " \t\r\n")
	if len(p) == 0 || p[0] != '{' {
		return false
	}
	p = bytes.TrimLeft(p[1:], " \t\r\n")
	return bytes.HasPrefix(p, []byte(`"segments"`)) || bytes.HasPrefix(p, []byte(`"device_traces"`))
}

var errNotSnapshot = errors.New("not a CUDA memory snapshot")

// interpret walks the decoded top-level value.
func interpret(s *store, top value, name string) (*analysis, error) {
	a := &analysis{s: s, file: name, devTrace: map[int64]*traceList{}}
	c := s.contOf(top)
	if c == nil {
		return nil, fmt.Errorf("%s: %w: the top-level value is not a dict or a list of segments", name, errNotSnapshot)
	}
	var segs value
	switch c.kind {
	case cDict:
		var ok bool
		segs, ok = s.dictGet(top, "segments")
		dt, ok2 := s.dictGet(top, "device_traces")
		if !ok && !ok2 {
			return nil, fmt.Errorf("%s: %w: the top-level dict has neither \"segments\" nor \"device_traces\"", name, errNotSnapshot)
		}
		if ok2 {
			items, isList := s.listItems(dt)
			if !isList {
				if dc := s.contOf(dt); dc == nil || dc.kind != cTrace {
					return nil, fmt.Errorf("%s: %w: \"device_traces\" is not a list (one list of trace entries per device)", name, errNotSnapshot)
				}
			}
			for i, it := range items {
				ic := s.contOf(it)
				switch {
				case ic != nil && ic.kind == cTrace:
					a.devTrace[int64(i)] = s.traces[ic.ref]
				case ic != nil && (ic.kind == cList || ic.kind == cTuple) && ic.ref == 0:
					// No entries recorded for this device.
				default:
					return nil, fmt.Errorf("%s: device_traces[%d] is not a list of trace entries (dicts with an \"action\"): the snapshot is malformed", name, i)
				}
			}
		}
		if ann, ok := s.dictGet(top, "external_annotations"); ok {
			items, _ := s.listItems(ann)
			a.sum.Annotations = int64(len(items))
		}
	case cList, cTuple:
		segs = top // before PyTorch 2.0: a bare list of segments
	default:
		return nil, fmt.Errorf("%s: %w: the top-level value is a single record", name, errNotSnapshot)
	}
	if segs.k != kUndef {
		items, ok := s.listItems(segs)
		if !ok {
			return nil, fmt.Errorf("%s: %w: \"segments\" is not a list", name, errNotSnapshot)
		}
		for i, it := range items {
			ic := s.contOf(it)
			if ic == nil || ic.kind != cSegment {
				return nil, fmt.Errorf("%s: segments[%d] is not a segment (a dict with \"total_size\" and \"blocks\"): the snapshot is malformed", name, i)
			}
			a.segs = append(a.segs, ic.ref)
		}
	}
	return a, nil
}

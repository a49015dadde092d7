// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nsys

import (
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Options tunes an import.
type Options struct {
	// SpanBudget is the most spans per trace, root included (default
	// 100000).
	SpanBudget int
	// MinLeakBytes: a (process, device, module path) holding less than
	// this at the end of the capture is not a leak suspect (default 1 MiB).
	MinLeakBytes int64
	// LeakSuspects is how many leak suspects are reported (default 5; a
	// negative value reports none).
	LeakSuspects int
}

func (o Options) withDefaults() Options {
	if o.SpanBudget <= 0 {
		o.SpanBudget = 100000
	}
	if o.MinLeakBytes <= 0 {
		o.MinLeakBytes = 1 << 20
	}
	if o.LeakSuspects == 0 {
		o.LeakSuspects = 5
	}
	return o
}

// Result is what an import produces besides the spans (handed to emit).
type Result struct {
	Metrics pmetric.Metrics
	Logs    plog.Logs
	Summary Summary
}

// Time bases of Summary.TimeBase.
const (
	// TimeSessionUTC: timestamps are TARGET_INFO_SESSION_START_TIME.utcEpochNs
	// + (start - ANALYSIS_DETAILS.startTime, 0 without it): the export's
	// timestamps count from the session start.
	TimeSessionUTC = "session_start_utc"
	// TimeAsIs: start is used as-is: either the export has no session
	// start time (the spans are then relative to the session start, not on
	// the wall clock), or its times are already wall-clock.
	TimeAsIs = "as_is"
)

// wallClockFloor is 2001-09-09 in Unix ns: an export whose events start
// past it already holds wall-clock times (e.g. shifted with --ts-shift),
// while times since the session start or since boot are far below it.
const wallClockFloor = int64(1_000_000_000_000_000_000)

// Summary counts what the export held and what was emitted.
type Summary struct {
	SchemaVersion string `json:"schema_version"` // META_DATA_EXPORT EXPORT_SCHEMA_VERSION ("" if absent)
	Kernels       int64  `json:"kernels"`
	Memcpys       int64  `json:"memcpys"`
	Memsets       int64  `json:"memsets"`
	RuntimeCalls  int64  `json:"runtime_calls"`
	NVTXRanges    int64  `json:"nvtx_ranges"`
	Spans         int64  `json:"spans"` // emitted, root included
	MemoryEvents  int64  `json:"memory_events"`
	Processes     int    `json:"processes"`
	// LinkedRequests is the number of NVTX ranges whose text carries a
	// request trace id (span links emitted).
	LinkedRequests int `json:"linked_requests"`

	SpansByKind            map[string]int64 `json:"spans_by_kind"` // nvtx, runtime, kernel, memcpy, memset
	SpansDropped           int64            `json:"spans_dropped"` // over SpanBudget
	KernelsWithoutLauncher int64            `json:"kernels_without_launcher"`
	TimeBase               string           `json:"time_base"`        // TimeSessionUTC or TimeAsIs
	SessionStartNs         int64            `json:"session_start_ns"` // utcEpochNs (0: unknown)
	// Clock says, for a person, which clock the spans are on and why.
	Clock            string `json:"clock"`
	UnmatchedFrees   int64  `json:"unmatched_frees"`
	OutstandingBytes int64  `json:"outstanding_bytes"` // device memory allocated and not freed, all processes
	LeakSuspects     int    `json:"leak_suspects"`
	// Notes says what the export lacked and how that changed the import
	// (missing tables or columns, time base).
	Notes []string `json:"notes,omitempty"`
}

var errNotNsys = errors.New("not an Nsight Systems SQLite export")

// ImportFile imports an Nsight Systems SQLite export. The spans are handed
// to emit in batches of at most batchSpans spans (<= 0: one batch), each a
// complete ptrace.Traces built after the previous emit returned, as
// kinetobuild.Builder.FinishBatches does; an error from emit stops the spans
// and is returned with the metrics and logs already built.
func ImportFile(path string, opts Options, batchSpans int, emit func(ptrace.Traces) error) (Result, error) {
	opts = opts.withDefaults()
	res := Result{Metrics: pmetric.NewMetrics(), Logs: plog.NewLogs()}
	if err := checkHeader(path); err != nil {
		return res, err
	}
	d, err := dsn(path)
	if err != nil {
		return res, fmt.Errorf("%s: %w", path, err)
	}
	db, err := sql.Open("sqlite", d)
	if err != nil {
		return res, fmt.Errorf("%s: opening the SQLite export: %w", path, err)
	}
	defer func() { _ = db.Close() }() // opened read only: a failed close loses nothing
	// One connection: the import is sequential, and every connection
	// would hold its own page cache.
	db.SetMaxOpenConns(1)
	s, err := probe(db, path)
	if err != nil {
		return res, err
	}
	known := 0
	for _, t := range []string{tStrings, tKernel, tMemcpy, tMemset, tRuntime, tNVTX, tMemory, tSessionStart} {
		if s.has(t) {
			known++
		}
	}
	if known == 0 {
		return res, fmt.Errorf("%s: %w: an SQLite database without any of the tables nsys writes (StringIds, CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS, CUDA_GPU_MEMORY_USAGE_EVENTS); export the report with `nsys export --type sqlite REPORT.nsys-rep`", path, errNotNsys)
	}
	return importSource(sqlSource{db: db, s: s, name: path}, path, opts, batchSpans, emit)
}

// importSource imports the tables src reads (opts with its defaults).
func importSource(src source, name string, opts Options, batchSpans int, emit func(ptrace.Traces) error) (Result, error) {
	im := &importer{src: src, name: name, opts: opts}
	if err := im.read(); err != nil {
		return Result{Metrics: pmetric.NewMetrics(), Logs: plog.NewLogs()}, err
	}
	return im.finish(batchSpans, emit)
}

// checkHeader refuses, with a clear error, a file that is not an SQLite
// database before the driver does (its message would only say "file is
// not a database").
func checkHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	buf := make([]byte, len(sqliteMagic))
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !IsNsysSQLite(buf[:n]) {
		return fmt.Errorf("%s: %w: not an SQLite database (no \"SQLite format 3\" header); an .nsys-rep report must first be exported with `nsys export --type sqlite REPORT.nsys-rep`", path, errNotNsys)
	}
	return nil
}

// kind is a node's kind.
type kind uint8

// Node kinds.
const (
	kNVTX kind = iota
	kRuntime
	kKernel
	kMemcpy
	kMemset
)

var kindNames = [...]string{kNVTX: "nvtx", kRuntime: "runtime", kKernel: "kernel", kMemcpy: "memcpy", kMemset: "memset"}

// categories follow Kineto's "cat" names, so that whatever reads
// llm.profile.category (llmprof, dashboards) treats both imports alike.
var kindCategories = [...]string{kNVTX: "user_annotation", kRuntime: "cuda_runtime", kKernel: "kernel",
	kMemcpy: "gpu_memcpy", kMemset: "gpu_memset"}

func (k kind) gpu() bool { return k >= kKernel }

// node is one span-eligible event. Times are as in the file.
type node struct {
	start, end int64
	name       string
	path       string // module path (NVTX range stack), "" none
	gtid       int64  // globalTid (CPU side); -1 none
	gpid       int64  // globalPid
	device     int64  // -1 none
	stream     int64  // -1 none
	corr       int64  // -1 none
	grid       string
	block      string
	parent     int32 // -1: the root
	link       int32 // index into importer.links; -1 none
	kind       kind
	reqTag     bool // NVTX range naming a request: not part of module paths
}

func (n *node) pid() int64 { return (n.gpid >> 24) & 0xFFFFFF }

type memEvent struct {
	ts     int64
	gpid   int64
	device int64
	addr   int64
	bytes  int64
	corr   int64
	free   bool
}

type importer struct {
	src  source
	name string
	opts Options
	sum  Summary

	strs   map[int64]string
	nodes  []node
	links  []reqLink
	mems   []memEvent
	pnames map[int64]string // pid -> process name (PROCESSES)
	// timeOff is added to every timestamp in the file (see clock).
	timeOff int64
	// From readMeta: the session start (in sum.SessionStartNs), where the
	// session starts on the export's clock, and the normalisation flag as
	// "NAME=value" ("" when absent).
	hasStart, hasBase bool
	base              int64
	normalize         string
}

func (im *importer) note(format string, args ...any) {
	im.sum.Notes = append(im.sum.Notes, fmt.Sprintf(format, args...))
}

func (im *importer) read() error {
	if err := im.readMeta(); err != nil {
		return err
	}
	if err := im.readStrings(); err != nil {
		return err
	}
	if err := im.readProcesses(); err != nil {
		return err
	}
	if err := im.readNVTX(); err != nil {
		return err
	}
	if err := im.readRuntime(); err != nil {
		return err
	}
	for _, k := range []kind{kKernel, kMemcpy, kMemset} {
		if err := im.readGPU(k); err != nil {
			return err
		}
	}
	return im.readMemory()
}

// readMeta reads the schema version, the session start, where the session
// starts on the export's own clock (ANALYSIS_DETAILS) and what the export
// says of normalisation (for the clock description only: normalised or
// not, nsys times count from the session start; see clock).
func (im *importer) readMeta() error {
	if im.src.has(tMetaExport) {
		err := im.src.scan(tMetaExport, []string{"name", "value"}, func(v []any) error {
			k, val := str(v[0], nil), strings.TrimSpace(str(v[1], nil))
			if k == "" {
				return nil
			}
			switch {
			case k == "EXPORT_SCHEMA_VERSION":
				im.sum.SchemaVersion = val
			case strings.Contains(strings.ToUpper(k), "NORMALIZ") && im.normalize == "":
				// EXPORT_PARAM_TIME_NORMALIZE (nsys export --ts-normalize).
				im.normalize = k + "=" + val
			}
			return nil
		})
		if err != nil {
			return err
		}
	} else {
		im.note("no %s table: schema version unknown", tMetaExport)
	}
	if im.src.has(tAnalysis) && im.src.col(tAnalysis, "startTime") {
		err := im.src.scan(tAnalysis, []string{"startTime"}, func(v []any) error {
			if n, ok := asInt(v[0]); ok && !im.hasBase {
				im.base, im.hasBase = n, true
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if !im.src.has(tSessionStart) || !im.src.col(tSessionStart, "utcEpochNs") {
		return nil
	}
	return im.src.scan(tSessionStart, []string{"utcEpochNs"}, func(v []any) error {
		if n, ok := asInt(v[0]); ok && !im.hasStart && n > 0 {
			im.sum.SessionStartNs, im.hasStart = n, true
		}
		return nil
	})
}

// clock decides the offset added to the export's times, from the earliest
// time in the file (hasEvents is false when it holds none), and says which
// clock that puts the spans on (Summary.TimeBase, Clock, Notes).
//
// nsys writes times in nanoseconds from the start of the session, whether
// the export is normalised (EXPORT_PARAM_TIME_NORMALIZE) or not: adding
// the session's wall-clock start (TARGET_INFO_SESSION_START_TIME.utcEpochNs)
// gives wall-clock times. ANALYSIS_DETAILS.startTime, when present (and
// not after the first event), is where the session starts on the export's
// clock and is subtracted first. Times already past wallClockFloor are
// wall-clock and kept.
func (im *importer) clock(earliest int64, hasEvents bool) {
	im.sum.TimeBase = TimeAsIs
	switch {
	case hasEvents && earliest >= wallClockFloor:
		im.sum.Clock = "as in the export: its times are already wall-clock"
	case !im.hasStart:
		im.sum.Clock = "times relative to session start: no start time in export"
		im.note("no session start time (%s.utcEpochNs): span times are relative to the session start, not wall-clock time", tSessionStart)
	default:
		im.timeOff = im.sum.SessionStartNs
		switch {
		case !im.hasBase || im.base == 0:
		case im.base > 0 && (!hasEvents || im.base <= earliest):
			im.timeOff -= im.base
		default:
			// The session cannot start after its first event: the
			// table is not on the events' clock.
			im.note("%s.startTime %d is not before the first event (%d): not used", tAnalysis, im.base, earliest)
		}
		im.sum.TimeBase = TimeSessionUTC
		how := im.normalize
		if how == "" {
			how = "the export does not say whether its times are normalised"
		}
		im.sum.Clock = "session start " + time.Unix(0, im.sum.SessionStartNs).UTC().Format(time.RFC3339Nano) + " + offset (" + how + ")"
	}
}

func (im *importer) readStrings() error {
	im.strs = map[int64]string{}
	if !im.src.has(tStrings) {
		im.note("no %s table: names stored as string ids are empty", tStrings)
		return nil
	}
	return im.src.scan(tStrings, []string{"id", "value"}, func(v []any) error {
		if id, ok := asInt(v[0]); ok {
			im.strs[id] = str(v[1], nil)
		}
		return nil
	})
}

func (im *importer) readProcesses() error {
	im.pnames = map[int64]string{}
	if !im.src.has(tProcesses) {
		return nil
	}
	return im.src.scan(tProcesses, []string{"pid", "name"}, func(v []any) error {
		if pid, ok := asInt(v[0]); ok {
			if n := str(v[1], im.strs); n != "" {
				im.pnames[pid] = n
			}
		}
		return nil
	})
}

// NVTX event types (ENUM_NSYS_EVENT_TYPE) that are ranges.
const (
	nvtxPushPop  = 59
	nvtxStartEnd = 60
)

func (im *importer) readNVTX() error {
	if !im.src.has(tNVTX) {
		im.note("no %s table: no NVTX ranges, so no module paths", tNVTX)
		return nil
	}
	hasType := im.src.col(tNVTX, "eventType")
	return im.src.scan(tNVTX, []string{"start", "end", "globalTid", "text", "textId", "eventType"}, func(v []any) error {
		start, ok1 := asInt(v[0])
		end, ok2 := asInt(v[1])
		if !ok1 || !ok2 || end < start {
			return nil // marks, unfinished ranges, domain/category records
		}
		if hasType {
			if t, ok := asInt(v[5]); !ok || (t != nvtxPushPop && t != nvtxStartEnd) {
				return nil
			}
		}
		text := str(v[3], nil)
		if text == "" {
			text = str(v[4], im.strs)
		}
		gtid := intOr(v[2], -1)
		n := node{kind: kNVTX, start: start, end: end, name: text, gtid: gtid, gpid: gtid &^ 0xFFFFFF,
			device: -1, stream: -1, corr: -1, parent: -1, link: -1}
		if l, ok := parseRequest(text); ok {
			n.link = int32(len(im.links))
			n.reqTag = true
			im.links = append(im.links, l)
			im.sum.LinkedRequests++
		}
		if n.name == "" {
			n.name = "NVTX range"
		}
		im.nodes = append(im.nodes, n)
		im.sum.NVTXRanges++
		return nil
	})
}

func (im *importer) readRuntime() error {
	if !im.src.has(tRuntime) {
		im.note("no %s table: kernels have no launching call", tRuntime)
		return nil
	}
	return im.src.scan(tRuntime, []string{"start", "end", "globalTid", "correlationId", "nameId"}, func(v []any) error {
		start, ok1 := asInt(v[0])
		end, ok2 := asInt(v[1])
		if !ok1 || !ok2 {
			return nil
		}
		gtid := intOr(v[2], -1)
		name := str(v[4], im.strs)
		if name == "" {
			name = "CUDA runtime call"
		}
		im.nodes = append(im.nodes, node{kind: kRuntime, start: start, end: max(end, start), name: name, gtid: gtid,
			gpid: gtid &^ 0xFFFFFF, device: -1, stream: -1, corr: intOr(v[3], -1), parent: -1, link: -1})
		im.sum.RuntimeCalls++
		return nil
	})
}

func (im *importer) readGPU(k kind) error {
	table := map[kind]string{kKernel: tKernel, kMemcpy: tMemcpy, kMemset: tMemset}[k]
	if !im.src.has(table) {
		return nil
	}
	copyKinds := map[int64]string{}
	if k == kMemcpy && im.src.has(tEnumMemcpy) {
		if err := im.readEnum(tEnumMemcpy, copyKinds); err != nil {
			return err
		}
	}
	cols := []string{"start", "end", "deviceId", "streamId", "correlationId", "globalPid",
		"shortName", "demangledName", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "copyKind"}
	return im.src.scan(table, cols, func(v []any) error {
		start, ok1 := asInt(v[0])
		end, ok2 := asInt(v[1])
		if !ok1 || !ok2 {
			return nil
		}
		n := node{kind: k, start: start, end: max(end, start), device: intOr(v[2], -1), stream: intOr(v[3], -1),
			corr: intOr(v[4], -1), gpid: intOr(v[5], -1), gtid: -1, parent: -1, link: -1}
		switch k {
		case kKernel:
			n.name = str(v[6], im.strs)
			if n.name == "" {
				n.name = str(v[7], im.strs)
			}
			if n.name == "" {
				n.name = "kernel"
			}
			n.grid = dims(v[8:11])
			n.block = dims(v[11:14])
			im.sum.Kernels++
		case kMemcpy:
			n.name = "Memcpy"
			if c, ok := asInt(v[14]); ok && copyKinds[c] != "" {
				n.name += " " + copyKinds[c]
			}
			im.sum.Memcpys++
		case kMemset:
			n.name = "Memset"
			im.sum.Memsets++
		}
		im.nodes = append(im.nodes, n)
		return nil
	})
}

// dims renders gridX/Y/Z or blockX/Y/Z as Kineto does ("[x, y, z]").
func dims(v []any) string {
	var parts []string
	for _, x := range v {
		n, ok := asInt(x)
		if !ok {
			return ""
		}
		parts = append(parts, fmt.Sprint(n))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// readEnum reads an ENUM_* table (id, label; name when label is absent).
func (im *importer) readEnum(table string, into map[int64]string) error {
	return im.src.scan(table, []string{"id", "label", "name"}, func(v []any) error {
		id, ok := asInt(v[0])
		if !ok {
			return nil
		}
		l := str(v[1], nil)
		if l == "" {
			l = str(v[2], nil)
		}
		into[id] = l
		return nil
	})
}

func (im *importer) readMemory() error {
	if !im.src.has(tMemory) {
		im.note("no %s table: no memory series or outstanding allocations (record with --cuda-memory-usage=true)", tMemory)
		return nil
	}
	// Operation: ENUM_CUDA_DEV_MEM_EVENT_OPER names allocation and
	// deallocation; without it the documented values are used (0
	// allocation, 1 deallocation).
	opers := map[int64]string{}
	if im.src.has(tEnumMemOper) {
		if err := im.readEnum(tEnumMemOper, opers); err != nil {
			return err
		}
	}
	isFree := func(op int64) bool {
		if l, ok := opers[op]; ok {
			l = strings.ToLower(l)
			return strings.Contains(l, "dealloc") || strings.Contains(l, "free")
		}
		return op == 1
	}
	// Kind: only device memory (cudaMalloc segments) is accounted; the
	// export also tracks pinned, managed and static memory. Without the
	// enum every event counts.
	kinds := map[int64]string{}
	if im.src.has(tEnumMemKind) {
		if err := im.readEnum(tEnumMemKind, kinds); err != nil {
			return err
		}
	}
	isDevice := func(k int64, known bool) bool {
		if !known || len(kinds) == 0 {
			return true
		}
		l, ok := kinds[k]
		if !ok {
			return true
		}
		l = strings.ToLower(l)
		return strings.Contains(l, "device") && !strings.Contains(l, "static")
	}
	cols := []string{"start", "globalPid", "deviceId", "bytes", "memKind", "memoryOperationType", "address", "correlationId"}
	err := im.src.scan(tMemory, cols, func(v []any) error {
		ts, ok := asInt(v[0])
		if !ok {
			return nil
		}
		im.sum.MemoryEvents++
		mk, mkOK := asInt(v[4])
		if !isDevice(mk, mkOK) {
			return nil
		}
		im.mems = append(im.mems, memEvent{ts: ts, gpid: intOr(v[1], 0), device: intOr(v[2], -1),
			bytes: intOr(v[3], 0), addr: intOr(v[6], 0), corr: intOr(v[7], -1), free: isFree(intOr(v[5], 0))})
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(im.mems, func(a, b memEvent) int { return cmp.Compare(a.ts, b.ts) })
	return nil
}

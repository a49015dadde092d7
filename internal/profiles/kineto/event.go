// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package kineto reads PyTorch profiler (Kineto) Chrome-trace JSON as a
// stream: events are handed to a Handler one at a time and the document is
// never held as a tree, so a multi-gigabyte trace imports in bounded memory.
package kineto

// Event is one entry of traceEvents. It is only valid during the Handler
// call that receives it: the parser reuses it (copy what you keep).
type Event struct {
	// Phase is the "ph" letter: 'X' (complete), 'i'/'I' (instant), 's'/'f'
	// (flow start/end), 'M' (metadata), 'C' (counter), 'B'/'E'.
	Phase byte
	Cat   string
	Name  string
	// Pid and Tid as numbers; PidStr/TidStr hold them when the trace writes
	// strings (ROCm and some tools do), with Pid/Tid then 0.
	Pid, Tid       int64
	PidStr, TidStr string
	// TsNs and DurNs are "ts" and "dur" converted from decimal microseconds
	// (up to 3 decimals) to integer nanoseconds without going through
	// float64. TsNs is as written: add Metadata.BaseTimeNs when
	// Metadata.HasBaseTime (which may only be known at the end of the file).
	TsNs, DurNs int64
	// HasTs and HasDur report that "ts" / "dur" were present and
	// representable (not NaN, Infinity, or out of the int64 range: those
	// count in Metadata.NumberErrors).
	HasTs, HasDur bool
	// ID and BindPoint of flow events ("id", "bp").
	ID        string
	BindPoint string
	Args      Args
}

// Args holds the "args" Kineto writes that the importer uses; a field not
// present in the event is -1 (numbers) or "" (strings).
type Args struct {
	ExternalID     int64 // "External id" (2021-22: "external id")
	Correlation    int64 // "correlation"
	PythonID       int64 // "Python id"
	PythonParentID int64 // "Python parent id"
	Device         int64 // "device"
	Stream         int64 // "stream"
	// [memory] instant events.
	Addr           int64 // "Addr"
	Bytes          int64 // "Bytes" (negative for a free)
	TotalAllocated int64 // "Total Allocated"
	TotalReserved  int64 // "Total Reserved"
	DeviceType     int64 // "Device Type": 0 CPU, 1 CUDA, 6 HIP (ROCm)
	DeviceID       int64 // "Device Id"
	// Raw JSON text of structured args kept on spans ("" when longer
	// than MaxRawArg).
	InputDims string // "Input Dims"
	Grid      string // "grid"
	Block     string // "block"
	// "Call stack" (2021-22 traces): a JSON string, given unescaped.
	CallStack string
	// Metadata events ('M'): "name" argument (process/thread names, labels).
	MetaName string
	// Other holds the remaining scalar args as raw JSON text (a string
	// value keeps its quotes and escapes; NaN stays NaN), at most
	// MaxOtherArgs of them in file order; object and array args other than
	// the ones above are not kept.
	Other []KV
}

// KV is one raw argument.
type KV struct{ Key, Value string }

// MaxOtherArgs bounds Args.Other per event.
const MaxOtherArgs = 16

// Reset clears the args for reuse.
func (a *Args) Reset() { *a = clearArgs(a.Other) }

// clearArgs is cleared Args (every absent number -1) keeping other's
// storage.
func clearArgs(other []KV) Args {
	return Args{ExternalID: -1, Correlation: -1, PythonID: -1, PythonParentID: -1, Device: -1, Stream: -1,
		Addr: -1, Bytes: 0, TotalAllocated: -1, TotalReserved: -1, DeviceType: -1, DeviceID: -1, Other: other[:0]}
}

// Metadata is everything outside traceEvents, in whatever order the file
// has it.
type Metadata struct {
	SchemaVersion   int64
	TraceID         string // "trace_id" as written
	BaseTimeNs      int64  // "baseTimeNanoseconds"
	HasBaseTime     bool
	DisplayTimeUnit string
	TraceName       string
	Devices         []DeviceProperty // "deviceProperties"
	Rank, WorldSize int64            // "distributedInfo" (-1 when absent)
	Backend         string
	// User metadata (add_metadata / add_metadata_json) and unknown
	// top-level keys (INFO, profile_memory, ...), in file order: strings
	// unescaped, other scalars as their JSON text, objects/arrays as raw
	// JSON. At most MaxExtra entries (ExtraDropped counts the rest), each at
	// most MaxExtraValue bytes (ExtraTruncated counts the values cut).
	Extra          []KV
	ExtraDropped   int
	ExtraTruncated int
	// NumberErrors counts numeric values that could not be used: NaN,
	// Infinity, or out of the int64 range (after conversion to ns).
	NumberErrors int64
	// Events is the number of traceEvents entries read.
	Events int64
}

// DeviceProperty is one GPU of "deviceProperties".
type DeviceProperty struct {
	ID             int64
	Name           string
	TotalGlobalMem int64
	ComputeMajor   int64
	ComputeMinor   int64
}

// Handler receives events as they are parsed. Returning an error stops the
// parse with that error.
type Handler interface {
	Event(e *Event) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(e *Event) error

// Event calls f.
func (f HandlerFunc) Event(e *Event) error { return f(e) }

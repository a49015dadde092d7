// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kineto

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// rec is a copy of an Event that outlives the Handler call.
type rec struct {
	Phase          byte
	Cat, Name      string
	Pid, Tid       int64
	PidStr, TidStr string
	TsNs, DurNs    int64
	HasTs, HasDur  bool
	ID, BP         string
	Args           Args
}

func collect(t testing.TB, doc string) ([]rec, Metadata, error) {
	t.Helper()
	var out []rec
	md, err := Parse(strings.NewReader(doc), Options{}, HandlerFunc(func(e *Event) error {
		r := rec{e.Phase, e.Cat, e.Name, e.Pid, e.Tid, e.PidStr, e.TidStr, e.TsNs, e.DurNs, e.HasTs, e.HasDur, e.ID, e.BindPoint, e.Args}
		r.Args.Other = append([]KV(nil), e.Args.Other...)
		if len(r.Args.Other) == 0 {
			r.Args.Other = nil
		}
		out = append(out, r)
		return nil
	}))
	return out, md, err
}

func mustParse(t *testing.T, doc string) ([]rec, Metadata) {
	t.Helper()
	evs, md, err := collect(t, doc)
	if err != nil {
		t.Fatalf("Parse: %v\ndoc: %s", err, doc)
	}
	return evs, md
}

func noArgs() Args {
	var a Args
	a.Reset()
	a.Other = nil
	return a
}

func TestMetadataAnyOrder(t *testing.T) {
	before := `{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85017755648, "computeMajor": 9, "computeMinor": 0, "numSms": 132}, {"id": 1, "name": "B\u0032", "extra": {"a": [1, 2]}}],
	"distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8, "pg_config": [{"ranks": [0, 1]}]},
	"trace_id": "ABC", "baseTimeNanoseconds": 1775078550000000000, "displayTimeUnit": "ms",
	"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}]}`
	after := `{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}], "traceName": "/tmp/t.json", "trace_id": "ABC",
	"baseTimeNanoseconds": 1775078550000000000, "schemaVersion": 1,
	"distributedInfo": {"rank": 3, "world_size": 8, "backend": "nccl"}, "displayTimeUnit": "ms",
	"deviceProperties": [{"computeMinor": 0, "computeMajor": 9, "name": "NVIDIA H100", "id": 0, "totalGlobalMem": 85017755648}, {"name": "B2", "id": 1}]}`
	want := Metadata{SchemaVersion: 1, TraceID: "ABC", BaseTimeNs: 1775078550000000000, HasBaseTime: true,
		DisplayTimeUnit: "ms", Devices: []DeviceProperty{{0, "NVIDIA H100", 85017755648, 9, 0}, {ID: 1, Name: "B2"}},
		Rank: 3, WorldSize: 8, Backend: "nccl", Events: 1}
	for name, doc := range map[string]string{"before": before, "after": after} {
		t.Run(name, func(t *testing.T) {
			evs, md := mustParse(t, doc)
			w := want
			if name == "after" {
				w.TraceName = "/tmp/t.json"
			}
			if !reflect.DeepEqual(md, w) {
				t.Errorf("metadata\n got %+v\nwant %+v", md, w)
			}
			if len(evs) != 1 || evs[0].TsNs != 1000 || evs[0].DurNs != 2000 {
				t.Errorf("events %+v", evs)
			}
		})
	}
	// Absent metadata.
	_, md := mustParse(t, `{"traceEvents": []}`)
	if !reflect.DeepEqual(md, Metadata{Rank: -1, WorldSize: -1}) {
		t.Errorf("empty metadata %+v", md)
	}
}

func TestExtra(t *testing.T) {
	big := strings.Repeat("x", 3*MaxExtraValue)
	bigArr := "[" + strings.Repeat(`"abcdefghi",`, 2000) + `"z"]`
	doc := `{"profile_memory": 1, "user": "al\"ice", "obj": {"a": [1, {"b": null}], "c": "\u00e9"}, "f": -1.5e3,
	"b": true, "n": null, "nan": NaN, "INFO": ["line 1", "line 2"], "bigs": "` + big + `", "biga": ` + bigArr + `,
	"traceEvents": [], "late": [1,2,3]}`
	_, md := mustParse(t, doc)
	want := []KV{{"profile_memory", "1"}, {"user", `al"ice`}, {"obj", `{"a": [1, {"b": null}], "c": "\u00e9"}`},
		{"f", "-1.5e3"}, {"b", "true"}, {"n", "null"}, {"nan", "NaN"}, {"INFO", `["line 1", "line 2"]`},
		{"bigs", big[:MaxExtraValue]}, {"biga", bigArr[:MaxExtraValue]}, {"late", "[1,2,3]"}}
	if !reflect.DeepEqual(md.Extra, want) {
		t.Errorf("extra\n got %q\nwant %q", md.Extra, want)
	}
	if md.ExtraTruncated != 2 || md.ExtraDropped != 0 {
		t.Errorf("truncated %d dropped %d", md.ExtraTruncated, md.ExtraDropped)
	}
	// Entry bound.
	var sb strings.Builder
	sb.WriteString("{")
	for i := range MaxExtra + 5 {
		fmt.Fprintf(&sb, `"k%d": %d, `, i, i)
	}
	sb.WriteString(`"traceEvents": []}`)
	_, md = mustParse(t, sb.String())
	if len(md.Extra) != MaxExtra || md.ExtraDropped != 5 {
		t.Errorf("extra bound: %d entries, %d dropped", len(md.Extra), md.ExtraDropped)
	}
}

// A 20 MB unknown key before and after traceEvents is skipped without
// being held.
func TestLargeUnknownKeySkipped(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"blob": [`)
	for i := range 200000 {
		fmt.Fprintf(&sb, `{"s": "a string with \"escapes\" \\ and more text %d", "n": [%d, 1.5e3, true, null]},`, i, i)
	}
	sb.WriteString(`0], "blobstr": "`)
	sb.WriteString(strings.Repeat(`abc\"\\`, 1<<20))
	sb.WriteString(`", "traceEvents": [{"ph": "i", "name": "[memory]", "ts": 5}], "z": 1}`)
	if sb.Len() < 20<<20 {
		t.Fatalf("document only %d bytes", sb.Len())
	}
	evs, md := mustParse(t, sb.String())
	if len(evs) != 1 || evs[0].Name != "[memory]" || len(md.Extra) != 3 || md.Extra[2] != (KV{"z", "1"}) {
		t.Fatalf("got %d events, extra %d", len(evs), len(md.Extra))
	}
	if md.ExtraTruncated != 2 || !strings.HasPrefix(md.Extra[0].Value, `[{"s": "a string`) || len(md.Extra[0].Value) != MaxExtraValue {
		t.Errorf("blob extra: truncated %d, %.40q (%d bytes)", md.ExtraTruncated, md.Extra[0].Value, len(md.Extra[0].Value))
	}
}

func TestEvents(t *testing.T) {
	base := func(r rec) rec {
		if reflect.DeepEqual(r.Args, Args{}) {
			r.Args = noArgs()
		}
		return r
	}
	args := func(f func(a *Args)) Args {
		a := noArgs()
		f(&a)
		return a
	}
	tests := []struct {
		name string
		ev   string
		want rec
	}{
		{"complete", `{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 783658, "tid": 785244, "ts": 1669783687464181, "dur": 45,
			"args": {"External id": 3073, "Ev Idx": 0, "Fwd thread id": 1, "Sequence number": 1573, "Record function id": 0,
			"Input Dims": [[2048, 4096], [4096, 1024]], "Input type": ["float", "float"], "Concrete Inputs": ["", ""]}}`,
			rec{Phase: 'X', Cat: "cpu_op", Name: "aten::mm", Pid: 783658, Tid: 785244, TsNs: 1669783687464181000, DurNs: 45000, HasTs: true, HasDur: true,
				Args: args(func(a *Args) {
					a.ExternalID = 3073
					a.InputDims = "[[2048, 4096], [4096, 1024]]"
					a.Other = []KV{{"Ev Idx", "0"}, {"Fwd thread id", "1"}, {"Sequence number", "1573"}, {"Record function id", "0"}}
				})}},
		{"kernel", `{"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>(int, T)", "pid": 0, "tid": 7,
			"ts": 1694039968955744.123, "dur": 1.5,
			"args": {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 311, "registers per thread": 16,
			"shared memory": 0, "blocks per SM": 0.4, "warps per SM": 1.6, "grid": [54, 1, 1], "block": [128, 1, 1],
			"est. achieved occupancy %": 3}}`,
			rec{Phase: 'X', Cat: "kernel", Name: "void at::native::vectorized_elementwise_kernel<4>(int, T)", Tid: 7,
				TsNs: 1694039968955744123, DurNs: 1500, HasTs: true, HasDur: true,
				Args: args(func(a *Args) {
					a.Device, a.Stream, a.Correlation = 0, 7, 311
					a.Grid, a.Block = "[54, 1, 1]", "[128, 1, 1]"
					a.Other = []KV{{"queued", "0"}, {"context", "1"}, {"registers per thread", "16"}, {"shared memory", "0"},
						{"blocks per SM", "0.4"}, {"warps per SM", "1.6"}, {"est. achieved occupancy %", "3"}}
				})}},
		{"memory", `{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 10,
			"args": {"Total Reserved": 2097152, "Total Allocated": 512, "Bytes": -512, "Addr": 139726427046912, "Device Type": 1, "Device Id": 0}}`,
			rec{Phase: 'i', Cat: "cpu_instant_event", Name: "[memory]", Pid: 1, Tid: 1, TsNs: 10000, HasTs: true,
				Args: args(func(a *Args) {
					a.TotalReserved, a.TotalAllocated, a.Bytes, a.Addr, a.DeviceType, a.DeviceID = 2097152, 512, -512, 139726427046912, 1, 0
				})}},
		{"instant I", `{"name": "Iteration Start: PyTorch Profiler", "ph": "I", "s": "g", "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": 1}`,
			rec{Phase: 'I', Name: "Iteration Start: PyTorch Profiler", PidStr: "Traces", TidStr: "Trace PyTorch Profiler", TsNs: 1000, HasTs: true}},
		{"flow s", `{"ph": "s", "id": 15278, "pid": 6583, "tid": 6583, "ts": 1365627949869.794, "cat": "ac2g", "name": "ac2g"}`,
			rec{Phase: 's', Cat: "ac2g", Name: "ac2g", Pid: 6583, Tid: 6583, TsNs: 1365627949869794, HasTs: true, ID: "15278"}},
		{"flow f", `{"ph": "f", "id": "0x1f", "pid": 6583, "tid": "stream 7", "ts": 1.5, "cat": "ac2g", "name": "ac2g", "bp": "e"}`,
			rec{Phase: 'f', Cat: "ac2g", Name: "ac2g", Pid: 6583, TidStr: "stream 7", TsNs: 1500, HasTs: true, ID: `"0x1f"`, BP: "e"}},
		{"metadata", `{"name": "process_name", "ph": "M", "ts": 1669783687352244, "pid": 783658, "tid": 0, "args": {"name": "python3"}}`,
			rec{Phase: 'M', Name: "process_name", Pid: 783658, TsNs: 1669783687352244000, HasTs: true,
				Args: args(func(a *Args) { a.MetaName = "python3" })}},
		{"counter", `{"ph": "C", "name": "mem", "pid": "[pid]", "tid": 0, "ts": 2, "args": {"allocated": 3.5, "reserved": NaN}}`,
			rec{Phase: 'C', Name: "mem", PidStr: "[pid]", TsNs: 2000, HasTs: true,
				Args: args(func(a *Args) { a.Other = []KV{{"allocated", "3.5"}, {"reserved", "NaN"}} })}},
		{"begin", `{"ph": "B", "name": "b", "pid": 1, "tid": 2, "ts": 3}`, rec{Phase: 'B', Name: "b", Pid: 1, Tid: 2, TsNs: 3000, HasTs: true}},
		{"end", `{"ph": "E", "pid": 1, "tid": 2, "ts": 4}`, rec{Phase: 'E', Pid: 1, Tid: 2, TsNs: 4000, HasTs: true}},
		{"legacy", `{"ph": "X", "cat": "Operator", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1, "dur": 0,
			"args": {"Trace name": "PyTorch Profiler", "Trace iteration": 0, "external id": 9, "Call stack": "a.py(1): f;\nb.py(2): g", "Input Dims": [[], []]}}`,
			rec{Phase: 'X', Cat: "Operator", Name: "aten::add", Pid: 1, Tid: 1, TsNs: 1000, HasTs: true, HasDur: true,
				Args: args(func(a *Args) {
					a.ExternalID = 9
					a.CallStack = "a.py(1): f;\nb.py(2): g"
					a.InputDims = "[[], []]"
					a.Other = []KV{{"Trace name", `"PyTorch Profiler"`}, {"Trace iteration", "0"}}
				})}},
		{"python", `{"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": 1, "tid": 1, "ts": 1.000, "dur": 2.25,
			"args": {"Python parent id": 3, "Python id": 4, "Python thread": 0}}`,
			rec{Phase: 'X', Cat: "python_function", Name: "nn.Module: Linear_0", Pid: 1, Tid: 1, TsNs: 1000, DurNs: 2250, HasTs: true, HasDur: true,
				Args: args(func(a *Args) {
					a.PythonParentID, a.PythonID = 3, 4
					a.Other = []KV{{"Python thread", "0"}}
				})}},
		{"escapes", `{"ph": "X", "name": "\u0041\"q\"\\\/\b\f\n\r\t\u00e9\u20ac\ud83d\ude00", "cat": "c\u0061t", "args": {"s": "x\ny"}}`,
			rec{Phase: 'X', Name: "A\"q\"\\/\b\f\n\r\té€😀", Cat: "cat",
				Args: args(func(a *Args) { a.Other = []KV{{"s", `"x\ny"`}} })}},
		{"lone surrogates", `{"name": "a\ud800b\udc00c\ud800\u0041\ud800\ud800"}`,
			rec{Name: "a\uFFFDb\uFFFDc\uFFFDA\uFFFD\uFFFD"}},
		{"control chars", "{\"name\": \"tab\there\x01\x1f\", \"cat\": \"nl\nx\"}", rec{Name: "tab\there\x01\x1f", Cat: "nl\nx"}},
		{"non-ascii", `{"name": "名前 ünïcödé"}`, rec{Name: "名前 ünïcödé"}},
		{"nan infinity", `{"ph": "X", "ts": NaN, "dur": Infinity, "pid": -Infinity, "tid": NaN, "args": {"correlation": NaN, "External id": -Infinity, "x": Infinity, "y": -Infinity}}`,
			rec{Phase: 'X', Args: args(func(a *Args) { a.Other = []KV{{"x", "Infinity"}, {"y", "-Infinity"}} })}},
		{"nulls and odd types", `{"ph": null, "name": null, "cat": 5, "pid": null, "ts": null, "dur": "12.5", "args": null, "id": null}`,
			rec{Cat: "5", DurNs: 12500, HasDur: true, ID: "null"}},
		{"empty", `{}`, rec{}},
		{"unknown keys", `{"ph": "X", "tts": 5, "cname": "good", "s": "g", "id2": {"local": "0x1"}, "flow_in": true, "name": "n"}`,
			rec{Phase: 'X', Name: "n"}},
		{"whitespace", "{ \"ph\"\t:\r\n\"X\" ,\n\"name\" :\"n\"\n}", rec{Phase: 'X', Name: "n"}},
		{"args non-scalar unknown", `{"args": {"a": {"b": 1}, "c": [1], "d": "x"}}`,
			rec{Args: args(func(a *Args) { a.Other = []KV{{"d", `"x"`}} })}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, md := mustParse(t, `{"traceEvents": [`+tt.ev+`]}`)
			if len(evs) != 1 || md.Events != 1 {
				t.Fatalf("got %d events (md %d)", len(evs), md.Events)
			}
			want := base(tt.want)
			if !reflect.DeepEqual(evs[0], want) {
				t.Errorf("\n got %+v\nwant %+v", evs[0], want)
			}
		})
	}
}

func TestOtherArgsBound(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"traceEvents": [{"args": {`)
	for i := range MaxOtherArgs + 4 {
		fmt.Fprintf(&sb, `"a%d": %d, `, i, i)
	}
	sb.WriteString(`"correlation": 5}}, {"args": {"b": 1}}]}`)
	evs, _ := mustParse(t, sb.String())
	if len(evs[0].Args.Other) != MaxOtherArgs || evs[0].Args.Correlation != 5 {
		t.Errorf("other %d, correlation %d", len(evs[0].Args.Other), evs[0].Args.Correlation)
	}
	// The reused Event is reset between events.
	if len(evs[1].Args.Other) != 1 || evs[1].Args.Correlation != -1 {
		t.Errorf("second event args %+v", evs[1].Args)
	}
}

func TestTimestamps(t *testing.T) {
	tests := []struct {
		text string
		ns   int64
		ok   bool
	}{
		{"0", 0, true},
		{"-0", 0, true},
		{"0.0", 0, true},
		{"1", 1000, true},
		{"1.5", 1500, true},
		{"1.25", 1250, true},
		{"1.123", 1123, true},
		{"1.1234", 1123, true},   // sub-ns digits truncated
		{"1.9999", 1999, true},   // toward zero
		{"-1.9999", -1999, true}, // toward zero
		{"0.0009", 0, true},
		{"1694039968955744", 1694039968955744000, true},
		{"1694039968955744.123", 1694039968955744123, true},
		{"1694039968955744.1239999", 1694039968955744123, true},
		{"1694039968955744.100000000000000000000000001", 1694039968955744100, true},
		{"9223372036854775.807", 9223372036854775807, true}, // max int64 ns
		{"9223372036854775.808", 0, false},
		{"-9223372036854775.808", -9223372036854775808, true},
		{"-9223372036854775.809", 0, false},
		{"99999999999999999999", 0, false},
		{"123456789012345678901234567890", 0, false},
		{"-5", -5000, true},
		{"-1669783687464181.5", -1669783687464181500, true},
		{"1.7e15", 1700000000000000000, true},
		{"1.7E+15", 1700000000000000000, true},
		{"17e14", 1700000000000000000, true},
		{"1.694039968955744123e15", 1694039968955744123, true},
		{"1694039968955744123e-3", 1694039968955744123, true},
		{"1e-3", 1, true},
		{"1e-4", 0, true},
		{"5e-1", 500, true},
		{"1e16", 0, false},
		{"1e999999999999", 0, false},
		{"0e999999999999", 0, true},
		{"1e-999999999999", 0, true},
		{"0.000000000000000000000000000000001e33", 1000, true},
		{"1000000000000000000000e-21", 1000, true},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			evs, md := mustParse(t, `{"traceEvents": [{"ts": `+tt.text+`, "dur": `+tt.text+`}]}`)
			e := evs[0]
			if e.TsNs != tt.ns || e.HasTs != tt.ok || e.DurNs != tt.ns || e.HasDur != tt.ok {
				t.Errorf("ts %d %v dur %d %v, want %d %v", e.TsNs, e.HasTs, e.DurNs, e.HasDur, tt.ns, tt.ok)
			}
			if wantErrs := map[bool]int64{true: 0, false: 2}[tt.ok]; md.NumberErrors != wantErrs {
				t.Errorf("NumberErrors %d, want %d", md.NumberErrors, wantErrs)
			}
		})
	}
	// Integer fields take the integer part of a decimal.
	evs, _ := mustParse(t, `{"traceEvents": [{"pid": 7.9, "tid": 1e2, "args": {"stream": 7.0}}]}`)
	if evs[0].Pid != 7 || evs[0].Tid != 100 || evs[0].Args.Stream != 7 {
		t.Errorf("integer fields %+v", evs[0])
	}
}

func TestDecimalToIntMatchesBig(t *testing.T) {
	// Cross-check decimalToInt against exact rational arithmetic on
	// generated texts.
	for i := range 20000 {
		txt := genNumber(uint64(i)*2654435761 + 12345)
		got, ok := decimalToInt([]byte(txt), 3)
		want, wok := bigDecimalToInt(txt, 3)
		if ok != wok || (ok && got != want) {
			t.Fatalf("%s: got %d %v, want %d %v", txt, got, ok, want, wok)
		}
	}
}

func TestPlainIntMatchesDecimal(t *testing.T) {
	// plainInt, the integer fast path of intValue, takes what it takes
	// with parseDecimal's value, and leaves the rest to it.
	texts := []string{"0", "-0", "7", "-512", "01", "-", "1669783687464181", "9223372036854775", "9223372036854776",
		"999999999999999999", "1000000000000000000", "-999999999999999999", "12.5", "1e3", "12a", "00"}
	for i := range 20000 {
		texts = append(texts, genNumber(uint64(i)*2654435761+12345))
	}
	for _, txt := range texts {
		for _, scale := range []int{0, 3} {
			for _, after := range []string{",", "}", " ", "\n", ""} {
				b := []byte(txt + after)
				v, n := plainInt(b, scale)
				if n == 0 {
					continue
				}
				if n >= len(b) {
					t.Fatalf("%q: taken with nothing after it (it may go on past the buffer)", b)
				}
				// The general path's token: up to the first byte that
				// cannot be part of a number.
				end := 0
				for end < len(b) && numChar[b[end]] {
					end++
				}
				want, ok, valid := parseDecimal(b[:end], scale)
				if n != end || !valid || !ok || v != want {
					t.Fatalf("%q scale %d: plainInt %d (%d bytes), parseDecimal %d ok %v valid %v", txt, scale, v, n, want, ok, valid)
				}
			}
		}
	}
}

func TestPlainIntTakesKinetoNumbers(t *testing.T) {
	// The forms ts, dur and ids take in Kineto traces go the fast way
	// (integers up to 18 digits, eight at a time and the rest one by
	// one; fractions up to the scale); the others are left to
	// parseDecimal (TestPlainIntMatchesDecimal checks the values).
	for _, c := range []struct {
		txt   string
		scale int
		want  int64 // 0: not taken
	}{
		{"1669783687464181,", 3, 1669783687464181000},
		{"1694039968955744.123,", 3, 1694039968955744123},
		{"1694039968955744.5}", 3, 1694039968955744500},
		{"-12.25 ", 3, -12250},
		{"0.001,", 3, 1},
		{"12345678,", 0, 12345678},
		{"123456789012345678,", 0, 123456789012345678},
		{"-123456789012345678,", 0, -123456789012345678},
		{"12345678901234567,", 0, 12345678901234567},
		{"12345678e3,", 0, 0},
		{"1234567890123456789,", 0, 0},  // 19 digits: parseDecimal's
		{"9223372036854775.808,", 3, 0}, // past int64
		{"1.2345,", 3, 0},               // truncated: parseDecimal's
		{"1.5,", 0, 0},
		{"1.,", 3, 0},
		{"1.5e3,", 3, 0},
		{"1669783687464181", 3, 0}, // may go on past the buffer
	} {
		v, n := plainInt([]byte(c.txt), c.scale)
		if c.want == 0 {
			if n != 0 {
				t.Errorf("%q scale %d: taken (%d, %d bytes), want it left to parseDecimal", c.txt, c.scale, v, n)
			}
			continue
		}
		if n != len(c.txt)-1 || v != c.want {
			t.Errorf("%q scale %d: %d (%d bytes), want %d (%d bytes)", c.txt, c.scale, v, n, c.want, len(c.txt)-1)
		}
	}
}

func TestEightDigits(t *testing.T) {
	for pos := range 8 {
		for c := range 256 {
			b := []byte("31415926")
			b[pos] = byte(c)
			w := binary.LittleEndian.Uint64(b)
			if got, want := eightDigits(w), c >= '0' && c <= '9'; got != want {
				t.Fatalf("%q: eightDigits %v, want %v", b, got, want)
			}
			if c >= '0' && c <= '9' {
				want, _ := strconv.ParseUint(string(b), 10, 64)
				if got := eightDigitsValue(w); got != want {
					t.Fatalf("%q: eightDigitsValue %d, want %d", b, got, want)
				}
			}
		}
	}
}

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		doc    string
		offset int64
		line   int
	}{
		{"", 0, 1},
		{"   \n  ", 6, 2},
		{"nul", 0, 1},
		{`{"traceEvents": [{"ph": "X"}]} x`, 31, 1},
		{`{"traceEvents": []}{}`, 19, 1},
		{`{"traceEvents": [}`, 17, 1},
		{"{\"traceEvents\": [\n{\"ph\": \"X\",\n\"ts\": 1.},\n]}", 36, 3},
		{`{"traceEvents": [{"ts": 01}]}`, 24, 1},
		{`{"traceEvents": [{"ts": -}]}`, 24, 1},
		{`{"traceEvents": [{"ts": 1e}]}`, 24, 1},
		{`{"traceEvents": [{"ts": 1}, ]}`, 28, 1},
		{`{"traceEvents": [{"ts": 1},`, 27, 1},
		{`{"traceEvents": [{"ts": 1}`, 26, 1},
		{`{"traceEvents": [{"name": "abc`, 30, 1},
		{`{"traceEvents": [{"name": "a\xb"}]}`, 29, 1},
		{`{"traceEvents": [{"name": "a\u12G4"}]}`, 32, 1},
		{`{"traceEvents": [{"x": "a\qb"}]}`, 26, 1},
		{`{"traceEvents": [{"ph" "X"}]}`, 23, 1},
		{`{"traceEvents": [{"ph": "X" "name": "n"}]}`, 28, 1},
		{`{"traceEvents": [{"args": {"a": tru}}]}`, 35, 1},
		{`{"traceEvents": [{"args": {"a": nan}}]}`, 33, 1},
		{`{"traceEvents": [{"args": {"a": [1 2]}}]}`, 35, 1},
		{`{"traceEvents": [{"args": {"a": [1,]}}]}`, 35, 1},
		{`{"traceEvents": [{"args": {"a": {1: 2}}}]}`, 33, 1},
		{`{"traceEvents": [{"args": {"a": }}]}`, 32, 1},
		{`{"traceEvents": [1]}`, 17, 1},
		{`{"traceEvents": 5}`, 16, 1},
		{`{"traceEvents": [], }`, 20, 1},
		{`{traceEvents: []}`, 1, 1},
		{`["x"]`, 1, 1},
		{`"just a string"`, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.doc, func(t *testing.T) {
			_, _, err := collect(t, tt.doc)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a SyntaxError", err)
			}
			if se.Offset != tt.offset || se.Line != tt.line {
				t.Errorf("%v: want offset %d line %d", se, tt.offset, tt.line)
			}
			if !strings.HasPrefix(se.Error(), fmt.Sprintf("offset %d (line %d): ", se.Offset, se.Line)) {
				t.Errorf("message %q", se.Error())
			}
		})
	}
}

func TestDeepNesting(t *testing.T) {
	doc := `{"x": ` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `, "traceEvents": []}`
	if _, _, err := collect(t, doc); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
		t.Errorf("err = %v", err)
	}
	doc = `{"x": ` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `, "traceEvents": []}`
	if _, _, err := collect(t, doc); err != nil {
		t.Errorf("err = %v", err)
	}
}

func TestTopLevelArray(t *testing.T) {
	evs, md := mustParse(t, ` [{"ph": "X", "name": "a"}, {"ph": "i"}] `)
	if len(evs) != 2 || md.Events != 2 || md.Rank != -1 {
		t.Errorf("%d events, md %+v", len(evs), md)
	}
}

func TestBOM(t *testing.T) {
	evs, _ := mustParse(t, "\xef\xbb\xbf{\"traceEvents\": [{}]}")
	if len(evs) != 1 {
		t.Errorf("%d events", len(evs))
	}
}

const smallDoc = `{
  "schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU", "totalGlobalMem": 1}],
  "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm\u0021", "pid": 1, "tid": 2, "ts": 1.5, "dur": 2,
   "args": {"External id": 1, "Input Dims": [[1, 2], []], "Sequence number": 5, "s": "x\"y"}},
  {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": "p", "tid": "t", "ts": 3e0,
   "args": {"Bytes": -512, "Addr": 1, "v": NaN, "w": -Infinity, "t": true, "f": false, "n": null}},
  {"ph": "s", "id": 7, "ts": 4, "cat": "ac2g", "name": "ac2g"}, {"ph": "f", "id": 7, "ts": 5, "bp": "e"}
  ],
  "INFO": ["a", {"b": [null]}],
  "traceName": "t"
}
`

// Every strict prefix of a document fails (with a SyntaxError), never
// panics, and never reports success; the full document succeeds.
func TestTruncationAtEveryOffset(t *testing.T) {
	full, fullMD, err := collect(t, smallDoc)
	if err != nil || len(full) != 4 || fullMD.Events != 4 {
		t.Fatalf("full document: %v, %d events", err, len(full))
	}
	complete := len(strings.TrimRight(smallDoc, " \n"))
	for n := range len(smallDoc) {
		evs, md, err := collect(t, smallDoc[:n])
		if n >= complete {
			if err != nil || len(evs) != 4 {
				t.Errorf("prefix %d (complete): %v", n, err)
			}
			continue
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("prefix %d: err = %v, want a SyntaxError", n, err)
		}
		if se.Offset > int64(n) {
			t.Errorf("prefix %d: offset %d beyond the input", n, se.Offset)
		}
		if int64(len(evs)) != md.Events {
			t.Errorf("prefix %d: delivered %d, md.Events %d", n, len(evs), md.Events)
		}
		// Events delivered before the error are the complete ones.
		for i, e := range evs {
			if !reflect.DeepEqual(e, full[i]) {
				t.Errorf("prefix %d: event %d differs:\n%+v\n%+v", n, i, e, full[i])
			}
		}
	}
}

// Reading one byte at a time (and with data and EOF together) gives the
// same result as reading all at once: buffer refills at every position.
func TestReaderShapes(t *testing.T) {
	want, wantMD, err := collect(t, smallDoc)
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]io.Reader{
		"one byte":   iotest.OneByteReader(strings.NewReader(smallDoc)),
		"half":       iotest.HalfReader(strings.NewReader(smallDoc)),
		"data eof":   iotest.DataErrReader(strings.NewReader(smallDoc)),
		"one byte 2": iotest.DataErrReader(iotest.OneByteReader(strings.NewReader(smallDoc))),
	} {
		var got []string
		md, err := Parse(r, Options{}, HandlerFunc(func(e *Event) error {
			got = append(got, fmt.Sprintf("%+v", *e))
			return nil
		}))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(md, wantMD) || len(got) != len(want) {
			t.Errorf("%s: md %+v, %d events", name, md, len(got))
		}
	}
}

// Long tokens straddle buffer refills and grow the buffer.
func TestLongTokens(t *testing.T) {
	long := strings.Repeat("n", 300<<10)
	esc := strings.Repeat(`\u00e9x`, 40<<10)
	digits := "1" + strings.Repeat("0", 200000) + "e-200000"
	dims := "[" + strings.Repeat("1, ", 20<<10) + "1]"
	doc := `{"traceEvents": [{"name": "` + long + `", "cat": "` + esc + `", "ts": ` + digits + `, "args": {"Input Dims": ` + dims + `, "grid": ` + "[" + strings.Repeat("1, ", 40<<10) + "1]" + `}}]}`
	evs, _ := mustParse(t, doc)
	e := evs[0]
	if len(e.Name) != MaxString || e.Name != long[:MaxString] {
		t.Errorf("name %d bytes", len(e.Name))
	}
	if wantCat := strings.Repeat("éx", 40<<10); len(e.Cat) != MaxString-1 || !strings.HasPrefix(wantCat, e.Cat) {
		t.Errorf("cat %d bytes", len(e.Cat)) // truncated at a rune boundary
	}
	if e.TsNs != 1000 || !e.HasTs {
		t.Errorf("ts %d", e.TsNs)
	}
	if e.Args.InputDims != dims || e.Args.Grid != "" {
		t.Errorf("input dims %d bytes, grid %d bytes", len(e.Args.InputDims), len(e.Args.Grid))
	}
	// A number longer than the token bound is an error, not a buffer
	// growing without end.
	_, _, err := collect(t, `{"traceEvents": [{"ts": 1`+strings.Repeat("0", 2<<20)+`}]}`)
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "too long") {
		t.Errorf("err = %v", err)
	}
}

func TestHandlerError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	md, err := Parse(strings.NewReader(smallDoc), Options{}, HandlerFunc(func(e *Event) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	}))
	if !errors.Is(err, stop) || n != 2 || md.Events != 2 {
		t.Errorf("err %v, n %d, events %d", err, n, md.Events)
	}
}

func TestHandlerPanicPropagates(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v", r)
		}
	}()
	_, _ = Parse(strings.NewReader(smallDoc), Options{}, HandlerFunc(func(e *Event) error { panic("boom") }))
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	_, err := Parse(io.MultiReader(strings.NewReader(`{"traceEvents": [{}, `), errReader{boom}), Options{}, HandlerFunc(func(*Event) error { return nil }))
	if !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
}

func gz(t testing.TB, b []byte, streams int) []byte {
	var buf bytes.Buffer
	per := (len(b) + streams - 1) / streams
	for i := 0; i < streams; i++ {
		w := gzip.NewWriter(&buf)
		if _, err := w.Write(b[min(i*per, len(b)):min((i+1)*per, len(b))]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestOpenGzipAndPlain(t *testing.T) {
	for name, data := range map[string][]byte{
		"plain":       []byte(smallDoc),
		"gzip":        gz(t, []byte(smallDoc), 1),
		"multistream": gz(t, []byte(smallDoc), 3),
	} {
		r, err := Open(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := 0
		md, err := Parse(r, Options{}, HandlerFunc(func(*Event) error { n++; return nil }))
		if err != nil || n != 4 || md.TraceName != "t" {
			t.Errorf("%s: %v, %d events", name, err, n)
		}
	}
	// Tiny inputs: empty and a single byte.
	for _, in := range []string{"", "{", "\x1f"} {
		r, err := Open(strings.NewReader(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		var se *SyntaxError
		if _, err := Parse(r, Options{}, HandlerFunc(func(*Event) error { return nil })); !errors.As(err, &se) {
			t.Errorf("%q: %v", in, err)
		}
	}
	// A corrupt gzip header.
	if _, err := Open(strings.NewReader("\x1f\x8bxxxxxxxxxxxxxx")); err == nil {
		t.Error("corrupt gzip header accepted")
	}
	// A truncated gzip stream is an error (not a silent success).
	z := gz(t, []byte(smallDoc), 1)
	r, err := Open(bytes.NewReader(z[:len(z)-10]))
	if err == nil {
		_, err = Parse(r, Options{}, HandlerFunc(func(*Event) error { return nil }))
	}
	if err == nil {
		t.Error("truncated gzip accepted")
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "trace.json") // gzipped despite the name
	if err := os.WriteFile(p, gz(t, []byte(smallDoc), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	md, err := ParseFile(p, Options{}, HandlerFunc(func(*Event) error { return nil }))
	if err != nil || md.Events != 4 {
		t.Fatalf("%v, %d events", err, md.Events)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"traceEvents": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ParseFile(bad, Options{}, HandlerFunc(func(*Event) error { return nil }))
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), bad) {
		t.Errorf("err = %v", err)
	}
	if _, err := ParseFile(filepath.Join(dir, "missing"), Options{}, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v", err)
	}
}

func TestMaxDecompressed(t *testing.T) {
	size := int64(len(smallDoc))
	for _, tt := range []struct {
		limit   int64
		tooBig  bool
		gzipped bool
	}{{0, false, false}, {size, false, false}, {size, false, true}, {size - 1, true, false}, {size - 1, true, true}, {10, true, true}} {
		var r io.Reader = strings.NewReader(smallDoc)
		if tt.gzipped {
			var err error
			if r, err = Open(bytes.NewReader(gz(t, []byte(smallDoc), 1))); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Parse(r, Options{MaxDecompressed: tt.limit}, HandlerFunc(func(*Event) error { return nil }))
		if got := errors.Is(err, ErrTooLarge); got != tt.tooBig || (!tt.tooBig && err != nil) {
			t.Errorf("limit %d (size %d, gzip %v): err = %v", tt.limit, size, tt.gzipped, err)
		}
	}
	// A gzip bomb stops at the limit, not at its end.
	bomb := gz(t, make([]byte, 8<<20), 1)
	r, _ := Open(bytes.NewReader(bomb))
	_, err := Parse(io.MultiReader(strings.NewReader(`{"x": "`), r), Options{MaxDecompressed: 1 << 20}, HandlerFunc(func(*Event) error { return nil }))
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("bomb: %v", err)
	}
}

// The parser does not allocate per event once names are interned.
func TestAllocsPerEvent(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"traceEvents": [`)
	for i := range 10000 {
		fmt.Fprintf(&sb, `{"ph": "X", "cat": "kernel", "name": "k%d", "pid": 0, "tid": "stream 7", "ts": %d.123, "dur": 4.5,
			"args": {"External id": %d, "device": 0, "stream": 7, "correlation": %d, "grid": [1, 1, 1], "block": [128, 1, 1], "s": "const", "Input Dims": [[1, 2]]}},`, i%10, i, i, i)
	}
	sb.WriteString(`{}]}`)
	doc := sb.String()
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := Parse(strings.NewReader(doc), Options{}, HandlerFunc(func(*Event) error { return nil })); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 100 {
		t.Errorf("%.0f allocations for 10,001 events", allocs)
	}
}

func TestDocsAreTrueAboutEventReuse(t *testing.T) {
	// Strings handed out stay valid after the handler returns (interned or
	// from the arena, never aliasing the read buffer).
	var names, ids, others []string
	doc := strings.Repeat(`{"name": "n", "id": 12345, "args": {"v": 1.25}},`, 5000)
	_, err := Parse(strings.NewReader(`{"traceEvents": [`+doc+`{}]}`), Options{}, HandlerFunc(func(e *Event) error {
		if e.Name != "" {
			names, ids, others = append(names, e.Name), append(ids, e.ID), append(others, e.Args.Other[0].Value)
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range names {
		if names[i] != "n" || ids[i] != "12345" || others[i] != "1.25" {
			t.Fatalf("event %d: %q %q %q", i, names[i], ids[i], others[i])
		}
	}
}

// Reset clears every field of an Event (Args to its defaults), whatever
// was in it: a field added to Event or Args and not to Reset fails here.
func TestEventResetClearsEveryField(t *testing.T) {
	var e Event
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Field(i)
			switch f.Kind() {
			case reflect.Int64:
				f.SetInt(7)
			case reflect.Uint8:
				f.SetUint('X')
			case reflect.Bool:
				f.SetBool(true)
			case reflect.String:
				f.SetString("x")
			case reflect.Struct:
				fill(f)
			case reflect.Slice:
				f.Set(reflect.ValueOf([]KV{{"k", "v"}}))
			default:
				t.Fatalf("field %s of kind %s: teach this test (and Reset) about it", v.Type().Field(i).Name, f.Kind())
			}
		}
	}
	fill(reflect.ValueOf(&e).Elem())
	e.Reset()
	if len(e.Args.Other) != 0 || cap(e.Args.Other) == 0 {
		t.Fatalf("Args.Other %v (cap %d): want empty, storage kept", e.Args.Other, cap(e.Args.Other))
	}
	want := Event{Args: Args{ExternalID: -1, Correlation: -1, PythonID: -1, PythonParentID: -1, Device: -1, Stream: -1,
		Addr: -1, Bytes: 0, TotalAllocated: -1, TotalReserved: -1, DeviceType: -1, DeviceID: -1, Other: e.Args.Other}}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("after Reset:\n got %+v\nwant %+v", e, want)
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package kineto

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/big"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
)

const fixtureDir = "../../../../shared/fixtures/traces"

func fixture(t testing.TB, name string) string {
	return testutil.SharedFixture(t, fixtureDir, name)
}

type fixtureCounts struct {
	events      int64
	memory      int
	memAbsBytes int64 // sum of |Bytes| of [memory] events
	withDur     int
	withExtID   int // events with "External id" / "external id"
	strPid      int
	tsSum       uint64 // sum of ts in ns, modulo 2^64
	durSum      int64  // sum of dur in ns
	corrSum     int64  // sum of args.correlation
	phases      map[byte]int
	cats        map[string]int
	md          func(t *testing.T, md Metadata)
}

// The expected numbers were computed once, independently, with Python's
// json module on the same files (run from /work/shared/fixtures/traces):
//
//	python3 /tmp/counts.py *.json.gz   # counts.py:
//	  d = json.load(gzip.open(f)); ev = d["traceEvents"]
//	  len(ev); Counter(e.get("ph","")); Counter(e.get("cat",""))
//	  mem = [e for e in ev if e.get("name") == "[memory]"]
//	  sum(1 for e in ev if "dur" in e)
//	  sum(1 for e in ev if "External id" in e.get("args",{}) or "external id" in e.get("args",{}))
//	  sum(1 for e in ev if isinstance(e.get("pid"), str))
//	python3 /tmp/sums.py *.json.gz     # sums.py:
//	  d = json.load(gzip.open(f), parse_float=Decimal); ev = d["traceEvents"]
//	  ts  = sum(int(Decimal(e["ts"]) * 1000) for e in ev if "ts" in e)        (printed % 2**64)
//	  dur = sum(int(Decimal(e["dur"]) * 1000) for e in ev if "dur" in e)
//	  sum(abs(int(e["args"]["Bytes"])) for e in ev if e.get("name") == "[memory]")
//	  sum(int(e["args"]["correlation"]) for e in ev if "correlation" in e.get("args", {}))
var fixtures = map[string]fixtureCounts{
	"hta-df_index_resolver.json.gz": {
		events: 216092, memory: 28010, memAbsBytes: 104938249920, withDur: 123379, withExtID: 123378, strPid: 4,
		tsSum: 8582679512938742040, durSum: 9280747000, corrSum: 13290727325,
		phases: map[byte]int{'M': 38, 'X': 123379, 'f': 42373, 'i': 28012, 's': 22290},
		cats: map[string]int{"": 40, "Trace": 1, "ac2g": 64663, "cpu_instant_event": 28010, "cpu_op": 56680, "cuda_runtime": 42373,
			"gpu_memcpy": 2040, "gpu_memset": 880, "kernel": 19370, "user_annotation": 2035},
		md: func(t *testing.T, md Metadata) {
			want := Metadata{SchemaVersion: 1, TraceName: "/tmp/trace_8_rank_1.json", Rank: 1, WorldSize: 2, Backend: "nccl",
				Devices: []DeviceProperty{{0, "Tesla V100-SXM2-32GB", 34089730048, 7, 0}, {1, "Tesla V100-SXM2-32GB", 34089730048, 7, 0}},
				Extra:   []KV{{"profile_memory", "1"}}, Events: 216092}
			if !reflect.DeepEqual(md, want) {
				t.Errorf("metadata\n got %+v\nwant %+v", md, want)
			}
		},
	},
	"hta-ns_resolution-rank0.pt.trace.json.gz": {
		events: 68692, withDur: 45420, withExtID: 45419, strPid: 4,
		tsSum: 16139519869631070455, durSum: 3437226132, corrSum: 3718698167,
		phases: map[byte]int{'M': 36, 'X': 45420, 'f': 15928, 'i': 2, 's': 7306},
		cats: map[string]int{"": 38, "Trace": 1, "ac2g": 21424, "cpu_op": 23910, "cuda_runtime": 15329, "fwdbwd": 1810, "gpu_memcpy": 1600,
			"gpu_memset": 145, "gpu_user_annotation": 15, "kernel": 4350, "user_annotation": 70},
		md: func(t *testing.T, md Metadata) {
			if md.TraceID != "094DFF9CD7781F8ADDEAFBA6A8855CA7" || md.DisplayTimeUnit != "ns" || len(md.Devices) != 8 || md.Rank != 0 || md.WorldSize != 1 {
				t.Errorf("metadata %+v", md)
			}
			// tw_job ... host_name, INFO: 14 extra keys, INFO last.
			if len(md.Extra) != 14 || md.Extra[13].Key != "INFO" || !strings.HasPrefix(md.Extra[13].Value, `["INFO:`) || md.ExtraTruncated != 0 {
				t.Errorf("extra %d entries: %.200q", len(md.Extra), md.Extra)
			}
		},
	},
	"hta-rank_non_gpu-legacy.json.gz": {
		events: 2467, withDur: 2467, withExtID: 2467,
		tsSum: 3011757924902111248, durSum: 250549000,
		phases: map[byte]int{'X': 2467},
		cats:   map[string]int{"cpu_op": 2424, "user_annotation": 43},
		md: func(t *testing.T, md Metadata) {
			if md.Rank != 0 || md.WorldSize != -1 || md.SchemaVersion != 0 || len(md.Extra) != 0 {
				t.Errorf("metadata %+v", md)
			}
		},
	},
	"hta-simple_add.json.gz": {
		events: 1348, withDur: 838, withExtID: 837, strPid: 4,
		tsSum: 14616401876211265232, durSum: 306668311000, corrSum: 1903843,
		phases: map[byte]int{'M': 38, 'X': 838, 'f': 315, 'i': 2, 's': 155},
		cats: map[string]int{"": 40, "Trace": 1, "ac2g": 470, "cpu_op": 359, "cuda_runtime": 331, "cuda_sync": 41, "gpu_memcpy": 16,
			"gpu_memset": 3, "kernel": 79, "user_annotation": 8},
		md: func(t *testing.T, md Metadata) {
			if len(md.Devices) != 8 || md.Rank != 0 {
				t.Errorf("metadata %+v", md)
			}
		},
	},
	"tracelens-b200_eager.json.gz": {
		events: 24656, withDur: 22355, withExtID: 7111,
		tsSum: 15224177688428860292, durSum: 2118013220, corrSum: 17713839,
		phases: map[byte]int{'X': 22355, 'f': 1370, 's': 931},
		cats: map[string]int{"ac2g": 2301, "cpu_op": 4809, "cuda_driver": 221, "cuda_runtime": 1151, "gpu_memcpy": 161, "gpu_user_annotation": 3,
			"kernel": 768, "overhead": 9, "python_function": 15230, "user_annotation": 3},
		md: func(t *testing.T, md Metadata) {
			if md.TraceID != "77C6C16CEF784657A94763DE3FE086C3" || !md.HasBaseTime || md.BaseTimeNs != 1767189312000000000 || md.WorldSize != 8 || len(md.Devices) != 8 {
				t.Errorf("metadata %+v", md)
			}
		},
	},
	"tracelens-sglang_qwen3_decode.json.gz": {
		events: 2058, withDur: 1471, withExtID: 90,
		tsSum: 10104604248743335488, durSum: 6980005325, corrSum: 54108094,
		phases: map[byte]int{'X': 1471, 'f': 573, 's': 14},
		cats: map[string]int{"ac2g": 587, "cpu_op": 61, "cuda_runtime": 29, "gpu_memcpy": 3, "kernel": 555, "python_function": 821,
			"user_annotation": 2},
		md: func(t *testing.T, md Metadata) {
			if md.TraceID != "C3AB6FAA14D646299C1D8365B14308AD" || md.BaseTimeNs != 1775078550000000000 || md.Backend != "nccl" ||
				len(md.Devices) != 1 || md.Devices[0].Name != "AMD Instinct MI300X" || md.Devices[0].ComputeMajor != 9 {
				t.Errorf("metadata %+v", md)
			}
			if md.Extra[0] != (KV{"roctracer_version", "4.1"}) {
				t.Errorf("extra %+v", md.Extra)
			}
		},
	},
}

func TestFixtures(t *testing.T) {
	for name, want := range fixtures {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if raceEnabled && want.events > 100000 {
				t.Skip("large fixture skipped under -race")
			}
			path := fixture(t, name)
			got := fixtureCounts{phases: map[byte]int{}, cats: map[string]int{}}
			md, err := ParseFile(path, Options{}, HandlerFunc(func(e *Event) error {
				got.phases[e.Phase]++
				got.cats[e.Cat]++
				if e.Name == "[memory]" {
					got.memory++
					got.memAbsBytes += max(e.Args.Bytes, -e.Args.Bytes)
				}
				if e.HasDur {
					got.withDur++
					got.durSum += e.DurNs
				}
				if e.HasTs {
					got.tsSum += uint64(e.TsNs)
				}
				if e.Args.ExternalID >= 0 {
					got.withExtID++
				}
				if e.Args.Correlation > 0 {
					got.corrSum += e.Args.Correlation
				}
				if e.PidStr != "" || (e.Phase == 'i' && e.Name != "[memory]" && e.Pid == 0 && e.Tid == 0) {
					got.strPid++ // the empty-string pid of "Record Window End" counts too
				}
				return nil
			}))
			if err != nil {
				t.Fatal(err)
			}
			got.events = md.Events
			if md.NumberErrors != 0 {
				t.Errorf("NumberErrors %d", md.NumberErrors)
			}
			want := want
			checkMD := want.md
			want.md = nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("\n got %+v\nwant %+v", got, want)
			}
			checkMD(t, md)
		})
	}
}

func readFixture(t testing.TB, name string) []byte {
	f, err := os.Open(fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkParseDFIndexResolver parses the 53 MB (decompressed) HTA
// fixture from memory with a handler doing trivial work.
func BenchmarkParseDFIndexResolver(b *testing.B) {
	data := readFixture(b, "hta-df_index_resolver.json.gz")
	var n, mem int64
	h := HandlerFunc(func(e *Event) error {
		n++
		if e.Name == "[memory]" {
			mem += e.Args.Bytes
		}
		return nil
	})
	for _, noOther := range []bool{false, true} {
		// NoOtherArgs as the import parses.
		b.Run("NoOtherArgs="+strconv.FormatBool(noOther), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			n = 0
			for b.Loop() {
				if _, err := Parse(bytes.NewReader(data), Options{NoOtherArgs: noOther}, h); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/float64(b.N), "events/op")
		})
	}
}

// BenchmarkParseDFIndexResolverGzip includes decompression.
func BenchmarkParseDFIndexResolverGzip(b *testing.B) {
	path := fixture(b, "hta-df_index_resolver.json.gz")
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(readFixture(b, "hta-df_index_resolver.json.gz"))))
	b.ReportAllocs()
	for b.Loop() {
		r, err := Open(bytes.NewReader(raw))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Parse(r, Options{}, HandlerFunc(func(*Event) error { return nil })); err != nil {
			b.Fatal(err)
		}
	}
}

// genNumber makes a JSON number text from a seed: signs, leading zeros in
// fractions, long digit strings, exponents.
func genNumber(seed uint64) string {
	next := func() uint64 {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return seed
	}
	var sb strings.Builder
	if next()%4 == 0 {
		sb.WriteByte('-')
	}
	intDigits := int(next() % 22)
	if intDigits == 0 {
		sb.WriteByte('0')
	} else {
		sb.WriteByte(byte('1' + next()%9))
		for range intDigits - 1 {
			sb.WriteByte(byte('0' + next()%10))
		}
	}
	if next()%2 == 0 {
		sb.WriteByte('.')
		for range 1 + int(next()%25) {
			sb.WriteByte(byte('0' + next()%10))
		}
	}
	if next()%3 == 0 {
		sb.WriteByte("eE"[next()%2])
		sb.WriteString([]string{"", "+", "-"}[next()%3])
		sb.WriteString(big.NewInt(int64(next() % 40)).String())
	}
	return sb.String()
}

// bigDecimalToInt is the exact reference: the rational value times
// 10^scale, truncated toward zero, if it fits an int64.
func bigDecimalToInt(s string, scale int) (int64, bool) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if !q.IsInt64() {
		return 0, false
	}
	return q.Int64(), true
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(smallDoc))
	f.Add([]byte(`{"traceEvents": [{"ts": 1.7e15, "dur": NaN, "name": "\ud83d\ude00"}], "x": [1, {"a": -Infinity}]}`))
	f.Add([]byte(`[{"ph": "X"}]`))
	f.Add([]byte(`{"traceEvents": [{"args": {"Input Dims": [[1]], "grid": [1], "Call stack": "a\nb"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var delivered int64
		md, err := Parse(bytes.NewReader(data), Options{MaxDecompressed: 1 << 20}, HandlerFunc(func(e *Event) error {
			delivered++
			if len(e.Name) > MaxString || len(e.Args.Other) > MaxOtherArgs {
				t.Fatalf("bounds exceeded: name %d, other %d", len(e.Name), len(e.Args.Other))
			}
			return nil
		}))
		if md.Events != delivered {
			t.Fatalf("md.Events %d, delivered %d", md.Events, delivered)
		}
		// The parallel parser, cutting the input into tiny jobs, gives the
		// same events, metadata and error.
		want := parseAll(t, bytes.NewReader(data), Options{})
		got := parseAll(t, bytes.NewReader(data), tinyParallel(2, 8+len(data)%61, 128))
		sameOutcome(t, "parallel", want, got)
		// NoOtherArgs (the import's setting) changes nothing but
		// Args.Other, on the parallel parser too.
		noOther := tinyParallel(2, 8+len(data)%61, 128)
		noOther.NoOtherArgs = true
		got = parseAll(t, bytes.NewReader(data), noOther)
		for i := range want.events {
			want.events[i].Args.Other = nil
		}
		sameOutcome(t, "parallel, NoOtherArgs", want, got)
		// Past a limit inside the document, the same error after the
		// same events.
		limit := int64(len(data)/2 + 1)
		want = parseAll(t, bytes.NewReader(data), Options{MaxDecompressed: limit})
		limited := tinyParallel(2, 8+len(data)%61, 128)
		limited.MaxDecompressed = limit
		sameOutcome(t, "parallel, limit", want, parseAll(t, bytes.NewReader(data), limited))
		if err != nil {
			if se := (*SyntaxError)(nil); errors.As(err, &se) && (se.Offset < 0 || se.Offset > int64(len(data)) || se.Line < 1) {
				t.Fatalf("bad error position: %v", se)
			}
			return
		}
		// A reader of one byte at a time gives the same result.
		var d2 int64
		md2, err2 := Parse(&oneByte{data}, Options{}, HandlerFunc(func(*Event) error { d2++; return nil }))
		if err2 != nil || d2 != delivered || !reflect.DeepEqual(md, md2) {
			t.Fatalf("one-byte reader: %v, %d vs %d events", err2, d2, delivered)
		}
	})
}

type oneByte struct{ b []byte }

func (r *oneByte) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

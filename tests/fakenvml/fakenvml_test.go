// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package fakenvml_test

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// The library is exercised in child processes (this test binary, re-executed
// with -test.run=^TestFakeNVMLChild$): go-nvml binds the NVML symbols once per
// process, so every scenario gets a process of its own.
const (
	envChild = "FAKENVML_TEST_CHILD" // which child case to run
	envLib   = "FAKENVML_TEST_LIB"   // path of the compiled library
	scale    = 100.0                 // FAKE_NVML_TIME_SCALE used by the children: 1 ms = 0.1 s
)

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// behaviourScenario covers every call the collector makes. Times are in
// scenario seconds; at scale 100 the whole script plays out in ~0.5 s.
const behaviourScenario = `# fakenvml behaviour test
driver_version version=535.129.03 cuda=12020 nvml=12.535.129.03

gpu index=0 uuid=GPU-00000000-1111-2222-3333-444444444444 name="NVIDIA H100 80GB HBM3" pci_bus_id=00000000:1B:00.0 pci_device_id=0x233010DE memory_total=80GiB memory_reserved=512MiB memory_used=1GiB util=35 util_amplitude=10 util_period=60 mem_util=20 enc_util=3 dec_util=4 temp=54 temp_slope=0.5 power_w=245.5 power_limit_w=700 energy_offset_mj=5000 sm_clock=1980 graphics_clock=1755 mem_clock=2619 video_clock=1545 max_sm_clock=1980 max_mem_clock=2619 pcie_tx_kbps=120000 pcie_rx_kbps=80000 ecc_corrected=5 ecc_uncorrected=1 ecc_corrected_aggregate=50 minor=4 compute_capability=9.0
gpu index=1 uuid=GPU-00000000-1111-2222-3333-000000000001 memory_total=16GiB memory_reserved=512MiB memory_used=1GiB util=70 mem_util=10 ecc=0 persistence=0 pstate=2 fan=45 unsupported=GetTotalEnergyConsumption,GetPcieThroughput
gpu index=2 uuid=GPU-00000000-1111-2222-3333-000000000002 mig=1 max_mig_devices=7
gpu index=3 uuid=GPU-00000000-1111-2222-3333-000000000003   # falls off the bus at 30 s

mig gpu=2 index=0 uuid=MIG-00000000-1111-2222-3333-000000000020 name="NVIDIA A100-SXM4-80GB MIG 1g.10gb" gpu_instance=1 compute_instance=0 memory_total=10GiB memory_used=256MiB
mig gpu=2 index=3 gpu_instance=5 compute_instance=0 memory_total=20GiB

process gpu=0 pid=4242 name=python memory=2GiB growth=1MiB sm_util=40 mem_util=15 enc_util=1 dec_util=2
process gpu=0 pid=4343 memory=1GiB stop=20 sm_util=5 mem_util=1
process gpu=1 pid=5151 memory=16GiB            # more than the GPU has: device memory is capped
process gpu=1 pid=5252 memory=1MiB type=graphics
process gpu=2 pid=6161 memory=1GiB gpu_instance=1 compute_instance=0
process gpu=2 pid=6262 memory=2GiB gpu_instance=5 compute_instance=0

throttle gpu=1 reasons=0x40
throttle gpu=0 at=30 reasons=0x8 sm_clock=1200
throttle gpu=0 at=30 until=1000 reasons=0x4

xid gpu=1 at=2 code=79
xid gpu=0 at=40 code=13
xid gpu=3 at=1 code=48   # GPU 3 is never registered: must not be delivered

lost gpu=3 at=30
`

const refcountScenario = `gpu index=0 power_w=100 energy_offset_mj=0
`

// eccScenario: ecc records step the counters and deliver ECC events, in time
// order with the XIDs, once per set and type.
const eccScenario = `gpu index=0 ecc_corrected=5 ecc_uncorrected=1 ecc_corrected_aggregate=50 ecc_uncorrected_aggregate=9
gpu index=1
ecc gpu=0 at=20 uncorrected=2
xid gpu=0 at=30 code=48
ecc gpu=0 at=40 corrected=3 uncorrected=1
ecc gpu=1 at=10 corrected=7   # GPU 1 is registered for double-bit events only: no event on the first set
`

// growResetScenario: grow records change a process's growth rate (applied
// by time, not file order; one before the process starts takes effect at
// its start); reset records clear the volatile ECC counters and bring a lost
// GPU back.
const growResetScenario = `gpu index=0 ecc_corrected=5 ecc_uncorrected=1 ecc_corrected_aggregate=50 ecc_uncorrected_aggregate=9
gpu index=1
process gpu=0 pid=10 memory=1GiB
grow pid=10 at=40 rate=8MiB
grow pid=10 at=20 rate=2MiB
grow pid=10 at=60 rate=-4MiB
process gpu=1 pid=11 memory=1GiB growth=1MiB start=30
grow pid=11 gpu=1 at=10 rate=3MiB
ecc gpu=0 at=10 uncorrected=2
reset gpu=0 at=30
ecc gpu=0 at=50 corrected=3
lost gpu=1 at=20
reset gpu=1 at=40
lost gpu=1 at=70
`

// The many-procs scenario: a node as busy as the load benchmark's
// (bench/load): manyGPUs GPUs with manyProcsPerGPU processes each, 512 in
// all, more than the library held before (256).
const (
	manyGPUs        = 8
	manyProcsPerGPU = 64
)

// manyPid is the pid of process p on GPU g; manyMemory its memory.
func manyPid(g, p int) uint32     { return uint32(100000 + g*1000 + p) }
func manyMemory(g, p int) float64 { return float64(64+g*8+p) * mib }

func manyProcsScenario() string {
	var b strings.Builder
	for g := range manyGPUs {
		fmt.Fprintf(&b, "gpu index=%d util=50 util_amplitude=20 util_period=30\n", g)
	}
	for g := range manyGPUs {
		for p := range manyProcsPerGPU {
			fmt.Fprintf(&b, "process gpu=%d pid=%d name=worker-%d-%d memory=%d sm_util=%d mem_util=%d\n",
				g, manyPid(g, p), g, p, int64(manyMemory(g, p)), p%100, (p+g)%100)
		}
	}
	return b.String()
}

// TestFakeNVML compiles the library and runs each scenario in a child process.
func TestFakeNVML(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not on PATH")
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "libnvidia-ml.so.1")
	build := exec.CommandContext(t.Context(), gcc, "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-std=gnu11",
		"-o", lib, "fakenvml.c", "-lpthread", "-lm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("gcc failed: %v\n%s", err, out)
	}

	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	behaviour := write("behaviour.scenario", behaviourScenario)
	refcount := write("refcount.scenario", refcountScenario)
	ecc := write("ecc.scenario", eccScenario)
	manyProcs := write("many-procs.scenario", manyProcsScenario())
	growReset := write("grow-reset.scenario", growResetScenario)
	e2e, err := filepath.Abs("scenarios/e2e.scenario")
	if err != nil {
		t.Fatal(err)
	}
	demo, err := filepath.Abs("scenarios/demo.scenario")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("exports", func(t *testing.T) { checkExports(t, lib) })
	t.Run("abi", checkGoABI)

	cases := []struct{ name, scenario string }{
		{"behaviour", behaviour},
		{"refcount", refcount},
		{"ecc", ecc},
		{"many-procs", manyProcs},
		{"grow-reset", growReset},
		{"e2e", e2e},
		{"demo", demo},
	}
	// The root-cause end-to-end scenarios: each child checks the story its
	// test relies on.
	for _, name := range []string{"rootcause-leak", "rootcause-throttle", "rootcause-xid", "rootcause-healthy", "rootcause-idle",
		"rootcause-ecc", "rootcause-powercap", "rootcause-hwreset", "rootcause-pressure", "rootcause-leak-onset"} {
		p, err := filepath.Abs("scenarios/" + name + ".scenario")
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct{ name, scenario string }{name, p})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, err := runChild(t, lib, c.name, c.scenario, fmt.Sprint(scale))
			if err != nil {
				t.Fatalf("child %s failed: %v\n--- stdout\n%s\n--- stderr\n%s", c.name, err, stdout, stderr)
			}
		})
	}

	// Init failures: nvmlInit returns NVML_ERROR_UNKNOWN and names the problem on stderr.
	bad := func(name, content string) string { return write(name, content) }
	for _, c := range []struct {
		name, scenario, scale string
		want                  []string
	}{
		{"unset", "", "1", []string{"FAKE_NVML_SCENARIO is not set"}},
		{"missing-file", filepath.Join(dir, "nope.scenario"), "1", []string{"nope.scenario", "cannot read"}},
		{"unknown-key", bad("unknown-key.scenario", "# header\n\ngpu index=0 colour=red\n"), "1",
			[]string{"unknown-key.scenario:3:", `unknown key "colour"`}},
		{"unknown-record", bad("unknown-record.scenario", "gpu index=0\nfan gpu=0\n"), "1",
			[]string{"unknown-record.scenario:2:", `unknown record type "fan"`}},
		{"not-key-value", bad("kv.scenario", "gpu index=0 oops\n"), "1", []string{"kv.scenario:1:", `"oops"`}},
		{"unterminated-quote", bad("quote.scenario", "gpu index=0 name=\"A100\n"), "1",
			[]string{"quote.scenario:1:", "unterminated"}},
		{"bad-number", bad("num.scenario", "gpu index=0 temp=hot\n"), "1", []string{"num.scenario:1:", "temp=hot"}},
		{"unknown-gpu", bad("ref.scenario", "gpu index=0\nprocess gpu=1 pid=7\n"), "1",
			[]string{"ref.scenario:2:", "gpu=1"}},
		{"gpu-gap", bad("gap.scenario", "gpu index=1\n"), "1", []string{"gap.scenario", "index=0 is missing"}},
		{"bad-unsupported", bad("uns.scenario", "gpu index=0 unsupported=GetFoo\n"), "1",
			[]string{"uns.scenario:1:", `"GetFoo"`}},
		{"ecc-disabled", bad("eccoff.scenario", "gpu index=0 ecc=0\necc gpu=0 at=1 uncorrected=1\n"), "1",
			[]string{"eccoff.scenario:2:", "ecc=0"}},
		{"ecc-no-errors", bad("ecc0.scenario", "gpu index=0\necc gpu=0 at=1\n"), "1",
			[]string{"ecc0.scenario:2:", "corrected=N or uncorrected=N"}},
		{"grow-no-process", bad("grow.scenario", "gpu index=0\nprocess gpu=0 pid=7\ngrow pid=8 at=1 rate=1MiB\n"), "1",
			[]string{"grow.scenario:3:", "pid=8, which no process line defines"}},
		{"grow-wrong-gpu", bad("growgpu.scenario", "gpu index=0\ngpu index=1\nprocess gpu=0 pid=7\ngrow pid=7 gpu=1 at=1 rate=1MiB\n"), "1",
			[]string{"growgpu.scenario:4:", "pid=7 on gpu=1"}},
		{"grow-no-rate", bad("growrate.scenario", "gpu index=0\nprocess gpu=0 pid=7\ngrow pid=7 at=1\n"), "1",
			[]string{"growrate.scenario:3:", "rate"}},
		{"reset-unknown-gpu", bad("reset.scenario", "gpu index=0\nreset gpu=2 at=1\n"), "1",
			[]string{"reset.scenario:2:", "gpu=2"}},
		{"bad-scale", refcount, "fast", []string{"FAKE_NVML_TIME_SCALE=fast"}},
		{"zero-scale", refcount, "0", []string{"FAKE_NVML_TIME_SCALE=0"}},
	} {
		t.Run("init-error/"+c.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, err := runChild(t, lib, "init-error", c.scenario, c.scale)
			if err != nil {
				t.Fatalf("child failed: %v\n--- stdout\n%s\n--- stderr\n%s", err, stdout, stderr)
			}
			lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1
			if lines != 1 {
				t.Errorf("want exactly one stderr line, got %d:\n%s", lines, stderr)
			}
			if !strings.HasPrefix(stderr, "fakenvml: ") {
				t.Errorf("stderr should start with \"fakenvml: \": %q", stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not contain %q", stderr, w)
				}
			}
		})
	}
}

// runChild re-executes this test binary to run one TestFakeNVMLChild case.
func runChild(t *testing.T, lib, name, scenario, timeScale string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFakeNVMLChild$", "-test.count=1", "-test.v",
		"-test.timeout=50s")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FAKE_NVML_") && !strings.HasPrefix(kv, "FAKENVML_TEST_") &&
			!strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	// Under -race a child would otherwise sleep 1 s on exit (atexit_sleep_ms).
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	env = append(env, "GORACE="+gorace, envChild+"="+name, envLib+"="+lib, "FAKE_NVML_TIME_SCALE="+timeScale)
	if scenario != "" {
		env = append(env, "FAKE_NVML_SCENARIO="+scenario)
	}
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil && !strings.Contains(stdout.String(), "--- PASS: TestFakeNVMLChild") {
		err = errors.New("child did not report a pass")
	}
	return stdout.String(), stderr.String(), err
}

// checkExports verifies the library defines every NVML symbol go-nvml may
// resolve for the calls the collector makes.
func checkExports(t *testing.T, lib string) {
	f, err := elf.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC && elf.ST_BIND(s.Info) == elf.STB_GLOBAL {
			defined[s.Name] = true
		}
	}
	for _, name := range []string{
		"nvmlInit", "nvmlInit_v2", "nvmlInitWithFlags", "nvmlShutdown", "nvmlErrorString",
		"nvmlSystemGetDriverVersion", "nvmlSystemGetNVMLVersion", "nvmlSystemGetCudaDriverVersion",
		"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetProcessName",
		"nvmlDeviceGetCount", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex", "nvmlDeviceGetHandleByIndex_v2",
		"nvmlDeviceGetHandleByUUID", "nvmlDeviceGetHandleByPciBusId", "nvmlDeviceGetHandleByPciBusId_v2",
		"nvmlDeviceGetUUID", "nvmlDeviceGetName", "nvmlDeviceGetIndex", "nvmlDeviceGetMinorNumber",
		"nvmlDeviceGetPciInfo", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo_v3",
		"nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetUtilizationRates",
		"nvmlDeviceGetEncoderUtilization", "nvmlDeviceGetDecoderUtilization", "nvmlDeviceGetTemperature",
		"nvmlDeviceGetTemperatureV", "nvmlDeviceGetPowerUsage", "nvmlDeviceGetEnforcedPowerLimit",
		"nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetClockInfo", "nvmlDeviceGetMaxClockInfo",
		"nvmlDeviceGetPcieThroughput", "nvmlDeviceGetCurrentClocksEventReasons",
		"nvmlDeviceGetCurrentClocksThrottleReasons", "nvmlDeviceGetTotalEccErrors", "nvmlDeviceGetEccMode",
		"nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetComputeRunningProcesses_v2",
		"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses",
		"nvmlDeviceGetGraphicsRunningProcesses_v2", "nvmlDeviceGetGraphicsRunningProcesses_v3",
		"nvmlDeviceGetMPSComputeRunningProcesses_v3", "nvmlDeviceGetProcessUtilization",
		"nvmlDeviceGetSupportedEventTypes", "nvmlDeviceRegisterEvents", "nvmlEventSetCreate",
		"nvmlEventSetWait", "nvmlEventSetWait_v2", "nvmlEventSetFree",
		"nvmlDeviceGetMigMode", "nvmlDeviceGetMaxMigDeviceCount", "nvmlDeviceGetMigDeviceHandleByIndex",
		"nvmlDeviceIsMigDeviceHandle", "nvmlDeviceGetGpuInstanceId", "nvmlDeviceGetComputeInstanceId",
		"nvmlDeviceGetDeviceHandleFromMigDeviceHandle", "nvmlDeviceGetPersistenceMode",
		"nvmlDeviceGetPerformanceState", "nvmlDeviceGetFanSpeed",
		"nvmlGpmSampleAlloc", "nvmlGpmSampleFree", "nvmlGpmSampleGet", "nvmlGpmMetricsGet",
		"nvmlGpmQueryDeviceSupport", "nvmlGpmMigSampleGet",
	} {
		if !defined[name] {
			t.Errorf("library does not export %s", name)
		}
	}
}

// checkGoABI pins the go-nvml struct sizes the C side asserts with _Static_assert.
func checkGoABI(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"PciInfo", unsafe.Sizeof(nvml.PciInfo{}), 68},
		{"Memory", unsafe.Sizeof(nvml.Memory{}), 24},
		{"Memory_v2", unsafe.Sizeof(nvml.Memory_v2{}), 40},
		{"Utilization", unsafe.Sizeof(nvml.Utilization{}), 8},
		{"ProcessInfo", unsafe.Sizeof(nvml.ProcessInfo{}), 24},
		{"ProcessUtilizationSample", unsafe.Sizeof(nvml.ProcessUtilizationSample{}), 32},
		{"GpmSupport", unsafe.Sizeof(nvml.GpmSupport{}), 8},
		{"Temperature", unsafe.Sizeof(nvml.Temperature{}), 12},
	} {
		if c.got != c.want {
			t.Errorf("sizeof(nvml.%s) = %d, the library assumes %d", c.name, c.got, c.want)
		}
	}
}

// ---------------------------------------------------------------------------
// Child side
// ---------------------------------------------------------------------------

// TestFakeNVMLChild is the body of the child processes started by TestFakeNVML.
func TestFakeNVMLChild(t *testing.T) {
	name := os.Getenv(envChild)
	if name == "" {
		t.Skip("helper process for TestFakeNVML")
	}
	lib := nvml.New(nvml.WithLibraryPath(os.Getenv(envLib)))
	switch name {
	case "behaviour":
		childBehaviour(t, lib)
	case "refcount":
		childRefcount(t, lib)
	case "ecc":
		childECC(t, lib)
	case "many-procs":
		childManyProcs(t, lib)
	case "grow-reset":
		childGrowReset(t, lib)
	case "e2e":
		childE2E(t, lib)
	case "demo":
		childDemo(t, lib)
	case "rootcause-leak", "rootcause-throttle", "rootcause-xid", "rootcause-healthy", "rootcause-idle", "rootcause-ecc",
		"rootcause-powercap", "rootcause-hwreset", "rootcause-pressure", "rootcause-leak-onset":
		childRootcause(t, lib, name)
	case "init-error":
		if ret := lib.Init(); ret != nvml.ERROR_UNKNOWN {
			t.Fatalf("Init = %v, want ERROR_UNKNOWN", ret)
		}
		// Return.Error goes through the library's nvmlErrorString once it is loaded.
		if s := lib.ErrorString(nvml.ERROR_UNKNOWN); s != "Unknown Error" {
			t.Errorf("ErrorString(UNKNOWN) = %q", s)
		}
	default:
		t.Fatalf("unknown child case %q", name)
	}
}

// scenClock bounds the library's scenario clock from the test's side: the
// library starts its clock somewhere inside the Init call.
type scenClock struct{ start, end time.Time }

func initClock(t *testing.T, lib nvml.Interface) scenClock {
	t.Helper()
	var c scenClock
	c.start = time.Now()
	ret := lib.Init()
	c.end = time.Now()
	if ret != nvml.SUCCESS {
		t.Fatalf("Init: %v", ret)
	}
	return c
}

// lo and hi bound the scenario time the library sees at real time at.
func (c scenClock) lo(at time.Time) float64 { return at.Sub(c.end).Seconds() * scale }
func (c scenClock) hi(at time.Time) float64 { return at.Sub(c.start).Seconds() * scale }

// waitUntil sleeps until the library's scenario time is surely past s.
func (c scenClock) waitUntil(s float64) {
	if d := time.Until(c.end.Add(time.Duration(s / scale * float64(time.Second)))); d > 0 {
		time.Sleep(d)
	}
}

// window runs f and returns the bounds of the scenario time f observed.
func (c scenClock) window(f func()) (lo, hi float64) {
	before := time.Now()
	f()
	return c.lo(before), c.hi(time.Now())
}

func must(t *testing.T, what string, ret nvml.Return) {
	t.Helper()
	if ret != nvml.SUCCESS {
		t.Fatalf("%s: %v", what, ret)
	}
}

func wantRet(t *testing.T, what string, got, want nvml.Return) {
	t.Helper()
	if got != want {
		t.Errorf("%s returned %d (%v), want %d (%v)", what, int32(got), got, int32(want), want)
	}
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func within(t *testing.T, what string, got, lo, hi float64) {
	t.Helper()
	if got < lo || got > hi {
		t.Errorf("%s = %v, want within [%v, %v]", what, got, lo, hi)
	}
}

func cstr(b []int8) string {
	var s []byte
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}

func handles(t *testing.T, lib nvml.Interface, n int) []nvml.Device {
	t.Helper()
	count, ret := lib.DeviceGetCount()
	must(t, "DeviceGetCount", ret)
	if count != n {
		t.Fatalf("DeviceGetCount = %d, want %d", count, n)
	}
	out := make([]nvml.Device, n)
	for i := range out {
		h, ret := lib.DeviceGetHandleByIndex(i)
		must(t, fmt.Sprintf("DeviceGetHandleByIndex(%d)", i), ret)
		out[i] = h
	}
	return out
}

// processUtilization retries the rare case where a new sample appears between
// go-nvml's size query and its fill call.
func processUtilization(h nvml.Device, last uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
	for i := 0; ; i++ {
		s, ret := tryProcessUtilization(h, last)
		if ret != nvml.ERROR_INSUFFICIENT_SIZE || i == 5 {
			return s, ret
		}
	}
}

// tryProcessUtilization: go-nvml v0.13.4-1 panics (slices its buffer past
// capacity) when a sample becomes due between its sizing and its fill call
// and the library rightly answers INSUFFICIENT_SIZE with the larger count;
// that answer is what the caller gets (the receiver does the same, see
// receiver/nvmlreceiver/procutil.go).
func tryProcessUtilization(h nvml.Device, last uint64) (s []nvml.ProcessUtilizationSample, ret nvml.Return) {
	defer func() {
		if r := recover(); r != nil {
			if err, ok := r.(runtime.Error); ok && strings.Contains(err.Error(), "slice bounds out of range") {
				s, ret = nil, nvml.ERROR_INSUFFICIENT_SIZE
				return
			}
			panic(r)
		}
	}()
	return h.GetProcessUtilization(last)
}

// cpuTime is the user+system CPU time this process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func childBehaviour(t *testing.T, lib nvml.Interface) {
	clk := initClock(t, lib)
	defer func() {
		wantRet(t, "Shutdown", lib.Shutdown(), nvml.SUCCESS)
		wantRet(t, "second Shutdown", lib.Shutdown(), nvml.ERROR_UNINITIALIZED)
	}()

	// go-nvml picked up the newest versioned symbols.
	for _, sym := range []string{"nvmlInit_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
		"nvmlDeviceGetPciInfo_v3", "nvmlEventSetWait_v2", "nvmlDeviceGetComputeRunningProcesses_v3",
		"nvmlDeviceGetGraphicsRunningProcesses_v3"} {
		if err := lib.Extensions().LookupSymbol(sym); err != nil {
			t.Errorf("LookupSymbol(%s): %v", sym, err)
		}
	}

	// System.
	v, ret := lib.SystemGetDriverVersion()
	must(t, "SystemGetDriverVersion", ret)
	eq(t, "driver version", v, "535.129.03")
	v, ret = lib.SystemGetNVMLVersion()
	must(t, "SystemGetNVMLVersion", ret)
	eq(t, "NVML version", v, "12.535.129.03")
	cuda, ret := lib.SystemGetCudaDriverVersion()
	must(t, "SystemGetCudaDriverVersion", ret)
	eq(t, "CUDA version", cuda, 12020)
	name, ret := lib.SystemGetProcessName(4242)
	must(t, "SystemGetProcessName", ret)
	eq(t, "process name", name, "python")
	_, ret = lib.SystemGetProcessName(4343)
	wantRet(t, "SystemGetProcessName(no name)", ret, nvml.ERROR_NOT_FOUND)
	eq(t, "ErrorString(GPU_IS_LOST)", lib.ErrorString(nvml.ERROR_GPU_IS_LOST), "GPU is lost")
	eq(t, "Return.Error()", nvml.ERROR_NOT_SUPPORTED.Error(), "Not Supported")

	// GPU 3 is lost at 30 s: everything here must run well before that.
	h := handles(t, lib, 4)
	if t0 := clk.hi(time.Now()); t0 > 25 {
		t.Fatalf("setup took too long (scenario time %.1f s); the machine is too slow for this test", t0)
	}
	uuid, ret := h[3].GetUUID()
	must(t, "GPU 3 GetUUID before it is lost", ret)
	eq(t, "GPU 3 UUID", uuid, "GPU-00000000-1111-2222-3333-000000000003")

	// Identity.
	uuid, ret = h[0].GetUUID()
	must(t, "GetUUID", ret)
	eq(t, "UUID", uuid, "GPU-00000000-1111-2222-3333-444444444444")
	name, ret = h[0].GetName()
	must(t, "GetName", ret)
	eq(t, "name", name, "NVIDIA H100 80GB HBM3")
	name, ret = h[1].GetName()
	must(t, "GetName(1)", ret)
	eq(t, "default name", name, "NVIDIA A100-SXM4-80GB")
	idx, ret := h[2].GetIndex()
	must(t, "GetIndex", ret)
	eq(t, "index", idx, 2)
	minor, ret := h[0].GetMinorNumber()
	must(t, "GetMinorNumber", ret)
	eq(t, "minor", minor, 4)
	minor, ret = h[1].GetMinorNumber()
	must(t, "GetMinorNumber(1)", ret)
	eq(t, "default minor", minor, 1)
	pci, ret := h[0].GetPciInfo()
	must(t, "GetPciInfo", ret)
	eq(t, "busId", cstr(pci.BusId[:]), "00000000:1B:00.0")
	eq(t, "busIdLegacy", cstr(pci.BusIdLegacy[:]), "0000:1B:00.0")
	eq(t, "pci bus", pci.Bus, 0x1B)
	eq(t, "pci device id", pci.PciDeviceId, 0x233010DE)
	byUUID, ret := lib.DeviceGetHandleByUUID("GPU-00000000-1111-2222-3333-000000000001")
	must(t, "DeviceGetHandleByUUID", ret)
	eq(t, "handle by UUID", byUUID, h[1])
	byPCI, ret := lib.DeviceGetHandleByPciBusId("0000:1b:00.0")
	must(t, "DeviceGetHandleByPciBusId", ret)
	eq(t, "handle by PCI bus id", byPCI, h[0])
	_, ret = lib.DeviceGetHandleByIndex(4)
	wantRet(t, "DeviceGetHandleByIndex(4)", ret, nvml.ERROR_INVALID_ARGUMENT)
	major, minorCC, ret := h[0].GetCudaComputeCapability()
	must(t, "GetCudaComputeCapability", ret)
	eq(t, "compute capability", fmt.Sprintf("%d.%d", major, minorCC), "9.0")

	// Static gauges.
	for _, c := range []struct {
		clock     nvml.ClockType
		cur, maxc uint32
	}{
		{nvml.CLOCK_SM, 1980, 1980}, {nvml.CLOCK_MEM, 2619, 2619}, {nvml.CLOCK_GRAPHICS, 1755, 1980},
		{nvml.CLOCK_VIDEO, 1545, 1545},
	} {
		got, ret := h[0].GetClockInfo(c.clock)
		must(t, "GetClockInfo", ret)
		eq(t, fmt.Sprintf("clock %d", c.clock), got, c.cur)
		got, ret = h[0].GetMaxClockInfo(c.clock)
		must(t, "GetMaxClockInfo", ret)
		eq(t, fmt.Sprintf("max clock %d", c.clock), got, c.maxc)
	}
	_, ret = h[0].GetClockInfo(nvml.ClockType(42))
	wantRet(t, "GetClockInfo(42)", ret, nvml.ERROR_INVALID_ARGUMENT)
	tx, ret := h[0].GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES)
	must(t, "GetPcieThroughput(TX)", ret)
	eq(t, "PCIe TX", tx, 120000)
	rx, ret := h[0].GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES)
	must(t, "GetPcieThroughput(RX)", ret)
	eq(t, "PCIe RX", rx, 80000)
	_, ret = h[1].GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES)
	wantRet(t, "GetPcieThroughput on a GPU listing it unsupported", ret, nvml.ERROR_NOT_SUPPORTED)
	for _, c := range []struct {
		et   nvml.MemoryErrorType
		ct   nvml.EccCounterType
		want uint64
	}{
		{nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC, 5},
		{nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC, 1},
		{nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.AGGREGATE_ECC, 50},
		{nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.AGGREGATE_ECC, 1},
	} {
		got, ret := h[0].GetTotalEccErrors(c.et, c.ct)
		must(t, "GetTotalEccErrors", ret)
		eq(t, fmt.Sprintf("ECC errors (%d,%d)", c.et, c.ct), got, c.want)
	}
	cur, pend, ret := h[0].GetEccMode()
	must(t, "GetEccMode", ret)
	eq(t, "ECC mode", [2]nvml.EnableState{cur, pend}, [2]nvml.EnableState{nvml.FEATURE_ENABLED, nvml.FEATURE_ENABLED})
	cur, _, ret = h[1].GetEccMode()
	must(t, "GetEccMode(1)", ret)
	eq(t, "ECC mode(1)", cur, nvml.FEATURE_DISABLED)
	_, ret = h[1].GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC)
	wantRet(t, "GetTotalEccErrors with ECC off", ret, nvml.ERROR_NOT_SUPPORTED)
	power, ret := h[0].GetPowerUsage()
	must(t, "GetPowerUsage", ret)
	eq(t, "power mW", power, 245500)
	limit, ret := h[0].GetEnforcedPowerLimit()
	must(t, "GetEnforcedPowerLimit", ret)
	eq(t, "power limit mW", limit, 700000)
	pm, ret := h[0].GetPersistenceMode()
	must(t, "GetPersistenceMode", ret)
	eq(t, "persistence", pm, nvml.FEATURE_ENABLED)
	pm, ret = h[1].GetPersistenceMode()
	must(t, "GetPersistenceMode(1)", ret)
	eq(t, "persistence(1)", pm, nvml.FEATURE_DISABLED)
	ps, ret := h[0].GetPerformanceState()
	must(t, "GetPerformanceState", ret)
	eq(t, "pstate", ps, nvml.PSTATE_0)
	ps, ret = h[1].GetPerformanceState()
	must(t, "GetPerformanceState(1)", ret)
	eq(t, "pstate(1)", ps, nvml.PSTATE_2)
	_, ret = h[0].GetFanSpeed()
	wantRet(t, "GetFanSpeed (no fan)", ret, nvml.ERROR_NOT_SUPPORTED)
	fan, ret := h[1].GetFanSpeed()
	must(t, "GetFanSpeed(1)", ret)
	eq(t, "fan", fan, 45)
	enc, period, ret := h[0].GetEncoderUtilization()
	must(t, "GetEncoderUtilization", ret)
	eq(t, "encoder util", enc, 3)
	if period == 0 {
		t.Error("encoder sampling period is 0")
	}
	dec, _, ret := h[0].GetDecoderUtilization()
	must(t, "GetDecoderUtilization", ret)
	eq(t, "decoder util", dec, 4)
	u, ret := h[1].GetUtilizationRates()
	must(t, "GetUtilizationRates(1)", ret)
	eq(t, "utilization(1)", u, nvml.Utilization{Gpu: 70, Memory: 10})
	reasons, ret := h[1].GetCurrentClocksEventReasons()
	must(t, "GetCurrentClocksEventReasons(1)", ret)
	eq(t, "clock event reasons(1)", reasons, uint64(nvml.ClocksThrottleReasonHwThermalSlowdown))
	reasons, ret = h[1].GetCurrentClocksThrottleReasons()
	must(t, "GetCurrentClocksThrottleReasons(1)", ret)
	eq(t, "throttle reasons(1)", reasons, 0x40)
	events, ret := h[0].GetSupportedEventTypes()
	must(t, "GetSupportedEventTypes", ret)
	if events&nvml.EventTypeXidCriticalError == 0 {
		t.Errorf("supported events %#x lack XID", events)
	}

	// MIG: not supported on GPU 0, enabled on GPU 2.
	_, _, ret = h[0].GetMigMode()
	wantRet(t, "GetMigMode(0)", ret, nvml.ERROR_NOT_SUPPORTED)
	maxMig, ret := h[0].GetMaxMigDeviceCount()
	must(t, "GetMaxMigDeviceCount(0)", ret)
	eq(t, "max MIG devices(0)", maxMig, 0)
	_, ret = h[0].GetMigDeviceHandleByIndex(0)
	wantRet(t, "GetMigDeviceHandleByIndex(0)", ret, nvml.ERROR_NOT_SUPPORTED)
	isMig, ret := h[0].IsMigDeviceHandle()
	must(t, "IsMigDeviceHandle(0)", ret)
	eq(t, "IsMigDeviceHandle(0)", isMig, false)
	_, ret = h[0].GetGpuInstanceId()
	wantRet(t, "GetGpuInstanceId on a GPU", ret, nvml.ERROR_INVALID_ARGUMENT)
	_, ret = h[0].GetDeviceHandleFromMigDeviceHandle()
	wantRet(t, "GetDeviceHandleFromMigDeviceHandle on a GPU", ret, nvml.ERROR_INVALID_ARGUMENT)
	mode, pending, ret := h[2].GetMigMode()
	must(t, "GetMigMode(2)", ret)
	eq(t, "MIG mode", [2]int{mode, pending}, [2]int{nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE})
	maxMig, ret = h[2].GetMaxMigDeviceCount()
	must(t, "GetMaxMigDeviceCount(2)", ret)
	eq(t, "max MIG devices(2)", maxMig, 7)
	m0, ret := h[2].GetMigDeviceHandleByIndex(0)
	must(t, "GetMigDeviceHandleByIndex(0)", ret)
	_, ret = h[2].GetMigDeviceHandleByIndex(1)
	wantRet(t, "GetMigDeviceHandleByIndex(1)", ret, nvml.ERROR_NOT_FOUND)
	_, ret = h[2].GetMigDeviceHandleByIndex(7)
	wantRet(t, "GetMigDeviceHandleByIndex(7)", ret, nvml.ERROR_INVALID_ARGUMENT)
	m3, ret := h[2].GetMigDeviceHandleByIndex(3)
	must(t, "GetMigDeviceHandleByIndex(3)", ret)
	isMig, ret = m0.IsMigDeviceHandle()
	must(t, "IsMigDeviceHandle(mig)", ret)
	eq(t, "IsMigDeviceHandle(mig)", isMig, true)
	uuid, ret = m0.GetUUID()
	must(t, "MIG GetUUID", ret)
	eq(t, "MIG UUID", uuid, "MIG-00000000-1111-2222-3333-000000000020")
	name, ret = m0.GetName()
	must(t, "MIG GetName", ret)
	eq(t, "MIG name", name, "NVIDIA A100-SXM4-80GB MIG 1g.10gb")
	gi, ret := m3.GetGpuInstanceId()
	must(t, "GetGpuInstanceId", ret)
	eq(t, "GPU instance", gi, 5)
	ci, ret := m3.GetComputeInstanceId()
	must(t, "GetComputeInstanceId", ret)
	eq(t, "compute instance", ci, 0)
	parent, ret := m0.GetDeviceHandleFromMigDeviceHandle()
	must(t, "GetDeviceHandleFromMigDeviceHandle", ret)
	eq(t, "MIG parent", parent, h[2])
	mm, ret := m0.GetMemoryInfo_v2()
	must(t, "MIG GetMemoryInfo_v2", ret)
	eq(t, "MIG memory", [2]uint64{mm.Total, mm.Used}, [2]uint64{10 * gib, 256*mib + gib})
	procs, ret := m3.GetComputeRunningProcesses()
	must(t, "MIG GetComputeRunningProcesses", ret)
	if len(procs) != 1 || procs[0].Pid != 6262 || procs[0].GpuInstanceId != 5 || procs[0].ComputeInstanceId != 0 {
		t.Errorf("MIG processes = %+v, want pid 6262 in GI 5 / CI 0", procs)
	}
	procs, ret = h[2].GetComputeRunningProcesses()
	must(t, "GetComputeRunningProcesses(2)", ret)
	eq(t, "processes on the MIG parent", len(procs), 2)
	_, ret = h[2].GetUtilizationRates()
	wantRet(t, "GetUtilizationRates with MIG on", ret, nvml.ERROR_NOT_SUPPORTED)
	_, ret = m0.GetUtilizationRates()
	wantRet(t, "GetUtilizationRates on a MIG device", ret, nvml.ERROR_NOT_SUPPORTED)
	_, ret = h[2].GetProcessUtilization(0)
	wantRet(t, "GetProcessUtilization with MIG on", ret, nvml.ERROR_NOT_SUPPORTED)

	// GPM: reported as unsupported.
	gs, ret := h[0].GpmQueryDeviceSupport()
	must(t, "GpmQueryDeviceSupport", ret)
	eq(t, "GPM supported", gs.IsSupportedDevice, 0)
	sample, ret := lib.GpmSampleAlloc()
	wantRet(t, "GpmSampleAlloc", ret, nvml.ERROR_NOT_SUPPORTED)
	wantRet(t, "GpmSampleGet", lib.GpmSampleGet(h[0], sample), nvml.ERROR_NOT_SUPPORTED)
	wantRet(t, "GpmMetricsGet", lib.GpmMetricsGet(&nvml.GpmMetricsGetType{NumMetrics: 1, Sample1: sample, Sample2: sample}),
		nvml.ERROR_NOT_SUPPORTED)
	wantRet(t, "GpmSampleFree", lib.GpmSampleFree(sample), nvml.ERROR_NOT_SUPPORTED)

	// Time-dependent values, checked against bounds on the scenario clock.
	var util nvml.Utilization
	clk.window(func() { util, ret = h[0].GetUtilizationRates() })
	must(t, "GetUtilizationRates", ret)
	within(t, "GPU utilization", float64(util.Gpu), 25, 45)
	eq(t, "memory utilization", util.Memory, 20)
	var temp uint32
	lo, hi := clk.window(func() { temp, ret = h[0].GetTemperature(nvml.TEMPERATURE_GPU) })
	must(t, "GetTemperature", ret)
	within(t, "temperature", float64(temp), math.Floor(54+0.5*lo), math.Ceil(54+0.5*hi))
	tv, ret := h[0].GetTemperatureV().V1()
	must(t, "GetTemperatureV", ret)
	if tv.Temperature < 54 || tv.Temperature > 54+30 {
		t.Errorf("GetTemperatureV = %d", tv.Temperature)
	}

	var e1, e2 uint64
	lo, hi = clk.window(func() { e1, ret = h[0].GetTotalEnergyConsumption() })
	must(t, "GetTotalEnergyConsumption", ret)
	within(t, "energy mJ", float64(e1), 5000+245500*lo-1, 5000+245500*hi+1)
	time.Sleep(5 * time.Millisecond)
	e2, ret = h[0].GetTotalEnergyConsumption()
	must(t, "GetTotalEnergyConsumption", ret)
	if e2 <= e1 {
		t.Errorf("energy did not increase: %d then %d", e1, e2)
	}
	_, ret = h[1].GetTotalEnergyConsumption()
	wantRet(t, "GetTotalEnergyConsumption on a GPU listing it unsupported", ret, nvml.ERROR_NOT_SUPPORTED)

	// Memory: 1 GiB baseline + pid 4242 (2 GiB + 1 MiB/s) + pid 4343 (1 GiB until 20 s).
	usedAt := func(s float64) float64 {
		u := float64(gib) + 2*gib + mib*s
		if s < 20 {
			u += gib
		}
		return u
	}
	usedRange := func(lo, hi float64) (float64, float64) {
		c := []float64{usedAt(lo), usedAt(hi)}
		if lo < 20 && hi >= 20 {
			c = append(c, usedAt(math.Nextafter(20, 0)), usedAt(20))
		}
		sort.Float64s(c)
		return c[0], c[len(c)-1]
	}
	var m2 nvml.Memory_v2
	lo, hi = clk.window(func() { m2, ret = h[0].GetMemoryInfo_v2() })
	must(t, "GetMemoryInfo_v2", ret)
	eq(t, "total", m2.Total, 80*gib)
	eq(t, "reserved", m2.Reserved, 512*mib)
	eq(t, "total = reserved + used + free", m2.Reserved+m2.Used+m2.Free, m2.Total)
	ulo, uhi := usedRange(lo, hi)
	within(t, "used", float64(m2.Used), ulo-1, uhi+1)
	m1, ret := h[0].GetMemoryInfo()
	must(t, "GetMemoryInfo", ret)
	eq(t, "v1 total", m1.Total, 80*gib)
	eq(t, "v1 total = used + free", m1.Used+m1.Free, m1.Total)
	if m1.Used < m2.Used+m2.Reserved {
		t.Errorf("v1 used %d should include reserved and not shrink below v2's %d+%d", m1.Used, m2.Used, m2.Reserved)
	}
	capped, ret := h[1].GetMemoryInfo_v2()
	must(t, "GetMemoryInfo_v2(1)", ret)
	eq(t, "capped used", capped.Used, 16*gib-512*mib)
	eq(t, "capped free", capped.Free, 0)

	var pl []nvml.ProcessInfo
	lo, hi = clk.window(func() { pl, ret = h[0].GetComputeRunningProcesses() })
	must(t, "GetComputeRunningProcesses", ret)
	if hi < 20 && len(pl) != 2 {
		t.Errorf("before 20 s GPU 0 should run 2 processes, got %+v", pl)
	}
	var leak1 uint64
	for _, p := range pl {
		eq(t, "GPU instance of a non-MIG process", p.GpuInstanceId, 0xFFFFFFFF)
		eq(t, "compute instance of a non-MIG process", p.ComputeInstanceId, 0xFFFFFFFF)
		if p.Pid == 4242 {
			leak1 = p.UsedGpuMemory
			within(t, "leaking process memory", float64(p.UsedGpuMemory), 2*gib+mib*lo-1, 2*gib+mib*hi+1)
		}
	}
	if leak1 == 0 {
		t.Fatalf("pid 4242 missing from %+v", pl)
	}
	gp, ret := h[0].GetGraphicsRunningProcesses()
	must(t, "GetGraphicsRunningProcesses", ret)
	eq(t, "graphics processes", len(gp), 0)
	gp, ret = h[1].GetGraphicsRunningProcesses()
	must(t, "GetGraphicsRunningProcesses(1)", ret)
	if len(gp) != 1 || gp[0].Pid != 5252 {
		t.Errorf("graphics processes(1) = %+v", gp)
	}

	// Per-process utilization samples: one per process per scenario second.
	samples, ret := processUtilization(h[0], 0)
	after := time.Now()
	must(t, "GetProcessUtilization(0)", ret)
	if len(samples) == 0 {
		t.Fatal("no process utilization samples")
	}
	var newest uint64
	stamps := map[uint64]bool{}
	for _, s := range samples {
		switch s.Pid {
		case 4242:
			eq(t, "sample", [4]uint32{s.SmUtil, s.MemUtil, s.EncUtil, s.DecUtil}, [4]uint32{40, 15, 1, 2})
		case 4343:
			eq(t, "sample", [2]uint32{s.SmUtil, s.MemUtil}, [2]uint32{5, 1})
		default:
			t.Errorf("sample for unexpected pid %d", s.Pid)
		}
		if s.TimeStamp < uint64(clk.start.UnixMicro()) || s.TimeStamp > uint64(after.UnixMicro())+1 {
			t.Errorf("sample timestamp %d outside [%d, %d]", s.TimeStamp, clk.start.UnixMicro(), after.UnixMicro())
		}
		stamps[s.TimeStamp] = true
		newest = max(newest, s.TimeStamp)
	}
	var ts []uint64
	for s := range stamps {
		ts = append(ts, s)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	for i := 1; i < len(ts); i++ {
		// One scenario second apart: 10 ms of wall time at scale 100.
		if d := ts[i] - ts[i-1]; d < 9999 || d > 10001 {
			t.Errorf("samples %d µs apart, want 10000", d)
		}
	}
	if n := len(ts); float64(n) > clk.hi(after)+1 || n > 20 {
		t.Errorf("%d sample instants for scenario time <= %.1f s", n, clk.hi(after))
	}
	newer, ret := processUtilization(h[0], newest)
	if ret != nvml.ERROR_NOT_FOUND {
		must(t, "GetProcessUtilization(newest)", ret)
		for _, s := range newer {
			if s.TimeStamp <= newest {
				t.Errorf("sample %d not newer than lastSeen %d", s.TimeStamp, newest)
			}
		}
	}
	future := uint64(time.Now().Add(time.Hour).UnixMicro())
	newer, ret = h[0].GetProcessUtilization(future)
	wantRet(t, "GetProcessUtilization(future)", ret, nvml.ERROR_NOT_FOUND)
	eq(t, "samples after the future", len(newer), 0)
	_, ret = h[3].GetProcessUtilization(0)
	wantRet(t, "GetProcessUtilization on a GPU without processes", ret, nvml.ERROR_NOT_FOUND)

	// Events: the XID on GPU 1 at 2 s arrives; the XID on unregistered GPU 3 never does.
	set, ret := lib.EventSetCreate()
	must(t, "EventSetCreate", ret)
	must(t, "RegisterEvents(0)", h[0].RegisterEvents(nvml.EventTypeXidCriticalError, set))
	must(t, "RegisterEvents(1)", h[1].RegisterEvents(nvml.EventTypeXidCriticalError|nvml.EventTypeSingleBitEccError|
		nvml.EventTypeDoubleBitEccError, set))
	wantRet(t, "RegisterEvents(unsupported type)", h[0].RegisterEvents(1<<40, set), nvml.ERROR_NOT_SUPPORTED)
	ev, ret := set.Wait(5000)
	must(t, "Wait for XID 79", ret)
	if got := clk.hi(time.Now()); got < 2 {
		t.Errorf("XID due at 2 s delivered at scenario time <= %.2f", got)
	}
	eq(t, "event type", ev.EventType, uint64(nvml.EventTypeXidCriticalError))
	eq(t, "event data (XID)", ev.EventData, 79)
	eq(t, "event device", ev.Device, h[1])
	eq(t, "event GPU instance", ev.GpuInstanceId, 0xFFFFFFFF)
	if now := clk.hi(time.Now()); now+5 < 40 {
		start := time.Now()
		_, ret = set.Wait(50)
		wantRet(t, "Wait with nothing due", ret, nvml.ERROR_TIMEOUT)
		if el := time.Since(start); el < 45*time.Millisecond {
			t.Errorf("Wait(50) returned TIMEOUT after only %v", el)
		}
	}
	ev, ret = set.Wait(5000)
	must(t, "Wait for XID 13", ret)
	if got := clk.hi(time.Now()); got < 40 {
		t.Errorf("XID due at 40 s delivered at scenario time <= %.2f", got)
	}
	eq(t, "event data (XID)", ev.EventData, 13)
	eq(t, "event device", ev.Device, h[0])
	// Nothing else is due for this set: the wait blocks for its whole timeout without spinning.
	cpu0, start := cpuTime(t), time.Now()
	_, ret = set.Wait(200)
	elapsed, cpu := time.Since(start), cpuTime(t)-cpu0
	wantRet(t, "Wait after all XIDs", ret, nvml.ERROR_TIMEOUT)
	if elapsed < 190*time.Millisecond {
		t.Errorf("Wait(200) returned after %v", elapsed)
	}
	if cpu > 100*time.Millisecond {
		t.Errorf("Wait(200) burned %v of CPU: it should sleep, not spin", cpu)
	}
	// A set created later still receives XIDs that are already due, once.
	set2, ret := lib.EventSetCreate()
	must(t, "EventSetCreate(2)", ret)
	must(t, "RegisterEvents on set 2", h[1].RegisterEvents(nvml.EventTypeXidCriticalError, set2))
	ev, ret = set2.Wait(1000)
	must(t, "Wait on set 2", ret)
	eq(t, "set 2 event data", ev.EventData, 79)
	_, ret = set2.Wait(0)
	wantRet(t, "Wait(0) on drained set 2", ret, nvml.ERROR_TIMEOUT)
	must(t, "EventSet.Free", set.Free())
	must(t, "EventSet.Free(2)", set2.Free())
	_, ret = set.Wait(10)
	wantRet(t, "Wait on a freed set", ret, nvml.ERROR_INVALID_ARGUMENT)

	// After 30 s: GPU 0 is throttled with its SM clock cut, pid 4343 is gone
	// (stopped at 20 s), the leak kept growing and GPU 3 is lost.
	clk.waitUntil(31)
	reasons, ret = h[0].GetCurrentClocksEventReasons()
	must(t, "GetCurrentClocksEventReasons(0)", ret)
	eq(t, "clock event reasons(0)", reasons, uint64(nvml.ClocksThrottleReasonHwSlowdown|nvml.ClocksEventReasonSwPowerCap))
	sm, ret := h[0].GetClockInfo(nvml.CLOCK_SM)
	must(t, "GetClockInfo(SM) while throttled", ret)
	eq(t, "throttled SM clock", sm, 1200)
	lo, hi = clk.window(func() { pl, ret = h[0].GetComputeRunningProcesses() })
	must(t, "GetComputeRunningProcesses after 20 s", ret)
	if len(pl) != 1 || pl[0].Pid != 4242 {
		t.Fatalf("after 20 s GPU 0 should run only pid 4242, got %+v", pl)
	}
	within(t, "leaking process memory", float64(pl[0].UsedGpuMemory), 2*gib+mib*lo-1, 2*gib+mib*hi+1)
	if pl[0].UsedGpuMemory < leak1+25*mib {
		t.Errorf("leak grew from %d to only %d", leak1, pl[0].UsedGpuMemory)
	}
	lo, hi = clk.window(func() { m2, ret = h[0].GetMemoryInfo_v2() })
	must(t, "GetMemoryInfo_v2 after 20 s", ret)
	ulo, uhi = usedRange(lo, hi)
	within(t, "used after 20 s", float64(m2.Used), ulo-1, uhi+1)

	_, ret = h[3].GetUUID()
	wantRet(t, "GetUUID on a lost GPU", ret, nvml.ERROR_GPU_IS_LOST)
	_, ret = h[3].GetMemoryInfo_v2()
	wantRet(t, "GetMemoryInfo_v2 on a lost GPU", ret, nvml.ERROR_GPU_IS_LOST)
	_, ret = h[3].GetTemperature(nvml.TEMPERATURE_GPU)
	wantRet(t, "GetTemperature on a lost GPU", ret, nvml.ERROR_GPU_IS_LOST)
	_, ret = h[3].GetComputeRunningProcesses()
	wantRet(t, "GetComputeRunningProcesses on a lost GPU", ret, nvml.ERROR_GPU_IS_LOST)
	_, ret = h[3].GetProcessUtilization(0)
	wantRet(t, "GetProcessUtilization on a lost GPU", ret, nvml.ERROR_GPU_IS_LOST)
	_, ret = h[3].GetFanSpeed()
	wantRet(t, "GetFanSpeed on a lost GPU", ret, nvml.ERROR_GPU_IS_LOST)
	_, ret = h[3].GpmQueryDeviceSupport()
	wantRet(t, "GpmQueryDeviceSupport on a lost GPU", ret, nvml.ERROR_GPU_IS_LOST)
	_, ret = lib.DeviceGetHandleByIndex(3)
	wantRet(t, "DeviceGetHandleByIndex on a lost GPU", ret, nvml.ERROR_GPU_IS_LOST)
	n, ret := lib.DeviceGetCount()
	must(t, "DeviceGetCount after a GPU is lost", ret)
	eq(t, "device count after a GPU is lost", n, 4)
	_, ret = h[2].GetUUID()
	must(t, "GetUUID on a healthy GPU", ret)
}

// childRefcount checks nested Init/Shutdown and a re-Init after a full
// Shutdown (which dlcloses the library) in the same process.
func childRefcount(t *testing.T, lib nvml.Interface) {
	initClock(t, lib)
	must(t, "second Init", lib.Init())
	must(t, "first Shutdown", lib.Shutdown())
	h := handles(t, lib, 1)
	time.Sleep(100 * time.Millisecond) // >= 10 scenario seconds
	e1, ret := h[0].GetTotalEnergyConsumption()
	must(t, "GetTotalEnergyConsumption", ret)
	if e1 < 100*1000*10 {
		t.Errorf("energy after >= 10 s at 100 W = %d mJ", e1)
	}
	must(t, "last Shutdown", lib.Shutdown())
	wantRet(t, "Shutdown when not initialised", lib.Shutdown(), nvml.ERROR_UNINITIALIZED)
	// go-nvml has dlclosed the library; it stays mapped, and answers UNINITIALIZED.
	_, ret = h[0].GetTotalEnergyConsumption()
	wantRet(t, "call after Shutdown", ret, nvml.ERROR_UNINITIALIZED)

	// Init again: the scenario is reloaded and its clock restarts.
	clk := initClock(t, lib)
	h = handles(t, lib, 1)
	var e2 uint64
	lo, hi := clk.window(func() { e2, ret = h[0].GetTotalEnergyConsumption() })
	must(t, "GetTotalEnergyConsumption after re-Init", ret)
	within(t, "energy after re-Init", float64(e2), 100*1000*lo-1, 100*1000*hi+1)
	if e2 >= e1 {
		t.Errorf("energy after re-Init %d should restart below %d", e2, e1)
	}
	must(t, "Shutdown", lib.Shutdown())
}

// childE2E checks the scenario the collector's end-to-end tests use.
func childE2E(t *testing.T, lib nvml.Interface) {
	clk := initClock(t, lib)
	defer func() { must(t, "Shutdown", lib.Shutdown()) }()
	h := handles(t, lib, 2)
	for i, want := range []string{"GPU-8a6b0c2e-1f1e-4c8e-9a3b-000000000000", "GPU-8a6b0c2e-1f1e-4c8e-9a3b-000000000001"} {
		uuid, ret := h[i].GetUUID()
		must(t, "GetUUID", ret)
		eq(t, "UUID", uuid, want)
	}
	leak := func() (uint64, float64, float64) {
		var pl []nvml.ProcessInfo
		var ret nvml.Return
		lo, hi := clk.window(func() { pl, ret = h[0].GetComputeRunningProcesses() })
		must(t, "GetComputeRunningProcesses(0)", ret)
		if len(pl) != 1 || pl[0].Pid != 4242 {
			t.Fatalf("GPU 0 processes = %+v, want pid 4242", pl)
		}
		return pl[0].UsedGpuMemory, lo, hi
	}
	m1, lo, hi := leak()
	within(t, "leak", float64(m1), 2*gib+mib*lo-1, 2*gib+mib*hi+1)
	time.Sleep(30 * time.Millisecond)
	m2, lo, hi := leak()
	within(t, "leak", float64(m2), 2*gib+mib*lo-1, 2*gib+mib*hi+1)
	if m2 < m1+2*mib {
		t.Errorf("memory of pid 4242 went from %d to %d in >= 3 s; want >= 1 MiB/s growth", m1, m2)
	}
	for range 2 {
		pl, ret := h[1].GetComputeRunningProcesses()
		must(t, "GetComputeRunningProcesses(1)", ret)
		if len(pl) != 1 || pl[0].Pid != 5151 || pl[0].UsedGpuMemory != 4*gib {
			t.Errorf("GPU 1 processes = %+v, want pid 5151 with 4 GiB", pl)
		}
		time.Sleep(10 * time.Millisecond)
	}
	used, ret := h[1].GetMemoryInfo_v2()
	must(t, "GetMemoryInfo_v2(1)", ret)
	eq(t, "GPU 1 used", used.Used, gib+4*gib)

	set, ret := lib.EventSetCreate()
	must(t, "EventSetCreate", ret)
	for _, d := range h {
		supported, ret := d.GetSupportedEventTypes()
		must(t, "GetSupportedEventTypes", ret)
		mask := supported & (nvml.EventTypeXidCriticalError | nvml.EventTypeSingleBitEccError | nvml.EventTypeDoubleBitEccError)
		must(t, "RegisterEvents", d.RegisterEvents(mask, set))
	}
	ev, ret := set.Wait(5000)
	must(t, "Wait", ret)
	if got := clk.hi(time.Now()); got < 2 {
		t.Errorf("XID due at 2 s delivered at scenario time <= %.2f", got)
	}
	eq(t, "XID", ev.EventData, 79)
	eq(t, "XID device", ev.Device, h[1])
	eq(t, "event type", ev.EventType, uint64(nvml.EventTypeXidCriticalError))
	_, ret = set.Wait(100)
	wantRet(t, "second Wait", ret, nvml.ERROR_TIMEOUT)
	must(t, "Free", set.Free())
}

// childDemo checks the demo scenario: the throttle on GPU 3 from 20 s and
// the XID on GPU 2 at 45 s.
func childDemo(t *testing.T, lib nvml.Interface) {
	clk := initClock(t, lib)
	defer func() { must(t, "Shutdown", lib.Shutdown()) }()
	h := handles(t, lib, 4)
	name, ret := lib.SystemGetProcessName(31337)
	must(t, "SystemGetProcessName", ret)
	eq(t, "process name", name, "vllm")
	pl, ret := h[0].GetComputeRunningProcesses()
	must(t, "GetComputeRunningProcesses(0)", ret)
	if len(pl) != 1 || pl[0].Pid != 31337 || pl[0].UsedGpuMemory < 60*gib {
		t.Errorf("GPU 0 processes = %+v", pl)
	}
	var reasons uint64
	if _, hi := clk.window(func() { reasons, ret = h[3].GetCurrentClocksEventReasons() }); hi < 20 {
		must(t, "GetCurrentClocksEventReasons before 20 s", ret)
		eq(t, "reasons before 20 s", reasons, 0)
	}
	set, ret := lib.EventSetCreate()
	must(t, "EventSetCreate", ret)
	for _, d := range h {
		must(t, "RegisterEvents", d.RegisterEvents(nvml.EventTypeXidCriticalError, set))
	}
	clk.waitUntil(21)
	reasons, ret = h[3].GetCurrentClocksEventReasons()
	must(t, "GetCurrentClocksEventReasons after 20 s", ret)
	eq(t, "reasons after 20 s", reasons, uint64(nvml.ClocksThrottleReasonHwThermalSlowdown))
	sm, ret := h[3].GetClockInfo(nvml.CLOCK_SM)
	must(t, "GetClockInfo(SM)", ret)
	eq(t, "throttled SM clock", sm, 1050)
	ev, ret := set.Wait(5000)
	must(t, "Wait", ret)
	if got := clk.hi(time.Now()); got < 45 {
		t.Errorf("XID due at 45 s delivered at scenario time <= %.2f", got)
	}
	eq(t, "XID", ev.EventData, 13)
	eq(t, "XID device", ev.Device, h[2])
	pl2, ret := h[0].GetComputeRunningProcesses()
	must(t, "GetComputeRunningProcesses(0)", ret)
	if len(pl2) != 1 || pl2[0].UsedGpuMemory <= pl[0].UsedGpuMemory {
		t.Errorf("vLLM memory did not grow: %+v then %+v", pl, pl2)
	}
	must(t, "Free", set.Free())
}

// childRootcause checks the scenarios of tests/e2e/rootcause_test.go: which
// GPUs and processes there are, whose memory grows, and when the throttle
// and the XID come.
func childRootcause(t *testing.T, lib nvml.Interface, name string) {
	clk := initClock(t, lib)
	defer func() { must(t, "Shutdown", lib.Shutdown()) }()
	type proc struct {
		gpu    int
		pid    uint32
		growth float64 // bytes per scenario second
	}
	var procs []proc
	gpus, utilLo, utilHi := 1, 0.0, 100.0
	switch name {
	case "rootcause-leak":
		gpus, procs = 2, []proc{{0, 41001, 8 * mib}, {1, 41002, 0}}
	case "rootcause-healthy":
		gpus, procs, utilLo, utilHi = 2, []proc{{0, 41001, 0}, {1, 41002, 0}}, 50, 70
	case "rootcause-idle":
		procs, utilLo, utilHi = []proc{{0, 41001, 0}}, 3, 7
	case "rootcause-hwreset":
		gpus, procs = 2, []proc{{0, 41001, 0}, {1, 41002, 0}}
	default:
		// rootcause-pressure and rootcause-leak-onset are flat until 20 s
		// (their grow records: childGrowReset checks grow itself).
		procs = []proc{{0, 41001, 0}}
	}
	h := handles(t, lib, gpus)
	var set nvml.EventSet
	if name == "rootcause-xid" {
		var ret nvml.Return
		set, ret = lib.EventSetCreate()
		must(t, "EventSetCreate", ret)
		defer func() { must(t, "Free", set.Free()) }()
		must(t, "RegisterEvents", h[0].RegisterEvents(nvml.EventTypeXidCriticalError, set))
	}
	// rootcause-ecc: 3 uncorrected and 120 corrected errors from the start
	// (7 and 950 aggregate), 2 and 4 more at 8 s, with a double- and a
	// single-bit ECC event; no XID.
	eccTotals := func(s float64) [4]uint64 {
		if s >= 8 {
			return [4]uint64{124, 5, 954, 9}
		}
		return [4]uint64{120, 3, 950, 7}
	}
	if name == "rootcause-ecc" {
		checkECC(t, clk, h[0], "GPU 0", eccTotals)
		var ret nvml.Return
		set, ret = lib.EventSetCreate()
		must(t, "EventSetCreate", ret)
		defer func() { must(t, "Free", set.Free()) }()
		must(t, "RegisterEvents", h[0].RegisterEvents(nvml.EventTypeXidCriticalError|nvml.EventTypeSingleBitEccError|
			nvml.EventTypeDoubleBitEccError, set))
	}
	memory := func(p proc) (uint64, float64, float64) {
		var pl []nvml.ProcessInfo
		var ret nvml.Return
		lo, hi := clk.window(func() { pl, ret = h[p.gpu].GetComputeRunningProcesses() })
		must(t, "GetComputeRunningProcesses", ret)
		if len(pl) != 1 || pl[0].Pid != p.pid {
			t.Fatalf("GPU %d processes = %+v, want pid %d alone", p.gpu, pl, p.pid)
		}
		return pl[0].UsedGpuMemory, lo, hi
	}
	first := make([]uint64, len(procs))
	firstHi := make([]float64, len(procs))
	for i, p := range procs {
		first[i], _, firstHi[i] = memory(p)
		pname, ret := lib.SystemGetProcessName(int(p.pid))
		must(t, "SystemGetProcessName", ret)
		eq(t, "process name", pname, "vllm")
	}
	for i := range h {
		u, ret := h[i].GetUtilizationRates()
		must(t, "GetUtilizationRates", ret)
		within(t, fmt.Sprintf("GPU %d utilization", i), float64(u.Gpu), utilLo, utilHi)
	}
	clk.waitUntil(12)
	for i, p := range procs {
		m, lo, _ := memory(p)
		if p.growth == 0 && m != first[i] {
			t.Errorf("pid %d memory moved from %d to %d", p.pid, first[i], m)
		}
		// Between the two reads at least lo - firstHi scenario seconds passed.
		if p.growth > 0 && float64(m-first[i]) < p.growth*(lo-firstHi[i]) {
			t.Errorf("pid %d grew %d bytes in >= %.1f scenario seconds, want >= %.0f per second", p.pid, m-first[i], lo-firstHi[i], p.growth)
		}
	}
	reasons, ret := h[0].GetCurrentClocksEventReasons()
	must(t, "GetCurrentClocksEventReasons", ret)
	sm, ret := h[0].GetClockInfo(nvml.CLOCK_SM)
	must(t, "GetClockInfo(SM)", ret)
	switch name {
	case "rootcause-throttle":
		eq(t, "reasons after 10 s", reasons, uint64(nvml.ClocksThrottleReasonHwThermalSlowdown))
		eq(t, "throttled SM clock", sm, 1005)
	case "rootcause-powercap":
		// The power cap all along; the thermal blip (20-22 s) is later.
		eq(t, "reasons at 12 s", reasons, uint64(nvml.ClocksThrottleReasonSwPowerCap))
		eq(t, "SM clock", sm, 1755)
		clk.waitUntil(20.5)
		r, ret := h[0].GetCurrentClocksEventReasons()
		must(t, "GetCurrentClocksEventReasons", ret)
		if clk.hi(time.Now()) < 22 {
			eq(t, "reasons at 20.5 s", r, uint64(nvml.ClocksThrottleReasonSwPowerCap|nvml.ClocksThrottleReasonSwThermalSlowdown))
		}
	default:
		eq(t, "reasons", reasons, 0)
		eq(t, "SM clock", sm, 1410)
	}
	if name == "rootcause-ecc" {
		checkECC(t, clk, h[0], "GPU 0 after 12 s", eccTotals)
		wantEvent(t, clk, set, "the double-bit ECC event at 8 s", h[0], uint64(nvml.EventTypeDoubleBitEccError), 0, 8)
		wantEvent(t, clk, set, "the single-bit ECC event at 8 s", h[0], uint64(nvml.EventTypeSingleBitEccError), 0, 8)
		_, ret = set.Wait(50)
		wantRet(t, "Wait after the ECC events", ret, nvml.ERROR_TIMEOUT)
	} else if set != nil {
		ev, ret := set.Wait(5000)
		must(t, "Wait", ret)
		eq(t, "XID", ev.EventData, 48)
		eq(t, "XID device", ev.Device, h[0])
		_, ret = set.Wait(50)
		wantRet(t, "second Wait", ret, nvml.ERROR_TIMEOUT)
	}
}

// eccCounts reads a GPU's four ECC totals: corrected and uncorrected,
// volatile, then the same aggregate.
func eccCounts(t *testing.T, h nvml.Device) [4]uint64 {
	t.Helper()
	var out [4]uint64
	for i, c := range []struct {
		et nvml.MemoryErrorType
		ct nvml.EccCounterType
	}{
		{nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC},
		{nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC},
		{nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.AGGREGATE_ECC},
		{nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.AGGREGATE_ECC},
	} {
		v, ret := h.GetTotalEccErrors(c.et, c.ct)
		must(t, "GetTotalEccErrors", ret)
		out[i] = v
	}
	return out
}

// checkECC reads a GPU's ECC totals and compares them with want(scenario
// time); a read whose time window straddles a record's time is not judged.
func checkECC(t *testing.T, clk scenClock, h nvml.Device, what string, want func(s float64) [4]uint64) {
	t.Helper()
	var got [4]uint64
	lo, hi := clk.window(func() { got = eccCounts(t, h) })
	if w := want(lo); w == want(hi) {
		eq(t, fmt.Sprintf("%s ECC totals at %.1f..%.1f s (corrected, uncorrected; volatile, aggregate)", what, lo, hi), got, w)
	}
}

// wantEvent waits for the next event of a set and checks what it is, and
// that it did not come before its scenario time.
func wantEvent(t *testing.T, clk scenClock, set nvml.EventSet, what string, dev nvml.Device, typ, data uint64, due float64) {
	t.Helper()
	ev, ret := set.Wait(5000)
	must(t, "Wait for "+what, ret)
	if got := clk.hi(time.Now()); got < due {
		t.Errorf("%s due at %g s delivered at scenario time <= %.2f", what, due, got)
	}
	eq(t, what+": event type", ev.EventType, typ)
	eq(t, what+": event data", ev.EventData, data)
	eq(t, what+": device", ev.Device, dev)
	eq(t, what+": GPU instance", ev.GpuInstanceId, 0xFFFFFFFF)
}

// childECC checks ecc records: the volatile and aggregate totals step at
// the record's time, and its uncorrected and corrected errors arrive once
// each as a double- and a single-bit ECC event (eventData 0), in time order
// with XIDs, for GPUs registered on the set for that type.
func childECC(t *testing.T, lib nvml.Interface) {
	clk := initClock(t, lib)
	defer func() { must(t, "Shutdown", lib.Shutdown()) }()
	h := handles(t, lib, 2)
	step := func(s, at float64, n uint64) uint64 {
		if s >= at {
			return n
		}
		return 0
	}
	gpu0 := func(s float64) [4]uint64 {
		c, u := step(s, 40, 3), step(s, 20, 2)+step(s, 40, 1)
		return [4]uint64{5 + c, 1 + u, 50 + c, 9 + u}
	}
	gpu1 := func(s float64) [4]uint64 { return [4]uint64{step(s, 10, 7), 0, step(s, 10, 7), 0} }
	checkECC(t, clk, h[0], "GPU 0", gpu0)
	checkECC(t, clk, h[1], "GPU 1", gpu1)

	set, ret := lib.EventSetCreate()
	must(t, "EventSetCreate", ret)
	must(t, "RegisterEvents(0)", h[0].RegisterEvents(nvml.EventTypeXidCriticalError|nvml.EventTypeSingleBitEccError|
		nvml.EventTypeDoubleBitEccError, set))
	must(t, "RegisterEvents(1)", h[1].RegisterEvents(nvml.EventTypeXidCriticalError|nvml.EventTypeDoubleBitEccError, set))
	dbe, sbe := uint64(nvml.EventTypeDoubleBitEccError), uint64(nvml.EventTypeSingleBitEccError)
	wantEvent(t, clk, set, "the double-bit ECC event at 20 s", h[0], dbe, 0, 20)
	checkECC(t, clk, h[0], "GPU 0 after 20 s", gpu0)
	wantEvent(t, clk, set, "XID 48 at 30 s", h[0], uint64(nvml.EventTypeXidCriticalError), 48, 30)
	wantEvent(t, clk, set, "the double-bit ECC event at 40 s", h[0], dbe, 0, 40)
	wantEvent(t, clk, set, "the single-bit ECC event at 40 s", h[0], sbe, 0, 40)
	// GPU 1's corrected errors are not announced to a set that only asked
	// for double-bit events from it, but they are counted.
	_, ret = set.Wait(50)
	wantRet(t, "Wait after every event", ret, nvml.ERROR_TIMEOUT)
	checkECC(t, clk, h[0], "GPU 0 after 40 s", gpu0)
	checkECC(t, clk, h[1], "GPU 1 after 10 s", gpu1)

	// A set created later still gets the events already due, once.
	set2, ret := lib.EventSetCreate()
	must(t, "EventSetCreate(2)", ret)
	must(t, "RegisterEvents(1) on set 2", h[1].RegisterEvents(nvml.EventTypeSingleBitEccError, set2))
	wantEvent(t, clk, set2, "GPU 1's single-bit ECC event at 10 s", h[1], sbe, 0, 10)
	_, ret = set2.Wait(0)
	wantRet(t, "Wait(0) on drained set 2", ret, nvml.ERROR_TIMEOUT)
	must(t, "EventSet.Free", set.Free())
	must(t, "EventSet.Free(2)", set2.Free())
}

// childGrowReset checks growResetScenario through go-nvml: process memory
// follows the piecewise growth, volatile ECC counters restart at a reset
// (aggregate ones do not), and a lost GPU answers again after a reset.
func childGrowReset(t *testing.T, lib nvml.Interface) {
	clk := initClock(t, lib)
	defer func() { must(t, "Shutdown", lib.Shutdown()) }()
	h := handles(t, lib, 2)
	// pid 10: flat 1 GiB, +2 MiB/s from 20 s, +8 MiB/s from 40 s, -4 MiB/s
	// from 60 s.
	mem10 := func(s float64) float64 {
		m := float64(gib)
		for _, seg := range []struct{ from, to, rate float64 }{{20, 40, 2 * mib}, {40, 60, 8 * mib}, {60, math.Inf(1), -4 * mib}} {
			if s > seg.from {
				m += seg.rate * (math.Min(s, seg.to) - seg.from)
			}
		}
		return math.Max(0, m)
	}
	// pid 11 starts at 30 s; its grow (at 10 s) applies from then: 3 MiB/s.
	mem11 := func(s float64) float64 { return float64(gib) + 3*mib*math.Max(0, s-30) }
	memOf := func(dev nvml.Device, pid uint32) (float64, bool) {
		procs, ret := dev.GetComputeRunningProcesses()
		if ret != nvml.SUCCESS {
			return 0, false
		}
		for _, p := range procs {
			if p.Pid == pid {
				return float64(p.UsedGpuMemory), true
			}
		}
		return 0, false
	}
	checkMem := func(dev nvml.Device, pid uint32, want func(float64) float64) {
		t.Helper()
		var got float64
		var ok bool
		lo, hi := clk.window(func() { got, ok = memOf(dev, pid) })
		a, b := want(lo), want(hi)
		if !ok || got < math.Min(a, b)-1 || got > math.Max(a, b)+1 {
			t.Errorf("pid %d memory at %.1f..%.1f s = %.0f (listed %v), want %.0f..%.0f", pid, lo, hi, got, ok, a, b)
		}
	}
	lost := func(s float64) bool { return (s >= 20 && s < 40) || s >= 70 }
	checkLost := func() {
		t.Helper()
		var ret nvml.Return
		lo, hi := clk.window(func() { _, ret = h[1].GetUUID() })
		if lost(lo) == lost(hi) {
			want := nvml.SUCCESS
			if lost(lo) {
				want = nvml.ERROR_GPU_IS_LOST
			}
			wantRet(t, fmt.Sprintf("GPU 1 GetUUID at %.1f..%.1f s", lo, hi), ret, want)
		}
	}
	ecc0 := func(s float64) [4]uint64 {
		switch {
		case s < 10:
			return [4]uint64{5, 1, 50, 9}
		case s < 30:
			return [4]uint64{5, 3, 50, 11}
		case s < 50:
			return [4]uint64{0, 0, 50, 11}
		}
		return [4]uint64{3, 0, 53, 11}
	}
	for _, at := range []float64{5, 15, 25, 35, 45, 55, 65, 75, 85} {
		clk.waitUntil(at)
		checkMem(h[0], 10, mem10)
		if at >= 30 && !lost(at) { // present from 30 s
			checkMem(h[1], 11, mem11)
		}
		checkECC(t, clk, h[0], "GPU 0", ecc0)
		checkLost()
	}
}

// childManyProcs: every one of the 512 processes of manyProcsScenario is
// listed on its GPU with its memory, has a name, and has a utilization
// sample per scenario second; device memory counts all of them.
func childManyProcs(t *testing.T, lib nvml.Interface) {
	clk := initClock(t, lib)
	defer func() { must(t, "Shutdown", lib.Shutdown()) }()
	h := handles(t, lib, manyGPUs)
	clk.waitUntil(3) // a few utilization samples
	for g := range manyGPUs {
		procs, ret := h[g].GetComputeRunningProcesses()
		must(t, fmt.Sprintf("GPU %d GetComputeRunningProcesses", g), ret)
		if len(procs) != manyProcsPerGPU {
			t.Fatalf("GPU %d lists %d processes, want %d", g, len(procs), manyProcsPerGPU)
		}
		var sum float64
		for p, pi := range procs {
			eq(t, fmt.Sprintf("GPU %d process %d pid", g, p), pi.Pid, manyPid(g, p))
			eq(t, fmt.Sprintf("GPU %d pid %d memory", g, pi.Pid), float64(pi.UsedGpuMemory), manyMemory(g, p))
			sum += manyMemory(g, p)
		}
		mem, ret := h[g].GetMemoryInfo_v2()
		must(t, "GetMemoryInfo_v2", ret)
		eq(t, fmt.Sprintf("GPU %d used memory", g), float64(mem.Used), sum)

		samples, ret := processUtilization(h[g], 0)
		must(t, fmt.Sprintf("GPU %d GetProcessUtilization", g), ret)
		seen := map[uint32]int{}
		for _, s := range samples {
			seen[s.Pid]++
		}
		for p := range manyProcsPerGPU {
			if seen[manyPid(g, p)] < 2 {
				t.Errorf("GPU %d pid %d: %d utilization samples after 3 scenario seconds, want at least 2",
					g, manyPid(g, p), seen[manyPid(g, p)])
			}
		}
	}
	last := manyPid(manyGPUs-1, manyProcsPerGPU-1)
	name, ret := lib.SystemGetProcessName(int(last))
	must(t, "SystemGetProcessName of the last process", ret)
	eq(t, "name of the last process", name, fmt.Sprintf("worker-%d-%d", manyGPUs-1, manyProcsPerGPU-1))
}

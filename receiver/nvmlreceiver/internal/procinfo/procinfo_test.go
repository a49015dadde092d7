// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package procinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// fakeProc is a proc tree in a temporary directory.
type fakeProc struct {
	t    testing.TB
	root string
}

func newFakeProc(t testing.TB) *fakeProc {
	return &fakeProc{t: t, root: t.TempDir()}
}

// statLine renders a /proc/<pid>/stat line the way the kernel does, with
// comm unescaped in parentheses and starttime as field 22.
func statLine(pid uint32, comm string, start uint64) string {
	return fmt.Sprintf("%d (%s) S 1 %d %d 0 -1 4194560 18342 0 12 0 310 95 0 0 20 0 24 0 %d 21474836480 1052672 18446744073709551615 1 1 0 0 0 0 0 16781312 17642 0 0 0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		pid, comm, pid, pid, start)
}

// write creates (or replaces) one file of process pid; an empty name removes
// nothing and creates only the directory.
func (p *fakeProc) write(pid uint32, name, content string) {
	p.t.Helper()
	dir := filepath.Join(p.root, strconv.FormatUint(uint64(pid), 10))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	if name == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// process creates a complete process.
func (p *fakeProc) process(pid uint32, comm string, start uint64, cgroup string) {
	p.t.Helper()
	p.write(pid, "stat", statLine(pid, comm, start))
	p.write(pid, "comm", comm+"\n")
	p.write(pid, "cgroup", cgroup)
}

func (p *fakeProc) remove(pid uint32, name string) {
	p.t.Helper()
	if err := os.RemoveAll(filepath.Join(p.root, strconv.FormatUint(uint64(pid), 10), name)); err != nil {
		p.t.Fatal(err)
	}
}

func mustLookup(t *testing.T, r *Reader, pid uint32) Info {
	t.Helper()
	info, err := r.Lookup(pid)
	if err != nil {
		t.Fatalf("Lookup(%d): %v", pid, err)
	}
	return info
}

func wantInfo(t *testing.T, got, want Info) {
	t.Helper()
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

var (
	cgroupPodA = "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + podASystem + ".slice/cri-containerd-" + ctrA + ".scope\n"
	cgroupPodB = v1File("/kubepods/besteffort/pod" + podB + "/" + ctrB)
	cgroupHost = "0::/user.slice/user-1000.slice/session-2.scope\n"
)

func TestNewReaderDefaultRoot(t *testing.T) {
	if got := NewReader("").root; got != DefaultProcRoot {
		t.Errorf("root = %q, want %q", got, DefaultProcRoot)
	}
	if got := NewReader("/host/proc/").root; got != "/host/proc" {
		t.Errorf("root = %q, want /host/proc", got)
	}
}

func TestLookup(t *testing.T) {
	p := newFakeProc(t)
	p.process(4242, "python3", 1000, cgroupPodA)
	p.process(77, "vllm (worker) 0", 2000, cgroupPodB)
	p.process(9, "nvidia-smi", 3000, cgroupHost)
	r := NewReader(p.root)

	wantInfo(t, mustLookup(t, r, 4242), Info{ExecutableName: "python3", ContainerID: ctrA, PodUID: podA})
	wantInfo(t, mustLookup(t, r, 77), Info{ExecutableName: "vllm (worker) 0", ContainerID: ctrB, PodUID: podB})
	wantInfo(t, mustLookup(t, r, 9), Info{ExecutableName: "nvidia-smi"})
}

func TestLookupCachesPerProcess(t *testing.T) {
	p := newFakeProc(t)
	p.process(4242, "python3", 1000, cgroupPodA)
	r := NewReader(p.root)
	first := mustLookup(t, r, 4242)

	// Same process (same start time): the cached reading is served and the
	// files other than stat are not read again.
	p.write(4242, "comm", "changed\n")
	p.write(4242, "cgroup", cgroupPodB)
	wantInfo(t, mustLookup(t, r, 4242), first)
}

func TestLookupPIDReuse(t *testing.T) {
	p := newFakeProc(t)
	p.process(4242, "python3", 1000, cgroupPodA)
	r := NewReader(p.root)
	wantInfo(t, mustLookup(t, r, 4242), Info{ExecutableName: "python3", ContainerID: ctrA, PodUID: podA})

	// The process exits and the PID goes to a process of another pod.
	p.process(4242, "tritonserver", 5000, cgroupPodB)
	wantInfo(t, mustLookup(t, r, 4242), Info{ExecutableName: "tritonserver", ContainerID: ctrB, PodUID: podB})

	// And then to a host process.
	p.process(4242, "bash", 9000, cgroupHost)
	wantInfo(t, mustLookup(t, r, 4242), Info{ExecutableName: "bash"})
}

func TestLookupMissingPID(t *testing.T) {
	p := newFakeProc(t)
	r := NewReader(p.root)
	_, err := r.Lookup(31337)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Lookup of a missing pid: err = %v, want fs.ErrNotExist", err)
	}
}

func TestLookupExitedAfterCaching(t *testing.T) {
	p := newFakeProc(t)
	p.process(4242, "python3", 1000, cgroupPodA)
	r := NewReader(p.root)
	mustLookup(t, r, 4242)

	p.remove(4242, "")
	info, err := r.Lookup(4242)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Lookup of an exited process: err = %v, want fs.ErrNotExist", err)
	}
	wantInfo(t, info, Info{})
}

func TestLookupPartiallyReadable(t *testing.T) {
	p := newFakeProc(t)
	p.write(4242, "stat", statLine(4242, "python3", 1000))
	p.write(4242, "comm", "python3\n")
	r := NewReader(p.root)

	// No cgroup file: the name is still worth having.
	wantInfo(t, mustLookup(t, r, 4242), Info{ExecutableName: "python3"})

	// A partial reading is not cached: once the cgroup is readable, it is read.
	p.write(4242, "cgroup", cgroupPodA)
	wantInfo(t, mustLookup(t, r, 4242), Info{ExecutableName: "python3", ContainerID: ctrA, PodUID: podA})
}

func TestLookupUnreadableCgroup(t *testing.T) {
	p := newFakeProc(t)
	p.write(4242, "stat", statLine(4242, "python3", 1000))
	p.write(4242, "comm", "python3\n")
	// A directory where the file should be: it exists but cannot be read as
	// a file, whatever the privileges of the test.
	if err := os.Mkdir(filepath.Join(p.root, "4242", "cgroup"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := NewReader(p.root)
	wantInfo(t, mustLookup(t, r, 4242), Info{ExecutableName: "python3"})
}

func TestLookupOnlyCgroupReadable(t *testing.T) {
	p := newFakeProc(t)
	p.write(4242, "cgroup", cgroupPodA)
	r := NewReader(p.root)
	wantInfo(t, mustLookup(t, r, 4242), Info{ContainerID: ctrA, PodUID: podA})
}

func TestLookupWithoutStatIsNotCached(t *testing.T) {
	p := newFakeProc(t)
	p.write(4242, "comm", "python3\n")
	p.write(4242, "cgroup", cgroupPodA)
	r := NewReader(p.root)
	wantInfo(t, mustLookup(t, r, 4242), Info{ExecutableName: "python3", ContainerID: ctrA, PodUID: podA})

	// Without a start time the reading cannot be tied to one process, so it
	// is read again every time.
	p.write(4242, "cgroup", cgroupPodB)
	wantInfo(t, mustLookup(t, r, 4242), Info{ExecutableName: "python3", ContainerID: ctrB, PodUID: podB})
}

func TestLookupMalformedStatIsNotCached(t *testing.T) {
	p := newFakeProc(t)
	p.process(4242, "python3", 1000, cgroupPodA)
	p.write(4242, "stat", "4242 (python3) S 1 2 3\n")
	r := NewReader(p.root)
	wantInfo(t, mustLookup(t, r, 4242), Info{ExecutableName: "python3", ContainerID: ctrA, PodUID: podA})
	if n := cacheLen(r); n != 0 {
		t.Errorf("cache holds %d entries, want 0", n)
	}
}

func cacheLen(r *Reader) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.cache)
}

func TestForget(t *testing.T) {
	p := newFakeProc(t)
	for pid := uint32(1); pid <= 5; pid++ {
		p.process(pid, "p"+strconv.Itoa(int(pid)), 100, cgroupPodA)
	}
	r := NewReader(p.root)
	for pid := uint32(1); pid <= 5; pid++ {
		mustLookup(t, r, pid)
	}
	if n := cacheLen(r); n != 5 {
		t.Fatalf("cache holds %d entries, want 5", n)
	}

	seen := map[uint32]bool{2: true, 4: true}
	r.Forget(func(pid uint32) bool { return seen[pid] })
	if n := cacheLen(r); n != 2 {
		t.Fatalf("after Forget the cache holds %d entries, want 2", n)
	}
	r.mu.Lock()
	_, ok2 := r.cache[2]
	_, ok4 := r.cache[4]
	r.mu.Unlock()
	if !ok2 || !ok4 {
		t.Errorf("Forget dropped a pid it was told to keep")
	}

	// A forgotten process is read afresh.
	p.write(1, "comm", "renamed\n")
	wantInfo(t, mustLookup(t, r, 1), Info{ExecutableName: "renamed", ContainerID: ctrA, PodUID: podA})
}

func TestCacheIsBounded(t *testing.T) {
	p := newFakeProc(t)
	r := NewReader(p.root)
	r.maxEntries = 3
	for pid := uint32(1); pid <= 10; pid++ {
		p.process(pid, "p", 100, cgroupHost)
		mustLookup(t, r, pid)
		if n := cacheLen(r); n > r.maxEntries {
			t.Fatalf("cache holds %d entries, limit %d", n, r.maxEntries)
		}
	}
}

func TestLookupConcurrent(t *testing.T) {
	p := newFakeProc(t)
	for pid := uint32(1); pid <= 8; pid++ {
		p.process(pid, "worker", 100, cgroupPodA)
	}
	r := NewReader(p.root)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for i := 0; i < 50; i++ {
				for pid := uint32(1); pid <= 8; pid++ {
					info, err := r.Lookup(pid)
					if err != nil || info.ContainerID != ctrA {
						t.Errorf("Lookup(%d) = %+v, %v", pid, info, err)
						return
					}
				}
				r.Forget(func(pid uint32) bool { return pid%2 == 0 })
			}
		})
	}
	wg.Wait()
}

// TestLookupRealProc reads the test's own process from the real /proc.
func TestLookupRealProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	r := NewReader("")
	pid := uint32(os.Getpid())
	info := mustLookup(t, r, pid)
	want := filepath.Base(os.Args[0])
	if len(want) > 15 {
		want = want[:15]
	}
	if info.ExecutableName != want {
		t.Errorf("ExecutableName = %q, want %q", info.ExecutableName, want)
	}
	if n := cacheLen(r); n != 1 {
		t.Errorf("the real process was not cached (%d entries)", n)
	}
	again := mustLookup(t, r, pid)
	wantInfo(t, again, info)
}

func TestParseStartTime(t *testing.T) {
	tests := []struct {
		name   string
		stat   string
		want   uint64
		wantOK bool
	}{
		{"plain", statLine(1, "systemd", 4), 4, true},
		{"spaces in comm", statLine(77, "vllm worker 0", 123456789), 123456789, true},
		{"parentheses in comm", statLine(77, "a) S 1 2 (b", 42), 42, true},
		{"only a close paren", statLine(77, ")", 42), 42, true},
		{"max uint64", statLine(77, "x", 1<<64-1-9), 1<<64 - 1 - 9, true},
		{"no newline", "1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 987", 987, true},
		{"truncated before starttime", "1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0", 0, false},
		{"no parenthesis", "1 init S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 987", 0, false},
		{"not a number", "1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 9x7", 0, false},
		{"overflow", "1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 99999999999999999999999", 0, false},
		{"empty", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseStartTime([]byte(tc.stat))
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("parseStartTime(%q) = %d, %v; want %d, %v", tc.stat, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func FuzzParseStartTime(f *testing.F) {
	f.Add(statLine(1, "systemd", 4))
	f.Add(statLine(77, "a) S 1 2 (b", 42))
	f.Add("1 (x)")
	f.Fuzz(func(t *testing.T, stat string) {
		parseStartTime([]byte(stat))
	})
}

func BenchmarkLookupCached(b *testing.B) {
	p := newFakeProc(b)
	p.process(4242, "python3", 1000, cgroupPodA)
	r := NewReader(p.root)
	if _, err := r.Lookup(4242); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Lookup(4242); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLookupCold(b *testing.B) {
	p := newFakeProc(b)
	p.process(4242, "python3", 1000, v1File("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"+podASystem+".slice/cri-containerd-"+ctrA+".scope"))
	r := NewReader(p.root)
	forgetAll := func(uint32) bool { return false }
	b.ReportAllocs()
	for b.Loop() {
		r.Forget(forgetAll)
		if _, err := r.Lookup(4242); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookupRealProc measures a cached lookup against the kernel's
// /proc, where stat is generated on every read.
func BenchmarkLookupRealProc(b *testing.B) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("no /proc here")
	}
	r := NewReader("")
	pid := uint32(os.Getpid())
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Lookup(pid); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cold", func(b *testing.B) {
		forgetAll := func(uint32) bool { return false }
		b.ReportAllocs()
		for b.Loop() {
			r.Forget(forgetAll)
			if _, err := r.Lookup(pid); err != nil {
				b.Fatal(err)
			}
		}
	})
}

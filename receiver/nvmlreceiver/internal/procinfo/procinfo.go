// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package procinfo finds out which container and Kubernetes pod a host
// process belongs to. NVML names the processes using a GPU only by their host
// PID; to report per-process GPU memory and utilisation against the workload
// that owns it, the nvml receiver looks each PID up here and reads its
// executable name and its cgroup, whose path encodes the container ID and, for
// pods, the pod UID.
//
// The receiver asks about every GPU process on every scrape, so results are
// cached per process. A PID alone is not a safe key (PIDs are reused), so the
// cache is keyed by PID and process start time, which together identify one
// process for the life of the host.
package procinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// DefaultProcRoot is where the proc filesystem is mounted on a host. An agent
// running in a container without the host's PID namespace sees the host's
// processes only through a bind mount of the host's /proc, such as /host/proc.
const DefaultProcRoot = "/proc"

// maxCacheEntries bounds the cache for callers that never call Forget. Far
// more processes than a node's GPUs can run at once; crossing it simply
// starts the cache afresh.
const maxCacheEntries = 4096

// statBufSize fits /proc/<pid>/stat; its 52 numeric fields stay well below
// this even at their widest.
const statBufSize = 1024

// Info is what is known about a process. Any field may be empty: the
// executable name when the process could not be read, the container ID for a
// process running directly on the host, the pod UID for a container that is
// not part of a Kubernetes pod.
type Info struct {
	// ExecutableName is the process's comm: the executable's file name,
	// truncated by the kernel to 15 bytes, or the name the process gave
	// itself (prctl PR_SET_NAME).
	ExecutableName string
	// ContainerID is the runtime's 64-hex-digit container ID, without a
	// runtime prefix such as "containerd://".
	ContainerID string
	// PodUID is the Kubernetes pod UID in its usual dashed form.
	PodUID string
}

// Reader looks processes up in a proc filesystem and caches what it found.
// It is safe for concurrent use.
type Reader struct {
	root       string
	maxEntries int

	mu    sync.Mutex
	cache map[uint32]cacheEntry
}

type cacheEntry struct {
	startTime     uint64
	dir, statPath string // kept so that a cache hit builds no path
	info          Info
}

// NewReader returns a Reader for the proc filesystem mounted at procRoot, or
// at DefaultProcRoot when procRoot is empty.
func NewReader(procRoot string) *Reader {
	if procRoot == "" {
		procRoot = DefaultProcRoot
	}
	return &Reader{
		root:       filepath.Clean(procRoot),
		maxEntries: maxCacheEntries,
		cache:      make(map[uint32]cacheEntry),
	}
}

// Lookup returns what is known about process pid. It reads the process's
// start time on every call and everything else only when the process has not
// been seen before, so that a PID that now belongs to a different process is
// read afresh.
//
// The error satisfies errors.Is(err, fs.ErrNotExist) when the process does not
// exist (it exited, or it is not visible under the proc root). Any other
// problem, such as an unreadable cgroup file, is not an error: Lookup returns
// what it could read, and tries the rest again on the next call.
func (r *Reader) Lookup(pid uint32) (Info, error) {
	r.mu.Lock()
	e, cached := r.cache[pid]
	r.mu.Unlock()

	dir, statPath := e.dir, e.statPath
	if !cached {
		dir = r.pidDir(pid)
		statPath = dir + "/stat"
	}
	start, statErr := readStartTime(statPath)
	if statErr == nil && cached && e.startTime == start {
		return e.info, nil
	}
	if statErr != nil && processGone(statErr, dir) {
		return Info{}, goneError(pid, statErr)
	}

	info, complete, err := readInfo(dir)
	if err != nil {
		return Info{}, goneError(pid, err)
	}
	// Cache only a full reading of a known process. Anything less is retried
	// on the next call rather than remembered. Should the PID have changed
	// hands while its files were read, the start time no longer matches and
	// the mixed reading is not remembered either.
	if statErr == nil && complete {
		if again, err := readStartTime(statPath); err == nil && again == start {
			r.mu.Lock()
			if len(r.cache) >= r.maxEntries {
				clear(r.cache)
			}
			r.cache[pid] = cacheEntry{startTime: start, dir: dir, statPath: statPath, info: info}
			r.mu.Unlock()
		}
	}
	return info, nil
}

// Forget drops the cached entries of every PID for which keep returns false.
// Call it after each scrape with the PIDs that were seen, so the cache holds
// only live GPU processes.
func (r *Reader) Forget(keep func(pid uint32) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for pid := range r.cache {
		if !keep(pid) {
			delete(r.cache, pid)
		}
	}
}

func (r *Reader) pidDir(pid uint32) string {
	return r.root + "/" + strconv.FormatUint(uint64(pid), 10)
}

// readInfo reads the name and the cgroup of the process whose proc directory
// is dir. complete is false when either could not be read; err is set only
// when the process turned out to be gone.
func readInfo(dir string) (info Info, complete bool, err error) {
	complete = true
	comm, err := os.ReadFile(dir + "/comm")
	switch {
	case err == nil:
		info.ExecutableName = strings.TrimSuffix(string(comm), "\n")
	case processGone(err, dir):
		return Info{}, false, err
	default:
		complete = false
	}
	cgroup, err := os.ReadFile(dir + "/cgroup")
	switch {
	case err == nil:
		info.ContainerID, info.PodUID = parseCgroup(string(cgroup))
	case processGone(err, dir):
		return Info{}, false, err
	default:
		complete = false
	}
	return info, complete, nil
}

// processGone tells a process that has exited from one of its files that
// could not be read. Reading a file of a process that exits while the file is
// open fails with ESRCH; opening a file of a process already gone fails with
// ENOENT, as does opening a file that a (fake or restricted) proc tree lacks,
// so ENOENT counts as gone only when the process directory is gone too.
func processGone(err error, dir string) bool {
	if errors.Is(err, syscall.ESRCH) {
		return true
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	_, statErr := os.Stat(dir)
	return errors.Is(statErr, fs.ErrNotExist)
}

func goneError(pid uint32, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("procinfo: process %d: %w", pid, err)
	}
	return fmt.Errorf("procinfo: process %d: %w: %w", pid, fs.ErrNotExist, err)
}

// readStartTime returns the start time of a process, in clock ticks since
// boot, from its /proc/<pid>/stat file.
func readStartTime(path string) (uint64, error) {
	// The file is read with plain system calls: an *os.File would cost
	// allocations and a failed attempt to register the descriptor with the
	// network poller, on a path taken for every process on every scrape.
	fd, err := retryEINTR(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer func() { _ = syscall.Close(fd) }() // read only: a failed close loses nothing
	var buf [statBufSize]byte
	n := 0
	for n < len(buf) {
		m, err := retryEINTR(func() (int, error) { return syscall.Read(fd, buf[n:]) })
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if m <= 0 {
			break
		}
		n += m
	}
	start, ok := parseStartTime(buf[:n])
	if !ok {
		return 0, fmt.Errorf("procinfo: %s: no start time", path)
	}
	return start, nil
}

func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if !errors.Is(err, syscall.EINTR) {
			return n, err
		}
	}
}

// parseStartTime extracts field 22, starttime, from the contents of a
// /proc/<pid>/stat file. Field 2 is the process name in parentheses, which
// may itself contain spaces and parentheses; the kernel writes it unescaped,
// so the fields after it are found from the last ')' in the line.
func parseStartTime(stat []byte) (uint64, bool) {
	end := -1
	for i := len(stat) - 1; i >= 0; i-- {
		if stat[i] == ')' {
			end = i
			break
		}
	}
	if end < 0 {
		return 0, false
	}
	// After ") " comes field 3 (state); starttime is 19 fields further on.
	const fieldsToSkip = 22 - 3
	rest := stat[end+1:]
	field := 0
	i := 0
	for field <= fieldsToSkip {
		for i < len(rest) && rest[i] == ' ' {
			i++
		}
		if i == len(rest) {
			return 0, false
		}
		if field == fieldsToSkip {
			break
		}
		for i < len(rest) && rest[i] != ' ' {
			i++
		}
		field++
	}
	var v uint64
	digits := 0
	for ; i < len(rest) && rest[i] != ' ' && rest[i] != '\n'; i++ {
		c := rest[i]
		if c < '0' || c > '9' || v > (1<<64-1-9)/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
		digits++
	}
	return v, digits > 0
}

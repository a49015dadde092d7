// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package offheap

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// smapsEntry returns the fields of the /proc/self/smaps entry of the
// mapping that starts at addr (nil when none does).
func smapsEntry(t *testing.T, addr uintptr) map[string][]string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer func() { _ = f.Close() }()
	start := fmt.Sprintf("%x-", addr)
	var entry map[string][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") { // a mapping's header line
			if entry != nil {
				break
			}
			if strings.HasPrefix(fields[0], start) {
				entry = map[string][]string{}
			}
			continue
		}
		if entry != nil {
			entry[strings.TrimSuffix(fields[0], ":")] = fields[1:]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return entry
}

func TestRegionsAreAdvisedHugeAndUnmappedOnRelease(t *testing.T) {
	drainPool(t)
	var a Arena
	s := Make[int64](&a, 1000)
	if s == nil {
		t.Fatal("refused")
	}
	s = append(s, 42) // touch it
	_ = s
	base := uintptr(a.regions[0].base)
	entry := smapsEntry(t, base)
	if entry == nil {
		t.Fatalf("no mapping starts at the region's base %#x", base)
	}
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil {
		// "hg": madvise(MADV_HUGEPAGE) took, whatever the system's mode.
		if !slices.Contains(entry["VmFlags"], "hg") {
			t.Errorf("region not advised for huge pages: VmFlags %v", entry["VmFlags"])
		}
	}
	a.Free()
	if smapsEntry(t, base) == nil {
		t.Fatalf("region at %#x unmapped by Free: it should wait in the pool", base)
	}
	releasePooled(time.Time{})
	if entry := smapsEntry(t, base); entry != nil {
		t.Fatalf("region at %#x still mapped after the pool released it: %v", base, entry)
	}
}

package snapshot

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileLists is a pickle of n empty lists: PROTO 2, then either MARK,
// n × EMPTY_LIST, LIST (all of them on the stack at once) or EMPTY_LIST
// and n × (EMPTY_LIST, APPEND) (one list growing), then STOP. Each empty
// list is one or two bytes of input and a few dozen bytes of decoder
// state, so without a memory budget a 20 MB file held about 1.4 GB.
func hostileLists(n int, marked bool) []byte {
	b := make([]byte, 0, 2*n+8)
	b = append(b, 0x80, 2)
	if marked {
		b = append(b, '(')
		b = append(b, bytes.Repeat([]byte{']'}, n)...)
		b = append(b, 'l')
	} else {
		b = append(b, ']')
		b = append(b, bytes.Repeat([]byte{']', 'a'}, n)...)
	}
	return append(b, '.')
}

// allocated runs fn and returns the bytes it allocated (TotalAlloc: every
// allocation counts, whether the GC has reclaimed it yet or not).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostilePickleMemory: a pickle built to make the decoder hold far
// more than the file (millions of empty lists) fails with ErrMemoryBudget,
// naming the limit and the byte offset, having allocated a small multiple
// of the file rather than ~70×.
func TestHostilePickleMemory(t *testing.T) {
	for _, marked := range []bool{true, false} {
		data := hostileLists(20<<20, marked)
		if !marked {
			data = hostileLists(10<<20, false) // 2 bytes per list: also ~20 MB
		}
		var err error
		got := allocated(func() {
			_, err = Import(bytes.NewReader(data), "lists.pickle", Options{})
		})
		t.Logf("marked=%v: %d-byte file, %d bytes allocated (%.1f× the file): %v", marked, len(data), got, float64(got)/float64(len(data)), err)
		require.Error(t, err)
		assert.True(t, errors.Is(err, ErrMemoryBudget), "%v", err)
		assert.Contains(t, err.Error(), "lists.pickle: byte ")
		assert.Contains(t, err.Error(), "MiB limit")
		assert.Less(t, got, uint64(4*len(data)), "allocated %d bytes for a %d-byte file", got, len(data))
	}
}

// TestFixturesWithinBudget: every real snapshot in the testdata imports
// under the budget (the hostile test above must not be passed by refusing
// real files).
func TestFixturesWithinBudget(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.pickle")
	gz, _ := filepath.Glob("testdata/*.json.gz")
	for _, f := range append(files, gz...) {
		if strings.HasPrefix(filepath.Base(f), "malicious") {
			continue
		}
		_, err := ImportFile(f, Options{})
		assert.NoError(t, err, f)
	}
	if _, err := os.Stat("testdata/snapshot_p2.pickle"); err != nil {
		t.Fatal(err)
	}
}

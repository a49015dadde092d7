// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package nsys

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/recent.sqlite from newSchema()")

// TestCommittedFixture keeps testdata/recent.sqlite (used by the receiver's
// own tests, which cannot build one) equal in content to newSchema(): both
// import to the same summary. Regenerate with -update.
func TestCommittedFixture(t *testing.T) {
	fixture := filepath.Join("testdata", "recent.sqlite")
	fresh := makeDB(t, newSchema())
	if *update {
		data, err := os.ReadFile(fresh)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fixture, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := importDB(t, fresh, Options{}, 10000)
	got := importDB(t, fixture, Options{}, 10000)
	if !reflect.DeepEqual(got.res.Summary, want.res.Summary) {
		t.Fatalf("testdata/recent.sqlite is stale (go test -run TestCommittedFixture -update):\n got %+v\nwant %+v", got.res.Summary, want.res.Summary)
	}
}

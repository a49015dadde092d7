// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package profiles

import (
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmops-otel/otelcol-llmops/internal/testutil"
)

// discard is a Sink that keeps nothing, as a consumer that hands each
// batch on would.
type discard struct{}

func (discard) ConsumeSpans(context.Context, ptrace.Traces) error     { return nil }
func (discard) ConsumeMetrics(context.Context, pmetric.Metrics) error { return nil }
func (discard) ConsumeLogs(context.Context, plog.Logs) error          { return nil }

// BenchmarkImportDFIndexResolver is the full import (parse, span tree,
// memory attribution, leak suspects, spans in batches to a sink) of the
// 54 MB (decompressed) HTA fixture, from a decompressed file and from the
// .gz, with 1 and 2 parse workers. For profiling; the figures against
// Python are bench/profileimport's.
func BenchmarkImportDFIndexResolver(b *testing.B) {
	gz := testutil.SharedFixture(b, "../../../shared/fixtures/traces", "hta-df_index_resolver.json.gz")
	plain := filepath.Join(b.TempDir(), "hta-df_index_resolver.json")
	in, err := os.Open(gz)
	if err != nil {
		b.Fatal(err)
	}
	zr, err := gzip.NewReader(in)
	if err != nil {
		b.Fatal(err)
	}
	out, err := os.Create(plain)
	if err != nil {
		b.Fatal(err)
	}
	size, err := io.Copy(out, zr)
	_ = in.Close()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	for _, file := range []string{plain, gz} {
		for _, workers := range []int{1, 2} {
			b.Run(filepath.Ext(file)+"/workers="+strconv.Itoa(workers), func(b *testing.B) {
				opts := DefaultOptions()
				opts.ParseWorkers = workers
				b.SetBytes(size)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Import(context.Background(), file, opts, discard{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

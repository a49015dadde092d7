// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // registers the gzip compressor used below

	"github.com/llmops-otel/otelcol-llmops/internal/profiles"
)

// exportError is a failure to deliver to the endpoint (exit code 3), as
// opposed to a file that could not be imported (exit code 1).
type exportError struct{ err error }

func (e *exportError) Error() string { return e.err.Error() }
func (e *exportError) Unwrap() error { return e.err }

// exportResult counts what the endpoint accepted.
type exportResult struct {
	Spans, DataPoints, LogRecords int
	SpanBatches                   int
}

// dialTarget turns ENDPOINT into a gRPC target and whether the scheme asks
// for plaintext: "host:port", "http://host:port" (plaintext) or
// "https://host:port" (TLS), as people copy them from collector configs.
func dialTarget(endpoint string) (string, bool) {
	switch {
	case strings.HasPrefix(endpoint, "http://"):
		return strings.TrimSuffix(strings.TrimPrefix(endpoint, "http://"), "/"), true
	case strings.HasPrefix(endpoint, "https://"):
		return strings.TrimSuffix(strings.TrimPrefix(endpoint, "https://"), "/"), false
	}
	return endpoint, false
}

// export imports path with the receiver's default options and sends its
// spans (in the receiver's batches), metrics and logs over OTLP/gRPC as the
// import hands them over. A Kineto trace is parsed to its end before its
// first span is built, so a broken trace sends nothing, as in the receiver;
// an Nsight export's spans go as they are read.
func export(ctx context.Context, path, endpoint string, plaintext bool, timeout time.Duration, prog *progress) (exportResult, error) {
	defer prog.stop()
	target, schemePlain := dialTarget(endpoint)
	creds := credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	if plaintext || schemePlain {
		creds = insecure.NewCredentials()
	}
	// No connection is made before the first send.
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.UseCompressor("gzip")))
	if err != nil {
		return exportResult{}, &exportError{fmt.Errorf("%s: %w", endpoint, err)}
	}
	defer func() { _ = cc.Close() }() // the export's outcome is decided by then
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	sink := &otlpSink{endpoint: endpoint, cc: cc, prog: prog}
	_, err = importFile(ctx, path, importOptions(), prog, sink)
	var se *profiles.SinkError
	if errors.As(err, &se) {
		return sink.out, &exportError{se.Err}
	}
	return sink.out, err
}

// otlpSink sends what the import hands it over one gRPC connection; a
// partial success that rejects anything is an error.
type otlpSink struct {
	endpoint string
	cc       *grpc.ClientConn
	prog     *progress
	out      exportResult
	phase    bool
}

func (s *otlpSink) ConsumeSpans(ctx context.Context, td ptrace.Traces) error {
	if !s.phase {
		s.prog.setPhase("building and sending to " + s.endpoint + "…")
		s.phase = true
	}
	n := td.SpanCount()
	resp, err := ptraceotlp.NewGRPCClient(s.cc).Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
	if err != nil {
		return fmt.Errorf("%s: sending spans (batch %d): %w", s.endpoint, s.out.SpanBatches+1, err)
	}
	if ps := resp.PartialSuccess(); ps.RejectedSpans() > 0 {
		return fmt.Errorf("%s: %d of %d spans rejected: %s", s.endpoint, ps.RejectedSpans(), n, ps.ErrorMessage())
	}
	s.out.Spans += n
	s.out.SpanBatches++
	return nil
}

func (s *otlpSink) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	n := md.DataPointCount()
	resp, err := pmetricotlp.NewGRPCClient(s.cc).Export(ctx, pmetricotlp.NewExportRequestFromMetrics(md))
	if err != nil {
		return fmt.Errorf("%s: sending metrics: %w", s.endpoint, err)
	}
	if ps := resp.PartialSuccess(); ps.RejectedDataPoints() > 0 {
		return fmt.Errorf("%s: %d of %d data points rejected: %s", s.endpoint, ps.RejectedDataPoints(), n, ps.ErrorMessage())
	}
	s.out.DataPoints = n
	return nil
}

func (s *otlpSink) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	n := ld.LogRecordCount()
	resp, err := plogotlp.NewGRPCClient(s.cc).Export(ctx, plogotlp.NewExportRequestFromLogs(ld))
	if err != nil {
		return fmt.Errorf("%s: sending logs: %w", s.endpoint, err)
	}
	if ps := resp.PartialSuccess(); ps.RejectedLogRecords() > 0 {
		return fmt.Errorf("%s: %d of %d log records rejected: %s", s.endpoint, ps.RejectedLogRecords(), n, ps.ErrorMessage())
	}
	s.out.LogRecords = n
	return nil
}

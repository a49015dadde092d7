package llmprof

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // registers the gzip compressor used below

	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/profile"
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
// spans (in the receiver's batches), metrics and logs over OTLP/gRPC. The
// file is parsed to its end before anything is sent: a broken file sends
// nothing, as in the receiver.
func export(ctx context.Context, path, endpoint string, plaintext bool, timeout time.Duration, prog *progress) (exportResult, error) {
	var out exportResult
	defer prog.stop()
	b, md, err := parse(path, profile.DefaultOptions(), prog)
	if err != nil {
		return out, err
	}
	prog.setPhase("building and sending to " + endpoint + "…")
	target, schemePlain := dialTarget(endpoint)
	creds := credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	if plaintext || schemePlain {
		creds = insecure.NewCredentials()
	}
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.UseCompressor("gzip")))
	if err != nil {
		return out, &exportError{fmt.Errorf("%s: %w", endpoint, err)}
	}
	defer cc.Close()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}

	traces := ptraceotlp.NewGRPCClient(cc)
	var sendErr error
	res, err := b.FinishBatches(md, path, spanBatchSize, func(td ptrace.Traces) error {
		n := td.SpanCount()
		resp, err := traces.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
		if err != nil {
			sendErr = fmt.Errorf("%s: sending spans (batch %d): %w", endpoint, out.SpanBatches+1, err)
			return sendErr
		}
		if ps := resp.PartialSuccess(); ps.RejectedSpans() > 0 {
			sendErr = fmt.Errorf("%s: %d of %d spans rejected: %s", endpoint, ps.RejectedSpans(), n, ps.ErrorMessage())
			return sendErr
		}
		out.Spans += n
		out.SpanBatches++
		return nil
	})
	if sendErr != nil {
		return out, &exportError{sendErr}
	}
	if err != nil {
		return out, &importError{fmt.Errorf("%s: %w", path, err)}
	}
	if n := res.Metrics.DataPointCount(); n > 0 {
		resp, err := pmetricotlp.NewGRPCClient(cc).Export(ctx, pmetricotlp.NewExportRequestFromMetrics(res.Metrics))
		if err != nil {
			return out, &exportError{fmt.Errorf("%s: sending metrics: %w", endpoint, err)}
		}
		if ps := resp.PartialSuccess(); ps.RejectedDataPoints() > 0 {
			return out, &exportError{fmt.Errorf("%s: %d of %d data points rejected: %s", endpoint, ps.RejectedDataPoints(), n, ps.ErrorMessage())}
		}
		out.DataPoints = n
	}
	if n := res.Logs.LogRecordCount(); n > 0 {
		resp, err := plogotlp.NewGRPCClient(cc).Export(ctx, plogotlp.NewExportRequestFromLogs(res.Logs))
		if err != nil {
			return out, &exportError{fmt.Errorf("%s: sending logs: %w", endpoint, err)}
		}
		if ps := resp.PartialSuccess(); ps.RejectedLogRecords() > 0 {
			return out, &exportError{fmt.Errorf("%s: %d of %d log records rejected: %s", endpoint, ps.RejectedLogRecords(), n, ps.ErrorMessage())}
		}
		out.LogRecords = n
	}
	return out, nil
}

package llmprof

import (
	"context"
	"crypto/tls"
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

	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/nsys"
	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/profile"
	"github.com/llmops-otel/otelcol-llmops/receiver/profileimportreceiver/internal/snapshot"
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
// source produces a file's signals: spans handed to emit in batches, then
// the metrics and logs. Errors it returns are the file's.
type source func(emit func(ptrace.Traces) error) (pmetric.Metrics, plog.Logs, error)

// openSource prepares the import of any file the receiver reads: a Kineto
// trace (parsed here, spans built when sending), an Nsight Systems export,
// or a CUDA memory snapshot (metrics and logs only).
func openSource(path string, prog *progress) (source, error) {
	switch {
	case snapshot.IsSnapshotFile(path):
		res, err := snapshot.ImportFile(path, snapshot.Options{})
		if err != nil {
			return nil, &importError{err}
		}
		return func(func(ptrace.Traces) error) (pmetric.Metrics, plog.Logs, error) {
			return res.Metrics, res.Logs, nil
		}, nil
	case nsys.IsNsysFile(path):
		return func(emit func(ptrace.Traces) error) (pmetric.Metrics, plog.Logs, error) {
			res, err := nsys.ImportFile(path, nsys.Options{}, spanBatchSize, emit)
			return res.Metrics, res.Logs, err
		}, nil
	}
	b, md, err := parse(path, profile.DefaultOptions(), prog)
	if err != nil {
		return nil, err
	}
	return func(emit func(ptrace.Traces) error) (pmetric.Metrics, plog.Logs, error) {
		res, err := b.FinishBatches(md, path, spanBatchSize, emit)
		if err != nil {
			return res.Metrics, res.Logs, fmt.Errorf("%s: %w", path, err)
		}
		return res.Metrics, res.Logs, nil
	}, nil
}

func export(ctx context.Context, path, endpoint string, plaintext bool, timeout time.Duration, prog *progress) (exportResult, error) {
	var out exportResult
	defer prog.stop()
	src, err := openSource(path, prog)
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
	metrics, logs, err := src(func(td ptrace.Traces) error {
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
		return out, &importError{err}
	}
	if n := metrics.DataPointCount(); n > 0 {
		resp, err := pmetricotlp.NewGRPCClient(cc).Export(ctx, pmetricotlp.NewExportRequestFromMetrics(metrics))
		if err != nil {
			return out, &exportError{fmt.Errorf("%s: sending metrics: %w", endpoint, err)}
		}
		if ps := resp.PartialSuccess(); ps.RejectedDataPoints() > 0 {
			return out, &exportError{fmt.Errorf("%s: %d of %d data points rejected: %s", endpoint, ps.RejectedDataPoints(), n, ps.ErrorMessage())}
		}
		out.DataPoints = n
	}
	if n := logs.LogRecordCount(); n > 0 {
		resp, err := plogotlp.NewGRPCClient(cc).Export(ctx, plogotlp.NewExportRequestFromLogs(logs))
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

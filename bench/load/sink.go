// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"net"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"

	// The otlp exporter compresses with gzip by default.
	_ "google.golang.org/grpc/encoding/gzip"
)

// sink is the backend of the load: an OTLP/gRPC server on 127.0.0.1 that
// counts what the agent delivers and keeps nothing, so that its own
// memory never limits the run.
type sink struct {
	points, spans, logs, requests atomic.Int64
	srv                           *grpc.Server
	addr                          string
}

type sinkMetrics struct {
	pmetricotlp.UnimplementedGRPCServer
	s *sink
}

func (m *sinkMetrics) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	m.s.points.Add(int64(req.Metrics().DataPointCount()))
	m.s.requests.Add(1)
	return pmetricotlp.NewExportResponse(), nil
}

type sinkTraces struct {
	ptraceotlp.UnimplementedGRPCServer
	s *sink
}

func (t *sinkTraces) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	t.s.spans.Add(int64(req.Traces().SpanCount()))
	t.s.requests.Add(1)
	return ptraceotlp.NewExportResponse(), nil
}

type sinkLogs struct {
	plogotlp.UnimplementedGRPCServer
	s *sink
}

func (l *sinkLogs) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	l.s.logs.Add(int64(req.Logs().LogRecordCount()))
	l.s.requests.Add(1)
	return plogotlp.NewExportResponse(), nil
}

func startSink() (*sink, error) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{srv: grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20)), addr: l.Addr().String()}
	pmetricotlp.RegisterGRPCServer(s.srv, &sinkMetrics{s: s})
	ptraceotlp.RegisterGRPCServer(s.srv, &sinkTraces{s: s})
	plogotlp.RegisterGRPCServer(s.srv, &sinkLogs{s: s})
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

func (s *sink) stop() { s.srv.Stop() }

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package enginereplay serves inference engines' Prometheus metrics on
// loopback, for end-to-end tests and the demo: a fixture (a recorded or
// hand-written exposition) is the starting point, and an optional scenario
// file moves its series through a story in compressed time — counters that
// advance, gauges that ramp, latency histograms whose median rises, engine
// restarts and windows in which the target is down.
//
// The library is used from tests through New, Handler or Start, SetFault and
// Requests; cmd/enginereplay wraps it as a command. See README.md for the
// scenario format and fixtures/SOURCES.md for where each fixture comes from.
package enginereplay

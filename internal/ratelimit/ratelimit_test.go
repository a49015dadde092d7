// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"fmt"
	"testing"
	"time"
)

func TestAllowOncePerIntervalPerKey(t *testing.T) {
	l := New(time.Minute)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }
	if !l.Allow("a") || l.Allow("a") {
		t.Fatal("second event within the interval allowed")
	}
	if !l.Allow("b") {
		t.Fatal("keys are not independent")
	}
	now = now.Add(time.Minute)
	if !l.Allow("a") {
		t.Fatal("event after the interval refused")
	}
	l.Reset("a")
	if !l.Allow("a") {
		t.Fatal("event after Reset refused")
	}
}

func TestZeroIntervalAllowsEverything(t *testing.T) {
	l := New(0)
	for range 3 {
		if !l.Allow("k") {
			t.Fatal("refused with a zero interval")
		}
	}
}

func TestBounded(t *testing.T) {
	l := New(time.Hour)
	for i := range 3 * maxKeys {
		l.Allow(fmt.Sprint(i))
	}
	if len(l.last) > maxKeys {
		t.Fatalf("%d keys kept, bound is %d", len(l.last), maxKeys)
	}
}

// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package ratelimit keeps repeated warnings (a GPU failing every scrape, an
// engine target down every 10 seconds) from flooding the collector's log.
package ratelimit

import (
	"sync"
	"time"
)

// maxKeys bounds the memory of a Limiter whose keys churn (pids, URLs);
// when exceeded, every key is forgotten, which at worst lets one extra
// warning per key through.
const maxKeys = 4096

// Limiter allows one event per key per interval.
type Limiter struct {
	mu       sync.Mutex
	interval time.Duration
	now      func() time.Time
	last     map[string]time.Time
}

// New returns a Limiter; an interval of zero allows every event.
func New(interval time.Duration) *Limiter {
	return &Limiter{interval: interval, now: time.Now, last: map[string]time.Time{}}
}

// Allow reports whether an event for key may be emitted now, and if so
// starts the key's quiet interval.
func (l *Limiter) Allow(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if t, ok := l.last[key]; ok && now.Sub(t) < l.interval {
		return false
	}
	if len(l.last) >= maxKeys {
		clear(l.last)
	}
	l.last[key] = now
	return true
}

// Reset forgets key, so that its next event is allowed (e.g. when a target
// recovers, its next failure is news again).
func (l *Limiter) Reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last, key)
}

// Copyright The OpenTelemetry Authors
// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0
//
// Adapted from go.opentelemetry.io/collector/internal/sharedcomponent
// (v0.161.0), licensed under the Apache License, Version 2.0. Changes: the
// wrapped component is shut down when the last pipeline instance using it
// shuts down (reference counting) instead of the first, the start error is
// shared under a lock, and status events are replayed to pipelines that start
// later.

// Package sharedcomponent lets one component instance serve several pipelines
// (metrics, traces, logs). The collector creates a component once per
// pipeline; components that hold one state for all signals (rootcause's
// detector windows, profileimport's file watcher) register that state under a
// key, usually their *Config, and every pipeline instance gets the same object.
package sharedcomponent

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
)

// Map holds the shared instances, keyed by K (usually the component's
// configuration pointer, which the collector keeps unique per component ID).
type Map[K comparable, V component.Component] struct {
	mu         sync.Mutex
	components map[K]*Component[V]
}

// NewMap returns an empty Map.
func NewMap[K comparable, V component.Component]() *Map[K, V] {
	return &Map[K, V]{components: map[K]*Component[V]{}}
}

// LoadOrStore returns the shared instance for key, calling create to make it
// when there is none. Every call counts as one user of the instance: each user
// must call Shutdown once, and the wrapped component is shut down (and the key
// forgotten, so a configuration reload builds a fresh one) when the last user
// does.
func (m *Map[K, V]) LoadOrStore(key K, create func() (V, error)) (*Component[V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.components[key]; ok {
		c.users++
		return c, nil
	}
	v, err := create()
	if err != nil {
		return nil, err
	}
	c := &Component[V]{component: v, users: 1}
	// The user count lives under the map's lock, so that a key is never
	// handed out again once its last user has released it.
	c.release = func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		c.users--
		if c.users > 0 {
			return false
		}
		delete(m.components, key)
		return true
	}
	m.components[key] = c
	return c, nil
}

// Len returns the number of live shared instances.
func (m *Map[K, V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.components)
}

// Component wraps a shared component so that it is started once and shut
// down once, whichever pipelines start and stop it.
type Component[V component.Component] struct {
	component V
	users     int // guarded by the owning Map's lock
	release   func() (last bool)

	mu       sync.Mutex
	started  bool
	startErr error
	stopped  bool
	stopErr  error
	host     *fanoutHost
}

// Unwrap returns the shared component.
func (c *Component[V]) Unwrap() V { return c.component }

// Start starts the shared component on the first call; later calls return the
// first call's result, so every pipeline sees a start failure. The status
// reporter of every pipeline's host receives the component's status events.
func (c *Component[V]) Start(ctx context.Context, host component.Host) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		if r, ok := host.(componentstatus.Reporter); ok {
			c.host.addReporter(r)
		}
		return c.startErr
	}
	c.started = true
	c.host = &fanoutHost{Host: host}
	if r, ok := host.(componentstatus.Reporter); ok {
		c.host.addReporter(r)
	}
	c.startErr = c.component.Start(ctx, c.host)
	return c.startErr
}

// Shutdown releases one user. The shared component is shut down when the
// last user releases it, so a pipeline that stops early does not pull the
// state from under the pipelines still draining. Extra calls are no-ops.
func (c *Component[V]) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return c.stopErr
	}
	if !c.release() {
		return nil
	}
	c.stopped = true
	c.stopErr = c.component.Shutdown(ctx)
	return c.stopErr
}

// replayedEvents is how many recent status events a late-starting pipeline
// receives, so its view of the component's status follows the same
// transitions the others saw.
const replayedEvents = 5

// fanoutHost is the host the shared component sees: extensions come from the
// first pipeline's host, and status events go to every pipeline's reporter.
type fanoutHost struct {
	component.Host

	mu        sync.Mutex
	reporters []componentstatus.Reporter
	recent    []*componentstatus.Event
}

var _ componentstatus.Reporter = (*fanoutHost)(nil)

func (h *fanoutHost) Report(e *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recent = append(h.recent, e)
	if len(h.recent) > replayedEvents {
		h.recent = h.recent[len(h.recent)-replayedEvents:]
	}
	for _, r := range h.reporters {
		r.Report(e)
	}
}

func (h *fanoutHost) addReporter(r componentstatus.Reporter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.recent {
		r.Report(e)
	}
	h.reporters = append(h.reporters, r)
}

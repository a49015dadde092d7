// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package sharedcomponent

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
)

// countingComponent records how often it was started and shut down, and can
// report status through the host it was started with.
type countingComponent struct {
	starts, stops atomic.Int32
	startErr      error
	host          component.Host
	onStart       func(component.Host)
}

func (c *countingComponent) Start(_ context.Context, host component.Host) error {
	c.starts.Add(1)
	c.host = host
	if c.onStart != nil {
		c.onStart(host)
	}
	return c.startErr
}

func (c *countingComponent) Shutdown(context.Context) error {
	c.stops.Add(1)
	return nil
}

// recordingHost is a pipeline's host with a status reporter.
type recordingHost struct {
	component.Host
	mu     sync.Mutex
	events []componentstatus.Status
}

func (h *recordingHost) Report(e *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e.Status())
}

func (h *recordingHost) statuses() []componentstatus.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]componentstatus.Status(nil), h.events...)
}

func newHost() *recordingHost { return &recordingHost{Host: componenttest.NewNopHost()} }

func TestLoadOrStoreSharesOneInstancePerKey(t *testing.T) {
	m := NewMap[string, *countingComponent]()
	created := 0
	create := func() (*countingComponent, error) { created++; return &countingComponent{}, nil }

	a, err := m.LoadOrStore("cfg", create)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.LoadOrStore("cfg", create)
	if err != nil {
		t.Fatal(err)
	}
	other, err := m.LoadOrStore("other", create)
	if err != nil {
		t.Fatal(err)
	}
	if a != b || a.Unwrap() != b.Unwrap() {
		t.Fatal("same key gave different instances")
	}
	if a == other {
		t.Fatal("different keys gave the same instance")
	}
	if created != 2 || m.Len() != 2 {
		t.Fatalf("created %d, map holds %d; want 2 and 2", created, m.Len())
	}
}

func TestCreateErrorStoresNothing(t *testing.T) {
	m := NewMap[string, *countingComponent]()
	boom := errors.New("bad config")
	if _, err := m.LoadOrStore("cfg", func() (*countingComponent, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v, want %v", err, boom)
	}
	if m.Len() != 0 {
		t.Fatal("a failed create left an entry behind")
	}
	c, err := m.LoadOrStore("cfg", func() (*countingComponent, error) { return &countingComponent{}, nil })
	if err != nil || c == nil {
		t.Fatalf("retry after failure: %v", err)
	}
}

func TestStartsOnceAndSharesTheStartError(t *testing.T) {
	m := NewMap[string, *countingComponent]()
	boom := errors.New("port in use")
	inner := &countingComponent{startErr: boom}
	create := func() (*countingComponent, error) { return inner, nil }
	for range 3 {
		c, _ := m.LoadOrStore("cfg", create)
		if err := c.Start(context.Background(), newHost()); !errors.Is(err, boom) {
			t.Fatalf("pipeline got start error %v, want %v", err, boom)
		}
	}
	if n := inner.starts.Load(); n != 1 {
		t.Fatalf("started %d times, want 1", n)
	}
}

func TestShutsDownWhenTheLastUserStops(t *testing.T) {
	m := NewMap[string, *countingComponent]()
	inner := &countingComponent{}
	var users []*Component[*countingComponent]
	for range 3 {
		c, _ := m.LoadOrStore("cfg", func() (*countingComponent, error) { return inner, nil })
		if err := c.Start(context.Background(), newHost()); err != nil {
			t.Fatal(err)
		}
		users = append(users, c)
	}
	for i, c := range users[:2] {
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := inner.stops.Load(); n != 0 {
			t.Fatalf("shut down after %d of 3 users stopped", i+1)
		}
	}
	if err := users[2].Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := inner.stops.Load(); n != 1 {
		t.Fatalf("stopped %d times after the last user, want 1", n)
	}
	if m.Len() != 0 {
		t.Fatal("a stopped component is still in the map")
	}
	// A reload builds a fresh instance under the same key.
	fresh, _ := m.LoadOrStore("cfg", func() (*countingComponent, error) { return &countingComponent{}, nil })
	if fresh.Unwrap() == inner {
		t.Fatal("a stopped instance was handed out again")
	}
	// Extra shutdowns of a stopped component do nothing.
	if err := users[0].Shutdown(context.Background()); err != nil || inner.stops.Load() != 1 {
		t.Fatalf("extra shutdown: err=%v stops=%d", err, inner.stops.Load())
	}
}

func TestStatusReachesEveryPipeline(t *testing.T) {
	m := NewMap[string, *countingComponent]()
	inner := &countingComponent{onStart: func(h component.Host) {
		componentstatus.ReportStatus(h, componentstatus.NewEvent(componentstatus.StatusOK))
	}}
	create := func() (*countingComponent, error) { return inner, nil }
	first, second := newHost(), newHost()

	c1, _ := m.LoadOrStore("cfg", create)
	c2, _ := m.LoadOrStore("cfg", create)
	if err := c1.Start(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	// The second pipeline starts after the OK event: it must still see it.
	if err := c2.Start(context.Background(), second); err != nil {
		t.Fatal(err)
	}
	componentstatus.ReportStatus(inner.host, componentstatus.NewRecoverableErrorEvent(errors.New("target down")))

	want := []componentstatus.Status{componentstatus.StatusOK, componentstatus.StatusRecoverableError}
	for name, h := range map[string]*recordingHost{"first": first, "second": second} {
		got := h.statuses()
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%s pipeline saw %v, want %v", name, got, want)
		}
	}
	// Extensions still come from the real host.
	if inner.host.GetExtensions() == nil {
		t.Error("wrapped host lost GetExtensions")
	}
}

func TestConcurrentPipelines(t *testing.T) {
	m := NewMap[int, *countingComponent]()
	inners := make([]*countingComponent, 4)
	for i := range inners {
		inners[i] = &countingComponent{}
	}
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := g % len(inners)
			c, err := m.LoadOrStore(key, func() (*countingComponent, error) { return inners[key], nil })
			if err != nil {
				t.Error(err)
				return
			}
			_ = c.Start(context.Background(), newHost())
			_ = c.Shutdown(context.Background())
		}()
	}
	wg.Wait()
	for i, in := range inners {
		// Every instance is started once per live period and stopped as often
		// as it was started: never stopped while a pipeline still used it.
		if in.starts.Load() != in.stops.Load() || in.starts.Load() == 0 {
			t.Errorf("instance %d: %d starts, %d stops", i, in.starts.Load(), in.stops.Load())
		}
	}
	if m.Len() != 0 {
		t.Fatalf("%d instances left in the map", m.Len())
	}
}

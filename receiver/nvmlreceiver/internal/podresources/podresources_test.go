// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package podresources

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

const (
	gpu0 = "GPU-8a3c2f1e-5b7d-4e9a-b1c3-d5e7f9a1b3c5"
	gpu1 = "GPU-1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9"
	mig0 = "MIG-4e5f6a7b-8c9d-5e0f-a1b2-c3d4e5f6a7b8"
	mig1 = "MIG-9b8a7f6e-5d4c-5b3a-a291-80f7e6d5c4b3"

	// fastRefresh keeps the tests quick; waits poll with a generous deadline.
	fastRefresh = 10 * time.Millisecond
	waitFor     = 10 * time.Second
)

// TestMain fails the run when goroutines of the client or of gRPC outlive
// the tests: every Client is closed and every server stopped by then.
// (go.uber.org/goleak is not a requirement of this module.)
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := leakedGoroutines(); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines left running after the tests:\n\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// leakedGoroutines waits for goroutines of this package's client or of gRPC
// to end, and returns the stacks of those that do not.
func leakedGoroutines() string {
	deadline := time.Now().Add(5 * time.Second)
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		var leaked []string
		// The first stack is this goroutine's.
		for _, g := range strings.Split(string(buf[:n]), "\n\n")[1:] {
			if strings.Contains(g, "podresources.(*Client)") || strings.Contains(g, "google.golang.org/grpc") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fakeKubelet serves the pod-resources API like the kubelet does, with pods
// the test sets.
type fakeKubelet struct {
	podresourcesapi.UnimplementedPodResourcesListerServer

	mu    sync.Mutex
	pods  []*podresourcesapi.PodResources
	hang  bool // List blocks until its caller gives up
	calls int
}

func (k *fakeKubelet) List(ctx context.Context, _ *podresourcesapi.ListPodResourcesRequest) (*podresourcesapi.ListPodResourcesResponse, error) {
	k.mu.Lock()
	k.calls++
	hang, pods := k.hang, k.pods
	k.mu.Unlock()
	if hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &podresourcesapi.ListPodResourcesResponse{PodResources: pods}, nil
}

func (k *fakeKubelet) setPods(pods ...*podresourcesapi.PodResources) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.pods = pods
}

func (k *fakeKubelet) setHang(hang bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.hang = hang
}

func (k *fakeKubelet) callCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.calls
}

// socketPath returns a path for a unix socket in a fresh directory. Unix
// socket paths are limited to 108 bytes, which t.TempDir's long names can
// exceed, so the directory is a short one under the system's temporary
// directory.
func socketPath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) }) // best effort, as t.TempDir's own cleanup
	return filepath.Join(dir, "kubelet.sock")
}

// serve starts a gRPC server for k on the socket at path. The returned
// function stops it, removing the socket; it is also called at cleanup.
func serve(t *testing.T, path string, k *fakeKubelet) (stop func()) {
	t.Helper()
	lis, err := (&net.ListenConfig{}).Listen(t.Context(), "unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	podresourcesapi.RegisterPodResourcesListerServer(srv, k)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			srv.Stop()
			<-served
		})
	}
	t.Cleanup(stop)
	return stop
}

// startClient starts a client on path that logs to an observer, and closes
// it at cleanup.
func startClient(t *testing.T, path string, opts ...Option) (*Client, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	c := New(path, zap.New(core), append([]Option{WithRefreshInterval(fastRefresh)}, opts...)...)
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c, logs
}

// eventually polls cond until it holds, failing the test after waitFor.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitRefreshed waits until the client has completed n more successful
// refreshes than it had when called: then its snapshot reflects the
// server's state at the time of the call.
func waitRefreshed(t *testing.T, c *Client, n int64) {
	t.Helper()
	target := c.succeeded.Load() + n
	eventually(t, fmt.Sprintf("%d successful refreshes", target), func() bool { return c.succeeded.Load() >= target })
}

func waitFailed(t *testing.T, c *Client, n int64) {
	t.Helper()
	target := c.attempts.Load() - c.succeeded.Load() + n
	eventually(t, fmt.Sprintf("%d failed refreshes", target), func() bool {
		return c.attempts.Load()-c.succeeded.Load() >= target
	})
}

func pod(namespace, name string, containers ...*podresourcesapi.ContainerResources) *podresourcesapi.PodResources {
	return &podresourcesapi.PodResources{Name: name, Namespace: namespace, Containers: containers}
}

func container(name string, devices ...*podresourcesapi.ContainerDevices) *podresourcesapi.ContainerResources {
	return &podresourcesapi.ContainerResources{Name: name, Devices: devices}
}

func devices(resource string, ids ...string) *podresourcesapi.ContainerDevices {
	return &podresourcesapi.ContainerDevices{ResourceName: resource, DeviceIds: ids}
}

func wantLookup(t *testing.T, c *Client, id string, want Pod) {
	t.Helper()
	got, ok := c.Lookup(id)
	if !ok || got != want {
		t.Errorf("Lookup(%q) = %+v, %v; want %+v, true", id, got, ok, want)
	}
}

func wantNoLookup(t *testing.T, c *Client, id string) {
	t.Helper()
	if got, ok := c.Lookup(id); ok {
		t.Errorf("Lookup(%q) = %+v, true; want false", id, got)
	}
	if got := c.LookupAll(id); got != nil {
		t.Errorf("LookupAll(%q) = %+v, want nil", id, got)
	}
}

func TestLookupByGPUUUID(t *testing.T) {
	path := socketPath(t)
	k := &fakeKubelet{}
	k.setPods(
		pod("llm", "vllm-0",
			container("vllm", devices("nvidia.com/gpu", gpu0)),
			container("sidecar"),
		),
		pod("llm", "tgi-0",
			container("tgi", devices("nvidia.com/gpu", gpu1), devices("cpu"))),
	)
	serve(t, path, k)
	c, _ := startClient(t, path)
	waitRefreshed(t, c, 1)

	wantLookup(t, c, gpu0, Pod{Name: "vllm-0", Namespace: "llm", Container: "vllm"})
	wantLookup(t, c, gpu1, Pod{Name: "tgi-0", Namespace: "llm", Container: "tgi"})
	wantNoLookup(t, c, "GPU-00000000-0000-0000-0000-000000000000")
	wantNoLookup(t, c, "")
}

func TestLookupByMIGUUID(t *testing.T) {
	path := socketPath(t)
	k := &fakeKubelet{}
	k.setPods(
		pod("llm", "small-0", container("main", devices("nvidia.com/mig-1g.10gb", mig0))),
		pod("llm", "large-0", container("main", devices("nvidia.com/mig-3g.40gb", mig1))),
	)
	serve(t, path, k)
	c, _ := startClient(t, path)
	waitRefreshed(t, c, 1)

	wantLookup(t, c, mig0, Pod{Name: "small-0", Namespace: "llm", Container: "main"})
	wantLookup(t, c, mig1, Pod{Name: "large-0", Namespace: "llm", Container: "main"})
	wantNoLookup(t, c, gpu0)
}

func TestReplicaSuffix(t *testing.T) {
	path := socketPath(t)
	k := &fakeKubelet{}
	k.setPods(
		// Time-slicing: one GPU advertised as several replicas, two of them
		// given to the same container.
		pod("llm", "embed-0", container("main", devices("nvidia.com/gpu", gpu0+"::3", gpu0+"::7"))),
		// A renamed shared resource, as the device plugin's renameByDefault
		// option produces.
		pod("llm", "rerank-0", container("main", devices("nvidia.com/gpu.shared", gpu1+"::0"))),
	)
	serve(t, path, k)
	c, _ := startClient(t, path)
	waitRefreshed(t, c, 1)

	embed := Pod{Name: "embed-0", Namespace: "llm", Container: "main"}
	wantLookup(t, c, gpu0, embed)
	wantLookup(t, c, gpu0+"::3", embed) // a replica ID finds its GPU too
	if got := c.LookupAll(gpu0); !reflect.DeepEqual(got, []Pod{embed}) {
		t.Errorf("LookupAll(%q) = %+v, want the container once", gpu0, got)
	}
	wantLookup(t, c, gpu1, Pod{Name: "rerank-0", Namespace: "llm", Container: "main"})
}

func TestSharedGPU(t *testing.T) {
	path := socketPath(t)
	k := &fakeKubelet{}
	k.setPods(
		pod("team-b", "worker-1", container("infer", devices("nvidia.com/gpu", gpu0+"::1"))),
		pod("team-a", "worker-9", container("infer", devices("nvidia.com/gpu", gpu0+"::2"))),
		pod("team-a", "worker-1",
			container("z-helper", devices("nvidia.com/gpu", gpu0+"::4")),
			container("infer", devices("nvidia.com/gpu", gpu0+"::3")),
		),
	)
	serve(t, path, k)
	c, _ := startClient(t, path)
	waitRefreshed(t, c, 1)

	want := []Pod{
		{Name: "worker-1", Namespace: "team-a", Container: "infer"},
		{Name: "worker-1", Namespace: "team-a", Container: "z-helper"},
		{Name: "worker-9", Namespace: "team-a", Container: "infer"},
		{Name: "worker-1", Namespace: "team-b", Container: "infer"},
	}
	got := c.LookupAll(gpu0)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("LookupAll(%q) =\n%+v\nwant\n%+v", gpu0, got, want)
	}
	wantLookup(t, c, gpu0, want[0])

	// The caller owns what LookupAll returns.
	got[0].Name = "changed"
	wantLookup(t, c, gpu0, want[0])
}

func TestNonNvidiaResourcesIgnored(t *testing.T) {
	path := socketPath(t)
	k := &fakeKubelet{}
	k.setPods(
		pod("ml", "rocm-0", container("main", devices("amd.com/gpu", gpu0))),
		pod("ml", "fpga-0", container("main", devices("example.com/fpga", gpu1))),
		pod("ml", "lookalike-0", container("main", devices("nvidia.community/gpu", mig0))),
		pod("ml", "real-0", container("main", devices("nvidia.com/gpu", mig1))),
	)
	serve(t, path, k)
	c, _ := startClient(t, path)
	waitRefreshed(t, c, 1)

	wantNoLookup(t, c, gpu0)
	wantNoLookup(t, c, gpu1)
	wantNoLookup(t, c, mig0)
	wantLookup(t, c, mig1, Pod{Name: "real-0", Namespace: "ml", Container: "main"})
}

func TestRefreshFollowsChanges(t *testing.T) {
	path := socketPath(t)
	k := &fakeKubelet{}
	k.setPods(pod("llm", "old-0", container("main", devices("nvidia.com/gpu", gpu0))))
	serve(t, path, k)
	c, _ := startClient(t, path)
	waitRefreshed(t, c, 1)
	wantLookup(t, c, gpu0, Pod{Name: "old-0", Namespace: "llm", Container: "main"})

	// The pod goes, another takes the GPU.
	k.setPods(pod("llm", "new-0", container("main", devices("nvidia.com/gpu", gpu0))))
	waitRefreshed(t, c, 2)
	wantLookup(t, c, gpu0, Pod{Name: "new-0", Namespace: "llm", Container: "main"})

	// No pod holds a GPU any more: an empty list is an answer, not a failure.
	k.setPods()
	waitRefreshed(t, c, 2)
	wantNoLookup(t, c, gpu0)
}

func TestServerDownAtStart(t *testing.T) {
	path := socketPath(t)
	c, logs := startClient(t, path)

	// The socket does not exist: Start succeeded, lookups find nothing, and
	// the failure is logged once however often it is retried.
	waitFailed(t, c, 5)
	wantNoLookup(t, c, gpu0)
	if n := logs.FilterLevelExact(zapcore.WarnLevel).Len(); n != 1 {
		t.Errorf("%d warnings after repeated failures, want 1", n)
	}

	// The kubelet comes up.
	k := &fakeKubelet{}
	k.setPods(pod("llm", "vllm-0", container("vllm", devices("nvidia.com/gpu", gpu0))))
	serve(t, path, k)
	eventually(t, "the client sees the kubelet", func() bool {
		_, ok := c.Lookup(gpu0)
		return ok
	})
	wantLookup(t, c, gpu0, Pod{Name: "vllm-0", Namespace: "llm", Container: "vllm"})
	eventually(t, "the recovery is logged", func() bool {
		return logs.FilterMessageSnippet("works again").Len() == 1
	})
}

func TestServerGoesAway(t *testing.T) {
	path := socketPath(t)
	k := &fakeKubelet{}
	k.setPods(pod("llm", "vllm-0", container("vllm", devices("nvidia.com/gpu", gpu0))))
	stop := serve(t, path, k)
	c, logs := startClient(t, path)
	waitRefreshed(t, c, 1)
	vllm := Pod{Name: "vllm-0", Namespace: "llm", Container: "vllm"}
	wantLookup(t, c, gpu0, vllm)

	// The kubelet goes away (restarts, say): the last snapshot stays.
	stop()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the socket is still there after the server stopped: %v", err)
	}
	waitFailed(t, c, 3)
	wantLookup(t, c, gpu0, vllm)
	warnings := logs.FilterLevelExact(zapcore.WarnLevel).All()
	if len(warnings) != 1 {
		t.Fatalf("%d warnings, want 1", len(warnings))
	}
	if !strings.Contains(warnings[0].Message, "last known") {
		t.Errorf("warning %q does not say the last snapshot is kept", warnings[0].Message)
	}

	// It comes back on the same socket, with a different pod on the GPU.
	k2 := &fakeKubelet{}
	k2.setPods(pod("llm", "vllm-1", container("vllm", devices("nvidia.com/gpu", gpu0))))
	serve(t, path, k2)
	eventually(t, "the client sees the restarted kubelet", func() bool {
		p, _ := c.Lookup(gpu0)
		return p.Name == "vllm-1"
	})
}

func TestListTimeout(t *testing.T) {
	path := socketPath(t)
	k := &fakeKubelet{}
	k.setPods(pod("llm", "vllm-0", container("vllm", devices("nvidia.com/gpu", gpu0))))
	serve(t, path, k)
	c, logs := startClient(t, path, WithTimeout(50*time.Millisecond))
	waitRefreshed(t, c, 1)

	// The kubelet accepts the call but never answers: each List gives up
	// after the timeout, and the last snapshot stays.
	k.setHang(true)
	calls := k.callCount()
	waitFailed(t, c, 2)
	if k.callCount() <= calls {
		t.Errorf("the hanging kubelet was not called")
	}
	wantLookup(t, c, gpu0, Pod{Name: "vllm-0", Namespace: "llm", Container: "vllm"})
	warnings := logs.FilterLevelExact(zapcore.WarnLevel).All()
	if len(warnings) != 1 {
		t.Fatalf("%d warnings, want 1", len(warnings))
	}
	if err, _ := warnings[0].ContextMap()["error"].(string); !strings.Contains(err, "DeadlineExceeded") {
		t.Errorf("warning's error is %q, want a deadline exceeded", err)
	}

	// It answers again.
	k.setPods(pod("llm", "vllm-1", container("vllm", devices("nvidia.com/gpu", gpu0))))
	k.setHang(false)
	eventually(t, "the client sees the kubelet answer again", func() bool {
		p, _ := c.Lookup(gpu0)
		return p.Name == "vllm-1"
	})
}

func TestCloseAbandonsHungList(t *testing.T) {
	path := socketPath(t)
	k := &fakeKubelet{hang: true}
	serve(t, path, k)
	core, _ := observer.New(zapcore.DebugLevel)
	c := New(path, zap.New(core), WithTimeout(time.Hour))
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the List call reaches the kubelet", func() bool { return k.callCount() > 0 })

	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(waitFor):
		t.Fatal("Close waited for the List call in flight")
	}
}

func TestWarningsAreRateLimited(t *testing.T) {
	path := socketPath(t)
	core, logs := observer.New(zapcore.DebugLevel)
	c := New(path, zap.New(core), WithRefreshInterval(fastRefresh))
	c.warnInterval = 100 * time.Millisecond
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }() // the test is over; its assertions are made

	// With the failures continuing, the warning repeats, but not at every
	// failure.
	eventually(t, "the warning repeats", func() bool {
		return logs.FilterLevelExact(zapcore.WarnLevel).Len() >= 2
	})
	failures := c.attempts.Load() - c.succeeded.Load()
	if warnings := int64(logs.FilterLevelExact(zapcore.WarnLevel).Len()); warnings >= failures {
		t.Errorf("%d warnings for %d failures: not rate limited", warnings, failures)
	}
}

func TestLifecycle(t *testing.T) {
	path := socketPath(t)

	// Close without Start, and twice.
	c := New(path, nil)
	if err := c.Close(); err != nil {
		t.Errorf("Close before Start: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := c.Start(context.Background()); err == nil {
		t.Errorf("Start after Close succeeded")
	}

	// Start twice.
	c = New(path, nil)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err == nil {
		t.Errorf("second Start succeeded")
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	wantNoLookup(t, c, gpu0)
}

func TestLookupsKeepWorkingAfterClose(t *testing.T) {
	path := socketPath(t)
	k := &fakeKubelet{}
	k.setPods(pod("llm", "vllm-0", container("vllm", devices("nvidia.com/gpu", gpu0))))
	serve(t, path, k)
	c := New(path, nil, WithRefreshInterval(fastRefresh))
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitRefreshed(t, c, 1)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	wantLookup(t, c, gpu0, Pod{Name: "vllm-0", Namespace: "llm", Container: "vllm"})
}

// TestConcurrentLookups runs lookups while the snapshot is being replaced;
// it is meant for the race detector.
func TestConcurrentLookups(t *testing.T) {
	path := socketPath(t)
	k := &fakeKubelet{}
	k.setPods(pod("llm", "a", container("main", devices("nvidia.com/gpu", gpu0))))
	serve(t, path, k)
	c, _ := startClient(t, path, WithRefreshInterval(time.Millisecond))
	waitRefreshed(t, c, 1)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if p, ok := c.Lookup(gpu0); !ok || (p.Name != "a" && p.Name != "b") {
					t.Errorf("Lookup = %+v, %v", p, ok)
					return
				}
				_ = c.LookupAll(gpu0)
				runtime.Gosched() // let the refresh run on a small machine
			}
		})
	}
	for i := range 10 {
		name := []string{"a", "b"}[i%2]
		k.setPods(pod("llm", name, container("main", devices("nvidia.com/gpu", gpu0))))
		waitRefreshed(t, c, 2)
	}
	close(stop)
	wg.Wait()
}

func TestOptions(t *testing.T) {
	c := New("", nil)
	if c.socketPath != DefaultSocketPath || c.refreshInterval != DefaultRefreshInterval || c.timeout != DefaultTimeout {
		t.Errorf("defaults: socket %q, refresh %v, timeout %v", c.socketPath, c.refreshInterval, c.timeout)
	}
	c = New("/run/k.sock", nil, WithRefreshInterval(time.Minute), WithTimeout(time.Second))
	if c.refreshInterval != time.Minute || c.timeout != time.Second {
		t.Errorf("options: refresh %v, timeout %v", c.refreshInterval, c.timeout)
	}
	c = New("/run/k.sock", nil, WithRefreshInterval(0), WithTimeout(-time.Second))
	if c.refreshInterval != DefaultRefreshInterval || c.timeout != DefaultTimeout {
		t.Errorf("non-positive options: refresh %v, timeout %v", c.refreshInterval, c.timeout)
	}
}

func TestTarget(t *testing.T) {
	for path, want := range map[string]string{
		DefaultSocketPath:  "unix:///var/lib/kubelet/pod-resources/kubelet.sock",
		"run/kubelet.sock": "unix:run/kubelet.sock",
	} {
		if got := target(path); got != want {
			t.Errorf("target(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestNormalizeDeviceID(t *testing.T) {
	for id, want := range map[string]string{
		gpu0:          gpu0,
		gpu0 + "::0":  gpu0,
		gpu0 + "::12": gpu0,
		mig0 + "::3":  mig0,
		gpu0 + "::":   gpu0 + "::",
		gpu0 + "::x":  gpu0 + "::x",
		gpu0 + "::1a": gpu0 + "::1a",
		"nvidia0":     "nvidia0",
		"::5":         "",
		"":            "",
	} {
		if got := normalizeDeviceID(id); got != want {
			t.Errorf("normalizeDeviceID(%q) = %q, want %q", id, got, want)
		}
	}
}

// BenchmarkLookup measures a lookup against a snapshot of a full 8-GPU node.
func BenchmarkLookup(b *testing.B) {
	var pods []*podresourcesapi.PodResources
	var ids []string
	for i := range 8 {
		id := fmt.Sprintf("GPU-%08x-5b7d-4e9a-b1c3-d5e7f9a1b3c5", i)
		ids = append(ids, id)
		pods = append(pods, pod("llm", fmt.Sprintf("vllm-%d", i), container("vllm", devices("nvidia.com/gpu", id+"::0"))))
	}
	c := New("", nil)
	c.snapshot.Store(buildSnapshot(&podresourcesapi.ListPodResourcesResponse{PodResources: pods}))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, ok := c.Lookup(ids[i%len(ids)]); !ok {
			b.Fatal("not found")
		}
	}
}

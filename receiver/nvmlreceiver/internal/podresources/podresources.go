// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package podresources tells which Kubernetes pod and container a GPU is
// allocated to, by asking the kubelet's pod-resources API. The nvml receiver
// uses it to label per-GPU metrics with their workload even when the process
// itself cannot be attributed through its cgroup (the agent cannot see the
// host's processes, or the GPU is allocated but idle), and to confirm which
// pod owns a GPU that several processes use.
//
// The kubelet serves the API over gRPC on a unix socket that a DaemonSet
// mounts from the host. The Client lists all pod resources in the background
// at a fixed interval and answers lookups from the last list it got, so a
// lookup never waits on the kubelet and a kubelet that is down or restarting
// only makes the answers older, never absent once they have been known.
package podresources

import (
	"cmp"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

const (
	// DefaultSocketPath is where the kubelet serves the pod-resources API.
	DefaultSocketPath = "/var/lib/kubelet/pod-resources/kubelet.sock"
	// DefaultRefreshInterval is how often the pod resources are listed.
	DefaultRefreshInterval = 10 * time.Second
	// DefaultTimeout bounds one List call.
	DefaultTimeout = 2 * time.Second

	// warnInterval spaces out the warnings about a failing kubelet: one
	// failure per refresh would otherwise flood the log.
	warnInterval = time.Minute
	// maxResponseSize is the largest List response accepted. A busy node's
	// response can outgrow gRPC's default of 4 MiB; the kubelet's own client
	// allows 16 MiB.
	maxResponseSize = 16 << 20
	// resourcePrefix selects NVIDIA's extended resources: nvidia.com/gpu,
	// and the nvidia.com/mig-<profile> resources of the MIG "mixed" strategy.
	resourcePrefix = "nvidia.com/"
)

// Pod is a container that a device is allocated to.
type Pod struct {
	Name      string
	Namespace string
	Container string
}

// Option configures a Client.
type Option func(*Client)

// WithRefreshInterval sets how often the pod resources are listed. Values
// below or equal to zero leave the default, DefaultRefreshInterval.
func WithRefreshInterval(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.refreshInterval = d
		}
	}
}

// WithTimeout sets how long one List call may take. Values below or equal to
// zero leave the default, DefaultTimeout.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// Client maps device IDs to the pods they are allocated to. Lookups are safe
// for concurrent use and cheap: they read an immutable snapshot that the
// background refresh replaces as a whole.
type Client struct {
	socketPath      string
	logger          *zap.Logger
	refreshInterval time.Duration
	timeout         time.Duration
	warnInterval    time.Duration

	snapshot atomic.Pointer[snapshot]

	mu      sync.Mutex // guards the lifecycle fields below
	started bool
	closed  bool
	conn    *grpc.ClientConn
	cancel  context.CancelFunc
	done    chan struct{}

	// Used only by the refresh goroutine.
	lastWarn time.Time
	failures int // consecutive failed refreshes

	// Counters of List calls made and succeeded, for tests.
	attempts, succeeded atomic.Int64
}

// snapshot is the result of one successful List: every device ID, replica
// suffix removed, with the containers it is allocated to in a fixed order.
type snapshot struct {
	byDevice map[string][]Pod
}

// New returns a Client for the pod-resources API served on socketPath, or on
// DefaultSocketPath when socketPath is empty. It connects only once started.
func New(socketPath string, logger *zap.Logger, opts ...Option) *Client {
	if socketPath == "" {
		socketPath = DefaultSocketPath
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	c := &Client{
		socketPath:      socketPath,
		logger:          logger,
		refreshInterval: DefaultRefreshInterval,
		timeout:         DefaultTimeout,
		warnInterval:    warnInterval,
	}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

// Start sets up the connection and starts listing pod resources in the
// background, at once and then every refresh interval. It does not wait for
// the kubelet: a missing socket or a failing kubelet is logged and retried,
// never returned. ctx is not retained; Close stops the refresh.
func (c *Client) Start(_ context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("podresources: client is closed")
	}
	if c.started {
		return errors.New("podresources: client already started")
	}
	conn, err := grpc.NewClient(target(c.socketPath),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxResponseSize)),
		// gRPC's reconnection backoff grows to two minutes by default; a
		// kubelet that comes back should be seen on the next refresh.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{
				BaseDelay:  min(time.Second, c.refreshInterval),
				Multiplier: 1.6,
				Jitter:     0.2,
				MaxDelay:   c.refreshInterval,
			},
			MinConnectTimeout: c.timeout,
		}),
	)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.started = true
	c.conn = conn
	c.cancel = cancel
	c.done = make(chan struct{})
	go c.run(ctx, podresourcesapi.NewPodResourcesListerClient(conn))
	return nil
}

// Close stops the refresh, abandoning a List in flight, and closes the
// connection. Lookups keep answering from the last snapshot. Close may be
// called more than once, and without Start.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if !c.started {
		return nil
	}
	c.cancel()
	<-c.done
	return c.conn.Close()
}

// Lookup returns the container that the device is allocated to. deviceID is
// a GPU UUID ("GPU-…") or MIG device UUID ("MIG-…"); a replica suffix
// ("::<n>") is ignored. When the device is shared, the first container in
// namespace, name, container order is returned; LookupAll returns them all.
// The result is false when the device is not allocated to any container, or
// no List has succeeded yet.
func (c *Client) Lookup(deviceID string) (Pod, bool) {
	pods := c.pods(deviceID)
	if len(pods) == 0 {
		return Pod{}, false
	}
	return pods[0], true
}

// LookupAll returns every container that the device is allocated to, in
// namespace, name, container order, or nil when there is none. The caller
// owns the returned slice.
func (c *Client) LookupAll(deviceID string) []Pod {
	return slices.Clone(c.pods(deviceID))
}

func (c *Client) pods(deviceID string) []Pod {
	s := c.snapshot.Load()
	if s == nil {
		return nil
	}
	return s.byDevice[normalizeDeviceID(deviceID)]
}

// target turns a socket path into a gRPC target. An absolute path needs the
// "unix://" form (an empty authority followed by the path); a relative path
// only the "unix:" scheme.
func target(socketPath string) string {
	if filepath.IsAbs(socketPath) {
		return "unix://" + socketPath
	}
	return "unix:" + socketPath
}

func (c *Client) run(ctx context.Context, api podresourcesapi.PodResourcesListerClient) {
	defer close(c.done)
	ticker := time.NewTicker(c.refreshInterval)
	defer ticker.Stop()
	for {
		c.refresh(ctx, api)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// refresh lists the pod resources and publishes them. On failure the last
// snapshot stays in place.
func (c *Client) refresh(ctx context.Context, api podresourcesapi.PodResourcesListerClient) {
	c.attempts.Add(1)
	listCtx, cancel := context.WithTimeout(ctx, c.timeout)
	resp, err := api.List(listCtx, &podresourcesapi.ListPodResourcesRequest{})
	cancel()
	if ctx.Err() != nil {
		return // closing
	}
	if err != nil {
		c.failed(err)
		return
	}
	s := buildSnapshot(resp)
	c.snapshot.Store(s)
	c.succeeded.Add(1)
	if c.failures > 0 {
		c.logger.Info("Listing pod resources from the kubelet works again",
			zap.String("socket", c.socketPath),
			zap.Int("failed_attempts", c.failures))
		c.failures = 0
	}
	c.logger.Debug("Listed pod resources", zap.Int("devices", len(s.byDevice)))
}

func (c *Client) failed(err error) {
	c.failures++
	now := time.Now()
	if !c.lastWarn.IsZero() && now.Sub(c.lastWarn) < c.warnInterval {
		return
	}
	c.lastWarn = now
	fields := []zap.Field{
		zap.String("socket", c.socketPath),
		zap.Int("failed_attempts", c.failures),
		zap.Error(err),
	}
	if c.snapshot.Load() != nil {
		c.logger.Warn("Cannot list pod resources from the kubelet; GPUs keep the pods they were last known to have", fields...)
	} else {
		c.logger.Warn("Cannot list pod resources from the kubelet; GPUs are not attributed to pods until it answers", fields...)
	}
}

func buildSnapshot(resp *podresourcesapi.ListPodResourcesResponse) *snapshot {
	byDevice := make(map[string][]Pod)
	for _, pr := range resp.GetPodResources() {
		for _, ctr := range pr.GetContainers() {
			pod := Pod{Name: pr.GetName(), Namespace: pr.GetNamespace(), Container: ctr.GetName()}
			for _, dev := range ctr.GetDevices() {
				if !strings.HasPrefix(dev.GetResourceName(), resourcePrefix) {
					continue
				}
				for _, id := range dev.GetDeviceIds() {
					if id = normalizeDeviceID(id); id != "" {
						byDevice[id] = append(byDevice[id], pod)
					}
				}
			}
		}
	}
	for id, pods := range byDevice {
		slices.SortFunc(pods, comparePods)
		// A container holding several replicas of one GPU appears once.
		byDevice[id] = slices.Clip(slices.Compact(pods))
	}
	return &snapshot{byDevice: byDevice}
}

func comparePods(a, b Pod) int {
	return cmp.Or(
		strings.Compare(a.Namespace, b.Namespace),
		strings.Compare(a.Name, b.Name),
		strings.Compare(a.Container, b.Container),
	)
}

// normalizeDeviceID removes the replica suffix that device plugins sharing a
// GPU (time-slicing, MPS) append to the GPU's UUID to advertise it several
// times: "GPU-<uuid>::<n>" becomes "GPU-<uuid>".
func normalizeDeviceID(id string) string {
	i := strings.LastIndex(id, "::")
	if i < 0 || i+2 == len(id) {
		return id
	}
	for _, c := range id[i+2:] {
		if c < '0' || c > '9' {
			return id
		}
	}
	return id[:i]
}

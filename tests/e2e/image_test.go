// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.yaml.in/yaml/v3"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// The image's contract with the Helm chart: the collector reads its
// configuration from this path (the chart mounts its ConfigMap there).
const (
	imageConfigPath = "/etc/otelcol-llmops/config.yaml"
	imageConfigDir  = "/etc/otelcol-llmops"
	imageUser       = "10001:10001"
	imageBinary     = "/usr/bin/otelcol-llmops"
	// Where the NVIDIA container runtime puts the driver's NVML library in a
	// Debian-based image, and where the loader finds it by its soname.
	driverNVMLPath = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
)

// TestImageDefinitionsAgree keeps deploy/image/Dockerfile (for registries)
// and deploy/image/Containerfile (`make image`) building the same runtime
// image: identical instructions from ENV down, the same build arguments,
// the version of builder-config.yaml, the chart's configuration path and a
// non-root user that /etc/passwd names. It needs no podman.
func TestImageDefinitionsAgree(t *testing.T) {
	root := harness.RepoRoot(t)
	docker := finalStage(t, filepath.Join(root, "deploy", "image", "Dockerfile"))
	local := finalStage(t, filepath.Join(root, "deploy", "image", "Containerfile"))

	tail := func(stage []string) []string {
		for i, ins := range stage {
			if strings.HasPrefix(ins, "ENV ") {
				return stage[i:]
			}
		}
		t.Fatalf("no ENV in the runtime stage: %q", stage)
		return nil
	}
	if d, l := tail(docker), tail(local); strings.Join(d, "\n") != strings.Join(l, "\n") {
		t.Errorf("runtime stages differ from ENV down:\nDockerfile:\n%s\nContainerfile:\n%s", strings.Join(d, "\n"), strings.Join(l, "\n"))
	}
	args := func(stage []string) []string {
		var out []string
		for _, ins := range stage {
			if strings.HasPrefix(ins, "ARG ") {
				out = append(out, ins)
			}
		}
		sort.Strings(out)
		return out
	}
	if d, l := args(docker), args(local); strings.Join(d, "\n") != strings.Join(l, "\n") {
		t.Errorf("runtime stage ARGs differ: Dockerfile %q, Containerfile %q", d, l)
	}
	if want := "ARG VERSION=" + distVersion(t); !hasString(args(docker), want) {
		t.Errorf("runtime stage lacks %q (builder-config.yaml dist.version): %q", want, args(docker))
	}
	for _, want := range []string{
		"USER " + imageUser,
		fmt.Sprintf(`ENTRYPOINT ["%s", "--config", "%s"]`, imageBinary, imageConfigPath),
		"COPY config.yaml " + imageConfigPath,
	} {
		if !hasString(local, want) {
			t.Errorf("Containerfile lacks %q", want)
		}
	}
	passwd, err := os.ReadFile(filepath.Join(root, "deploy", "image", "passwd"))
	if err != nil {
		t.Fatal(err)
	}
	uid, gid, _ := strings.Cut(imageUser, ":")
	if !strings.Contains(string(passwd), ":"+uid+":"+gid+":") {
		t.Errorf("deploy/image/passwd has no user %s:\n%s", imageUser, passwd)
	}
}

// TestImage runs the image `make image` built: its component list, the
// chart's rendered configuration through `validate`, and the agent on the
// default configuration with the fake NVML library mounted where the NVIDIA
// runtime puts the driver's, scraping the engine replay server and sending
// to a backend on loopback.
func TestImage(t *testing.T) {
	harness.Podman(t)
	image := harness.Image(t)
	info := inspectImage(t, image)
	t.Logf("image %s: %d bytes (%.1f MB), built %s", image, info.Size, float64(info.Size)/1e6, info.Created.Format(time.RFC3339))
	if got, want := info.Config.Labels[binaryLabel], fileSHA256(t, harness.Binary(t)); got != want {
		t.Fatalf("image %s holds another binary than %s (label %s=%q, binary %s): run `make image`",
			image, harness.Binary(t), binaryLabel, got, want)
	}
	if info.Config.User != imageUser {
		t.Errorf("image user %q, want %q", info.Config.User, imageUser)
	}
	if want := []string{imageBinary, "--config", imageConfigPath}; strings.Join(info.Config.Entrypoint, " ") != strings.Join(want, " ") {
		t.Errorf("entrypoint %q, want %q", info.Config.Entrypoint, want)
	}
	for _, want := range []string{"NVIDIA_DRIVER_CAPABILITIES=utility", "NVIDIA_VISIBLE_DEVICES=all"} {
		if !hasString(info.Config.Env, want) {
			t.Errorf("image environment lacks %s: %q", want, info.Config.Env)
		}
	}
	if v := info.Config.Labels["org.opencontainers.image.version"]; v != distVersion(t) {
		t.Errorf("label org.opencontainers.image.version %q, want %q", v, distVersion(t))
	}

	t.Run("components", func(t *testing.T) {
		out := harness.RunContainer(t, "components", []string{"--entrypoint", imageBinary}, image, "components")
		var listed map[string]any
		if err := yaml.Unmarshal(out, &listed); err != nil {
			t.Fatalf("`components` output is not YAML: %v\n%s", err, out)
		}
		for kind, want := range wantComponents {
			got := map[string]bool{}
			entries, _ := listed[kind].([]any)
			for _, e := range entries {
				if m, ok := e.(map[string]any); ok {
					if name, ok := m["name"].(string); ok {
						got[name] = true
					}
				}
			}
			for _, name := range want {
				if !got[name] {
					t.Errorf("%s: %q missing from the image's `components`", kind, name)
				}
			}
		}
	})

	t.Run("validate", func(t *testing.T) {
		configs := chartConfigs(t)
		if len(configs) == 0 {
			// TODO(issue 16): the chart has not landed; validate its
			// rendered configuration here once deploy/manifests exists.
			t.Logf("no rendered chart in deploy/manifests: validating the image's own %s (distro/config.yaml)", imageConfigPath)
			harness.RunContainer(t, "validate-default", nil, image, "validate")
			return
		}
		for _, c := range configs {
			t.Run(c.name, func(t *testing.T) {
				run := []string{"-v", c.path + ":" + imageConfigPath + ":ro"}
				for _, e := range c.env {
					run = append(run, "-e", e)
				}
				// The entrypoint's --config is the mounted file, as in the pod.
				harness.RunContainer(t, "validate", run, image, "validate")
			})
		}
	})

	t.Run("agent", func(t *testing.T) { testImageAgent(t, image) })
}

func testImageAgent(t *testing.T, image string) {
	root := harness.RepoRoot(t)
	backend := harness.StartBackend(t)
	engine := harness.StartEngineReplay(t, "-engine", "vllm")

	// Files the container reads as uid 10001: a bind mount needs no access
	// to its host parents, but a mounted directory must itself be readable.
	dir := t.TempDir()
	overlay := filepath.Join(dir, "overlay.yaml")
	// Merged over the image's default configuration: shorter intervals, and
	// the metrics pipeline's output to the backend.
	if err := os.WriteFile(overlay, []byte(fmt.Sprintf(`receivers:
  nvml:
    collection_interval: 1s
  llmengine:
    collection_interval: 1s
exporters:
  otlp:
    endpoint: %s
    tls:
      insecure: true
service:
  pipelines:
    metrics:
      exporters: [otlp]
`, backend.GRPCEndpoint)), 0o644); err != nil {
		t.Fatal(err)
	}
	proc := fakeProc(t)
	if err := os.Chmod(proc, 0o755); err != nil {
		t.Fatal(err)
	}
	scenario := filepath.Join(root, "tests", "fakenvml", "scenarios", "e2e.scenario")
	health := harness.FreePort(t)
	c := harness.StartContainer(t, harness.ContainerOptions{
		Label: "agent",
		Image: image,
		RunArgs: []string{
			// As the chart runs it: read-only root filesystem (podman puts
			// a tmpfs on /tmp, where the default state directory is).
			"--read-only",
			// The driver's library where the NVIDIA runtime mounts it; the
			// default library_path (the soname) must find it there.
			"-v", harness.FakeNVML(t) + ":" + driverNVMLPath + ":ro",
			"-v", scenario + ":/etc/fakenvml/e2e.scenario:ro",
			"-e", "FAKE_NVML_SCENARIO=/etc/fakenvml/e2e.scenario",
			"-e", "FAKE_NVML_TIME_SCALE=10",
			// The host's /proc, as the DaemonSet mounts it.
			"-v", proc + ":/host/proc:ro",
			"-e", "LLMOPS_PROC_ROOT=/host/proc",
			"-v", overlay + ":/etc/otelcol-llmops-test/overlay.yaml:ro",
			"-e", "LLMOPS_ENGINE_ENDPOINT=" + engine + "/metrics",
			"-e", fmt.Sprintf("LLMOPS_HEALTH_ENDPOINT=127.0.0.1:%d", health),
			"-e", fmt.Sprintf("LLMOPS_TELEMETRY_PORT=%d", harness.FreePort(t)),
			"-e", fmt.Sprintf("LLMOPS_OTLP_GRPC_ENDPOINT=127.0.0.1:%d", harness.FreePort(t)),
			"-e", fmt.Sprintf("LLMOPS_OTLP_HTTP_ENDPOINT=127.0.0.1:%d", harness.FreePort(t)),
		},
		Args:       []string{"--config", "/etc/otelcol-llmops-test/overlay.yaml"},
		HealthPort: health,
	})

	harness.Eventually(t, 90*time.Second, func() (bool, string) {
		gpu, attributed, vllm := false, false, false
		m := backend.Metrics(t)
		for i := 0; i < m.ResourceMetrics().Len(); i++ {
			rm := m.ResourceMetrics().At(i)
			res := rm.Resource().Attributes()
			if str(res, "llm.engine.name") == "vllm" {
				vllm = true
			}
			if str(res, "hw.id") != fakeGPU0 {
				continue
			}
			eachPoint(rm, func(mt pmetric.Metric, attrs pcommon.Map) {
				if mt.Name() == spec.HwGpuMemoryUsage {
					gpu = true
				}
				if pid, ok := attrs.Get("process.pid"); ok && mt.Name() == spec.ProcessGpuMemoryUsage &&
					pid.Int() == leakingPid && str(attrs, "container.id") == e2eCtrID {
					attributed = true
				}
			})
		}
		return gpu && attributed && vllm, fmt.Sprintf("GPU %s memory: %v, pid %d attributed to its container through /host/proc: %v, vllm engine metrics: %v",
			fakeGPU0, gpu, leakingPid, attributed, vllm)
	})
	// Measure once the agent has run a few more collection cycles.
	harness.Eventually(t, 60*time.Second, func() (bool, string) {
		n := 0
		m := backend.Metrics(t)
		for i := 0; i < m.ResourceMetrics().Len(); i++ {
			if rm := m.ResourceMetrics().At(i); str(rm.Resource().Attributes(), "hw.id") == fakeGPU0 {
				eachPoint(rm, func(mt pmetric.Metric, _ pcommon.Map) {
					if mt.Name() == spec.HwGpuMemoryUsage {
						n++
					}
				})
			}
		}
		return n >= 10, fmt.Sprintf("%d %s points of %s", n, spec.HwGpuMemoryUsage, fakeGPU0)
	})
	// The file-backed part is the binary's pages: the page cache charges
	// them to whichever cgroup read them first, so the container's own
	// memory use (podman stats) may leave them out.
	t.Logf("agent in the container: %s; podman stats: %s", c.Memory(t), c.Stats())
}

// finalStage returns the instructions of a Dockerfile's last stage, one per
// instruction (continuation lines joined, comments dropped).
func finalStage(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	var all []string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSpace(strings.TrimSuffix(line, `\`)) + " ")
			continue
		}
		cur.WriteString(line)
		all = append(all, cur.String())
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	last := -1
	for i, ins := range all {
		if strings.HasPrefix(ins, "FROM ") {
			last = i
		}
	}
	if last < 0 {
		t.Fatalf("%s: no FROM", path)
	}
	return all[last+1:]
}

// binaryLabel is the sha256 of the collector binary in the image (set by
// deploy/image/build.sh).
const binaryLabel = "io.llmops.binary.sha256"

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func distVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(harness.RepoRoot(t), "builder-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Dist struct {
			Version string `yaml:"version"`
		} `yaml:"dist"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil || cfg.Dist.Version == "" {
		t.Fatalf("builder-config.yaml: no dist.version (%v)", err)
	}
	return cfg.Dist.Version
}

func hasString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

type imageInfo struct {
	Size    int64     `json:"Size"`
	Created time.Time `json:"Created"`
	Config  struct {
		User       string            `json:"User"`
		Env        []string          `json:"Env"`
		Entrypoint []string          `json:"Entrypoint"`
		Labels     map[string]string `json:"Labels"`
	} `json:"Config"`
}

func inspectImage(t *testing.T, image string) imageInfo {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), harness.Podman(t), "image", "inspect", image).Output()
	if err != nil {
		t.Fatalf("podman image inspect %s: %v", image, err)
	}
	var infos []imageInfo
	if err := json.Unmarshal(out, &infos); err != nil || len(infos) != 1 {
		t.Fatalf("podman image inspect %s: %v\n%s", image, err, out)
	}
	return infos[0]
}

// chartConfig is one collector configuration of the rendered chart, as
// the workload that mounts it at the image's configuration path runs it.
type chartConfig struct {
	name string
	path string   // the configuration, written to a file
	env  []string // the container's environment, downward API filled in
}

// k8sObject holds the fields of the rendered manifests this test reads.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Template struct {
			Spec struct {
				Containers []struct {
					Name    string   `yaml:"name"`
					Command []string `yaml:"command"`
					Args    []string `yaml:"args"`
					Env     []struct {
						Name      string `yaml:"name"`
						Value     string `yaml:"value"`
						ValueFrom struct {
							FieldRef struct {
								FieldPath string `yaml:"fieldPath"`
							} `yaml:"fieldRef"`
						} `yaml:"valueFrom"`
					} `yaml:"env"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
						SubPath   string `yaml:"subPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name      string `yaml:"name"`
					ConfigMap struct {
						Name string `yaml:"name"`
					} `yaml:"configMap"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// chartConfigs returns the configurations that the workloads of
// deploy/manifests (the chart rendered with its defaults) mount at the
// image's configuration path, or none before the chart has landed. A
// workload running the collector with its configuration anywhere else is
// an error: image and chart agree on that path.
func chartConfigs(t *testing.T) []chartConfig {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(harness.RepoRoot(t), "deploy", "manifests", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []k8sObject
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(f)
		for {
			var o k8sObject
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				_ = f.Close()
				t.Fatalf("%s: %v", path, err)
			}
			objs = append(objs, o)
		}
		_ = f.Close()
	}
	configMaps := map[string]map[string]string{}
	for _, o := range objs {
		if o.Kind == "ConfigMap" {
			configMaps[o.Metadata.Name] = o.Data
		}
	}
	var out []chartConfig
	dir := t.TempDir()
	for _, o := range objs {
		if o.Kind != "DaemonSet" && o.Kind != "Deployment" {
			continue
		}
		pod := o.Spec.Template.Spec
		volumes := map[string]string{}
		for _, v := range pod.Volumes {
			if v.ConfigMap.Name != "" {
				volumes[v.Name] = v.ConfigMap.Name
			}
		}
		for _, ctr := range pod.Containers {
			if len(ctr.Command) == 0 && hasString(ctr.Args, "--config") {
				t.Errorf("%s %s: args %q add a --config to the image's %s, merging both: mount the configuration at that path instead",
					o.Kind, o.Metadata.Name, ctr.Args, imageConfigPath)
			}
			var data, key string
			for _, m := range ctr.VolumeMounts {
				cm, ok := volumes[m.Name]
				if !ok {
					continue
				}
				switch {
				case m.MountPath == imageConfigDir && m.SubPath == "":
					data, key = configMaps[cm]["config.yaml"], cm+"/config.yaml"
				case m.MountPath == imageConfigPath && m.SubPath != "":
					data, key = configMaps[cm][m.SubPath], cm+"/"+m.SubPath
				}
			}
			if key == "" {
				t.Errorf("%s %s container %s mounts no ConfigMap at %s (or %s with subPath), where the image reads its configuration",
					o.Kind, o.Metadata.Name, ctr.Name, imageConfigDir, imageConfigPath)
				continue
			}
			if data == "" {
				t.Errorf("%s %s: ConfigMap key %s is missing or empty", o.Kind, o.Metadata.Name, key)
				continue
			}
			var env []string
			for _, e := range ctr.Env {
				switch {
				case e.Value != "":
					env = append(env, e.Name+"="+e.Value)
				case e.ValueFrom.FieldRef.FieldPath == "spec.nodeName":
					env = append(env, e.Name+"=gpu-node-7")
				case strings.HasPrefix(e.ValueFrom.FieldRef.FieldPath, "status.") && strings.HasSuffix(e.ValueFrom.FieldRef.FieldPath, "IP"):
					env = append(env, e.Name+"=127.0.0.1")
				case e.ValueFrom.FieldRef.FieldPath != "":
					env = append(env, e.Name+"=placeholder")
				}
			}
			name := strings.ToLower(o.Kind) + "-" + o.Metadata.Name + "-" + ctr.Name
			path := filepath.Join(dir, name+".yaml")
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			out = append(out, chartConfig{name: name, path: path, env: env})
		}
	}
	return out
}

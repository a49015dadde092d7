// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package helmtest renders the chart in deploy/helm/otelcol-llmops with the
// pinned Helm binary and reads what it rendered. Its tests lint the chart,
// check the invariants of every rendering of the ci/ values files and keep
// deploy/manifests in sync; the end-to-end tests (tests/e2e) use it to
// validate the rendered collector configurations with the built binary.
package helmtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Release and Namespace are what deploy/manifests is rendered with
// (`make manifests`).
const (
	Release   = "otelcol-llmops"
	Namespace = "otelcol-llmops"
)

// HelmEnv names the environment variable that points at a Helm binary other
// than the one `make tools-helm` installs.
const HelmEnv = "HELM"

// RepoRoot is the repository root (the directory holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the helmtest source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// ChartDir is the chart's directory.
func ChartDir(t testing.TB) string {
	return filepath.Join(RepoRoot(t), "deploy", "helm", "otelcol-llmops")
}

// ManifestPath is the checked-in rendering of the chart's defaults.
func ManifestPath(t testing.TB) string {
	return filepath.Join(RepoRoot(t), "deploy", "manifests", "otelcol-llmops.yaml")
}

var helmVersionLine = regexp.MustCompile(`(?m)^HELM_VERSION\s*:=\s*(\S+)\s*$`)

// HelmVersion is the version the Makefile pins (HELM_VERSION).
func HelmVersion(t testing.TB) string {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join(RepoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := helmVersionLine.FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no HELM_VERSION := line")
	}
	return string(m[1])
}

// HelmPath is where `make tools-helm` installs Helm: the cache outside the
// repository, keyed by version.
func HelmPath(t testing.TB) string {
	t.Helper()
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatalf("no XDG_CACHE_HOME and no home directory: %v", err)
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "otelcol-llmops", "tools", "helm-"+HelmVersion(t), "helm")
}

// Helm returns the Helm binary: $HELM, else the one `make tools-helm`
// installs. Without it the test is skipped, unless CI is set: there Helm is a
// requirement (`make test` installs it first), and a skip would hide that the
// chart was never tested.
func Helm(t testing.TB) string {
	t.Helper()
	path := os.Getenv(HelmEnv)
	if path == "" {
		path = HelmPath(t)
	}
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("helm not found at %s (%v): run `make tools-helm` (or `make test`, which runs it first), or set %s", path, err, HelmEnv)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

// RunHelm runs helm with args in the repository root and returns its
// standard output, or its error with the standard error in it.
func RunHelm(t testing.TB, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), Helm(t), args...)
	cmd.Dir = RepoRoot(t)
	// No repositories, plugins or registries of the user's: the chart has no
	// dependencies, and nothing is fetched.
	dir := t.TempDir()
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(dir, "config"),
		"HELM_CACHE_HOME="+filepath.Join(dir, "cache"),
		"HELM_DATA_HOME="+filepath.Join(dir, "data"),
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("helm %s: %w\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return out, nil
}

// Template renders the chart as `make manifests` does, with extra helm
// arguments (-f FILE, --set …, --api-versions …).
func Template(t testing.TB, extra ...string) ([]byte, error) {
	t.Helper()
	args := append([]string{"template", Release, "deploy/helm/otelcol-llmops", "--namespace", Namespace}, extra...)
	return RunHelm(t, args...)
}

// MustTemplate is Template failing the test on an error.
func MustTemplate(t testing.TB, extra ...string) []byte {
	t.Helper()
	out, err := Template(t, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ValuesFiles are the chart's ci/*.yaml values files, relative to the
// repository root.
func ValuesFiles(t testing.TB) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(ChartDir(t), "ci", "*.yaml"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no values files in %s/ci: %v", ChartDir(t), err)
	}
	sort.Strings(matches)
	rel := make([]string, len(matches))
	for i, m := range matches {
		r, err := filepath.Rel(RepoRoot(t), m)
		if err != nil {
			t.Fatal(err)
		}
		rel[i] = r
	}
	return rel
}

// Object is one rendered Kubernetes object.
type Object map[string]any

// Kind is the object's kind.
func (o Object) Kind() string { s, _ := o["kind"].(string); return s }

// Name is the object's metadata.name.
func (o Object) Name() string { s, _ := Get(o, "metadata", "name").(string); return s }

// Documents parses a multi-document rendering; empty documents are left out.
func Documents(t testing.TB, rendered []byte) []Object {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(rendered))
	var objs []Object
	for i := 0; ; i++ {
		// Into a plain map: yaml.v3 would make every nested map an Object
		// too.
		var o map[string]any
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("rendered document %d is not YAML: %v", i, err)
		}
		if o != nil {
			objs = append(objs, Object(o))
		}
	}
	return objs
}

// Find returns the objects of a kind.
func Find(objs []Object, kind string) []Object {
	var out []Object
	for _, o := range objs {
		if o.Kind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// Get walks maps by key and lists by int index; nil when a step is missing.
func Get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				if o, ok2 := v.(Object); ok2 {
					m = o
				} else {
					return nil
				}
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k < 0 || k >= len(l) {
				return nil
			}
			v = l[k]
		default:
			return nil
		}
	}
	return v
}

// CollectorConfigs returns the collector configurations of the rendering:
// the config.yaml of each ConfigMap, by ConfigMap name.
func CollectorConfigs(t testing.TB, objs []Object) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, cm := range Find(objs, "ConfigMap") {
		if cfg, ok := Get(cm, "data", "config.yaml").(string); ok {
			out[cm.Name()] = cfg
		}
	}
	if len(out) == 0 {
		t.Fatal("no ConfigMap with a config.yaml rendered")
	}
	return out
}

// ConfigEnv is what the rendered collector configurations read from the
// environment (set from the downward API in the pods), with values for a run
// outside Kubernetes.
func ConfigEnv() []string {
	return []string{"K8S_NODE_NAME=gpu-node-7", "K8S_POD_IP=127.0.0.1"}
}

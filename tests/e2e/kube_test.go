// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.yaml.in/yaml/v3"

	"github.com/llmops-otel/otelcol-llmops/deploy/helmtest"
	"github.com/llmops-otel/otelcol-llmops/tests/harness"
)

// The tests of this file run the chart against a real Kubernetes API server
// (harness.StartKube: etcd and kube-apiserver on loopback, no controllers,
// no kubelet).

// kubeAgentNode is the agent's node in the discovery test. No Node object
// is needed for a pod bound to it by spec.nodeName.
const kubeAgentNode = "gpu-node-1"

// kubeRelease is the Helm release the tests install.
const kubeRelease = "llmops"

// kubeHelm runs helm against the API server (admin kubeconfig), with its
// cache, configuration and data in a temporary directory.
func kubeHelm(t *testing.T, k *harness.Kube, args ...string) string {
	t.Helper()
	home := t.TempDir()
	cmd := exec.CommandContext(context.Background(), helmtest.Helm(t), append(args, "--kubeconfig", k.Kubeconfig)...)
	cmd.Dir = harness.RepoRoot(t)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"HOME="+home,
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

func kindsOf(t *testing.T, rendered string) []string {
	t.Helper()
	var kinds []string
	for _, o := range helmtest.Documents(t, []byte(rendered)) {
		kinds = append(kinds, o.Kind())
	}
	return kinds
}

// TestKubeChartPassesServerDryRun renders the chart with each of its
// ci/*.yaml values files (the defaults among them) for this server's
// version, and applies each rendering with a server-side dry run and strict
// field validation: the API server itself, not a copy of its schema, finds
// every object valid, with no unknown or duplicate field. The Prometheus
// Operator's kinds are rendered only where their CRDs are installed, so
// here they are left out, as on a cluster without the operator.
func TestKubeChartPassesServerDryRun(t *testing.T) {
	k := harness.StartKube(t)
	const ns = "llmops"
	k.Kubectl(t, "create", "namespace", ns)
	var first string
	for _, values := range helmtest.ValuesFiles(t) {
		rendered := kubeHelm(t, k, "template", kubeRelease, "deploy/helm/otelcol-llmops", "--namespace", ns, "--kube-version", k.Version, "-f", values)
		if first == "" {
			first = rendered
		}
		t.Run(filepath.Base(values), func(t *testing.T) {
			start := time.Now()
			out := k.KubectlInput(t, rendered, "apply", "--dry-run=server", "--validate=strict", "-f", "-")
			t.Logf("%v: server dry run in %s:\n%s", kindsOf(t, rendered), time.Since(start).Round(time.Millisecond), out)
		})
	}
	// Where the Prometheus Operator is installed, the chart adds its
	// ServiceMonitor, PodMonitor and PrometheusRule: the same again with
	// their CRDs (reduced to an open schema: the server checks kind,
	// version, metadata and scope, not the operator's fields).
	k.KubectlInput(t, kubePrometheusOperatorCRDs, "apply", "--validate=strict", "-f", "-")
	k.Kubectl(t, "wait", "--for=condition=Established", "--timeout=30s", "crd/servicemonitors.monitoring.coreos.com", "crd/podmonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com")
	operatorKinds := map[string]bool{}
	for _, values := range helmtest.ValuesFiles(t) {
		rendered := kubeHelm(t, k, "template", kubeRelease, "deploy/helm/otelcol-llmops", "--namespace", ns, "--kube-version", k.Version, "-f", values,
			"--api-versions", "monitoring.coreos.com/v1/ServiceMonitor", "--api-versions", "monitoring.coreos.com/v1/PodMonitor", "--api-versions", "monitoring.coreos.com/v1/PrometheusRule")
		for _, kind := range kindsOf(t, rendered) {
			if kind == "ServiceMonitor" || kind == "PodMonitor" || kind == "PrometheusRule" {
				operatorKinds[kind] = true
			}
		}
		t.Run(filepath.Base(values)+"+prometheus-operator", func(t *testing.T) {
			out := k.KubectlInput(t, rendered, "apply", "--dry-run=server", "--validate=strict", "-f", "-")
			t.Logf("%v: server dry run:\n%s", kindsOf(t, rendered), out)
		})
	}
	if !operatorKinds["ServiceMonitor"] || !operatorKinds["PrometheusRule"] {
		t.Errorf("with the operator's API versions the chart rendered only %v of ServiceMonitor and PrometheusRule", operatorKinds)
	}

	// Strict validation is the server's: an unknown field is an error, not
	// a warning, and an error fails the apply.
	bad := strings.Replace(first, "\n  template:\n", "\n  template:\n    spek: {}\n", 1)
	if bad == first {
		t.Fatal("no pod template in the rendered chart")
	}
	if _, errOut, err := k.TryKubectl(bad, "apply", "--dry-run=server", "--validate=strict", "-f", "-"); err == nil || !strings.Contains(errOut, "spek") {
		t.Errorf("a misspelt field passed strict validation: %v\n%s", err, errOut)
	}
	// Dry runs create nothing.
	if got := k.Kubectl(t, "get", "daemonsets,deployments,services,serviceaccounts,configmaps", "-n", ns, "-o", "name"); strings.Contains(got, kubeRelease+"-") {
		t.Errorf("the dry runs created objects:\n%s", got)
	}
}

// kubePrometheusOperatorCRDs are the Prometheus Operator's CRDs that the
// chart renders objects of, with an open schema.
const kubePrometheusOperatorCRDs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: servicemonitors.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names:
    kind: ServiceMonitor
    listKind: ServiceMonitorList
    plural: servicemonitors
    singular: servicemonitor
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: podmonitors.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names:
    kind: PodMonitor
    listKind: PodMonitorList
    plural: podmonitors
    singular: podmonitor
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: prometheusrules.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names:
    kind: PrometheusRule
    listKind: PrometheusRuleList
    plural: prometheusrules
    singular: prometheusrule
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
`

// kubeDeployment is what `helm install` deployed: where the agents'
// ServiceAccount is, and the collector configuration they run.
type kubeDeployment struct {
	namespace      string
	serviceAccount string
	config         string
}

// kubeInstall installs the chart with its default values into namespace ns
// (`helm install`, no --wait: nothing here would run its pods), checks that
// every object of the release is in the API server, and returns what the
// agents run with.
func kubeInstall(t *testing.T, k *harness.Kube, ns string) kubeDeployment {
	t.Helper()
	start := time.Now()
	kubeHelm(t, k, "install", kubeRelease, "deploy/helm/otelcol-llmops", "--namespace", ns, "--create-namespace")
	t.Logf("helm install in %s", time.Since(start).Round(time.Millisecond))
	manifest := helmtest.Documents(t, []byte(kubeHelm(t, k, "get", "manifest", kubeRelease, "--namespace", ns)))
	for _, o := range manifest {
		args := []string{"get", o.Kind(), o.Name(), "-o", "name"}
		if _, ok := helmtest.Get(o, "metadata", "namespace").(string); ok {
			args = append(args, "-n", ns)
		}
		if _, errOut, err := k.TryKubectl("", args...); err != nil {
			t.Errorf("%s %s of the release is not in the API server: %s", o.Kind(), o.Name(), errOut)
		}
	}
	ds := helmtest.Find(manifest, "DaemonSet")
	if len(ds) != 1 {
		t.Fatalf("the release has %d DaemonSets, want 1", len(ds))
	}
	d := kubeDeployment{namespace: ns}
	d.serviceAccount, _ = helmtest.Get(ds[0], "spec", "template", "spec", "serviceAccountName").(string)
	if d.serviceAccount == "" {
		t.Fatal("the DaemonSet names no serviceAccountName")
	}
	// The configuration is the config.yaml of the ConfigMap the DaemonSet
	// mounts.
	configs := helmtest.CollectorConfigs(t, manifest)
	vols, _ := helmtest.Get(ds[0], "spec", "template", "spec", "volumes").([]any)
	for _, v := range vols {
		if name, ok := helmtest.Get(v, "configMap", "name").(string); ok && configs[name] != "" {
			d.config = configs[name]
		}
	}
	if d.config == "" {
		t.Fatalf("the DaemonSet mounts none of the ConfigMaps with a collector configuration (%d)", len(configs))
	}
	return d
}

// TestKubeChartInstall installs the chart for real and proves, against the
// API server, what the agents' ServiceAccount may do, then that an agent
// running the chart's configuration with that ServiceAccount's token
// discovers the engine pods of its node.
func TestKubeChartInstall(t *testing.T) {
	k := harness.StartKube(t)
	d := kubeInstall(t, k, "llmops")
	t.Run("rbac", func(t *testing.T) { kubeCheckRBAC(t, k, d) })
	t.Run("discovery", func(t *testing.T) { kubeDiscovery(t, k, d) })
}

// kubeCheckRBAC: the ServiceAccount reads pods (what k8s_observer lists and
// watches) and nodes, anywhere, and may do nothing else.
func kubeCheckRBAC(t *testing.T, k *harness.Kube, d kubeDeployment) {
	sa := "system:serviceaccount:" + d.namespace + ":" + d.serviceAccount
	for _, c := range []struct {
		verb, resource string // resource: and more can-i arguments
		want           bool
	}{
		{"list", "pods", true},
		{"watch", "pods", true},
		{"get", "pods", true},
		{"list", "pods -A", true},
		{"watch", "pods -A", true},
		{"get", "nodes", true},
		{"list", "nodes", true},
		{"create", "pods", false},
		{"delete", "pods", false},
		{"patch", "pods", false},
		{"update", "pods --subresource=status", false},
		{"create", "pods --subresource=exec", false},
		{"get", "pods --subresource=log", false},
		{"create", "pods --subresource=eviction", false},
		{"get", "secrets", false},
		{"list", "secrets -A", false},
		{"get", "configmaps", false},
		{"create", "serviceaccounts --subresource=token", false},
		{"list", "deployments.apps", false},
		{"patch", "nodes", false},
		{"get", "nodes --subresource=proxy", false},
		{"create", "clusterrolebindings.rbac.authorization.k8s.io", false},
		{"impersonate", "users", false},
		{"*", "*", false},
	} {
		args := append([]string{"auth", "can-i", c.verb}, strings.Fields(c.resource)...)
		out, errOut, err := k.TryKubectl("", append(args, "--as="+sa)...)
		answer := strings.TrimSpace(out)
		if answer != "yes" && answer != "no" {
			t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		}
		if got := answer == "yes"; got != c.want {
			t.Errorf("%s may %s %s: %v, want %v", sa, c.verb, c.resource, got, c.want)
		}
	}
	// Whatever else a rule granted would show in the subject's rule list:
	// beyond get/list/watch on pods and nodes, only what every authenticated
	// user has (its own access reviews, non-resource discovery URLs).
	out := k.Kubectl(t, "auth", "can-i", "--list", "-n", d.namespace, "--as="+sa)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	seen := map[string]bool{}
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "[") {
			continue // a non-resource URL (/api, /healthz, …)
		}
		resource, verbs := f[0], line[strings.LastIndex(line, "["):]
		switch {
		case strings.HasPrefix(resource, "selfsubject"):
		case resource == "pods" || resource == "nodes":
			seen[resource] = true
			if verbs != "[get list watch]" {
				t.Errorf("%s may %s %s, want [get list watch]", sa, verbs, resource)
			}
		default:
			t.Errorf("%s holds a rule on %s %s, beyond what k8s_observer needs", sa, resource, verbs)
		}
	}
	if !seen["pods"] {
		t.Errorf("no rule on pods in:\n%s", out)
	}
	t.Logf("rules of %s:\n%s", sa, out)
}

// kubeAgentOverlay is a second configuration merged over the chart's (maps
// merge, lists replace) for a run outside the cluster: the ports the chart
// binds on the pod IP moved to free loopback ones, k8s_observer
// authenticating with a kubeconfig (the ServiceAccount's token) instead of
// the in-cluster token path, short collection intervals on each discovered
// receiver, and the metrics pipeline exporting to the backend as well.
func kubeAgentOverlay(t *testing.T, chartConfig string, backend *harness.Backend, health int) string {
	t.Helper()
	var cfg struct {
		Receivers map[string]struct {
			Receivers map[string]any `yaml:"receivers"`
		} `yaml:"receivers"`
		Service struct {
			Pipelines map[string]struct {
				Exporters []string `yaml:"exporters"`
			} `yaml:"pipelines"`
		} `yaml:"service"`
	}
	if err := yaml.Unmarshal([]byte(chartConfig), &cfg); err != nil {
		t.Fatalf("the chart's collector configuration is not YAML: %v", err)
	}
	creators := map[string]any{}
	for name, rc := range cfg.Receivers {
		if name != "receiver_creator" && !strings.HasPrefix(name, "receiver_creator/") {
			continue
		}
		subs := map[string]any{}
		for sub := range rc.Receivers {
			subs[sub] = map[string]any{"config": map[string]any{"collection_interval": "250ms", "timeout": "200ms"}}
		}
		creators[name] = map[string]any{"receivers": subs}
	}
	if len(creators) == 0 {
		t.Fatalf("no receiver_creator in the chart's configuration:\n%s", chartConfig)
	}
	metrics, ok := cfg.Service.Pipelines["metrics"]
	if !ok {
		t.Fatalf("no metrics pipeline in the chart's configuration")
	}
	receivers := map[string]any{
		"otlp": map[string]any{"protocols": map[string]any{
			"grpc": map[string]any{"endpoint": fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))},
			"http": map[string]any{"endpoint": fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))},
		}},
	}
	for name, rc := range creators {
		receivers[name] = rc
	}
	overlay := map[string]any{
		"extensions": map[string]any{
			"health_check": map[string]any{"endpoint": fmt.Sprintf("127.0.0.1:%d", health)},
			"k8s_observer": map[string]any{"auth_type": "kubeConfig"},
		},
		"receivers": receivers,
		"exporters": map[string]any{"otlp/e2e": map[string]any{
			"endpoint": backend.GRPCEndpoint,
			"tls":      map[string]any{"insecure": true},
		}},
		"service": map[string]any{
			"pipelines": map[string]any{"metrics": map[string]any{"exporters": append(metrics.Exporters, "otlp/e2e")}},
			"telemetry": map[string]any{"metrics": map[string]any{"readers": []any{map[string]any{"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{
				"host": "127.0.0.1", "port": harness.FreePort(t),
			}}}}}}},
		},
	}
	b, err := yaml.Marshal(overlay)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// kubeEnginePod creates a vLLM pod bound to node whose container port
// "metrics" is the replay server's port, then writes its status as a kubelet
// would (Running, ready, podIP 127.0.0.1) through the status subresource.
// It returns the pod's UID.
func kubeEnginePod(t *testing.T, k *harness.Kube, ns, name, node, replayURL string) string {
	t.Helper()
	u, err := url.Parse(replayURL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || u.Hostname() != "127.0.0.1" {
		t.Fatalf("replay server at %s: not a loopback port", replayURL)
	}
	const image = "vllm/vllm-openai:v0.11.0"
	k.KubectlInput(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  labels:
    app.kubernetes.io/name: vllm
spec:
  nodeName: %s
  containers:
    - name: vllm
      image: %s
      ports:
        - name: metrics
          containerPort: %d
`, name, ns, node, image, port), "create", "--validate=strict", "-f", "-")
	now := time.Now().UTC().Format(time.RFC3339)
	status, err := json.Marshal(map[string]any{"status": map[string]any{
		"phase":     "Running",
		"podIP":     "127.0.0.1",
		"podIPs":    []any{map[string]any{"ip": "127.0.0.1"}},
		"startTime": now,
		"conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": now},
			map[string]any{"type": "ContainersReady", "status": "True", "lastTransitionTime": now},
		},
		"containerStatuses": []any{map[string]any{
			"name":         "vllm",
			"image":        image,
			"imageID":      "",
			"containerID":  fmt.Sprintf("containerd://%064x", port),
			"ready":        true,
			"started":      true,
			"restartCount": 0,
			"state":        map[string]any{"running": map[string]any{"startedAt": now}},
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	k.Kubectl(t, "patch", "pod", name, "-n", ns, "--subresource=status", "--type=merge", "-p", string(status))
	return strings.TrimSpace(k.Kubectl(t, "get", "pod", name, "-n", ns, "-o", "jsonpath={.metadata.uid}"))
}

// kubePodPoints counts the llm.engine.up points the backend holds for a pod;
// bad describes the first of them whose resource lacks the pod's namespace,
// the engine's name or the agent's node.
func kubePodPoints(m pmetric.Metrics, pod string) (n int, bad string) {
	const ns = "inference" // where the test deploys the engine pods
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		attrs := rm.Resource().Attributes()
		if str(attrs, "k8s.pod.name") != pod {
			continue
		}
		eachPoint(rm, func(mt pmetric.Metric, _ pcommon.Map) {
			if mt.Name() != "llm.engine.up" {
				return
			}
			n++
			if bad == "" && (str(attrs, "k8s.namespace.name") != ns || str(attrs, "llm.engine.name") != "vllm" || str(attrs, "k8s.node.name") != kubeAgentNode) {
				bad = fmt.Sprintf("%v", attrs.AsRaw())
			}
		})
	}
	return n, bad
}

// kubeDiscovery runs the built binary outside the cluster on the chart's
// configuration, with the agents' ServiceAccount token: a vLLM pod bound to
// the agent's node is discovered and scraped, its metrics arrive with the
// pod's name and namespace, a pod on another node is never scraped, and
// deleting the pod stops its scrape.
func kubeDiscovery(t *testing.T, k *harness.Kube, d kubeDeployment) {
	const ns = "inference"
	k.Kubectl(t, "create", "namespace", ns)
	backend := harness.StartBackend(t)
	kubeconfig := k.ServiceAccountKubeconfig(t, d.namespace, d.serviceAccount)
	health := harness.FreePort(t)
	dir := t.TempDir()
	chartCfg, overlay := filepath.Join(dir, "chart-config.yaml"), filepath.Join(dir, "overlay.yaml")
	if err := os.WriteFile(chartCfg, []byte(d.config), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(overlay, []byte(kubeAgentOverlay(t, d.config, backend, health)), 0o600); err != nil {
		t.Fatal(err)
	}
	agent := harness.StartCollector(t, harness.Options{
		Name:       "agent",
		ConfigPath: chartCfg,
		Args:       []string{"--config", overlay},
		HealthPort: health,
		Env: []string{
			"KUBECONFIG=" + kubeconfig,
			"K8S_NODE_NAME=" + kubeAgentNode,
			"K8S_POD_IP=127.0.0.1",
			"LLMOPS_STATE_DIR=" + t.TempDir(),
			"LLMOPS_PROFILE_DIR=" + t.TempDir(),
			"LLMOPS_PROC_ROOT=/proc",
			"LLMOPS_POD_RESOURCES_SOCKET=" + filepath.Join(dir, "no-kubelet.sock"),
		},
	})

	// Two engines on the agent's node (one to delete, and one that stays
	// and measures time in scrapes), one on another node.
	gone := harness.StartEngineReplay(t, "-engine", "vllm")
	stays := harness.StartEngineReplay(t, "-engine", "vllm")
	elsewhere := harness.StartEngineReplay(t, "-engine", "vllm")
	start := time.Now()
	goneUID := kubeEnginePod(t, k, ns, "vllm-0", kubeAgentNode, gone)
	kubeEnginePod(t, k, ns, "vllm-1", kubeAgentNode, stays)
	kubeEnginePod(t, k, ns, "vllm-elsewhere", "gpu-node-2", elsewhere)

	harness.Eventually(t, 60*time.Second, func() (bool, string) {
		m := backend.Metrics(t)
		n0, bad0 := kubePodPoints(m, "vllm-0")
		n1, bad1 := kubePodPoints(m, "vllm-1")
		if bad0+bad1 != "" {
			t.Fatalf("engine points without their pod's namespace, engine or node: %s%s", bad0, bad1)
		}
		return n0 >= 3 && n1 >= 3, fmt.Sprintf("llm.engine.up points: vllm-0 %d, vllm-1 %d", n0, n1)
	})
	t.Logf("both pods discovered and scraped %s after they were created", time.Since(start).Round(time.Millisecond))

	// With no kubelet a graceful delete never completes (the pod stays
	// Terminating, and running, as it would while its containers shut
	// down): delete it as the kubelet finally does, at once.
	k.Kubectl(t, "delete", "pod", "vllm-0", "-n", ns, "--grace-period=0", "--force")
	deleted := time.Now()
	harness.Eventually(t, 30*time.Second, func() (bool, string) {
		for _, line := range strings.Split(agent.Log(), "\n") {
			if strings.Contains(line, "stopping receiver") && strings.Contains(line, goneUID) {
				return true, ""
			}
		}
		return false, "no \"stopping receiver\" for pod vllm-0 (" + goneUID + ") in the agent's log"
	})
	t.Logf("the deleted pod's receiver stopped %s after the delete", time.Since(deleted).Round(time.Millisecond))

	// Time is counted in scrapes of the pod that stays (every 250ms, through
	// the same pipeline and its 1s batch): once it has 12 more points,
	// whatever the stopped receiver had in flight has landed; over 12 more,
	// the deleted pod must gain none.
	advance := func(by int) {
		t.Helper()
		from, _ := kubePodPoints(backend.Metrics(t), "vllm-1")
		harness.Eventually(t, 30*time.Second, func() (bool, string) {
			n, _ := kubePodPoints(backend.Metrics(t), "vllm-1")
			return n >= from+by, fmt.Sprintf("vllm-1 has %d points, waiting for %d", n, from+by)
		})
	}
	advance(12)
	settled, _ := kubePodPoints(backend.Metrics(t), "vllm-0")
	advance(12)
	after, _ := kubePodPoints(backend.Metrics(t), "vllm-0")
	if after != settled {
		t.Errorf("the deleted pod was still scraped: %d points, then %d over 12 scrapes of the other pod", settled, after)
	}
	targets := map[string]bool{}
	m := backend.Metrics(t)
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		if tgt := str(m.ResourceMetrics().At(i).Resource().Attributes(), "llm.engine.target"); tgt != "" {
			targets[tgt] = true
		}
	}
	if n, _ := kubePodPoints(m, "vllm-elsewhere"); n != 0 || targets[elsewhere+"/metrics"] {
		t.Errorf("the engine of a pod on another node was scraped (%d points; targets %v)", n, targets)
	}
	var list []string
	for tgt := range targets {
		list = append(list, tgt)
	}
	sort.Strings(list)
	t.Logf("targets scraped: %v; the deleted pod's points: %d", list, after)
}

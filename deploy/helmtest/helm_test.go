// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package helmtest

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestLint is `make helm-lint`: strict lint with the defaults and with each
// ci/ values file.
func TestLint(t *testing.T) {
	chart := "deploy/helm/otelcol-llmops"
	if _, err := RunHelm(t, "lint", "--strict", chart); err != nil {
		t.Fatal(err)
	}
	for _, f := range ValuesFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if _, err := RunHelm(t, "lint", "--strict", chart, "-f", f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestManifestsInSync keeps deploy/manifests what `make manifests` renders.
func TestManifestsInSync(t *testing.T) {
	want := MustTemplate(t)
	got, err := os.ReadFile(ManifestPath(t))
	if err != nil {
		t.Fatalf("%v: run `make manifests`", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("deploy/manifests/otelcol-llmops.yaml differs from the chart rendered with its defaults (first difference at line %d): run `make manifests` and commit the result", firstDiffLine(got, want))
	}
}

func firstDiffLine(a, b []byte) int {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

// rendering is one values file's rendering, read back.
type rendering struct {
	file  string
	objs  []Object
	agent map[string]any // the agents' collector configuration
	gw    map[string]any // the gateway's, when rendered
}

func render(t *testing.T, file string, extra ...string) rendering {
	t.Helper()
	args := append([]string{"-f", file}, extra...)
	objs := Documents(t, MustTemplate(t, args...))
	r := rendering{file: file, objs: objs}
	for name, cfg := range CollectorConfigs(t, objs) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(cfg), &m); err != nil {
			t.Fatalf("ConfigMap %s: config.yaml is not YAML: %v", name, err)
		}
		if strings.HasSuffix(name, "-gateway") {
			r.gw = m
		} else {
			r.agent = m
		}
	}
	if r.agent == nil {
		t.Fatal("no agent configuration rendered")
	}
	return r
}

func one(t *testing.T, objs []Object, kind string) Object {
	t.Helper()
	found := Find(objs, kind)
	if len(found) != 1 {
		t.Fatalf("%d objects of kind %s rendered, want 1", len(found), kind)
	}
	return found[0]
}

func daemonSetContainer(t *testing.T, objs []Object) (pod map[string]any, ctr map[string]any) {
	t.Helper()
	ds := one(t, objs, "DaemonSet")
	pod, _ = Get(ds, "spec", "template", "spec").(map[string]any)
	ctr, _ = Get(pod, "containers", 0).(map[string]any)
	if pod == nil || ctr == nil {
		t.Fatal("DaemonSet without a pod spec or a container")
	}
	return pod, ctr
}

func list(v any) []any { l, _ := v.([]any); return l }

func strs(v any) []string {
	var out []string
	for _, e := range list(v) {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

func envOf(ctr map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, e := range list(ctr["env"]) {
		if m, ok := e.(map[string]any); ok {
			out[fmt.Sprint(m["name"])] = m
		}
	}
	return out
}

// TestRenderings checks the invariants of the chart on every ci/ values
// file: what a GPU node needs to run the agent, the least RBAC, and a
// collector configuration with the rootcause connector's pipelines and a
// persistent queue on every exporter.
func TestRenderings(t *testing.T) {
	for _, f := range ValuesFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := render(t, f)
			checkObjects(t, r)
			checkScheduling(t, r)
			checkContainer(t, r)
			checkRBAC(t, r)
			checkAgentConfig(t, r)
			checkGateway(t, r)
		})
	}
}

func checkObjects(t *testing.T, r rendering) {
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "DaemonSet", "Service"} {
		if len(Find(r.objs, kind)) == 0 {
			t.Errorf("no %s rendered", kind)
		}
	}
	clusterScoped := map[string]bool{"ClusterRole": true, "ClusterRoleBinding": true}
	for _, o := range r.objs {
		if o["apiVersion"] == nil || o.Kind() == "" || o.Name() == "" {
			t.Errorf("object without apiVersion, kind or name: %v", o)
		}
		ns, _ := Get(o, "metadata", "namespace").(string)
		if clusterScoped[o.Kind()] != (ns == "") {
			t.Errorf("%s %s: namespace %q", o.Kind(), o.Name(), ns)
		} else if ns != "" && ns != Namespace {
			t.Errorf("%s %s: namespace %q, want %q", o.Kind(), o.Name(), ns, Namespace)
		}
	}
	for _, svc := range Find(r.objs, "Service") {
		if strings.HasSuffix(svc.Name(), "-gateway") {
			continue
		}
		if got := Get(svc, "spec", "internalTrafficPolicy"); got != "Local" {
			t.Errorf("agent Service internalTrafficPolicy %v, want Local", got)
		}
	}
}

func checkScheduling(t *testing.T, r rendering) {
	pod, _ := daemonSetContainer(t, r.objs)
	found := false
	for _, tol := range list(pod["tolerations"]) {
		m, _ := tol.(map[string]any)
		if m["key"] == "nvidia.com/gpu" && m["operator"] == "Exists" && m["effect"] == "NoSchedule" {
			found = true
		}
	}
	if !found {
		t.Errorf("no toleration nvidia.com/gpu Exists NoSchedule: %v", pod["tolerations"])
	}
	terms := list(Get(pod, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"))
	if len(terms) == 0 {
		t.Fatalf("no required node affinity: %v", pod["affinity"])
	}
	gpuLabel := false
	for _, term := range terms {
		for _, e := range list(Get(term, "matchExpressions")) {
			if Get(e, "key") == "nvidia.com/gpu.present" && Get(e, "operator") == "In" && slices.Equal(strs(Get(e, "values")), []string{"true"}) {
				gpuLabel = true
			}
		}
	}
	if !gpuLabel {
		t.Errorf("node affinity does not select nvidia.com/gpu.present=true: %v", terms)
	}
}

// gomemlimit is 80% of a memory quantity in whole MiB, computed here
// independently of the chart's template.
func gomemlimit(t *testing.T, q string) string {
	t.Helper()
	m := regexp.MustCompile(`^([0-9.]+)([KMGTPE]i?|k)?$`).FindStringSubmatch(q)
	if m == nil {
		t.Fatalf("memory limit %q: not a quantity this test reads", q)
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	factor := map[string]float64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}[m[2]]
	return fmt.Sprintf("%dMiB", int64(math.Floor(n*factor*0.8/(1<<20))))
}

func checkContainer(t *testing.T, r rendering) {
	pod, ctr := daemonSetContainer(t, r.objs)
	env := envOf(ctr)
	if got := Get(env["K8S_NODE_NAME"], "valueFrom", "fieldRef", "fieldPath"); got != "spec.nodeName" {
		t.Errorf("K8S_NODE_NAME from %v, want the downward API's spec.nodeName", got)
	}
	if got := Get(env["K8S_POD_IP"], "valueFrom", "fieldRef", "fieldPath"); got != "status.podIP" {
		t.Errorf("K8S_POD_IP from %v, want status.podIP", got)
	}
	if got := Get(env["NVIDIA_VISIBLE_DEVICES"], "value"); got != "all" {
		t.Errorf("NVIDIA_VISIBLE_DEVICES=%v, want all", got)
	}
	if got := Get(env["NVIDIA_DRIVER_CAPABILITIES"], "value"); got != "utility" {
		t.Errorf("NVIDIA_DRIVER_CAPABILITIES=%v, want utility", got)
	}
	limit := fmt.Sprint(Get(ctr, "resources", "limits", "memory"))
	if got, want := Get(env["GOMEMLIMIT"], "value"), gomemlimit(t, limit); got != want {
		t.Errorf("GOMEMLIMIT=%v for a memory limit of %s, want %s", got, limit, want)
	}
	for _, k := range []string{"cpu", "memory"} {
		if Get(ctr, "resources", "requests", k) == nil {
			t.Errorf("no %s request", k)
		}
	}

	sc, _ := ctr["securityContext"].(map[string]any)
	if sc["readOnlyRootFilesystem"] != true || sc["allowPrivilegeEscalation"] != false || sc["privileged"] == true {
		t.Errorf("securityContext %v: want readOnlyRootFilesystem, no privilege escalation, not privileged", sc)
	}
	if drop := strs(Get(sc, "capabilities", "drop")); !slices.Equal(drop, []string{"ALL"}) {
		t.Errorf("capabilities dropped: %v, want [ALL]", drop)
	}
	if add := Get(sc, "capabilities", "add"); add != nil {
		t.Errorf("capabilities added: %v", add)
	}
	if Get(pod, "securityContext", "seccompProfile", "type") != "RuntimeDefault" {
		t.Errorf("pod seccompProfile %v, want RuntimeDefault", Get(pod, "securityContext"))
	}
	if pod["hostNetwork"] == true {
		t.Error("hostNetwork set")
	}

	mounts := map[string]map[string]any{}
	for _, m := range list(ctr["volumeMounts"]) {
		mm, _ := m.(map[string]any)
		mounts[fmt.Sprint(mm["name"])] = mm
	}
	volumes := map[string]map[string]any{}
	for _, v := range list(pod["volumes"]) {
		vm, _ := v.(map[string]any)
		volumes[fmt.Sprint(vm["name"])] = vm
	}
	if Get(mounts["host-proc"], "mountPath") != "/host/proc" || Get(mounts["host-proc"], "readOnly") != true || Get(volumes["host-proc"], "hostPath", "path") != "/proc" {
		t.Errorf("host /proc: mount %v, volume %v; want /proc read-only at /host/proc", mounts["host-proc"], volumes["host-proc"])
	}
	podResources := Get(r.agent, "receivers", "nvml", "pod_resources_socket")
	if strings.Contains(r.file, "no-pod-resources") {
		if podResources != nil || mounts["pod-resources"] != nil {
			t.Errorf("pod resources not disabled: socket %v, mount %v", podResources, mounts["pod-resources"])
		}
		if sc["runAsNonRoot"] != true || sc["runAsUser"] == 0 {
			t.Errorf("without pod resources the agent should run as non-root: %v", sc)
		}
	} else {
		want := "/var/lib/kubelet/pod-resources"
		if strings.Contains(r.file, "custom-kubelet-path") {
			want = "/var/lib/k0s/kubelet/pod-resources"
		}
		if Get(volumes["pod-resources"], "hostPath", "path") != want || Get(mounts["pod-resources"], "readOnly") != true {
			t.Errorf("pod resources: volume %v, mount %v; want %s read-only", volumes["pod-resources"], mounts["pod-resources"], want)
		}
		if !strings.Contains(fmt.Sprint(podResources), Get(mounts["pod-resources"], "mountPath").(string)+"/kubelet.sock") {
			t.Errorf("nvml.pod_resources_socket %v is not in the mounted directory %v", podResources, Get(mounts["pod-resources"], "mountPath"))
		}
	}
	if !strings.Contains(fmt.Sprint(Get(r.agent, "receivers", "nvml", "proc_root")), "/host/proc") {
		t.Errorf("nvml.proc_root %v, want the mounted host /proc", Get(r.agent, "receivers", "nvml", "proc_root"))
	}
	if Get(volumes["state"], "hostPath") == nil && Get(volumes["state"], "emptyDir") == nil {
		t.Errorf("state volume %v", volumes["state"])
	}
	if !strings.Contains(fmt.Sprint(Get(r.agent, "extensions", "file_storage", "directory")), fmt.Sprint(Get(mounts["state"], "mountPath"))) {
		t.Errorf("file_storage directory %v is not on the state volume (%v)", Get(r.agent, "extensions", "file_storage", "directory"), Get(mounts["state"], "mountPath"))
	}
	for _, probe := range []string{"livenessProbe", "readinessProbe"} {
		if Get(ctr, probe, "httpGet", "port") != "health" {
			t.Errorf("%s %v: want an HTTP probe of the health port", probe, ctr[probe])
		}
	}
	healthPort := fmt.Sprint(Get(r.agent, "extensions", "health_check", "endpoint"))
	for _, p := range list(ctr["ports"]) {
		if Get(p, "name") == "health" && !strings.HasSuffix(healthPort, ":"+fmt.Sprint(Get(p, "containerPort"))) {
			t.Errorf("health_check endpoint %s is not the health port %v", healthPort, Get(p, "containerPort"))
		}
	}
}

func checkRBAC(t *testing.T, r rendering) {
	role := one(t, r.objs, "ClusterRole")
	rules := list(role["rules"])
	if len(rules) != 1 {
		t.Fatalf("ClusterRole rules %v: want exactly one", rules)
	}
	rule := rules[0]
	apiGroups, resources, verbs := strs(Get(rule, "apiGroups")), strs(Get(rule, "resources")), strs(Get(rule, "verbs"))
	sort.Strings(resources)
	sort.Strings(verbs)
	if !slices.Equal(apiGroups, []string{""}) || !slices.Equal(resources, []string{"nodes", "pods"}) || !slices.Equal(verbs, []string{"get", "list", "watch"}) {
		t.Errorf("ClusterRole rule %v: want get/list/watch on pods and nodes of the core group, nothing else", rule)
	}
	if Get(rule, "resourceNames") != nil || Get(rule, "nonResourceURLs") != nil {
		t.Errorf("ClusterRole rule %v: unexpected fields", rule)
	}
	binding := one(t, r.objs, "ClusterRoleBinding")
	sa := one(t, r.objs, "ServiceAccount")
	if Get(binding, "roleRef", "name") != role.Name() || Get(binding, "subjects", 0, "name") != sa.Name() || Get(binding, "subjects", 0, "namespace") != Namespace {
		t.Errorf("ClusterRoleBinding %v does not bind %s to %s/%s", binding, role.Name(), Namespace, sa.Name())
	}
	pod, _ := daemonSetContainer(t, r.objs)
	if pod["serviceAccountName"] != sa.Name() {
		t.Errorf("DaemonSet runs as %v, not %s", pod["serviceAccountName"], sa.Name())
	}
}

// checkPipelines checks that every component a pipeline names is defined and
// returns the exporters used.
func checkPipelines(t *testing.T, what string, cfg map[string]any) map[string]bool {
	used := map[string]bool{}
	pipelines, _ := Get(cfg, "service", "pipelines").(map[string]any)
	if len(pipelines) == 0 {
		t.Fatalf("%s: no pipelines", what)
	}
	defined := func(kinds ...string) map[string]bool {
		d := map[string]bool{}
		for _, k := range kinds {
			m, _ := cfg[k].(map[string]any)
			for name := range m {
				d[name] = true
			}
		}
		return d
	}
	for name, p := range pipelines {
		for role, kinds := range map[string][]string{
			"receivers":  {"receivers", "connectors"},
			"processors": {"processors"},
			"exporters":  {"exporters", "connectors"},
		} {
			d := defined(kinds...)
			names := strs(Get(p, role))
			if role != "processors" && len(names) == 0 {
				t.Errorf("%s: pipeline %s has no %s", what, name, role)
			}
			for _, c := range names {
				if !d[c] {
					t.Errorf("%s: pipeline %s names %s %q, which is not defined", what, name, role, c)
				}
				if role == "exporters" {
					used[c] = true
				}
			}
		}
	}
	for _, ext := range strs(Get(cfg, "service", "extensions")) {
		if Get(cfg, "extensions", ext) == nil && !hasKey(cfg["extensions"], ext) {
			t.Errorf("%s: service extension %q is not defined", what, ext)
		}
	}
	return used
}

func hasKey(m any, k string) bool {
	mm, ok := m.(map[string]any)
	if !ok {
		return false
	}
	_, ok = mm[k]
	return ok
}

// checkDelivery: every exporter but debug (and the rootcause connector) has a
// persistent queue on file_storage, or, for the remote-write exporter that has
// no sending_queue, its write-ahead log; and retries. The prometheus exporter
// is scraped, not sent from: nothing to queue or retry (it has no
// retry_on_failure), each point waits in memory for the scrape.
func checkDelivery(t *testing.T, what string, cfg map[string]any) {
	exporters, _ := cfg["exporters"].(map[string]any)
	for name, e := range exporters {
		if name == "debug" {
			continue
		}
		if name == "prometheus" || strings.HasPrefix(name, "prometheus/") {
			if hasKey(e, "sending_queue") || hasKey(e, "retry_on_failure") {
				t.Errorf("%s: the pull exporter %s with a queue or retries: %v", what, name, e)
			}
			continue
		}
		if strings.HasPrefix(name, "prometheus_remote_write") {
			if Get(e, "wal", "directory") == nil {
				t.Errorf("%s: exporter %s without a write-ahead log", what, name)
			}
		} else if Get(e, "sending_queue", "enabled") != true || Get(e, "sending_queue", "storage") != "file_storage" {
			t.Errorf("%s: exporter %s without a persistent sending queue on file_storage: %v", what, name, Get(e, "sending_queue"))
		}
		if Get(e, "retry_on_failure", "enabled") != true {
			t.Errorf("%s: exporter %s does not retry", what, name)
		}
	}
	if !hasKey(cfg["extensions"], "file_storage") || !slices.Contains(strs(Get(cfg, "service", "extensions")), "file_storage") {
		t.Errorf("%s: file_storage not defined and enabled", what)
	}
}

func checkAgentConfig(t *testing.T, r rendering) {
	cfg := r.agent
	used := checkPipelines(t, "agent", cfg)
	checkDelivery(t, "agent", cfg)
	if !hasKey(cfg["connectors"], "rootcause") {
		t.Fatal("agent: no rootcause connector")
	}
	p := func(name, role string) []string { return strs(Get(cfg, "service", "pipelines", name, role)) }
	if got := p("metrics/in", "exporters"); !slices.Equal(got, []string{"rootcause"}) {
		t.Errorf("metrics/in exporters %v, want [rootcause]", got)
	}
	if got := p("metrics/in", "processors"); !slices.Equal(got, []string{"memory_limiter", "llmnormalize"}) {
		t.Errorf("metrics/in processors %v, want [memory_limiter llmnormalize]", got)
	}
	for _, rcv := range []string{"nvml", "receiver_creator/engines", "profileimport", "otlp"} {
		if !slices.Contains(p("metrics/in", "receivers"), rcv) {
			t.Errorf("metrics/in does not receive from %s: %v", rcv, p("metrics/in", "receivers"))
		}
	}
	for _, out := range []string{"metrics", "logs/incidents"} {
		if got := p(out, "receivers"); !slices.Equal(got, []string{"rootcause"}) {
			t.Errorf("%s receivers %v, want [rootcause]", out, got)
		}
	}
	for _, in := range []string{"traces", "logs"} {
		if !slices.Contains(p(in, "exporters"), "rootcause") {
			t.Errorf("%s does not feed rootcause: %v", in, p(in, "exporters"))
		}
		if got := p(in, "processors"); len(got) == 0 || got[0] != "memory_limiter" {
			t.Errorf("%s processors %v: memory_limiter first", in, got)
		}
	}
	if !used["debug"] && len(used) <= 1 {
		t.Errorf("agent exports nowhere: %v", used)
	}

	obs := Get(cfg, "extensions", "k8s_observer")
	if Get(obs, "node") != "${env:K8S_NODE_NAME}" || Get(obs, "observe_pods") != true || Get(obs, "auth_type") != "serviceAccount" {
		t.Errorf("k8s_observer %v: want this node's pods, with the service account", obs)
	}
	if !slices.Contains(strs(Get(cfg, "receivers", "receiver_creator/engines", "watch_observers")), "k8s_observer") {
		t.Error("receiver_creator/engines does not watch k8s_observer")
	}
	templates, _ := Get(cfg, "receivers", "receiver_creator/engines", "receivers").(map[string]any)
	for _, want := range []string{"vllm", "tgi", "sglang", "trtllm", "triton", "nim", "llamacpp", "annotated", "annotated_port"} {
		tmpl := templates["llmengine/"+want]
		if tmpl == nil {
			t.Errorf("no discovery rule llmengine/%s", want)
			continue
		}
		rule := fmt.Sprint(Get(tmpl, "rule"))
		if !strings.HasPrefix(rule, `type == "port"`) && !strings.HasPrefix(rule, `type == "pod"`) {
			t.Errorf("llmengine/%s rule %q does not start with an endpoint type", want, rule)
		}
		if !strings.Contains(fmt.Sprint(Get(tmpl, "config", "endpoint")), "`endpoint`") {
			t.Errorf("llmengine/%s endpoint %v is not the discovered one", want, Get(tmpl, "config", "endpoint"))
		}
		for _, attr := range []string{"k8s.pod.name", "k8s.namespace.name", "k8s.pod.uid"} {
			if Get(tmpl, "resource_attributes", attr) == nil {
				t.Errorf("llmengine/%s sets no %s", want, attr)
			}
		}
	}
	if rule := fmt.Sprint(Get(templates, "llmengine/annotated", "rule")); !strings.Contains(rule, `annotations["llmops.io/scrape"] == "true"`) {
		t.Errorf("annotation rule %q", rule)
	}
	if !strings.Contains(fmt.Sprint(Get(templates, "llmengine/annotated", "config", "endpoint")), "llmops.io/path") {
		t.Errorf("annotation rule does not read llmops.io/path: %v", Get(templates, "llmengine/annotated", "config"))
	}
}

func checkGateway(t *testing.T, r rendering) {
	gatewayOn := strings.Contains(r.file, "gateway-on")
	deployments := Find(r.objs, "Deployment")
	if !gatewayOn {
		if len(deployments) != 0 || r.gw != nil {
			t.Errorf("gateway rendered without gateway.enabled")
		}
		return
	}
	if len(deployments) != 1 || r.gw == nil {
		t.Fatalf("gateway.enabled: %d Deployments, config %v", len(deployments), r.gw != nil)
	}
	gwSvc := ""
	for _, svc := range Find(r.objs, "Service") {
		if strings.HasSuffix(svc.Name(), "-gateway") {
			gwSvc = svc.Name()
		}
	}
	if gwSvc == "" {
		t.Fatal("no gateway Service")
	}
	if len(Find(r.objs, "PodDisruptionBudget")) != 1 {
		t.Error("no PodDisruptionBudget for the gateway's replicas")
	}
	// The agents export everything to the gateway; incidents also straight
	// to Alertmanager.
	for _, pl := range []string{"metrics", "traces", "logs", "logs/incidents"} {
		ex := strs(Get(r.agent, "service", "pipelines", pl, "exporters"))
		if !slices.Contains(ex, "otlp_grpc/gateway") {
			t.Errorf("agent pipeline %s does not export to the gateway: %v", pl, ex)
		}
		for _, e := range ex {
			if strings.HasSuffix(e, "/backend") {
				t.Errorf("agent pipeline %s exports to the backend %s past the gateway", pl, e)
			}
		}
	}
	if ep := fmt.Sprint(Get(r.agent, "exporters", "otlp_grpc/gateway", "endpoint")); !strings.HasPrefix(ep, gwSvc+"."+Namespace+".svc:") {
		t.Errorf("agents export to %s, not to the gateway Service %s", ep, gwSvc)
	}
	if !slices.Contains(strs(Get(r.agent, "service", "pipelines", "logs/incidents", "exporters")), "alertwebhook/alertmanager") {
		t.Error("with the gateway on, incidents no longer reach Alertmanager from the agents")
	}
	used := checkPipelines(t, "gateway", r.gw)
	checkDelivery(t, "gateway", r.gw)
	// No batch processor: the exporters batch after their persistent
	// queues (TestDurableExporters).
	if got := strs(Get(r.gw, "service", "pipelines", "traces", "processors")); !slices.Equal(got, []string{"memory_limiter", "tail_sampling"}) {
		t.Errorf("gateway traces processors %v, want [memory_limiter tail_sampling]", got)
	}
	profiles := false
	for _, pol := range list(Get(r.gw, "processors", "tail_sampling", "policies")) {
		if Get(pol, "string_attribute", "key") == "llm.profile.file" {
			profiles = true
		}
	}
	if !profiles {
		t.Error("tail_sampling keeps no profiler traces")
	}
	if !used["otlp_grpc/backend"] || !used["prometheus_remote_write/backend"] {
		t.Errorf("gateway does not export to the configured backends: %v", used)
	}
}

// TestGOMEMLIMIT: 80% of the memory limit, whatever its unit; a limit the
// chart cannot read fails the rendering with the value named.
func TestGOMEMLIMIT(t *testing.T) {
	for limit, want := range map[string]string{"512Mi": "409MiB", "1Gi": "819MiB", "1.5Gi": "1228MiB", "2G": "1525MiB", "805306368": "614MiB"} {
		objs := Documents(t, MustTemplate(t, "--set", "resources.limits.memory="+limit))
		_, ctr := daemonSetContainer(t, objs)
		if got := Get(envOf(ctr)["GOMEMLIMIT"], "value"); got != want {
			t.Errorf("limit %s: GOMEMLIMIT %v, want %s", limit, got, want)
		}
	}
	_, err := Template(t, "--set", "resources.limits.memory=lots")
	if err == nil || !strings.Contains(err.Error(), `"lots"`) {
		t.Errorf("an unreadable memory limit renders: %v", err)
	}
	objs := Documents(t, MustTemplate(t, "--set", "useGOMEMLIMIT=false"))
	if _, ctr := daemonSetContainer(t, objs); envOf(ctr)["GOMEMLIMIT"] != nil {
		t.Error("GOMEMLIMIT set with useGOMEMLIMIT=false")
	}
}

// TestMonitoring: the Prometheus Operator objects appear only where its
// CRDs are.
func TestMonitoring(t *testing.T) {
	plain := Documents(t, MustTemplate(t))
	for _, kind := range []string{"ServiceMonitor", "PodMonitor", "PrometheusRule"} {
		if len(Find(plain, kind)) != 0 {
			t.Errorf("%s rendered without the monitoring.coreos.com/v1 API", kind)
		}
	}
	api := []string{
		"--api-versions", "monitoring.coreos.com/v1/ServiceMonitor",
		"--api-versions", "monitoring.coreos.com/v1/PodMonitor",
		"--api-versions", "monitoring.coreos.com/v1/PrometheusRule",
	}
	withCRDs := Documents(t, MustTemplate(t, api...))
	one(t, withCRDs, "ServiceMonitor")
	rule := one(t, withCRDs, "PrometheusRule")
	alerts := 0
	for _, g := range list(Get(rule, "spec", "groups")) {
		for _, r := range list(Get(g, "rules")) {
			if Get(r, "alert") != nil && Get(r, "expr") != nil {
				alerts++
			}
		}
	}
	if alerts < 3 {
		t.Errorf("PrometheusRule has %d alerts, want at least 3", alerts)
	}
	pm := Documents(t, MustTemplate(t, append(api, "--set", "podMonitor.enabled=true")...))
	if len(Find(pm, "PodMonitor")) != 1 || len(Find(pm, "ServiceMonitor")) != 0 {
		t.Error("podMonitor.enabled: want a PodMonitor instead of the ServiceMonitor")
	}
}

// TestConfigValueMerged: the config value is merged over the rendered
// configuration (maps merge, lists replace).
func TestConfigValueMerged(t *testing.T) {
	objs := Documents(t, MustTemplate(t,
		"--set", "config.processors.memory_limiter.check_interval=5s",
		"--set-json", `config.service.pipelines.logs/incidents.processors=["memory_limiter"]`))
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(CollectorConfigs(t, objs)[Release]), &cfg); err != nil {
		t.Fatal(err)
	}
	if Get(cfg, "processors", "memory_limiter", "check_interval") != "5s" || Get(cfg, "processors", "memory_limiter", "limit_percentage") == nil {
		t.Errorf("memory_limiter after the merge: %v", Get(cfg, "processors", "memory_limiter"))
	}
	if got := strs(Get(cfg, "service", "pipelines", "logs/incidents", "processors")); !slices.Equal(got, []string{"memory_limiter"}) {
		t.Errorf("a list in config does not replace: %v", got)
	}
	if Get(cfg, "service", "pipelines", "logs/incidents", "receivers") == nil {
		t.Error("merging a pipeline dropped its receivers")
	}
}

// TestSchemaRejects: values.schema.json refuses misspelt and invalid values.
func TestSchemaRejects(t *testing.T) {
	for _, set := range []string{"tolerationz=1", "exporters.otlp.protocol=udp", "nvml.collectionInterval=often", "gateway.replicaz=3", "kubelet.rootDir=relative/path",
		"exporters.prometheus.port=0", "exporters.prometheus.port=65536", "exporters.prometheus.metricExpiration=soon", "exporters.prometheus.enabeld=true"} {
		if _, err := Template(t, "--set", set); err == nil {
			t.Errorf("--set %s renders", set)
		}
	}
}

// freeForm are values whose keys are the user's (label maps, Kubernetes
// objects, configuration fragments): documented as one value.
var freeForm = map[string]bool{
	"affinity": true, "nodeSelector": true, "podAnnotations": true, "podLabels": true,
	"labels": true, "headers": true, "externalLabels": true, "severityMap": true, "config": true,
	"extraReceivers": true, "resources": true, "podSecurityContext": true, "securityContext": true,
	"updateStrategy": true, "livenessProbe": true, "readinessProbe": true, "volume": true, "stateVolume": true,
	"engines": true,
}

func leafPaths(prefix string, m map[string]any, out *[]string) {
	for k, v := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && !freeForm[k] && len(sub) > 0 {
			leafPaths(p, sub, out)
			continue
		}
		*out = append(*out, p)
	}
}

// TestReadmeValuesTable: every value of values.yaml has its row in the
// chart's README, by its full path (or its keys') or as `.leaf` in a row of
// its parent.
func TestReadmeValuesTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(ChartDir(t), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(ChartDir(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "| `") {
			rows = append(rows, line)
		}
	}
	var paths []string
	leafPaths("", values, &paths)
	sort.Strings(paths)
	for _, p := range paths {
		parent, leaf := "", p
		if i := strings.LastIndex(p, "."); i >= 0 {
			parent, leaf = p[:i], p[i+1:]
		}
		found := false
		for _, row := range rows {
			if strings.Contains(row, "`"+p+"`") || strings.Contains(row, "`"+p+".") || (parent != "" && strings.Contains(row, "`"+parent+".") && strings.Contains(row, "`."+leaf+"`")) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("value %s has no row in the chart's README", p)
		}
	}
}

// TestHostPIDWithoutHostProc: with hostPID and no host /proc mount, NVML's
// host PIDs resolve in the container's own /proc.
func TestHostPIDWithoutHostProc(t *testing.T) {
	objs := Documents(t, MustTemplate(t, "--set", "hostPID=true", "--set", "nvml.hostProc="))
	pod, ctr := daemonSetContainer(t, objs)
	if pod["hostPID"] != true {
		t.Errorf("hostPID %v", pod["hostPID"])
	}
	for _, m := range list(ctr["volumeMounts"]) {
		if Get(m, "name") == "host-proc" {
			t.Errorf("host /proc still mounted: %v", m)
		}
	}
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(CollectorConfigs(t, objs)[Release]), &cfg); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(Get(cfg, "receivers", "nvml", "proc_root")); !strings.HasSuffix(got, ":-/proc}") {
		t.Errorf("nvml.proc_root %s, want the container's /proc", got)
	}
}

{{/* Names, labels and small computed values shared by the templates. */}}

{{- define "otelcol-llmops.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's full name; the gateway's objects append "-gateway". */}}
{{- define "otelcol-llmops.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 55 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 55 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 55 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "otelcol-llmops.gatewayName" -}}
{{- printf "%s-gateway" (include "otelcol-llmops.fullname" .) -}}
{{- end -}}

{{- define "otelcol-llmops.commonLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: otelcol-llmops
{{- end -}}

{{/* Selector labels of the agents (component=agent) or of the gateway. */}}
{{- define "otelcol-llmops.selectorLabels" -}}
app.kubernetes.io/name: {{ include "otelcol-llmops.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "otelcol-llmops.labels" -}}
{{ include "otelcol-llmops.selectorLabels" . }}
{{ include "otelcol-llmops.commonLabels" .root }}
{{- end -}}

{{- define "otelcol-llmops.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "otelcol-llmops.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "otelcol-llmops.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/*
A Kubernetes memory quantity (512Mi, 1Gi, 1.5G, 536870912) in bytes, as a
float. Anything else fails the rendering with the value named.
*/}}
{{- define "otelcol-llmops.quantityBytes" -}}
{{- $q := toString . | trim -}}
{{- if not (regexMatch "^[0-9]+([.][0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$" $q) -}}
{{- fail (printf "resources.limits.memory %q: not a memory quantity this chart can read (use e.g. 512Mi, 1Gi, 2G or a number of bytes)" $q) -}}
{{- end -}}
{{- $num := regexReplaceAll "^([0-9.]+).*$" $q "${1}" -}}
{{- $unit := regexReplaceAll "^[0-9.]+" $q "" -}}
{{- $factors := dict "" 1.0 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "P" 1e15 "E" 1e18 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 -}}
{{- mulf (float64 $num) (index $factors $unit) -}}
{{- end -}}

{{/*
GOMEMLIMIT for a memory limit: 80% of it, in whole MiB (the Go runtime's
syntax), as the OpenTelemetry collector chart's useGOMEMLIMIT does.
*/}}
{{- define "otelcol-llmops.gomemlimit" -}}
{{- $bytes := include "otelcol-llmops.quantityBytes" . | float64 -}}
{{- printf "%dMiB" (divf (mulf $bytes 0.8) 1048576.0 | floor | int64) -}}
{{- end -}}

{{/* The in-container paths the collector configuration refers to. */}}
{{- define "otelcol-llmops.paths" -}}
config: /etc/otelcol-llmops
proc: /host/proc
podResources: /var/lib/kubelet/pod-resources
profiles: /profiles
state: /var/lib/otelcol-llmops
otlpTLS: /var/run/secrets/otelcol-llmops/otlp-tls
otlpAuth: /var/run/secrets/otelcol-llmops/otlp-auth
{{- end -}}

{{/*
TLS and bearer-token auth of the OTLP receivers (otlpReceiver): what is
missing or contradictory fails the rendering with the values named.
*/}}
{{- define "otelcol-llmops.checkOTLPSecurity" -}}
{{- $o := .Values.otlpReceiver -}}
{{- if and $o.tls.enabled (not $o.tls.secretName) -}}
{{- fail (printf "otlpReceiver.tls.enabled needs otlpReceiver.tls.secretName: the name of a kubernetes.io/tls Secret (tls.crt, tls.key) in namespace %s" .Release.Namespace) -}}
{{- end -}}
{{- if and $o.auth.enabled (not $o.auth.secretName) -}}
{{- fail (printf "otlpReceiver.auth.enabled needs otlpReceiver.auth.secretName: the name of a Secret in namespace %s whose key %q (otlpReceiver.auth.secretKey) holds the bearer token, one a line" .Release.Namespace $o.auth.secretKey) -}}
{{- end -}}
{{- if and .Values.gateway.enabled .Values.gateway.insecure $o.tls.enabled -}}
{{- fail "otlpReceiver.tls.enabled with gateway.enabled: the gateway then serves TLS, so the agents must use it too: set gateway.insecure=false" -}}
{{- end -}}
{{- if and .Values.gateway.enabled $o.auth.enabled (not $o.tls.enabled) -}}
{{- fail "otlpReceiver.auth.enabled with gateway.enabled needs otlpReceiver.tls.enabled (and gateway.insecure=false): gRPC does not send the agents' bearer token to the gateway in plaintext" -}}
{{- end -}}
{{- end -}}

{{/*
The protocols of an OTLP receiver on the pod IP, with otlpReceiver's TLS and
auth.
*/}}
{{- define "otelcol-llmops.otlpProtocols" -}}
{{- $v := .Values -}}
{{- $p := include "otelcol-llmops.paths" . | fromYaml -}}
{{- range $proto, $port := dict "grpc" $v.ports.otlpGrpc "http" $v.ports.otlpHttp }}
{{ $proto }}:
  endpoint: {{ printf "${env:K8S_POD_IP}:%d" (int $port) | toJson }}
  {{- if $v.otlpReceiver.tls.enabled }}
  tls:
    cert_file: {{ printf "%s/tls.crt" $p.otlpTLS }}
    key_file: {{ printf "%s/tls.key" $p.otlpTLS }}
    min_version: "1.2"
    reload_interval: {{ $v.otlpReceiver.tls.reloadInterval }}
  {{- end }}
  {{- if $v.otlpReceiver.auth.enabled }}
  auth:
    authenticator: bearertokenauth/otlp
  {{- end }}
{{- end }}
{{- end -}}

{{/*
The Secret volumes of otlpReceiver, or their mounts (dict: root, mounts).
Kubernetes' default file mode (0644): the collector is the only process of
its container, whatever user it runs as.
*/}}
{{- define "otelcol-llmops.otlpSecretVolumes" -}}
{{- $v := .root.Values -}}
{{- $p := include "otelcol-llmops.paths" .root | fromYaml -}}
{{- if $v.otlpReceiver.tls.enabled }}
{{- if .mounts }}
- name: otlp-tls
  mountPath: {{ $p.otlpTLS }}
  readOnly: true
{{- else }}
- name: otlp-tls
  secret:
    secretName: {{ $v.otlpReceiver.tls.secretName }}
{{- end }}
{{- end }}
{{- if $v.otlpReceiver.auth.enabled }}
{{- if .mounts }}
# The whole Secret, not a subPath: kubelet updates a Secret volume when the
# Secret changes, and the extension sees the new file.
- name: otlp-auth
  mountPath: {{ $p.otlpAuth }}
  readOnly: true
{{- else }}
- name: otlp-auth
  secret:
    secretName: {{ $v.otlpReceiver.auth.secretName }}
    items:
      - key: {{ $v.otlpReceiver.auth.secretKey }}
        path: token
{{- end }}
{{- end }}
{{- end -}}

{{/*
The second endpoint of the ServiceMonitor and of the PodMonitor: the node's
metrics on prom-data (exporters.prometheus), at the interval of the first
(dict: interval).

honorLabels: true. It only decides labels that are both in what is scraped
and on the target: the exposition's job and instance, which the exporter
writes from service.namespace/service.name and service.instance.id of the
resources that have them (metrics pushed over OTLP by the applications and
engines; resource_constant_labels leaves service.* out for that reason), and
which target_info is joined on. Kept, they are the series remote write
produces (it maps service.* to job and instance the same way). With false,
Prometheus would rename them exported_job and exported_instance and put the
monitor's job and the agent's address on every series. The other resource
attributes become hw_id, llm_engine_name, llm_engine_target, k8s_pod_name,
k8s_namespace_name, k8s_node_name, ...: no target label (job, instance,
namespace, service, pod, container, endpoint, node) is spelt like them, so
they are labels either way. The k8s_* name the workload; the target's
namespace, pod and container, added where the exposition has none, name the
agent that served it. Series without service.name (nvml, llmengine, the
derived and incident metrics) take the target's job and instance, and up is
always the target's: up == 0 is this agent down. The cost: a point attribute
spelt like a target label (pod, namespace, node) would replace that target
label rather than become exported_<name>.
*/}}
{{- define "otelcol-llmops.dataEndpoint" -}}
# The node's metrics (exporters.prometheus): the series keep their own job
# and instance (honorLabels: the chart's README.md, "Prometheus: remote
# write or scrape").
- port: prom-data
  interval: {{ .interval }}
  honorLabels: true
  relabelings:
    - sourceLabels: [__meta_kubernetes_pod_node_name]
      targetLabel: node
{{- end -}}

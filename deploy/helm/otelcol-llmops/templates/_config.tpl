{{/*
The collector configurations, rendered from the values as YAML, read back as
a dictionary, merged with .Values.config (.Values.gateway.config) and written
out by configmap.yaml (gateway.yaml).

The agent keeps the shape of distro/config.yaml: every receiver into
metrics/in, through memory_limiter and llmnormalize into the rootcause
connector, which feeds the outgoing metrics and logs/incidents pipelines;
traces and logs go to rootcause (the drill-down) and to the exporters.
*/}}

{{/* The receiver_creator rule of one engine (dict: name, e). */}}
{{- define "otelcol-llmops.engineRule" -}}
{{- $e := .e -}}
{{- $match := list -}}
{{- range $e.images -}}
{{- $match = append $match (printf "container_image matches %s" (toJson .)) -}}
{{- end -}}
{{- range $key, $values := $e.podLabels -}}
{{- $match = append $match (printf "pod.labels[%s] in %s" (toJson $key) (toJson $values)) -}}
{{- end -}}
{{- if not $match -}}
{{- fail (printf "discovery.engines.%s: give images or podLabels" .name) -}}
{{- end -}}
{{- $port := list -}}
{{- if $e.ports }}{{ $port = append $port (printf "port in %s" (toJson $e.ports)) }}{{ end -}}
{{- if $e.portNames }}{{ $port = append $port (printf "name in %s" (toJson $e.portNames)) }}{{ end -}}
{{- if not $port -}}
{{- fail (printf "discovery.engines.%s: give ports or portNames" .name) -}}
{{- end -}}
type == "port" && !("llmops.io/scrape" in pod.annotations) && ({{ join " || " $match }}) && ({{ join " || " $port }})
{{- end -}}

{{/* Names of the exporters of one outgoing pipeline of the agent (dict: root, signal). */}}
{{- define "otelcol-llmops.agentExporters" -}}
{{- $v := .root.Values -}}
{{- $names := list -}}
{{- if $v.gateway.enabled -}}
{{- $names = append $names "otlp_grpc/gateway" -}}
{{- else -}}
{{- if and $v.exporters.otlp.enabled (has .signal $v.exporters.otlp.signals) -}}
{{- $names = append $names (printf "otlp_%s/backend" $v.exporters.otlp.protocol) -}}
{{- end -}}
{{- if and $v.exporters.prometheusRemoteWrite.enabled (eq .signal "metrics") -}}
{{- $names = append $names "prometheus_remote_write/backend" -}}
{{- end -}}
{{- end -}}
{{- /* Scraped per node: on the agents whether or not the gateway is on. */ -}}
{{- if and $v.exporters.prometheus.enabled (eq .signal "metrics") -}}
{{- $names = append $names "prometheus/scrape" -}}
{{- end -}}
{{- if and $v.exporters.alertmanager.enabled (eq .signal "incidents") -}}
{{- $names = append $names "alertwebhook/alertmanager" -}}
{{- end -}}
{{- if or $v.exporters.debug.enabled (not $names) -}}
{{- $names = append $names "debug" -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/* Names of the exporters of one pipeline of the gateway (dict: root, signal). */}}
{{- define "otelcol-llmops.gatewayExporters" -}}
{{- $v := .root.Values -}}
{{- $names := list -}}
{{- if and $v.exporters.otlp.enabled (or (has .signal $v.exporters.otlp.signals) (and (eq .signal "logs") (has "incidents" $v.exporters.otlp.signals))) -}}
{{- $names = append $names (printf "otlp_%s/backend" $v.exporters.otlp.protocol) -}}
{{- end -}}
{{- if and $v.exporters.prometheusRemoteWrite.enabled (eq .signal "metrics") -}}
{{- $names = append $names "prometheus_remote_write/backend" -}}
{{- end -}}
{{- if or $v.exporters.debug.enabled (not $names) -}}
{{- $names = append $names "debug" -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/* timeout, sending_queue (persistent, bounded in bytes, batched after the queue) and retry_on_failure of an exporter (dict: root, storage, forever). */}}
{{- define "otelcol-llmops.delivery" -}}
{{- $x := .root.Values.exporters -}}
timeout: {{ $x.timeout }}
sending_queue:
  enabled: true
  storage: {{ .storage }}
  sizer: bytes
  queue_size: {{ mul (int $x.queueSizeMiB) 1048576 }}
  batch:
    flush_timeout: {{ $x.batch.flushTimeout }}
    sizer: items
    min_size: {{ int $x.batch.minSize }}
    max_size: {{ int $x.batch.maxSize }}
retry_on_failure:
  enabled: true
  initial_interval: {{ $x.retryOnFailure.initialInterval }}
  max_interval: {{ $x.retryOnFailure.maxInterval }}
  max_elapsed_time: {{ if .forever }}0s{{ else }}{{ $x.retryOnFailure.maxElapsedTime }}{{ end }}
{{- end -}}

{{/* The backend exporters (otlp, prometheusRemoteWrite), for the agent or the gateway (dict: root, walDir). */}}
{{- define "otelcol-llmops.backendExporters" -}}
{{- $x := .root.Values.exporters -}}
{{- if $x.otlp.enabled }}
{{- if not $x.otlp.endpoint }}{{ fail "exporters.otlp.endpoint is required when exporters.otlp.enabled" }}{{ end }}
otlp_{{ $x.otlp.protocol }}/backend:
  endpoint: {{ $x.otlp.endpoint | toJson }}
  {{- if $x.otlp.insecure }}
  tls:
    insecure: true
  {{- end }}
  {{- with $x.otlp.headers }}
  headers: {{ toJson . }}
  {{- end }}
  {{- include "otelcol-llmops.delivery" (dict "root" .root "storage" "file_storage") | nindent 2 }}
{{- end }}
{{- if $x.prometheusRemoteWrite.enabled }}
{{- if not $x.prometheusRemoteWrite.endpoint }}{{ fail "exporters.prometheusRemoteWrite.endpoint is required when exporters.prometheusRemoteWrite.enabled" }}{{ end }}
prometheus_remote_write/backend:
  endpoint: {{ $x.prometheusRemoteWrite.endpoint | toJson }}
  {{- with $x.prometheusRemoteWrite.headers }}
  headers: {{ toJson . }}
  {{- end }}
  {{- with $x.prometheusRemoteWrite.externalLabels }}
  external_labels: {{ toJson . }}
  {{- end }}
  {{- if $x.prometheusRemoteWrite.resourceAttributesAsLabels }}
  # Every resource attribute as a label, but those already job and instance.
  resource_constant_labels:
    included: ["*"]
    excluded: [service.name, service.instance.id, service.namespace]
  {{- end }}
  # No sending_queue in this exporter: its write-ahead log in the state
  # directory is the persistent queue, flushed every few seconds (the
  # default is a minute). With its in-memory queue off, a batch is in the
  # log before the pipeline is answered, so a killed agent loses nothing
  # it acknowledged.
  remote_write_queue:
    enabled: false
  timeout: {{ $x.timeout }}
  wal:
    directory: {{ printf "%s/prometheus-remote-write-wal" .walDir | toJson }}
    truncate_frequency: 5s
  # One request at a time, oldest first: parallel requests from one WAL
  # flush can deliver a series' later sample first, and the backend then
  # refuses the earlier one as out of order (distro/examples/prometheus-remote-write.yaml).
  max_batch_request_parallelism: 1
  retry_on_failure:
    enabled: true
    initial_interval: {{ $x.retryOnFailure.initialInterval }}
    max_interval: {{ $x.retryOnFailure.maxInterval }}
    max_elapsed_time: {{ $x.retryOnFailure.maxElapsedTime }}
{{- end }}
{{- end -}}

{{- define "otelcol-llmops.agentConfig" -}}
{{- $v := .Values -}}
{{- include "otelcol-llmops.checkOTLPSecurity" . -}}
{{- $p := include "otelcol-llmops.paths" . | fromYaml -}}
{{- $in := list -}}
{{- if $v.nvml.enabled }}{{ $in = append $in "nvml" }}{{ end -}}
{{- if $v.discovery.enabled }}{{ $in = append $in "receiver_creator/engines" }}{{ end -}}
{{- if $v.llmengine.targets }}{{ $in = append $in "llmengine" }}{{ end -}}
{{- $prof := list -}}
{{- if $v.profiles.enabled }}{{ $prof = list "profileimport" }}{{ end -}}
{{- $in = concat $in $prof (list "otlp") -}}
{{- $out := list -}}
{{- if $v.nodeNameAttribute }}{{ $out = list "transform/node" }}{{ end -}}
receivers:
  {{- if $v.nvml.enabled }}
  # GPUs and GPU processes; host PIDs resolved in the host's /proc.
  nvml:
    collection_interval: {{ $v.nvml.collectionInterval }}
    library_path: {{ printf "${env:LLMOPS_NVML_LIBRARY:-%s}" $v.nvml.libraryPath | toJson }}
    proc_root: {{ printf "${env:LLMOPS_PROC_ROOT:-%s}" (ternary $p.proc "/proc" (ne $v.nvml.hostProc "")) | toJson }}
    {{- if $v.nvml.podResources.enabled }}
    pod_resources_socket: {{ printf "${env:LLMOPS_POD_RESOURCES_SOCKET:-%s/kubelet.sock}" $p.podResources | toJson }}
    {{- end }}
    gpm: {{ $v.nvml.gpm }}
  {{- end }}
  {{- if $v.discovery.enabled }}
  # One llmengine scrape per engine port of a pod on this node.
  receiver_creator/engines:
    watch_observers: [k8s_observer]
    receivers:
      {{- range $name, $e := $v.discovery.engines }}
      {{- if $e.enabled }}
      llmengine/{{ $name }}:
        rule: {{ include "otelcol-llmops.engineRule" (dict "name" $name "e" $e) | toJson }}
        config:
          endpoint: {{ printf "http://`endpoint`%s" $e.path | toJson }}
          engine: {{ $e.engine }}
          collection_interval: {{ $v.discovery.collectionInterval }}
        resource_attributes:
          k8s.pod.name: "`pod.name`"
          k8s.namespace.name: "`pod.namespace`"
          k8s.pod.uid: "`pod.uid`"
      {{- end }}
      {{- end }}
      {{- if $v.discovery.annotations.enabled }}
      # llmops.io/scrape: "true" with llmops.io/port: the pod, at that port.
      llmengine/annotated:
        rule: {{ `type == "pod" && annotations["llmops.io/scrape"] == "true" && "llmops.io/port" in annotations` | toJson }}
        config:
          endpoint: {{ "http://`endpoint`:`annotations[\"llmops.io/port\"]``\"llmops.io/path\" in annotations ? annotations[\"llmops.io/path\"] : \"/metrics\"`" | toJson }}
          engine: {{ "`\"llmops.io/engine\" in annotations ? annotations[\"llmops.io/engine\"] : \"auto\"`" | toJson }}
          collection_interval: {{ $v.discovery.collectionInterval }}
        resource_attributes:
          k8s.pod.name: "`name`"
          k8s.namespace.name: "`namespace`"
          k8s.pod.uid: "`uid`"
      # llmops.io/scrape: "true" without llmops.io/port: its port named metrics.
      llmengine/annotated_port:
        rule: {{ `type == "port" && name == "metrics" && pod.annotations["llmops.io/scrape"] == "true" && !("llmops.io/port" in pod.annotations)` | toJson }}
        config:
          endpoint: {{ "http://`endpoint``\"llmops.io/path\" in pod.annotations ? pod.annotations[\"llmops.io/path\"] : \"/metrics\"`" | toJson }}
          engine: {{ "`\"llmops.io/engine\" in pod.annotations ? pod.annotations[\"llmops.io/engine\"] : \"auto\"`" | toJson }}
          collection_interval: {{ $v.discovery.collectionInterval }}
        resource_attributes:
          k8s.pod.name: "`pod.name`"
          k8s.namespace.name: "`pod.namespace`"
          k8s.pod.uid: "`pod.uid`"
      {{- end }}
      {{- with $v.discovery.extraReceivers }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
  {{- end }}
  {{- with $v.llmengine.targets }}
  llmengine:
    targets: {{ toJson . }}
  {{- end }}
  {{- if $v.profiles.enabled }}
  # Profiler traces, memory snapshots, Nsight exports in the shared directory.
  profileimport:
    include:
      {{- range $v.profiles.include }}
      - {{ printf "${env:LLMOPS_PROFILE_DIR:-%s}/%s" $p.profiles . | toJson }}
      {{- end }}
    storage: file_storage
    after_import: {{ $v.profiles.afterImport | toJson }}
  {{- end }}
  otlp:
    protocols:
      {{- include "otelcol-llmops.otlpProtocols" . | nindent 6 }}

processors:
  # First in every pipeline: refuses data before the agent runs out of memory.
  memory_limiter:
    check_interval: 1s
    limit_percentage: 80
    spike_limit_percentage: 20
  # Engine-native names, units and aliases -> the unified spec.
  llmnormalize:
    unmapped_metrics: keep
  {{- if $v.nodeNameAttribute }}
  # The node of this agent on everything it sends.
  transform/node:
    error_mode: ignore
    metric_statements:
      - context: resource
        statements:
          - 'set(attributes["k8s.node.name"], "${env:K8S_NODE_NAME}") where attributes["k8s.node.name"] == nil'
    trace_statements:
      - context: resource
        statements:
          - 'set(attributes["k8s.node.name"], "${env:K8S_NODE_NAME}") where attributes["k8s.node.name"] == nil'
    log_statements:
      - context: resource
        statements:
          - 'set(attributes["k8s.node.name"], "${env:K8S_NODE_NAME}") where attributes["k8s.node.name"] == nil'
  {{- end }}

connectors:
  # Detectors and drill-down: connector/rootcauseconnector/README.md.
  rootcause: {}

exporters:
  debug:
    verbosity: {{ $v.exporters.debug.verbosity }}
  {{- if $v.gateway.enabled }}
  otlp_grpc/gateway:
    endpoint: {{ printf "%s.%s.svc:%d" (include "otelcol-llmops.gatewayName" .) .Release.Namespace (int $v.ports.otlpGrpc) | toJson }}
    {{- if $v.gateway.insecure }}
    tls:
      insecure: true
    {{- else if $v.otlpReceiver.tls.enabled }}
    # The gateway's certificate, verified with the CA of otlpReceiver.tls.
    tls:
      ca_file: {{ printf "%s/%s" $p.otlpTLS $v.otlpReceiver.tls.caKey }}
    {{- end }}
    {{- if $v.otlpReceiver.auth.enabled }}
    auth:
      authenticator: bearertokenauth/gateway
    {{- end }}
    {{- include "otelcol-llmops.delivery" (dict "root" . "storage" "file_storage") | nindent 4 }}
  {{- else }}
  {{- include "otelcol-llmops.backendExporters" (dict "root" . "walDir" (printf "${env:LLMOPS_STATE_DIR:-%s}" $p.state)) | nindent 2 }}
  {{- end }}
  {{- if $v.exporters.prometheus.enabled }}
  {{- $pr := $v.exporters.prometheus }}
  {{- range $name, $port := $v.ports }}
  {{- if eq (int $port) (int $pr.port) }}{{ fail (printf "exporters.prometheus.port %d is also ports.%s" (int $pr.port) $name) }}{{ end }}
  {{- end }}
  # /metrics for Prometheus to scrape (the ServiceMonitor's or PodMonitor's
  # prom-data endpoint). On every interface rather than the pod IP alone:
  # Prometheus reaches it from other nodes, over either address family of a
  # dual-stack pod. Pull: no sending queue and no retries, each point is
  # held in memory until it changes or expires.
  prometheus/scrape:
    endpoint: {{ printf "0.0.0.0:%d" (int $pr.port) | toJson }}
    {{- if $pr.resourceToTelemetryConversion }}
    # Every resource attribute as a label, but those already job and instance.
    resource_constant_labels:
      included: ["*"]
      excluded: [service.name, service.instance.id, service.namespace]
    {{- end }}
    # Exemplars are only written in OpenMetrics.
    enable_open_metrics: {{ $pr.enableOpenMetrics }}
    metric_expiration: {{ $pr.metricExpiration }}
  {{- end }}
  {{- if $v.exporters.alertmanager.enabled }}
  {{- $am := $v.exporters.alertmanager }}
  {{- if not $am.endpoint }}{{ fail "exporters.alertmanager.endpoint is required when exporters.alertmanager.enabled" }}{{ end }}
  alertwebhook/alertmanager:
    endpoint: {{ $am.endpoint | toJson }}
    format: alertmanager
    node: "${env:K8S_NODE_NAME}"
    min_severity: {{ $am.minSeverity }}
    {{- with $am.severityMap }}
    severity_map: {{ toJson . }}
    {{- end }}
    {{- with $am.generatorURL }}
    generator_url: {{ toJson . }}
    {{- end }}
    {{- with $am.traceURLTemplate }}
    trace_url_template: {{ toJson . }}
    {{- end }}
    {{- include "otelcol-llmops.delivery" (dict "root" . "storage" "file_storage" "forever" true) | nindent 4 }}
  {{- end }}

extensions:
  health_check:
    endpoint: {{ printf "${env:K8S_POD_IP}:%d" (int $v.ports.health) | toJson }}
  # Imported profiles and every persistent sending queue, per node.
  file_storage:
    directory: {{ printf "${env:LLMOPS_STATE_DIR:-%s}/file_storage" $p.state | toJson }}
    create_directory: true
    compaction:
      on_start: true
      on_rebound: true
      directory: {{ printf "${env:LLMOPS_STATE_DIR:-%s}/file_storage" $p.state | toJson }}
  {{- if $v.otlpReceiver.auth.enabled }}
  # Checks the token of every OTLP request; re-reads the file when the
  # Secret changes.
  bearertokenauth/otlp:
    filename: {{ printf "%s/token" $p.otlpAuth }}
  {{- if $v.gateway.enabled }}
  # Sends the first token of the same file to the gateway.
  bearertokenauth/gateway:
    filename: {{ printf "%s/token" $p.otlpAuth }}
  {{- end }}
  {{- end }}
  {{- if $v.discovery.enabled }}
  # Pods of this node only (field selector spec.nodeName).
  k8s_observer:
    auth_type: serviceAccount
    node: "${env:K8S_NODE_NAME}"
    observe_pods: true
  {{- end }}

service:
  extensions: {{ toJson (compact (list "health_check" "file_storage" (ternary "k8s_observer" "" $v.discovery.enabled) (ternary "bearertokenauth/otlp" "" $v.otlpReceiver.auth.enabled) (ternary "bearertokenauth/gateway" "" (and $v.otlpReceiver.auth.enabled $v.gateway.enabled)))) }}
  telemetry:
    logs:
      level: info
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: "${env:K8S_POD_IP}"
                port: {{ int $v.ports.metrics }}
  pipelines:
    # Everything the node reports, normalized, into rootcause ...
    metrics/in:
      receivers: {{ toJson $in }}
      processors: [memory_limiter, llmnormalize]
      exporters: [rootcause]
    # ... and out of it, with growth rates, time to exhaustion, the
    # prefix-cache hit ratio and exemplars added.
    metrics:
      receivers: [rootcause]
      processors: {{ toJson $out }}
      exporters: {{ include "otelcol-llmops.agentExporters" (dict "root" . "signal" "metrics") }}
    # Profiler and application spans: indexed by rootcause, and exported.
    traces:
      receivers: {{ toJson (concat $prof (list "otlp")) }}
      processors: {{ toJson (concat (list "memory_limiter" "llmnormalize") $out) }}
      exporters: {{ toJson (concat (list "rootcause") (include "otelcol-llmops.agentExporters" (dict "root" . "signal" "traces") | fromJsonArray)) }}
    # Leak suspects and OOM records of profiles: indexed, and exported.
    logs:
      receivers: {{ toJson (concat $prof (list "otlp")) }}
      processors: {{ toJson (concat (list "memory_limiter") $out) }}
      exporters: {{ toJson (concat (list "rootcause") (include "otelcol-llmops.agentExporters" (dict "root" . "signal" "logs") | fromJsonArray)) }}
    # Incidents.
    logs/incidents:
      receivers: [rootcause]
      processors: {{ toJson $out }}
      exporters: {{ include "otelcol-llmops.agentExporters" (dict "root" . "signal" "incidents") }}
{{- end -}}

{{- define "otelcol-llmops.gatewayPolicies" -}}
{{- $ts := .Values.gateway.tailSampling -}}
{{- if $ts.policies -}}
{{- toYaml $ts.policies -}}
{{- else -}}
{{- $policies := list -}}
{{- if $ts.keepProfiles -}}
{{- $policies = append $policies (dict "name" "profiles" "type" "string_attribute" "string_attribute" (dict "key" "llm.profile.file" "values" (list ".+") "enabled_regex_matching" true)) -}}
{{- end -}}
{{- if $ts.keepErrors -}}
{{- $policies = append $policies (dict "name" "errors" "type" "status_code" "status_code" (dict "status_codes" (list "ERROR"))) -}}
{{- end -}}
{{- if gt (int $ts.latencyThresholdMs) 0 -}}
{{- $policies = append $policies (dict "name" "slow" "type" "latency" "latency" (dict "threshold_ms" (int $ts.latencyThresholdMs))) -}}
{{- end -}}
{{- $policies = append $policies (dict "name" "sample" "type" "probabilistic" "probabilistic" (dict "sampling_percentage" $ts.samplingPercentage)) -}}
{{- toYaml $policies -}}
{{- end -}}
{{- end -}}

{{- define "otelcol-llmops.gatewayConfig" -}}
{{- $v := .Values -}}
{{- $p := include "otelcol-llmops.paths" . | fromYaml -}}
{{- $ts := $v.gateway.tailSampling -}}
receivers:
  otlp:
    protocols:
      {{- include "otelcol-llmops.otlpProtocols" . | nindent 6 }}

processors:
  memory_limiter:
    check_interval: 1s
    limit_percentage: 80
    spike_limit_percentage: 20
  # Whole traces are kept or dropped once decision_wait has passed since
  # their first span; late spans of a kept trace still pass (decision cache).
  tail_sampling:
    decision_wait: {{ $ts.decisionWait }}
    num_traces: {{ int $ts.numTraces }}
    expected_new_traces_per_sec: {{ int $ts.expectedNewTracesPerSec }}
    decision_cache:
      sampled_cache_size: {{ mul 2 (int $ts.numTraces) }}
      non_sampled_cache_size: {{ mul 2 (int $ts.numTraces) }}
    policies:
      {{- include "otelcol-llmops.gatewayPolicies" . | nindent 6 }}

exporters:
  debug:
    verbosity: {{ $v.exporters.debug.verbosity }}
  {{- include "otelcol-llmops.backendExporters" (dict "root" . "walDir" "${env:LLMOPS_STATE_DIR:-/var/lib/otelcol-llmops}") | nindent 2 }}

extensions:
  health_check:
    endpoint: {{ printf "${env:K8S_POD_IP}:%d" (int $v.ports.health) | toJson }}
  file_storage:
    directory: "${env:LLMOPS_STATE_DIR:-/var/lib/otelcol-llmops}/file_storage"
    create_directory: true
    compaction:
      on_start: true
      on_rebound: true
      directory: "${env:LLMOPS_STATE_DIR:-/var/lib/otelcol-llmops}/file_storage"
  {{- if $v.otlpReceiver.auth.enabled }}
  # The agents' token (the same Secret as theirs).
  bearertokenauth/otlp:
    filename: {{ printf "%s/token" $p.otlpAuth }}
  {{- end }}

service:
  extensions: {{ toJson (compact (list "health_check" "file_storage" (ternary "bearertokenauth/otlp" "" $v.otlpReceiver.auth.enabled))) }}
  telemetry:
    logs:
      level: info
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: "${env:K8S_POD_IP}"
                port: {{ int $v.ports.metrics }}
  pipelines:
    traces:
      receivers: [otlp]
      processors: [memory_limiter, tail_sampling]
      exporters: {{ include "otelcol-llmops.gatewayExporters" (dict "root" . "signal" "traces") }}
    metrics:
      receivers: [otlp]
      processors: [memory_limiter]
      exporters: {{ include "otelcol-llmops.gatewayExporters" (dict "root" . "signal" "metrics") }}
    # Logs, incidents among them.
    logs:
      receivers: [otlp]
      processors: [memory_limiter]
      exporters: {{ include "otelcol-llmops.gatewayExporters" (dict "root" . "signal" "logs") }}
{{- end -}}

{{/* The final configurations: rendered, then the config values merged over. */}}
{{- define "otelcol-llmops.agentConfigFinal" -}}
{{- $cfg := include "otelcol-llmops.agentConfig" . | fromYaml -}}
{{- if hasKey $cfg "Error" -}}
{{- fail (printf "internal: the rendered agent configuration is not YAML: %s" (get $cfg "Error")) -}}
{{- end -}}
{{- toYaml (mustMergeOverwrite $cfg (deepCopy .Values.config)) -}}
{{- end -}}

{{- define "otelcol-llmops.gatewayConfigFinal" -}}
{{- $cfg := include "otelcol-llmops.gatewayConfig" . | fromYaml -}}
{{- if hasKey $cfg "Error" -}}
{{- fail (printf "internal: the rendered gateway configuration is not YAML: %s" (get $cfg "Error")) -}}
{{- end -}}
{{- toYaml (mustMergeOverwrite $cfg (deepCopy .Values.gateway.config)) -}}
{{- end -}}

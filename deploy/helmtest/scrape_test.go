// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package helmtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The Prometheus scrape path (exporters.prometheus): ci/prometheus-scrape-values.yaml
// turns it on, and tests/e2e/chart_test.go validates that file's rendered
// configuration with the built collector like every ci/ file's.
const scrapeValues = "deploy/helm/otelcol-llmops/ci/prometheus-scrape-values.yaml"

// monitorAPIs render the Prometheus Operator's objects.
var monitorAPIs = []string{
	"--api-versions", "monitoring.coreos.com/v1/ServiceMonitor",
	"--api-versions", "monitoring.coreos.com/v1/PodMonitor",
}

func pipelineExporters(cfg map[string]any, pipeline string) []string {
	return strs(Get(cfg, "service", "pipelines", pipeline, "exporters"))
}

// named returns the element of a list of maps whose key has the value.
func named(l any, key, value string) map[string]any {
	for _, e := range list(l) {
		if m, ok := e.(map[string]any); ok && fmt.Sprint(m[key]) == value {
			return m
		}
	}
	return nil
}

func agentObject(t *testing.T, objs []Object, kind string) Object {
	t.Helper()
	for _, o := range Find(objs, kind) {
		if !strings.HasSuffix(o.Name(), "-gateway") {
			return o
		}
	}
	t.Fatalf("no agent %s rendered", kind)
	return nil
}

// checkScrapeExporter: prometheus/scrape on every interface at port, with
// the settings the values give.
func checkScrapeExporter(t *testing.T, cfg map[string]any, port int, resourceLabels, openMetrics bool, expiration string) {
	t.Helper()
	e, ok := Get(cfg, "exporters", "prometheus/scrape").(map[string]any)
	if !ok {
		t.Fatalf("no prometheus/scrape exporter: %v", Get(cfg, "exporters"))
	}
	if got, want := fmt.Sprint(e["endpoint"]), fmt.Sprintf("0.0.0.0:%d", port); got != want {
		t.Errorf("prometheus/scrape endpoint %s, want %s (reachable by Prometheus from other nodes)", got, want)
	}
	if hasKey(e, "resource_to_telemetry_conversion") {
		t.Error("prometheus/scrape uses the deprecated resource_to_telemetry_conversion")
	}
	if resourceLabels {
		if got := strs(Get(e, "resource_constant_labels", "included")); !slices.Equal(got, []string{"*"}) {
			t.Errorf("resource_constant_labels.included %v, want [*]", got)
		}
		excluded := strs(Get(e, "resource_constant_labels", "excluded"))
		for _, a := range []string{"service.name", "service.instance.id", "service.namespace"} {
			if !slices.Contains(excluded, a) {
				t.Errorf("resource_constant_labels.excluded %v: %s is already job or instance", excluded, a)
			}
		}
	} else if hasKey(e, "resource_constant_labels") {
		t.Errorf("resource_constant_labels with resourceToTelemetryConversion false: %v", e["resource_constant_labels"])
	}
	if e["enable_open_metrics"] != openMetrics {
		t.Errorf("enable_open_metrics %v, want %v", e["enable_open_metrics"], openMetrics)
	}
	if fmt.Sprint(e["metric_expiration"]) != expiration {
		t.Errorf("metric_expiration %v, want %s", e["metric_expiration"], expiration)
	}
}

// checkScrapePorts: the agents' container port and Service port prom-data.
func checkScrapePorts(t *testing.T, objs []Object, port int) {
	t.Helper()
	_, ctr := daemonSetContainer(t, objs)
	cp := named(ctr["ports"], "name", "prom-data")
	if cp == nil || fmt.Sprint(cp["containerPort"]) != fmt.Sprint(port) || cp["protocol"] != "TCP" {
		t.Errorf("container port prom-data %v, want TCP %d: %v", cp, port, ctr["ports"])
	}
	sp := named(Get(agentObject(t, objs, "Service"), "spec", "ports"), "name", "prom-data")
	if sp == nil || fmt.Sprint(sp["port"]) != fmt.Sprint(port) || sp["targetPort"] != "prom-data" {
		t.Errorf("Service port prom-data %v, want %d to targetPort prom-data", sp, port)
	}
}

// checkDataEndpoint: a monitor's endpoints are the own metrics' and the
// node's, at the same interval, the node's with honorLabels and the node
// label.
func checkDataEndpoint(t *testing.T, what string, endpoints any, interval string) {
	t.Helper()
	var ports []string
	for _, e := range list(endpoints) {
		ports = append(ports, fmt.Sprint(Get(e, "port")))
	}
	if !slices.Equal(ports, []string{"metrics", "prom-data"}) {
		t.Fatalf("%s endpoints on ports %v, want [metrics prom-data]", what, ports)
	}
	own, data := Get(endpoints, 0), Get(endpoints, 1)
	if Get(own, "interval") != interval || Get(data, "interval") != interval {
		t.Errorf("%s intervals %v and %v, want both %s", what, Get(own, "interval"), Get(data, "interval"), interval)
	}
	if Get(data, "honorLabels") != true {
		t.Errorf("%s prom-data endpoint without honorLabels: the applications' job and instance would become exported_job and exported_instance", what)
	}
	if Get(own, "honorLabels") != nil {
		t.Errorf("%s metrics endpoint with honorLabels %v: the own metrics take the target's labels", what, Get(own, "honorLabels"))
	}
	if r := named(Get(data, "relabelings"), "targetLabel", "node"); r == nil || !slices.Equal(strs(r["sourceLabels"]), []string{"__meta_kubernetes_pod_node_name"}) {
		t.Errorf("%s prom-data endpoint without the node label: %v", what, Get(data, "relabelings"))
	}
}

// TestPrometheusScrape: with exporters.prometheus on, the agents' metrics
// pipeline ends in prometheus/scrape (and needs no debug exporter then),
// the agents declare port prom-data, the Service, the ServiceMonitor or
// PodMonitor and the NetworkPolicy carry it.
func TestPrometheusScrape(t *testing.T) {
	r := render(t, scrapeValues, monitorAPIs...)
	objs := r.objs
	if r.gw != nil {
		t.Fatal("a gateway configuration rendered without the gateway")
	}
	checkScrapeExporter(t, r.agent, 9464, true, true, "5m")
	if got := pipelineExporters(r.agent, "metrics"); !slices.Equal(got, []string{"prometheus/scrape"}) {
		t.Errorf("metrics exporters %v, want [prometheus/scrape]: the scrape exporter alone, no debug fallback", got)
	}
	for _, pl := range []string{"traces", "logs"} {
		if got := pipelineExporters(r.agent, pl); !slices.Contains(got, "debug") || slices.Contains(got, "prometheus/scrape") {
			t.Errorf("%s exporters %v: want the debug fallback, and no metrics exporter", pl, got)
		}
	}
	checkScrapePorts(t, objs, 9464)

	sm := one(t, objs, "ServiceMonitor")
	checkDataEndpoint(t, "ServiceMonitor", Get(sm, "spec", "endpoints"), "30s")

	np := agentObject(t, objs, "NetworkPolicy")
	var rule map[string]any
	for _, in := range list(Get(np, "spec", "ingress")) {
		if named(Get(in, "ports"), "port", "prom-data") != nil {
			rule, _ = in.(map[string]any)
		}
	}
	if rule == nil {
		t.Fatalf("NetworkPolicy admits nobody to prom-data: %v", Get(np, "spec", "ingress"))
	}
	if named(rule["ports"], "port", "metrics") == nil {
		t.Errorf("prom-data is not in the rule of the metrics port: %v", rule)
	}
	if got := fmt.Sprint(Get(rule, "from", 0, "namespaceSelector", "matchLabels", "kubernetes.io/metadata.name")); got != "monitoring" || len(list(rule["from"])) != 1 {
		t.Errorf("prom-data admitted from %v, want networkPolicy.metricsFrom (the monitoring namespace)", rule["from"])
	}

	// The same with a PodMonitor, and both intervals following the value.
	objs = render(t, scrapeValues, append([]string{"--set", "podMonitor.enabled=true", "--set", "podMonitor.interval=15s"}, monitorAPIs...)...).objs
	if len(Find(objs, "ServiceMonitor")) != 0 {
		t.Error("a ServiceMonitor beside the PodMonitor")
	}
	pm := one(t, objs, "PodMonitor")
	checkDataEndpoint(t, "PodMonitor", Get(pm, "spec", "podMetricsEndpoints"), "15s")
	objs = render(t, scrapeValues, append([]string{"--set", "serviceMonitor.interval=10s"}, monitorAPIs...)...).objs
	checkDataEndpoint(t, "ServiceMonitor", Get(one(t, objs, "ServiceMonitor"), "spec", "endpoints"), "10s")
}

// TestPrometheusScrapeWithGateway: scraping is per node, so the agents keep
// prometheus/scrape beside the gateway; the gateway gets no such exporter,
// port or NetworkPolicy rule.
func TestPrometheusScrapeWithGateway(t *testing.T) {
	r := render(t, "deploy/helm/otelcol-llmops/ci/gateway-on-values.yaml", append([]string{"--set", "exporters.prometheus.enabled=true"}, monitorAPIs...)...)
	if r.gw == nil {
		t.Fatal("no gateway configuration")
	}
	if got := pipelineExporters(r.agent, "metrics"); !slices.Equal(got, []string{"otlp_grpc/gateway", "prometheus/scrape"}) {
		t.Errorf("agent metrics exporters %v, want [otlp_grpc/gateway prometheus/scrape]", got)
	}
	for _, pl := range []string{"traces", "logs", "logs/incidents"} {
		if slices.Contains(pipelineExporters(r.agent, pl), "prometheus/scrape") {
			t.Errorf("agent pipeline %s exports to prometheus/scrape", pl)
		}
	}
	checkScrapeExporter(t, r.agent, 9464, true, true, "5m")
	for name := range Get(r.gw, "exporters").(map[string]any) {
		if strings.HasPrefix(name, "prometheus/") || name == "prometheus" {
			t.Errorf("the gateway has a scrape exporter %s", name)
		}
	}
	checkScrapePorts(t, r.objs, 9464)
	gw := one(t, r.objs, "Deployment")
	if named(Get(gw, "spec", "template", "spec", "containers", 0, "ports"), "name", "prom-data") != nil {
		t.Error("the gateway declares prom-data")
	}
	for _, np := range Find(r.objs, "NetworkPolicy") {
		hasData := false
		for _, in := range list(Get(np, "spec", "ingress")) {
			hasData = hasData || named(Get(in, "ports"), "port", "prom-data") != nil
		}
		if gateway := strings.HasSuffix(np.Name(), "-gateway"); hasData == gateway {
			t.Errorf("NetworkPolicy %s: prom-data rule %v", np.Name(), hasData)
		}
	}
	checkDataEndpoint(t, "ServiceMonitor", Get(agentObject(t, r.objs, "ServiceMonitor"), "spec", "endpoints"), "30s")
	for _, sm := range Find(r.objs, "ServiceMonitor") {
		if eps := list(Get(sm, "spec", "endpoints")); strings.HasSuffix(sm.Name(), "-gateway") && len(eps) != 1 {
			t.Errorf("gateway ServiceMonitor endpoints %v, want its own metrics only", eps)
		}
	}
	// The PodMonitor selects the gateway's pods too; they declare no
	// prom-data port, so that endpoint yields no target there.
	pm := one(t, render(t, "deploy/helm/otelcol-llmops/ci/gateway-on-values.yaml", append([]string{"--set", "exporters.prometheus.enabled=true", "--set", "podMonitor.enabled=true"}, monitorAPIs...)...).objs, "PodMonitor")
	checkDataEndpoint(t, "PodMonitor", Get(pm, "spec", "podMetricsEndpoints"), "30s")
}

// TestPrometheusScrapeValues: the port and the exporter's settings follow
// the values; a port taken by another of the agent's fails the rendering.
func TestPrometheusScrapeValues(t *testing.T) {
	r := render(t, scrapeValues,
		"--set", "exporters.prometheus.port=9100",
		"--set", "exporters.prometheus.resourceToTelemetryConversion=false",
		"--set", "exporters.prometheus.enableOpenMetrics=false",
		"--set", "exporters.prometheus.metricExpiration=90s")
	checkScrapeExporter(t, r.agent, 9100, false, false, "90s")
	checkScrapePorts(t, r.objs, 9100)

	_, err := Template(t, "-f", scrapeValues, "--set", "exporters.prometheus.port=8888")
	if err == nil || !strings.Contains(err.Error(), "ports.metrics") {
		t.Errorf("exporters.prometheus.port = ports.metrics renders: %v", err)
	}

	// Off (the default): nothing of it.
	rendered := MustTemplate(t, monitorAPIs...)
	if s := string(rendered); strings.Contains(s, "prom-data") || strings.Contains(s, "prometheus/scrape") {
		t.Error("prom-data or prometheus/scrape rendered with exporters.prometheus.enabled false")
	}
	if got := len(list(Get(one(t, Documents(t, rendered), "ServiceMonitor"), "spec", "endpoints"))); got != 1 {
		t.Errorf("ServiceMonitor with %d endpoints by default, want 1", got)
	}
}

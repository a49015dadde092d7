// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"fmt"
	"slices"
	"strings"

	"github.com/llmops-otel/otelcol-llmops/internal/spec"
)

// Every metric name in a query comes from the registry (spec.PrometheusName)
// and every label from spec.PrometheusLabel, so a renamed metric or
// attribute changes the dashboards at the next `make generate` instead of
// leaving a panel blank; a name the registry does not define panics here.

// Resource attributes of the Kubernetes node and cluster: the chart sets
// k8s.node.name on everything an agent sends (nodeNameAttribute), and
// k8s.cluster.name is the operator's to add (a resource processor, or the
// chart's extra processors).
const (
	attrK8sClusterName = spec.AttrK8sClusterName
	attrK8sNodeName    = spec.AttrK8sNodeName
)

// Labels, as Prometheus spells them.
var (
	lCluster    = spec.PrometheusLabel(attrK8sClusterName)
	lNode       = spec.PrometheusLabel(attrK8sNodeName)
	lEngine     = spec.PrometheusLabel(spec.AttrEngineName)
	lModel      = spec.PrometheusLabel(spec.AttrGenAIRequestModel)
	lTarget     = spec.PrometheusLabel(spec.AttrEngineTarget)
	lHwID       = spec.PrometheusLabel(spec.AttrHwID)
	lPid        = spec.PrometheusLabel(spec.AttrProcessPid)
	lExe        = spec.PrometheusLabel(spec.AttrProcessExecutableName)
	lPod        = spec.PrometheusLabel(spec.AttrK8sPodName)
	lNamespace  = spec.PrometheusLabel(spec.AttrK8sNamespaceName)
	lTokenType  = spec.PrometheusLabel(spec.AttrGenAITokenType)
	lFinish     = spec.PrometheusLabel(spec.AttrFinishReason)
	lErrorType  = spec.PrometheusLabel(spec.AttrErrorType)
	lXid        = spec.PrometheusLabel(spec.AttrHwGpuXid)
	lThrottle   = spec.PrometheusLabel(spec.AttrHwGpuThrottleKind)
	lKind       = spec.PrometheusLabel(spec.IncidentKind)
	lSeverity   = spec.PrometheusLabel(spec.IncidentSeverity)
	lSubject    = spec.PrometheusLabel(spec.IncidentSubject)
	lIncidentID = spec.PrometheusLabel(spec.IncidentID)
	lLayer      = spec.PrometheusLabel(spec.IncidentLayer)
)

// The usual groupings: a GPU is (node, hw.id); an engine's series are
// grouped by engine and model (the model label is absent for some engines,
// which is one more group, not a lost series).
var (
	gpuBy     = []string{lNode, lHwID}
	processBy = []string{lNode, lHwID, lPid, lExe}
	engineBy  = []string{lEngine, lModel}
)

// variable is a dashboard variable that filters on one label.
type variable struct {
	name  string // the Grafana variable, used as $name
	label string // the Prometheus label it matches
}

var (
	varCluster = variable{"cluster", lCluster}
	varNode    = variable{"node", lNode}
	varEngine  = variable{"engine", lEngine}
	varModel   = variable{"model", lModel}
)

// scope says which variables filter a series.
type scope uint8

const (
	// nodeScope: GPU and per-process series, and the incident counter
	// (cluster, node).
	nodeScope scope = iota
	// engineScope: engine series (cluster, node, engine, model).
	engineScope
	// incidentScope: llm.incident.active. An incident of a GPU or a process
	// has no engine or model label; its engine and model matchers also
	// match the empty value ("$engine|"), so choosing an engine does not
	// hide the incidents of the node's GPUs.
	incidentScope
)

// matchers are the variable matchers of a scope, in order.
func (s scope) matchers() []string {
	m := []string{varCluster.match(), varNode.match()}
	switch s {
	case engineScope:
		m = append(m, varEngine.match(), varModel.match())
	case incidentScope:
		m = append(m, varEngine.matchOrAbsent(), varModel.matchOrAbsent())
	}
	return m
}

// match is `label=~"$name"`: with Grafana's All value (.*) it also matches a
// series without the label.
func (v variable) match() string { return fmt.Sprintf(`%s=~"$%s"`, v.label, v.name) }

// matchOrAbsent also matches a series without the label whatever is chosen.
func (v variable) matchOrAbsent() string { return fmt.Sprintf(`%s=~"$%s|"`, v.label, v.name) }

// sel is the selector of a metric's series (a histogram's: use bucket):
// name{variable matchers, extra matchers}.
func sel(metric string, s scope, extra ...string) string {
	pm := prom(metric)
	if pm.Type == "histogram" {
		panic(fmt.Sprintf("dashboards: %s is a histogram: select its _bucket, _sum or _count", metric))
	}
	return selector(pm.Name, s, extra)
}

// bucket is the selector of a histogram's _bucket series.
func bucket(metric string, s scope, extra ...string) string {
	return selector(series(metric, "_bucket"), s, extra)
}

// series is one sample name of a metric: its name plus suffix, which must be
// one the registry lists for it (a histogram's _bucket, _sum or _count).
func series(metric, suffix string) string {
	pm := prom(metric)
	name := pm.Name + suffix
	if !slices.Contains(pm.Series, name) {
		panic(fmt.Sprintf("dashboards: %s has no series %s (it has %v)", metric, name, pm.Series))
	}
	return name
}

func prom(metric string) spec.PrometheusMetric {
	m, ok := spec.LookupMetric(metric)
	if !ok {
		panic(fmt.Sprintf("dashboards: %q is not a unified metric", metric))
	}
	return spec.Prometheus(m)
}

func selector(name string, s scope, extra []string) string {
	return name + "{" + strings.Join(append(s.matchers(), extra...), ", ") + "}"
}

// eq is `label="value"` for an attribute; an enumerated attribute's value
// must be one the registry allows.
func eq(attr, value string) string {
	checkValue(attr, value)
	return fmt.Sprintf(`%s=%q`, spec.PrometheusLabel(attr), value)
}

// oneOf is `label=~"v1|v2"`, the values checked as in eq.
func oneOf(attr string, values ...string) string {
	for _, v := range values {
		checkValue(attr, v)
	}
	return fmt.Sprintf(`%s=~%q`, spec.PrometheusLabel(attr), strings.Join(values, "|"))
}

// notEmpty is `label!=""`.
func notEmpty(attr string) string { return fmt.Sprintf(`%s!=""`, spec.PrometheusLabel(attr)) }

func checkValue(attr, value string) {
	if values, isField := incidentLabel[attr]; isField {
		if !slices.Contains(values, value) {
			panic(fmt.Sprintf("dashboards: %q is not a value of %s (%v)", value, attr, values))
		}
		return
	}
	a, ok := spec.LookupAttribute(attr)
	if !ok {
		panic(fmt.Sprintf("dashboards: %q is not an attribute of the registry", attr))
	}
	if len(a.Values) > 0 && !slices.Contains(a.Values, value) {
		panic(fmt.Sprintf("dashboards: %q is not a value of %s (%v)", value, attr, a.Values))
	}
}

// incidentLabel are the incident fields used as labels, with the values
// they may take where the spec enumerates them.
var incidentLabel = map[string][]string{
	spec.IncidentKind:     spec.IncidentKinds(),
	spec.IncidentSeverity: {spec.SeverityWarning, spec.SeverityCritical},
	spec.IncidentQuadrant: {spec.QuadrantLatency, spec.QuadrantErrors, spec.QuadrantThroughput, spec.QuadrantSaturation},
}

// kindsMatch is `incident_kind=~"k1|k2"`, each kind one the spec defines.
func kindsMatch(kinds ...string) string { return oneOf(spec.IncidentKind, kinds...) }

// PromQL building blocks.

// by is `by (l1, l2)`.
func by(labels ...string) string { return "by (" + strings.Join(labels, ", ") + ")" }

// agg is `op by (labels) (expr)`.
func agg(op string, labels []string, expr string) string {
	return op + " " + by(labels...) + " (" + expr + ")"
}

// rate is `rate(selector[$__rate_interval])`.
func rate(selector string) string { return "rate(" + selector + "[$__rate_interval])" }

// increase is `increase(selector[$__rate_interval])`.
func increase(selector string) string { return "increase(" + selector + "[$__rate_interval])" }

// quantile is the q-quantile of a histogram's rate, per group.
func quantile(q float64, metric string, s scope, labels []string, extra ...string) string {
	return fmt.Sprintf("histogram_quantile(%g, %s)", q,
		agg("sum", append(slices.Clone(labels), "le"), rate(bucket(metric, s, extra...))))
}

// orZero is `expr or on (labels) 0 * zeros`: the groups of zeros that expr
// has no series for appear with the value 0, so a panel of something that
// happens rarely (a throttle reason, an error) shows 0 instead of nothing.
func orZero(expr string, labels []string, zeros string) string {
	return expr + " or on (" + strings.Join(labels, ", ") + ") 0 * " + zeros
}

// legend is a legend format naming each label's value.
func legend(labels ...string) string {
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = "{{" + l + "}}"
	}
	return strings.Join(parts, " ")
}

# otelcol-llmops — build, run and test the distribution.
#
#   make build     install the pinned ocb into .tools/ and build _build/otelcol-llmops
#   make demo      a simulated GPU node, live incidents and demo-report.html
#                  (DEMO_DURATION=60 stops after 60 s; default: until Ctrl-C)
#   make run       build, then run the collector on distro/config.yaml
#   make llmprof   build _build/llmprof (profile summary / diff / export)
#   make floor     the collector core alone, outside the repository (bench/load -floor)
#   make test      unit tests, then end-to-end tests against the built binary
#   make lint      gofmt, go vet and golangci-lint (.golangci.yml, also on bench/textparse;
#                  the pinned golangci-lint is installed into a cache once per machine)
#   make lint-bench  golangci-lint on all of bench/ (slow on a fresh machine)
#   make spdx      add the copyright and SPDX license header where it is missing
#   make prometheus-rules  promtool check/test of distro/prometheus
#   make generate  regenerate committed code and docs (mdatagen, docs/*.md from the
#                  registry, distro/grafana dashboards)
#   make vulncheck govulncheck against an offline vulnerability database
#                  (vulncheck.mk; in make test)
#   make bench     benchmarks
#   make image     the container image, built here without a registry (deploy/image)
#   make helm-lint lint the chart in deploy/helm (defaults and each ci/ values file)
#   make manifests regenerate deploy/manifests from the chart

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go

OCB_VERSION := v0.161.0
TOOLS_DIR   := $(CURDIR)/.tools
OCB         := $(TOOLS_DIR)/builder-$(OCB_VERSION)
MDATAGEN    := $(TOOLS_DIR)/mdatagen
BUILD_DIR   := _build
BINARY      := $(BUILD_DIR)/otelcol-llmops
CONFIG      ?= distro/config.yaml
FAKENVML    := $(BUILD_DIR)/fakenvml/libnvidia-ml.so.1

# go-nvml's cgo preamble includes NVML's header, whose deprecation notices
# would otherwise fill every cold build's output.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

# Everything the binary is compiled from: the distribution's Go sources
# (components are packages of the root module, replaced into the build).
GO_SOURCES := $(shell find . -name '*.go' -not -path './$(BUILD_DIR)/*' -not -path './.tools/*' -not -path './tests/*' -not -path './demo/*' -not -path './bench/*' -not -name '*_test.go' 2>/dev/null)

ENGINEREPLAY  := $(BUILD_DIR)/enginereplay
DEMO_DURATION ?= 0
LOAD_DURATION ?= 5m

# Helm for the chart in deploy/helm (lint, render, deploy/manifests), from the
# Go module proxy into a cache outside the repository, keyed by version;
# installed only when missing. HELM=/path/to/helm uses another one.
HELM_VERSION := v3.22.0
HELM_DIR     := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/otelcol-llmops/tools/helm-$(HELM_VERSION)
HELM         ?= $(HELM_DIR)/helm
CHART        := deploy/helm/otelcol-llmops
# Stamped as upstream's release build is: its version, and the Kubernetes
# version of the client-go it builds with (v0.37: 1.37), which `helm template`
# assumes and lint's deprecation checks use.
HELM_LDFLAGS := -s -w -X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) $(foreach p,helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil,-X $(p).k8sVersionMajor=1 -X $(p).k8sVersionMinor=37)

# golangci-lint for `make lint` (its configuration: .golangci.yml), from the Go
# module proxy into a cache outside the repository, keyed by version;
# installed only when missing. GOLANGCI_LINT=/path/to/golangci-lint uses
# another one.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT_DIR     := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/otelcol-llmops/tools/golangci-lint-$(GOLANGCI_LINT_VERSION)
GOLANGCI_LINT         ?= $(GOLANGCI_LINT_DIR)/golangci-lint

# kube-apiserver and kubectl for the tests against a real Kubernetes API
# server, built from the wrapper module internal/tools/kube (its go.mod pins
# the version) into a cache outside the repository, keyed by version: only
# the first run on a machine pays the build (about 18 CPU-minutes: some 10
# minutes on 2 idle cores).
KUBE_VERSION := $(shell awk '{ for (i = 1; i < NF; i++) if ($$i == "k8s.io/kubernetes" && $$(i+1) ~ /^v/) print $$(i+1) }' internal/tools/kube/go.mod)
KUBE_DIR     := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/otelcol-llmops/tools/kube-$(KUBE_VERSION)
KUBE_BINS    := $(KUBE_DIR)/kube-apiserver $(KUBE_DIR)/kubectl
# What upstream's build stamps in, so the server reports its real version
# (helm and kubectl compare against it).
KUBE_VERSION_PARTS := $(subst ., ,$(patsubst v%,%,$(KUBE_VERSION)))
KUBE_LDFLAGS := -s -w $(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version,-X $(p).gitVersion=$(KUBE_VERSION) -X $(p).gitMajor=$(word 1,$(KUBE_VERSION_PARTS)) -X $(p).gitMinor=$(word 2,$(KUBE_VERSION_PARTS)) -X $(p).gitTreeState=clean)

.PHONY: all build llmprof fakenvml floor fuzz run demo test unit-test e2e-test lint generate bench clean tools
.PHONY: image
.PHONY: tools-kube
.PHONY: tools-helm helm-lint manifests
.PHONY: tools-golangci-lint lint-bench fuzz-textparse
.PHONY: prometheus-rules
.PHONY: spdx

all: build

tools: $(OCB) $(MDATAGEN)

$(OCB):
	@mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR) $(GO) install go.opentelemetry.io/collector/cmd/builder@$(OCB_VERSION)
	mv $(TOOLS_DIR)/builder $(OCB)

$(MDATAGEN): internal/tools/go.mod internal/tools/go.sum
	@mkdir -p $(TOOLS_DIR)
	$(GO) build -C internal/tools -o $(MDATAGEN) go.opentelemetry.io/collector/cmd/mdatagen

# Generating the distribution's sources (and resolving its modules) is only
# redone when the recipe or the root module's requirements change; otherwise a
# build is a plain, cached `go build`.
$(BUILD_DIR)/go.mod: builder-config.yaml go.mod go.sum $(OCB)
	$(OCB) --config builder-config.yaml --skip-compilation
	@touch $@

$(BINARY): $(BUILD_DIR)/go.mod $(GO_SOURCES)
	$(OCB) --config builder-config.yaml --skip-generate --skip-get-modules
	@touch $@

build: $(BINARY)

# The fake NVML library: the GPU of the end-to-end tests and of the demo.
$(FAKENVML): tests/fakenvml/fakenvml.c
	@mkdir -p $(dir $@)
	gcc -shared -fPIC -O2 -Wall -Wextra -Werror -std=gnu11 -o $@ $< -lpthread -lm

fakenvml: $(FAKENVML)

# The floor of bench/load -floor: the collector core alone (OTLP receiver,
# batch processor, OTLP exporter) from the same ocb release, built outside
# the repository (bench/load/floor/builder-config.yaml), keyed by version.
FLOOR_DIR := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/otelcol-llmops/floor-$(OCB_VERSION)
FLOOR     := $(FLOOR_DIR)/otelcol-floor

$(FLOOR): bench/load/floor/builder-config.yaml $(OCB)
	@mkdir -p $(FLOOR_DIR)
	cd $(FLOOR_DIR) && $(OCB) --config $(CURDIR)/bench/load/floor/builder-config.yaml

floor: $(FLOOR)

$(ENGINEREPLAY): $(shell find tests/enginereplay -name '*.go' -not -name '*_test.go')
	$(GO) build -o $@ ./tests/enginereplay/cmd/enginereplay

# Built only when missing (no prerequisites: a fresh clone's newer go.mod must
# not trigger a rebuild); into a scratch directory first, so an interrupted
# build never leaves a binary behind.
$(KUBE_BINS) &:
	@echo "building kube-apiserver and kubectl $(KUBE_VERSION) into $(KUBE_DIR) (once per machine; several minutes)"
	rm -rf $(KUBE_DIR)/.build && mkdir -p $(KUBE_DIR)/.build
	CGO_ENABLED=0 $(GO) build -C internal/tools/kube -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $(KUBE_DIR)/.build/ k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl
	mv $(KUBE_DIR)/.build/kube-apiserver $(KUBE_DIR)/.build/kubectl $(KUBE_DIR)/
	rmdir $(KUBE_DIR)/.build

tools-kube: $(KUBE_BINS)

# Into a scratch directory first, so an interrupted build leaves no binary.
$(HELM_DIR)/helm:
	@echo "installing helm $(HELM_VERSION) into $(HELM_DIR) (once per machine; a few minutes)"
	rm -rf $(HELM_DIR)/.build && mkdir -p $(HELM_DIR)/.build
	GOBIN=$(HELM_DIR)/.build $(GO) install -trimpath -ldflags '$(HELM_LDFLAGS)' helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	mv $(HELM_DIR)/.build/helm $@
	rmdir $(HELM_DIR)/.build

tools-helm: $(HELM)

# Into a scratch directory first, so an interrupted build leaves no binary.
$(GOLANGCI_LINT_DIR)/golangci-lint:
	@echo "installing golangci-lint $(GOLANGCI_LINT_VERSION) into $(GOLANGCI_LINT_DIR) (once per machine; a few minutes)"
	rm -rf $(GOLANGCI_LINT_DIR)/.build && mkdir -p $(GOLANGCI_LINT_DIR)/.build
	GOBIN=$(GOLANGCI_LINT_DIR)/.build $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(GOLANGCI_LINT_DIR)/.build/golangci-lint $@
	rmdir $(GOLANGCI_LINT_DIR)/.build

tools-golangci-lint: $(GOLANGCI_LINT)

# The chart, strictly linted with its defaults and with each ci/ values file.
helm-lint: tools-helm
	$(HELM) lint --strict $(CHART)
	@for f in $(CHART)/ci/*.yaml; do \
		echo "helm lint --strict -f $$f"; \
		$(HELM) lint --strict $(CHART) -f $$f || exit 1; \
	done

# deploy/manifests: the chart rendered with its defaults, for kubectl apply
# (deploy/helmtest fails when it is out of date).
manifests: tools-helm
	$(HELM) template otelcol-llmops $(CHART) --namespace otelcol-llmops > deploy/manifests/otelcol-llmops.yaml

# The container image localhost/otelcol-llmops:<dist.version> and :dev, built
# on this machine with nothing pulled (deploy/image/README.md). `make test`
# builds it under CI (.ci/run installs podman) and wherever podman is
# installed; elsewhere the image test skips.
image: build
	deploy/image/build.sh

TEST_IMAGE := $(if $(CI)$(shell command -v podman 2>/dev/null),image)

# llmprof: profiles at the terminal (summary, diff, export).
llmprof:
	$(GO) build -o $(BUILD_DIR)/llmprof ./cmd/llmprof

# The whole story on a laptop: see README.md, "Demo".
demo: build $(FAKENVML) $(ENGINEREPLAY)
	$(GO) run ./demo -duration $(DEMO_DURATION)s $(DEMO_ARGS)

run: build
	./$(BINARY) --config $(CONFIG)

unit-test:
	$(GO) test -race -count=1 ./...
	# The differential test of the exposition parser against Prometheus's
	# own; in the bench module, so Prometheus stays out of the distribution.
	cd bench && $(GO) test -race -count=1 ./textparse

# The suite takes about 12 minutes on 2 shared cores (710 s on a fresh
# machine on 2026-12-03); the timeout leaves room for a slower CI machine
# without hiding a test that hangs.
e2e-test: build $(FAKENVML)
	OTELCOL_LLMOPS_BIN=$(CURDIR)/$(BINARY) OTELCOL_LLMOPS_FAKENVML=$(CURDIR)/$(FAKENVML) $(GO) test -tags e2e -count=1 -timeout 25m ./tests/e2e/...

# Every parser of outside input has a fuzz target; CI runs each briefly.
# Each runs a fixed number of executions (about 10 s on 2 cores), not a
# wall-clock -fuzztime: Go 1.26's fuzz coordinator can fail a target with a
# bare "context deadline exceeded" when the -fuzztime deadline races a busy
# worker (golang/go#75804, fixed in Go 1.27), and a count has no deadline.
# FUZZ_TIME=30s (or 1000x) overrides every target's budget.
FUZZ_TIME ?=
# The differential fuzz target lives in the bench module (fuzz-textparse).
TEXTPARSE_FUZZ := 200000x
FUZZ_TARGETS := \
	./receiver/llmenginereceiver/internal/expo:FuzzConvert:40000x \
	./internal/promtext:FuzzFastFloat:200000x \
	./receiver/nvmlreceiver/internal/procinfo:FuzzParseCgroup:300000x \
	./receiver/nvmlreceiver/internal/procinfo:FuzzParseStartTime:400000x \
	./internal/profiles/kineto:FuzzParse:25000x \
	./internal/profiles/snapshot:FuzzImport:1500x \
	./internal/profiles/nsys:FuzzRows:40000x \
	./receiver/llmenginereceiver:FuzzInfoModel:40000x \
	./exporter/alertwebhookexporter:FuzzJudgeResponse:30000x \
	./processor/llmnormalizeprocessor:FuzzProcessMetrics:20000x

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; budget=$${rest#*:}; \
		budget=$${FUZZ_TIME:-$$budget}; \
		echo "fuzz $$name ($$pkg, $$budget)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $$budget $$pkg || exit 1; \
	done

# The differential fuzz target against Prometheus's parser: a search for new
# disagreements on malformed input, not a gate (a new one would fail CI by
# chance). Each one it finds is fixed or pinned in TestDocumentedDifferences,
# and its input committed under bench/textparse/testdata, which
# `go test ./textparse` (unit-test) replays with the seeds every run.
fuzz-textparse:
	@budget=$${FUZZ_TIME:-$(TEXTPARSE_FUZZ)}; echo "fuzz FuzzAgreesWithTextparse (bench/textparse, $$budget)"; \
	cd bench && $(GO) test -run '^$$' -fuzz '^FuzzAgreesWithTextparse$$' -fuzztime $$budget ./textparse

# The shipped Prometheus rules: syntax, and their unit tests (input series,
# each rule firing and not firing). promtool comes with Debian's prometheus
# package (.ci/run installs it); tests/promrules runs the same under go test.
PROMTOOL ?= promtool
prometheus-rules:
	$(PROMTOOL) check rules distro/prometheus/*.rules.yml
	$(PROMTOOL) test rules distro/prometheus/tests/*.test.yml

test: lint prometheus-rules tools-helm unit-test fuzz vulncheck tools-kube $(TEST_IMAGE) e2e-test

lint: tools-golangci-lint
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./tests/...
	$(GOLANGCI_LINT) run ./...
	# In the bench module, the differential test and the shared helpers:
	# the side-by-side programs import contrib's receivers and processors,
	# whose type-checking takes 25 minutes on a fresh machine (make
	# lint-bench lints them too).
	cd bench && $(GOLANGCI_LINT) run --config ../.golangci.yml ./textparse/... ./internal/...

lint-bench: tools-golangci-lint
	cd bench && $(GOLANGCI_LINT) run --config ../.golangci.yml ./...

# The copyright and license header on every Go file not generated by a tool,
# C file and shell script (tests/hygiene checks it under go test).
spdx:
	$(GO) run ./tests/hygiene/cmd/spdx

generate: $(MDATAGEN)
	@for f in $$(find receiver processor exporter connector extension -name metadata.yaml -not -path '*/testdata/*' 2>/dev/null); do \
		echo "mdatagen $$f"; (cd $$(dirname $$f) && $(MDATAGEN) metadata.yaml); \
	done
	$(GO) run ./internal/spec/cmd/specdoc docs/metric-spec.md docs/engine-mappings.md docs/prometheus-names.md
	$(GO) run ./internal/dashboards/cmd/dashgen -out distro/grafana

# Every benchmark, each program's output kept in $(BENCH_OUT), and at the end
# every target's line with its verdict (MET / NOT MET), once each.
BENCH_OUT := $(BUILD_DIR)/bench
bench: build $(FAKENVML) $(FLOOR)
	@mkdir -p $(BENCH_OUT)
	OTELCOL_LLMOPS_FAKENVML=$(CURDIR)/$(FAKENVML) $(GO) test -run '^$$' -bench . -benchmem ./... | tee $(BENCH_OUT)/go-benchmarks.txt
	cd bench && $(GO) run ./llmengine | tee ../$(BENCH_OUT)/llmengine.txt
	cd bench && $(GO) run ./textparse | tee ../$(BENCH_OUT)/textparse.txt
	cd bench && $(GO) run ./llmnormalize | tee ../$(BENCH_OUT)/llmnormalize.txt
	cd bench && $(GO) run ./profileimport | tee ../$(BENCH_OUT)/profileimport.txt
	cd bench && $(GO) run ./snapshot | tee ../$(BENCH_OUT)/snapshot.txt
	# The built agent under a full node's load for 5 minutes (about 7 with
	# its idle phase), then the floor (the collector core alone) under the
	# same spans/s: LOAD_DURATION=30s for a quick run.
	cd bench && $(GO) run ./load -duration $(LOAD_DURATION) -floor -floorbin $(FLOOR) | tee ../$(BENCH_OUT)/load.txt
	@echo; echo "== the targets and their verdicts (full output in $(BENCH_OUT)/)"
	@grep -H -E '\b(NOT )?MET\b' $(BENCH_OUT)/*.txt | sed 's|^$(BENCH_OUT)/||; s|\.txt:[[:space:]]*| |' | awk '!seen[$$0]++'

clean:
	rm -rf $(BUILD_DIR)

include vulncheck.mk

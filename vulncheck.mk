# make vulncheck: known vulnerabilities (govulncheck) in the distribution,
# against a database built on this machine. Included by the Makefile.
#
# govulncheck is built from the tools module (internal/tools/go.mod pins
# golang.org/x/vuln) and the database from the OSV files of the
# golang.org/x/vulndb module pinned in internal/tools/vulndb.txt, both into
# the tool cache outside the repository, keyed by version, and only when
# missing. The only network use is the module proxy, when those modules (or
# a module the scanned code needs) are not in the module cache yet;
# govulncheck itself reads nothing but the local database.
#
# Two scans: the root module (./...: the components, llmprof, the
# generators) and the ocb-generated module in _build, whose build list is
# every upstream component's, at the versions the binary is built with.
# Only reachable findings count (a vulnerable function called), as in
# govulncheck's own text mode; each must be fixed or listed with its reason
# in vulncheck-allow.txt, and a listed id no scan finds any more fails too.

VULN_VERSION    := $(shell awk '$$1 == "golang.org/x/vuln" { print $$2 }' internal/tools/go.mod)
VULNDB_VERSION  := $(shell awk '$$1 == "golang.org/x/vulndb" { print $$2 }' internal/tools/vulndb.txt)
VULNDB_SUM      := $(shell awk '$$1 == "golang.org/x/vulndb" { print $$3 }' internal/tools/vulndb.txt)
VULN_CACHE      := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/otelcol-llmops/tools
GOVULNCHECK     := $(VULN_CACHE)/govulncheck-$(VULN_VERSION)/govulncheck
VULNDB_DIR      := $(VULN_CACHE)/vulndb-$(VULNDB_VERSION)
VULNCHECK_ALLOW := vulncheck-allow.txt
VULNCHECK_OUT   := $(BUILD_DIR)/vulncheck

.PHONY: vulncheck tools-vulncheck

# Into a scratch directory first, so an interrupted build leaves no binary.
$(GOVULNCHECK):
	@test -n "$(VULN_VERSION)" || { echo "internal/tools/go.mod requires no golang.org/x/vuln"; exit 1; }
	rm -rf $(dir $@).build && mkdir -p $(dir $@).build
	$(GO) build -C internal/tools -trimpath -o $(dir $@).build/govulncheck golang.org/x/vuln/cmd/govulncheck
	mv $(dir $@).build/govulncheck $@
	rmdir $(dir $@).build

# `vulncheck db` checks the download's hash against the pin and writes the
# database beside its final place, renaming it in when complete.
$(VULNDB_DIR)/index/modules.json:
	@test -n "$(VULNDB_VERSION)" -a -n "$(VULNDB_SUM)" || { echo "internal/tools/vulndb.txt: no 'golang.org/x/vulndb <version> <h1 hash>' line"; exit 1; }
	@mkdir -p $(VULN_CACHE)
	rm -rf $(VULNDB_DIR)
	cd $(VULN_CACHE) && $(GO) mod download -json golang.org/x/vulndb@$(VULNDB_VERSION) > $(VULN_CACHE)/vulndb-$(VULNDB_VERSION).download.json
	$(GO) run ./internal/vulncheck/cmd/vulncheck db -download $(VULN_CACHE)/vulndb-$(VULNDB_VERSION).download.json -sum $(VULNDB_SUM) -out $(VULNDB_DIR)
	rm -f $(VULN_CACHE)/vulndb-$(VULNDB_VERSION).download.json

tools-vulncheck: $(GOVULNCHECK) $(VULNDB_DIR)/index/modules.json

vulncheck: tools-vulncheck $(BINARY)
	@mkdir -p $(VULNCHECK_OUT)
	$(GOVULNCHECK) -db file://$(VULNDB_DIR) -format json ./... > $(VULNCHECK_OUT)/root.json
	$(GOVULNCHECK) -C $(BUILD_DIR) -db file://$(VULNDB_DIR) -format json ./... > $(VULNCHECK_OUT)/build.json
	$(GO) run ./internal/vulncheck/cmd/vulncheck check -allow $(VULNCHECK_ALLOW) $(VULNCHECK_OUT)/root.json $(VULNCHECK_OUT)/build.json

# rukpak-kapp. The two commands a newcomer needs are `make run` and `make test`.
SHELL := /usr/bin/env bash
export GONOSUMDB ?= carvel.dev
# Every go command here builds as the release does (no cgo, no path of this
# machine in a binary, no debug information: the release strips it, and not
# generating it makes a cold compile a fifth faster). The compiler's output
# depends on these settings, so with them the release suite's image build
# links what vet, the unit tests and the suites already compiled instead of
# compiling the graph again. (For a debugger, run go build yourself.)
export CGO_ENABLED := 0
export GOFLAGS := -trimpath -gcflags=all=-dwarf=false
BIN := $(CURDIR)/bin
CONTROLLER_GEN := $(BIN)/controller-gen
# make test compiles every suite's test binary here, in one go command,
# before the lanes start (PREBUILT=1 in the lanes).
SUITES := $(BIN)/suites

.PHONY: generated vet prebuilt cross-compile fuzz-background fuzz-tar tools-background lane-e2e-a lane-e2e-b run run-tools conformance conformance-test conformance-olm conformance-olm-test conformance-olm-baseline test lane-rukpak lane-suites lane-catalogs e2e-a e2e-b packaging-a packaging-b fault-test takeover-test nokapp-test tools build generate manifests verify unit fuzz api-test reconciler-test e2e-test packaging-test release-test image release bench-convert bench-scale bench-bundles bench-smoke

## run: the product on an embedded local control plane, whatever KUBECONFIG
## says; `make run CLUSTER=kubeconfig` runs the adapter against the cluster
## KUBECONFIG names instead (ARGS go to its `rukpak-kapp run`)
## (the adapter is built after the tools: the Kubernetes components leave it
## the standard library and the Kubernetes packages compiled)
run: run-tools build
	RUKPAK_KAPP_RUN_CLUSTER=$(CLUSTER) $(BIN)/rukpak-kapp-dev $(ARGS)

## test: everything. The suites that run a local control plane mostly wait on
## timers (sync periods, backoff windows) and keep under half of two cores
## busy, so they run in five lanes side by side (docs/benchmarks.md), of
## about equal length: each half of the end-to-end suite (its own local
## control plane), the first then the OLM v1 suite (operator-controller's
## own suite against rukpak-kapp), the second then the smoke benchmarks;
## rukpak's end-to-end suite as the conformance suite (which mostly waits
## out its one-minute timeouts), then half of the packaging suite; the
## other half of the packaging suite (its own local control plane and
## kapp-controller); the API, reconciler and no-kapp-controller suites,
## the release suite last.
##
## Before the lanes, every binary they run is built once (prebuilt), so four
## lanes on two cores never compile or link the same package side by side,
## and the release suite's second platform is compiled (cross-compile, at the
## lowest priority) while the lanes wait, and so is the tar reader's fuzz
## target (its instrumented compile, then ten seconds, at the lowest
## priority; fuzz-background). gofmt and vet and the unit
## tests run before the lanes, not alongside them: measured on a fresh machine
## when the lanes still compiled their own binaries, the lanes left them too
## little of the two cores (vet alone took 23 minutes at nice 10) and the
## run took longer (docs/benchmarks.md).
##
## The tools every lane needs are built first; those only one lane needs
## late (rukpak's binaries, rukpak v0.16's, operator-controller's and
## catalogd) are built alongside the lanes at a lower priority (tools-background),
## on what the lanes leave of the two cores, and each suite that runs one
## asks for it before it starts: cached by then, or built then (build.sh
## builds a module once, the second caller waiting for the first).
##
## Every phase, lane and suite prints how long it took (">> phase NAME took
## Ns"); .ci/run closes with them in one table, alongside the budgets of
## .ci/budgets (docs/development.md).
test:
	@$(call phase,tools,bash test/tools/build.sh $(FIRST_TOOLS))
	@$(call phase,verify,$(MAKE) --no-print-directory verify)
	@$(call phase,unit,$(MAKE) --no-print-directory unit)
	@$(call phase,prebuilt,$(MAKE) --no-print-directory prebuilt)
	@$(call phase,lanes,$(MAKE) --no-print-directory -j7 --output-sync=target PREBUILT=1 lane-e2e-a lane-e2e-b lane-rukpak lane-suites lane-catalogs cross-compile fuzz-background tools-background)

# The tar reader's fuzz target alongside the lanes, at the lowest priority:
# it takes what the lanes and tools-background leave of the two cores. It
# reads what a registry, git or http server sends, and compiles with the
# standard library only (45 CPU seconds with its ten of fuzzing); the other
# four targets' instrumented compile of the Kubernetes libraries took 400
# more, which the two cores do not have during the lanes (docs/development.md):
# their seed corpora run in unit, and make fuzz runs them all.
fuzz-background:
	@$(call phase,fuzz,nice -n 19 $(MAKE) --no-print-directory fuzz-tar)
fuzz-tar:
	go test ./adapter/fetch/unpack -run '^$$' -fuzz '^FuzzExtractTar$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x

# The tools one lane needs late, alongside the lanes, below them in priority.
tools-background:
	@$(call phase,tools-background,nice -n 10 bash test/tools/build.sh $(LATE_TOOLS))

# $(call phase,NAME,COMMAND): COMMAND, then a line saying how long it took.
# Under a lane (LANE, which the lanes pass down), the line names it.
phase = t0=$$(date +%s); $(2); rc=$$?; echo ">> phase $(1) took $$(($$(date +%s) - t0))s (exit $$rc)$(if $(LANE), in $(LANE))"; exit $$rc

# The suites' test binaries, the adapter and the harness's helpers, each
# compiled once in one go command per kind.
SUITE_PKGS := api reconciler e2e conformance takeover nokapp packaging release olm
prebuilt:
	go build -o $(BIN)/ ./cmd/rukpak-kapp ./test/harness/cmd/... ./test/bench/scale
	go test -c -o $(SUITES)/ $(addprefix ./test/,$(SUITE_PKGS))

# The image's arm64 binary, built as the release suite builds it and thrown
# away: the suite's build then finds every package compiled.
cross-compile:
	d=$$(mktemp -d); nice -n 19 go run ./release binaries -platforms linux/arm64 -out $$d; rc=$$?; rm -rf $$d; exit $$rc

# $(call suite,PKG,TIMEOUT,ARGS): the suite of test/PKG with go test or,
# under make test (PREBUILT=1), its prebuilt test binary run in its package's
# directory as go test runs it, with the adapter and helpers from bin/.
# The last line it prints says how long it took.
suite = t0=$$(date +%s); $(if $(PREBUILT),(cd test/$(1) && RUKPAK_KAPP_PREBUILT=$(BIN) $(SUITES)/$(1).test -test.v -test.timeout $(2) $(3)),go test -v -count=1 -timeout $(2) ./test/$(1)/... $(3)); \
	rc=$$?; echo ">> suite $@ took $$(($$(date +%s) - t0))s (exit $$rc)$(if $(LANE), in $(LANE))"; exit $$rc

# One target per line: a lane runs its suites one after the other. The
# release suite goes last, so that cross-compile has had the lanes' idle
# time to compile its second platform.
# The take-over suite goes last in the shortest lane: it runs rukpak
# v0.24.0 and v0.16.0, which tools-background builds meanwhile.
lane-e2e-b:
	@$(call phase,$@,$(MAKE) --no-print-directory LANE=$@ e2e-b && $(MAKE) --no-print-directory LANE=$@ bench-smoke && $(MAKE) --no-print-directory LANE=$@ takeover-test)
# The OLM v1 suite runs operator-controller's own tests, whose waits are
# theirs (a minute for an install that includes kapp waiting for the
# operator's Deployment): it goes last in a lane, past the start, when
# every lane boots its control plane at once on the two cores.
lane-e2e-a:
	@$(call phase,$@,$(MAKE) --no-print-directory LANE=$@ e2e-a && $(MAKE) --no-print-directory LANE=$@ conformance-olm-test)
lane-rukpak:
	@$(call phase,$@,$(MAKE) --no-print-directory LANE=$@ conformance-test && $(MAKE) --no-print-directory LANE=$@ packaging-a)
# The catalog installs' half of the packaging suite.
lane-catalogs:
	@$(call phase,$@,$(MAKE) --no-print-directory LANE=$@ packaging-b)
lane-suites:
	@$(call phase,$@,$(MAKE) --no-print-directory LANE=$@ api-test && $(MAKE) --no-print-directory LANE=$@ reconciler-test && $(MAKE) --no-print-directory LANE=$@ nokapp-test && $(MAKE) --no-print-directory LANE=$@ release-test)

## tools: build etcd, kube-apiserver, kapp-controller and the Carvel tools once (cached outside the checkout)
## (make run needs RUN_TOOLS only; rukpak v0.24.0's binaries and its e2e suite, rukpak v0.16.0's
## binaries (the take-over suite), and operator-controller v0.9.0 with its e2e suite and catalogd
## v0.10.0 (the OLM v1 lane) are for the tests)
## (kbld and imgpkg, one module: kapp-controller runs kbld for Carvel Packages and package
## repositories, make run's catalog among them; imgpkg copies package repositories in the packaging suite)
RUN_TOOLS := kustomize etcd kube-apiserver kube-controller-manager kube-scheduler kwok kapp-controller vendir ytt helm kapp kbld imgpkg
OLM_TOOLS := operator-controller operator-controller-e2e.test catalogd
TAKEOVER_TOOLS := rukpak-core rukpak-helm rukpak-v0.16-core rukpak-v0.16-helm
# make test builds FIRST_TOOLS before the lanes and LATE_TOOLS alongside them.
FIRST_TOOLS := controller-gen $(RUN_TOOLS) rukpak-e2e.test
LATE_TOOLS := $(TAKEOVER_TOOLS) $(OLM_TOOLS)
TOOLS := $(FIRST_TOOLS) $(LATE_TOOLS)
tools:
	bash test/tools/build.sh $(TOOLS)
run-tools:
	bash test/tools/build.sh $(RUN_TOOLS)

build:
	go build -o $(BIN)/ ./cmd/rukpak-kapp ./test/harness/cmd/rukpak-kapp-dev

unit:
	go test -count=1 $$(go list ./... | grep -v /test/) ./test/harness

## fuzz: each fuzz target briefly (FUZZTIME=10s by default)
FUZZTIME ?= 10s
fuzz:
	go test ./adapter/translate -run '^$$' -fuzz '^FuzzApp$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x
	go test ./adapter/status -run '^$$' -fuzz '^FuzzCompute$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x
	$(MAKE) --no-print-directory fuzz-tar
	go test ./convert -run '^$$' -fuzz '^FuzzObjects$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x
	go test ./api/v1alpha1 -run '^$$' -fuzz '^FuzzConversion$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x

api-test:
	$(call suite,api,20m,-ginkgo.v)

## reconciler-test: the adapter on a real API server, without kapp-controller (the specs write App status)
reconciler-test:
	$(call suite,reconciler,15m,-ginkgo.v)

e2e-test: takeover-test
	$(MAKE) --no-print-directory -j2 --output-sync=target e2e-a e2e-b
## e2e-a, e2e-b: the end-to-end suite in two halves of about equal time, split by
## spec file, each on a local control plane of its own; together, every spec once
E2E_A_FILES := (v1alpha1|gitmore|tls|corpus|faults|drift|reapplyfail|lostnode|webhook|generation|sharding|metrics|crdsafety)_test\.go
e2e-a:
	$(call suite,e2e,45m,-ginkgo.v -ginkgo.focus-file '$(E2E_A_FILES)' -ginkgo.label-filter '!fault-load')
e2e-b:
	$(call suite,e2e,45m,-ginkgo.v -ginkgo.skip-file '$(E2E_A_FILES)' -ginkgo.label-filter '!fault-load')
## fault-test: 60 BundleDeployments installing and upgrading while kapp-controller is killed and
## kube-apiserver stopped (a few minutes; not in make test; docs/reliability.md)
fault-test: tools
	go test -v -count=1 -timeout 30m ./test/e2e/... -ginkgo.v -ginkgo.label-filter 'fault-load'
## takeover-test: rukpak v0.24.0 installs, then rukpak-kapp takes over in place (and hands back)
takeover-test:
	bash test/tools/build.sh $(TAKEOVER_TOOLS)
	$(call suite,takeover,20m,-ginkgo.v)

## nokapp-test: the adapter started on a cluster without kapp-controller, which is installed afterwards
nokapp-test:
	$(call suite,nokapp,10m,-ginkgo.v)

## conformance: rukpak v0.24.0's own end-to-end suite, unchanged, against rukpak-kapp (as root);
## writes docs/conformance.md
conformance:
	bash test/tools/build.sh rukpak-e2e.test $(RUN_TOOLS)
	export CONFORMANCE_REPORT=$(CURDIR)/docs/conformance.md; $(call suite,conformance,30m,-ginkgo.v)
# The suite alone, for make test (whose tools target built everything): it
# checks every spec's outcome as the report lists it, and leaves the report,
# whose timings change with every run, as it is.
conformance-test:
	$(call suite,conformance,30m,-ginkgo.v)

## conformance-olm: OLM v1 (operator-controller v0.9.0, catalogd v0.10.0) installing through rukpak-kapp,
## and operator-controller's own end-to-end suite, unchanged (as root); writes docs/conformance-olm.md
conformance-olm:
	bash test/tools/build.sh $(OLM_TOOLS) $(RUN_TOOLS)
	export OLM_CONFORMANCE_REPORT=$(CURDIR)/docs/conformance-olm.md; $(call suite,olm,30m,-ginkgo.v)
# The suite alone, for make test: as conformance-test, the report is left
# as it is.
conformance-olm-test:
	bash test/tools/build.sh $(OLM_TOOLS)
	$(call suite,olm,30m,-ginkgo.v)
## conformance-olm-baseline: the same suite against rukpak v0.16.0 itself (as root): fails if a test's
## outcome there differs from the baseline docs/conformance-olm.md records
conformance-olm-baseline:
	bash test/tools/build.sh $(OLM_TOOLS) rukpak-v0.16-core rukpak-v0.16-helm $(RUN_TOOLS)
	export OLM_BASELINE=rukpak-v0.16.0; $(call suite,olm,30m,-ginkgo.v)

## packaging-test: kapp-controller's own packaging API (as root), render --as-package installed through PackageInstalls
packaging-test:
	$(call suite,packaging,20m,-ginkgo.v)
## packaging-a, packaging-b: the packaging suite in two halves of about equal time, split by spec
## file (b: the catalog installs), each on a local control plane of its own; together, every spec once
PACKAGING_B_FILES := /(catalog|approval|deps|walk|walkhealth|adopt|global|installkind|airgap)_test\.go
packaging-a:
	$(call suite,packaging,20m,-ginkgo.v -ginkgo.skip-file '$(PACKAGING_B_FILES)')
packaging-b:
	$(call suite,packaging,20m,-ginkgo.v -ginkgo.focus-file '$(PACKAGING_B_FILES)')

## release-test: make image and make release against the local control plane (image, manifest, package, upgrade)
release-test:
	$(call suite,release,20m,-ginkgo.v)

generate:
	bash test/tools/build.sh controller-gen
	$(CONTROLLER_GEN) object paths=./api/...

manifests: generate
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/v1alpha1 paths=./api/v1alpha2 output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/catalogs/... output:crd:artifacts:config=config/catalogs

## verify: generated files match the API types, code is formatted and vetted
verify: generated vet
# generated: the generated files made again; under CI they must be what is committed
generated: manifests
	@if [ -n "$$CI" ]; then git diff --exit-code -- api config || { echo "generated files are stale: run make manifests and commit"; exit 1; }; fi
vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	go vet ./...

## image: build the multi-arch image without a container runtime and push it: make image REGISTRY=ghcr.io/you
REGISTRY ?=
VERSION ?=
PLATFORMS ?= linux/amd64,linux/arm64
RELEASE_DIR ?= bin/release
RELEASE_FLAGS = -registry "$(REGISTRY)" -version "$(VERSION)" -platforms "$(PLATFORMS)"
image:
	go run ./release image $(RELEASE_FLAGS)

## release: the image, bin/release/rukpak-kapp.yaml (config/default pinned by digest) and the Carvel
## package (bundles pushed to REGISTRY; Package, PackageMetadata, PackageRepository in bin/release)
release:
	bash test/tools/build.sh kustomize ytt
	go run ./release release $(RELEASE_FLAGS) -out $(RELEASE_DIR)

## bench-convert: registry+v1 conversion, rukpak-kapp alongside rukpak v0.24.0 (docs/benchmarks.md)
bench-convert:
	cd test/bench/convert && go test -run '^$$' -bench . -benchtime 5x -count 3

## bench-scale: N plain bundles with rukpak-kapp, rukpak v0.24.0 and bare Apps (N=100, IDLE=10m by default;
## ALONE=1 gives each system the machine to itself, as N=1000 needs here; SHARDS=K spreads the Apps over K
## namespaces with a kapp-controller each; CONCURRENCY is kapp-controller's -concurrency; docs/benchmarks.md)
N ?= 100
IDLE ?= 10m
ALONE ?=
SHARDS ?= 1
CONCURRENCY ?= 10
bench-scale:
	go run ./test/bench/scale -n $(N) -idle $(IDLE) -shards $(SHARDS) -concurrency $(CONCURRENCY) $(if $(ALONE),-alone)

## bench-bundles: N Bundles on their own (rukpak v0.16's Bundle API): the unpack, IDLE at rest and a
## restart, without kapp-controller (N=100 by default; docs/benchmarks.md)
bench-bundles:
	go run ./test/bench/scale -standalone -n $(N) -idle $(IDLE)

## bench-smoke: the scale benchmark at N=5 with a short idle window, and the Bundles one, so they cannot rot
# Under make test the benchmark and the adapter it starts are prebuilt.
SCALE := $(if $(PREBUILT),RUKPAK_KAPP_PREBUILT=$(BIN) $(BIN)/scale,go run ./test/bench/scale)
bench-smoke:
	@bash test/tools/build.sh rukpak-core
	@$(call phase,$@,$(SCALE) -n 5 -idle 20s -drift 3 -check && $(SCALE) -standalone -n 5 -idle 5s -check)

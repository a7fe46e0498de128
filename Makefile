# azolla's front door. `make help` lists every target.

GO        ?= go
BIN       ?= bin/azolla
LEAN_BIN  ?= bin/azolla-lean
GOBIN_DIR := $(shell $(GO) env GOPATH)/bin
STATICCHECK := $(GOBIN_DIR)/staticcheck
WORKFLOWCHECK := $(GOBIN_DIR)/workflowcheck

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# Two builds of one main: the devserver tag adds the embedded Temporal server
# and Web UI that `azolla dev` runs; the default build leaves them out.
.PHONY: build
build: ## Build bin/azolla: every command, azolla dev's embedded Temporal server and Web UI included
	$(GO) build -tags devserver -o $(BIN) ./cmd/azolla

.PHONY: build-lean
build-lean: ## Build bin/azolla-lean: every command but dev, without the Temporal server, as the image ships it (workers, scripts, images)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $(LEAN_BIN) ./cmd/azolla

.PHONY: run
run: build ## Build and run azolla dev (Temporal + Web UI + store + workers) with a demo objective
	./$(BIN) dev --demo

.PHONY: test
test: ## Run the whole test suite, the production topology's proof last (PostgreSQL and Redis tests fail under CI=true when they are down)
	$(GO) test -count=1 ./...
	@$(MAKE) --no-print-directory test-topology

# The production topology of docker-compose.yml without Docker: a Temporal
# server process on PostgreSQL (its schema set up by the server's own
# tooling into fresh databases), azolla temporal setup and migrate, then the
# control plane, two workers and a remote worker as processes, each with the
# environment of its compose service; twenty objectives to DONE through a
# worker and the control plane SIGKILLed, azolla verify clean; the frontend
# on TLS, mTLS and an API key. It proves correctness only: the topology's
# lifecycles/s against azolla dev is BenchmarkTopology's, in make bench. A few minutes
# once built. Fails under CI=true when PostgreSQL or Redis is down.
.PHONY: test-topology
test-topology: ## Prove docker-compose.yml's topology as processes: Temporal on PostgreSQL, control plane, workers, remote worker, Redis
	AZOLLA_TEST_TOPOLOGY=1 $(GO) test -count=1 -timeout 30m ./deploy/topology/

.PHONY: test-soak
test-soak: ## Check claim and outcome histories under injected faults for many seeds: both store backends (AZOLLA_SOAK_SEEDS, default 50) and each lifecycle scenario (a tenth as many); minutes
	@mkdir -p bin
	@{ AZOLLA_SOAK_SEEDS=$${AZOLLA_SOAK_SEEDS:-50} $(GO) test -count=1 -timeout 60m -run 'TestLinearizable_ClaimHistoriesUnderFaults$$|TestFaults_' -v \
		./internal/store/sqlstore/ ./integration/ > bin/soak.out 2>&1; echo $$? > bin/soak.rc; }
	@grep -E '^(--- FAIL|FAIL|ok)|histories checked|visualization' bin/soak.out || true
	@test "$$(cat bin/soak.rc)" = 0 || { echo "soak failed: bin/soak.out has the whole run"; exit 1; }

.PHONY: test-race
test-race: ## Run the test suite under the race detector
	$(GO) test -count=1 -race ./...

# The Gitea forge is tested against a real Gitea, built from its Go module
# at the version internal/forge/giteatest pins and cached under
# $(go env GOCACHE)/azolla-gitea: minutes the first time on a machine,
# nothing after. The tests build it themselves when it is missing.
.PHONY: gitea
gitea: ## Build the Gitea the forge tests and forge-dev run (cached; minutes the first time)
	$(GO) run ./deploy/forgedev -build

.PHONY: test-forge
test-forge: gitea ## Test the forges, Gitea's against a real Gitea on the local PostgreSQL (fails under CI=true when it is down)
	$(GO) test -count=1 ./internal/forge/...

.PHONY: forge-dev
forge-dev: ## Run a Gitea on the local PostgreSQL with a repository azolla/demo, print its logins and tokens, until Ctrl-C
	$(GO) run ./deploy/forgedev

# Every benchmark is a fixed-size workload timed next to its baseline in the
# same run (-benchtime 1x), one package at a time (-p 1) so no benchmark runs
# beside another; the last table sets each ratio against its goal.
BENCH_OUT ?= bin/bench.out

.PHONY: bench
bench: ## Benchmarks, each next to a baseline measured in the same run, then every ratio against its goal
	@mkdir -p $(dir $(BENCH_OUT))
	@{ $(GO) test -count=1 -p 1 -run '^$$' -bench . -benchtime 1x -timeout 20m ./... 2>&1; echo $$? > $(BENCH_OUT).rc; } | tee $(BENCH_OUT)
	@test "$$(cat $(BENCH_OUT).rc)" = 0 || { echo "benchmarks failed"; exit 1; }
	@$(GO) run ./cmd/benchreport < $(BENCH_OUT)

.PHONY: bench-idle
bench-idle: ## azolla dev's idle CPU with 100, 1,000 and 10,000 objectives waiting, I1 against the empty process (about 20 minutes)
	@mkdir -p $(dir $(BENCH_OUT))
	@{ AZOLLA_BENCH_IDLE_SIZES=$${AZOLLA_BENCH_IDLE_SIZES:-100,1000,10000} $(GO) test -count=1 -run '^$$' -bench IdleCost -benchtime 1x -timeout 60m ./integration/ 2>&1; echo $$? > $(BENCH_OUT).idle.rc; } | tee $(BENCH_OUT).idle
	@test "$$(cat $(BENCH_OUT).idle.rc)" = 0 || { echo "benchmark failed"; exit 1; }
	@$(GO) run ./cmd/benchreport -target bench-idle < $(BENCH_OUT).idle

.PHONY: bench-scale
bench-scale: ## 10,000 lifecycles against 100, through one azolla dev (S10k) and on the production topology (S10k-topology); about an hour
	@mkdir -p $(dir $(BENCH_OUT))
	@{ AZOLLA_BENCH_SCALE=$${AZOLLA_BENCH_SCALE:-100,10000} $(GO) test -count=1 -run '^$$' -bench 'BenchmarkScale$$' -benchtime 1x -timeout 120m ./integration/ 2>&1; echo $$? > $(BENCH_OUT).scale.rc; } | tee $(BENCH_OUT).scale
	@test "$$(cat $(BENCH_OUT).scale.rc)" = 0 || { echo "benchmark failed"; exit 1; }
	@{ AZOLLA_BENCH_SCALE=$${AZOLLA_BENCH_SCALE:-100,10000} $(GO) test -count=1 -run '^$$' -bench 'BenchmarkTopologyScale$$' -benchtime 1x -timeout 120m ./deploy/topology/ 2>&1; echo $$? > $(BENCH_OUT).scale.rc; } | tee -a $(BENCH_OUT).scale
	@test "$$(cat $(BENCH_OUT).scale.rc)" = 0 || { echo "benchmark failed"; exit 1; }
	@$(GO) run ./cmd/benchreport -target bench-scale < $(BENCH_OUT).scale

.PHONY: lint
lint: $(STATICCHECK) $(WORKFLOWCHECK) ## gofmt, go vet, staticcheck, workflowcheck, the Markdown's relative links and the repository's shape
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) run ./cmd/doclinks $$(git ls-files '*.md' '*.go' ':!:*/testdata/*' ':!:cmd/doclinks/*')
	$(GO) run ./cmd/shapecheck
	$(GO) vet ./...
	$(GO) vet -tags devserver ./cmd/azolla
	$(GO) vet -tags azollahistory ./cmd/azolla
	$(STATICCHECK) ./...
	$(WORKFLOWCHECK) ./workflows/...

$(STATICCHECK):
	$(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2

$(WORKFLOWCHECK):
	$(GO) install go.temporal.io/sdk/contrib/tools/workflowcheck@v0.6.0

# Recorded histories are append-only: each recording is a new generation
# folder workflows/testdata/gNNN beside the old ones, which stay and replay.
HISTORY_GEN = $(shell n=$$(ls -d workflows/testdata/g[0-9][0-9][0-9] 2>/dev/null | wc -l); printf 'workflows/testdata/g%03d' $$((n + 1)))

.PHONY: record-histories
record-histories: ## Record a new generation of workflow histories from real runs (old ones are kept)
	@test ! -e $(HISTORY_GEN) || { echo "$(HISTORY_GEN) exists: generations are never overwritten"; exit 1; }
	mkdir -p $(HISTORY_GEN)
	AZOLLA_RECORD_HISTORIES=$(CURDIR)/$(HISTORY_GEN) $(GO) test -count=1 -run 'TestLifecycle|TestWake|TestTrack|TestDeadline|TestForge_FullLoop|TestForge_IntakeFromAnIssueToItsMerge|TestBestOfN_TheCandidateThatPasses|TestPatch_ARoundWhoseBudgetRanOutIsResumedByTheNext|TestPatch_AnAgentsQuestionIsAnsweredAndTheRoundGoesOn|TestLimits_ARepositoryLimitHoldsAcrossWorkersAndAKill' ./integration/ \
		|| { rm -rf $(HISTORY_GEN); exit 1; }
	$(GO) test -count=1 -run TestReplay ./workflows/

.PHONY: migrate
migrate: build ## Apply store migrations to the configured store
	./$(BIN) migrate

.PHONY: clean
clean: ## Remove build output
	rm -rf bin

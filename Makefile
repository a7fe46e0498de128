# azolla's front door. `make help` lists every target.

GO        ?= go
BIN       ?= bin/azolla
GOBIN_DIR := $(shell $(GO) env GOPATH)/bin
STATICCHECK := $(GOBIN_DIR)/staticcheck

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/azolla
	$(GO) build -o $(BIN) ./cmd/azolla

.PHONY: run
run: build ## Build azolla, migrate the embedded SQLite store and show what to do next
	@./$(BIN) migrate
	@echo
	@echo "azolla is built at $(BIN) and its SQLite store is ready (data dir: $$(./$(BIN) config show --output json | sed -n 's/.*"data_dir": "\(.*\)".*/\1/p'))."
	@echo "What works today:"
	@echo "  ./$(BIN) config show                  the effective configuration (secrets masked)"
	@echo "  ./$(BIN) schema list                  the record kinds azolla validates"
	@echo "  ./$(BIN) schema validate objective schemas/testdata/objective/valid.json"
	@echo "  make test                                the whole test suite (SQLite and PostgreSQL)"
	@echo "  make bench                               claim throughput against plain SQL"
	@echo "The Temporal lifecycle (embedded dev server, Web UI, workers, approvals) is not built yet;"
	@echo "until it lands, 'make run' stops here."

.PHONY: test
test: ## Run the whole test suite (PostgreSQL tests fail under CI=true when it is down)
	$(GO) test -count=1 ./...

.PHONY: test-race
test-race: ## Run the test suite under the race detector
	$(GO) test -count=1 -race ./...

.PHONY: bench
bench: ## Benchmarks, each next to a baseline measured in the same run
	$(GO) test -count=1 -run '^$$' -bench . -benchtime 1x ./...

.PHONY: lint
lint: $(STATICCHECK) ## gofmt, go vet and staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

$(STATICCHECK):
	$(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: migrate
migrate: build ## Apply store migrations to the configured store
	./$(BIN) migrate

.PHONY: clean
clean: ## Remove build output
	rm -rf bin

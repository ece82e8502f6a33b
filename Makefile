# Fennec build, run and test. `make run` and `make test` are all a newcomer needs.
GO        ?= go
BIN       := bin
PKG       := github.com/fennec-forge/fennec
# A semver-shaped version, as clients that parse /version expect: the tag on
# a tagged commit (v0.1.0 -> 0.1.0); N commits after it, the next patch as a
# pre-release (0.1.1-dev.N+gSHA); with no tag, 0.0.0-dev+SHA. ".dirty" marks
# a build from uncommitted changes.
VERSION   ?= $(shell d=$$(git describe --tags --long --dirty --match 'v[0-9]*.[0-9]*.[0-9]*' 2>/dev/null); \
	if [ -z "$$d" ]; then \
		echo "0.0.0-dev+$$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$$(git diff --quiet HEAD 2>/dev/null || echo .dirty)"; \
	else echo "$$d" | awk -F- '{ split(substr($$1, 2), v, "."); dirty = ($$4 == "dirty") ? ".dirty" : ""; \
		if ($$2 == 0 && dirty == "") print v[1] "." v[2] "." v[3]; \
		else print v[1] "." v[2] "." v[3] + 1 "-dev." $$2 "+" $$3 dirty }'; fi)
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -s -w -X $(PKG)/core.version=$(VERSION) -X $(PKG)/core.revision=$(REVISION)
PLUGINS   := $(notdir $(patsubst %/,%,$(dir $(wildcard plugins/*/main.go))))
PROTOS    := $(shell find sdk -name '*.proto' 2>/dev/null)
# Go modules of the repository: the server and the SDK plugin authors import.
# `./...` stops at a nested go.mod, so test and vet visit each.
MODULES   := . sdk

# Module suites that `make test` runs a second time on the PostgreSQL store
# engine (FENNEC_TEST_STORE=postgres: every app of core/fennectest gets a
# database of its own on a real server), besides bbolt in the main run: a
# named subset, since the whole server's suite twice would double make
# test. These cover the store, the events and the work queues through
# users, projects, permissions, snippets, comments, webhook deliveries,
# mail, issues, merge requests (merges racing pushes), OAuth and activity,
# restarts on the same data included. Left out: repository (its git
# benchmarks and large pushes take past go test's 10 minutes there) and ci
# (a pipeline of hundreds of jobs makes one table's id and count rows hot:
# ARCHITECTURE.md, "Past one machine"). Their multi-node paths run on
# PostgreSQL in hostapp's and core's tests of several nodes.
PG_SUITES := ./modules/identity/ ./modules/projects/ ./modules/snippets/ ./modules/collab/ ./modules/webhooks/ ./modules/notifications/ \
	./modules/issues/ ./modules/mergerequests/ ./modules/oauth/ ./modules/activity/

.PHONY: build run test test-postgres vet fmt-check bench bench-git bench-pages lighthouse proto clean version docs-ui

## build: bin/fennec and every plugin under bin/plugins/
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/fennec ./hostapp
	@mkdir -p $(BIN)/plugins
	@for p in $(PLUGINS); do \
		echo "$(GO) build -o $(BIN)/plugins/$$p ./plugins/$$p"; \
		$(GO) build -ldflags '$(LDFLAGS) -X main.version=$(VERSION)' -o $(BIN)/plugins/$$p ./plugins/$$p || exit 1; \
	done

## docs-ui: refresh the vendored Swagger UI of /api/v4/docs from npm (pinned)
SWAGGER_UI_VERSION := 5.35.0
docs-ui:
	@tmp=$$(mktemp -d) && cd $$tmp && npm pack -q swagger-ui-dist@$(SWAGGER_UI_VERSION) >/dev/null && tar xzf swagger-ui-dist-*.tgz && \
	cp package/swagger-ui-bundle.js package/swagger-ui.css package/swagger-ui-bundle.js.LICENSE.txt package/LICENSE package/NOTICE $(CURDIR)/core/api/docsui/ && \
	rm -rf $$tmp && echo "core/api/docsui: swagger-ui-dist $(SWAGGER_UI_VERSION)"

## version: the version make build stamps into the binaries
version:
	@echo $(VERSION)

## run: build and start the stock host on http://127.0.0.1:8080 with data in ./data,
## git over SSH on $(SSH_LISTEN) (SSH_LISTEN=127.0.0.1:0 picks a free port, shown in the log)
SSH_LISTEN ?= 127.0.0.1:2222
run: build
	./$(BIN)/fennec serve --ssh-listen $(SSH_LISTEN)

## test: vet, formatting, and every test with the race detector (go test's
## own vet pass is off: make vet has run every analyzer on the same code)
# The race runtime sleeps a second before every race-built process exits
# (atexit_sleep_ms, 1000 by default) so that goroutines still running can
# report: a second per test binary, ~20 s of make test on 2 cores. Tests
# stop their servers before they return, so a short grace is enough.
# The modules' tests run side by side: the SDK's fill the cores that the
# server's last, longest packages leave idle (~20 s of make test).
test: export GORACE ?= atexit_sleep_ms=20
test: vet fmt-check
	@test -x /usr/sbin/slapd || echo "make test: /usr/sbin/slapd is missing, so the LDAP tests will be SKIPPED (apt-get install slapd ldap-utils; .ci/run installs them)"
	@pids=""; for m in $(MODULES); do \
		echo "(cd $$m && $(GO) test -race -vet=off -count=1 ./...)"; \
		(cd $$m && $(GO) test -race -vet=off -count=1 ./...) & pids="$$pids $$!"; \
	done; rc=0; for p in $$pids; do wait $$p || rc=1; done; exit $$rc
	@$(MAKE) --no-print-directory test-postgres

## test-postgres: the PG_SUITES module suites on the PostgreSQL store engine
## (a private server per test binary; skipped without PostgreSQL, unless
## FENNEC_REQUIRE_POSTGRES=1 or CI is set)
test-postgres: export GORACE ?= atexit_sleep_ms=20
test-postgres:
	FENNEC_TEST_STORE=postgres $(GO) test -race -vet=off -count=1 $(PG_SUITES)

vet:
	@for m in $(MODULES); do \
		echo "(cd $$m && $(GO) vet ./...)"; \
		(cd $$m && $(GO) vet ./...) || exit 1; \
	done

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

## bench: the benchmarks, with the figures the issues ask for
bench:
	$(GO) test -run '^$$' -bench . -benchtime 3s ./...

## bench-pages: the web pages against the JSON API calls that give the same
## data: the code pages on the 20,000-commit reference repository (issue 28),
## the issue list of 10,000 issues, an issue and a merge request of 500
## comments, and a merge request of 1,000 changed files (issue 29)
bench-pages:
	$(GO) test -run '^$$' -bench BenchmarkPages -benchtime 200x ./modules/repository/
	$(GO) test -run '^$$' -bench 'BenchmarkIssuePages|BenchmarkMergeRequestPages' -benchtime 20x -p 1 ./modules/issues/ ./modules/mergerequests/

## lighthouse: Lighthouse's scores of the project and blob pages of a fresh
## fennec serve (needs chromium and npm install -g lighthouse@12.2.3)
lighthouse:
	scripts/lighthouse.sh

## bench-git: git over smart HTTP, Fennec against C git's http-backend on the
## 20,000-commit reference repository (clone, --depth 1 clone, fetch, push);
## flags through GITBENCH_FLAGS, e.g. GITBENCH_FLAGS='-commits 2000 -files 500'
bench-git:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/fennec ./hostapp
	$(GO) build -o $(BIN)/gitbench ./modules/repository/internal/gitbench
	./$(BIN)/gitbench -fennec $(BIN)/fennec $(GITBENCH_FLAGS)

## proto: regenerate the committed protobuf code under sdk/ (needs protoc:
## apt-get install protobuf-compiler; the Go plugins are pinned tools in the
## server's go.mod, so the SDK module stays free of them)
proto:
	@if [ -z "$(PROTOS)" ]; then echo "no .proto files under sdk/"; exit 0; fi; \
	command -v protoc >/dev/null || { echo "make proto: protoc not found (apt-get install protobuf-compiler)"; exit 1; }; \
	gen_go="$$($(GO) tool -n protoc-gen-go)" && gen_grpc="$$($(GO) tool -n protoc-gen-go-grpc)" && \
	echo "protoc $(PROTOS)" && \
	protoc --proto_path=. \
	       --plugin=protoc-gen-go="$$gen_go" --plugin=protoc-gen-go-grpc="$$gen_grpc" \
	       --go_out=. --go_opt=paths=source_relative \
	       --go-grpc_out=. --go-grpc_opt=paths=source_relative $(PROTOS)

clean:
	rm -rf $(BIN)

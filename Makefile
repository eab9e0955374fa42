# The Claude Code CLI versions the end-to-end tests run against (pinned):
# the oldest supported first, the current one last. The e2e suite's default
# (currentCLIVersion in e2e/cliversion_test.go) must be the last; a test
# checks it. Readers of this file (a Dockerfile's pin check) take the same
# line: CLAUDE_CODE_OLDEST and CLAUDE_CODE_CURRENT are derived from it.
CLAUDE_CODE_VERSIONS := 2.1.197 2.1.332
CLAUDE_CODE_OLDEST   := $(firstword $(CLAUDE_CODE_VERSIONS))
CLAUDE_CODE_CURRENT  := $(lastword $(CLAUDE_CODE_VERSIONS))
# Each version is installed in its own directory: CLAUDE_CODE_DIR/<version>.
# The e2e harness (installedCLI) and scripts/record-transcripts.sh look there
# too: change them together.
CLAUDE_CODE_DIR      := .cache/claude-code
VERSION              ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

# claude_bin is the installed CLI of version (or channel) $(1).
claude_bin = $(abspath $(CLAUDE_CODE_DIR))/$(1)/node_modules/.bin/claude
# claude_env runs `claude --version` without touching the user's setup.
claude_env = DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1

.PHONY: build demo demo-fleet try deps check fmt-check test soak e2e-long e2e-check e2e-deps e2e-latest bench bench-summary fuzz fuzz-ci deploy-test cluster-bin cluster-test cross test-arm64-qemu clean

# Static (CGO_ENABLED=0), as the release binaries: a binary linked with
# cgo (the default where a C compiler is found, for net and os/user) starts
# through the dynamic loader and spends about 1.7 ms more CPU on every
# invocation (BENCHMARKS.md, issue 40).
build:
	CGO_ENABLED=0 go build -ldflags "-X main.version=$(VERSION)" -o bin/malarun ./cmd/malarun

# A real rescue in under a minute, with nothing but a clone: the pinned
# CLI against the project's fake API, which stalls mid-answer once; malarun
# kills the tree, resumes the session, and `malarun show` tells the story
# (scripts/demo.sh; everything in a temporary folder, removed at the end).
demo: build e2e-deps-$(CLAUDE_CODE_CURRENT)
	go build -o bin/fakeapi ./cmd/fakeapi
	@DEMO_KEEP=$(KEEP) scripts/demo.sh $(abspath bin/malarun) $(abspath bin/fakeapi) $(call claude_bin,$(CLAUDE_CODE_CURRENT))

# The laptop fleet recipe with no key: six issues against the fake API,
# then malarun summary (scripts/demo-fleet.sh; KEEP=1 keeps its folder).
demo-fleet: build e2e-deps-$(CLAUDE_CODE_CURRENT)
	go build -o bin/fakeapi ./cmd/fakeapi
	@DEMO_KEEP=$(KEEP) scripts/demo-fleet.sh $(abspath bin/malarun) $(abspath bin/fakeapi) $(call claude_bin,$(CLAUDE_CODE_CURRENT))

# Your own task against the fake API, with no key (README, "Try it on your
# own task"): make try PROMPT=task.md [FAULT=stall] [WORKDIR=dir]. The fake
# model runs the prompt's ```sh blocks as Bash calls; the run has a HOME
# of its own and short timeouts (a MALARUN_* variable replaces one), and
# its state is kept and the commands to look at it printed
# (scripts/try.sh).
try: build e2e-deps-$(CLAUDE_CODE_CURRENT)
	go build -o bin/fakeapi ./cmd/fakeapi
	@TRY_FAULT=$(FAULT) TRY_WORKDIR=$(WORKDIR) TRY_ISSUE=$(ISSUE) scripts/try.sh $(abspath bin/malarun) $(abspath bin/fakeapi) \
		$(abspath $(CLAUDE_LINK)) "$(PROMPT)"

.PHONY: man install

# The manual page, made by the binary from its own command tree (the
# hidden `malarun man`), so it says what --help says. Generated, not
# committed (git-ignored): it would drift with every help text.
man: build
	@mkdir -p man
	bin/malarun man > man/malarun.1.tmp && mv man/malarun.1.tmp man/malarun.1

# Installs the binary and the manual page under $(DESTDIR)$(PREFIX), as
# packagers expect: make install PREFIX=/usr DESTDIR=pkgroot. Installing
# into /usr/local needs root; PREFIX=$HOME/.local does not.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man

install: build man
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MANDIR)/man1"
	install -m 0755 bin/malarun "$(DESTDIR)$(BINDIR)/malarun"
	install -m 0644 man/malarun.1 "$(DESTDIR)$(MANDIR)/man1/malarun.1"

.PHONY: release

# Release binaries: static (CGO_ENABLED=0), without local paths (-trimpath)
# or symbol tables (-s -w), stamped with VERSION, one per platform in dist/
# as malarun-<version>-<os>-<arch>, and dist/SHA256SUMS for them
# (sha256sum -c reads it). dist/ is made afresh: no stale binary of another
# version is listed. One platform: make release RELEASE_PLATFORMS=linux/arm64.
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64 darwin/arm64 darwin/amd64

release:
	rm -rf dist && mkdir -p dist
	@set -e; for p in $(RELEASE_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; out=dist/malarun-$(VERSION)-$$os-$$arch; \
		echo "$$out"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath \
			-ldflags "-s -w -X main.version=$(VERSION)" -o "$$out" ./cmd/malarun; \
	done
	cd dist && if command -v sha256sum >/dev/null; then sha256sum malarun-*; \
		else shasum -a 256 malarun-*; fi > SHA256SUMS
	@cat dist/SHA256SUMS

# The inner loop (docs/testing.md, CONTRIBUTING.md): vet, docs/'s checks
# (design.md's citations resolve; the pure packages depend on no I/O), and the
# unit tests of internal/ and cmd/ under -race with -short, which skips what needs
# minutes or the real CLI: the end-to-end suite (not in these packages),
# the go install test, the hostile campaign, the fake API's tests against
# the real CLI, and 18 of the 20 runs of the non-blocking writer test.
# Decisions are tested in fake time (docs/design.md §D23), so this takes
# under a minute on 2 cores with a warm build cache (docs/testing.md gives the
# figure). make test is the full gate.
# GORACE drops the race runtime's one second sleep at the exit of every
# test binary (a second per package, for nothing). cmd/ first, and four
# packages at a time: cmd/malarun's tests are the longest and wait on real
# processes and timers, so they start first and the other packages fill
# the cores meanwhile (measured: 61/55/61 s with go test's default of two
# at a time in path order, 53/54/58 s so; then 61-65 s as the suite grew,
# 52-56 s with CHECK_PARALLEL).
check:
	go vet ./...
	@$(MAKE) -s --no-print-directory fmt-check
	MALARUN_CLAUDE_BIN= $(TEST_ENV) go test -p 4 $(CHECK_PARALLEL) -race -short ./cmd/... ./internal/... ./docs/

# The test command (README and .ci/run): everything, with the end-to-end
# tests against the current CLI, then the end-to-end tests again against the
# oldest supported one (tests that need a newer CLI skip there, saying so,
# as do those that do not use the CLI: they ran with the current one).
# The CLIs come from e2e-deps; without them the end-to-end tests skip
# locally and fail in CI (CI=true). MALARUN_CLAUDE_BIN is emptied so that a
# CLI exported in the shell cannot stand in for the pinned ones.
# -count=1: the e2e tests build and run the malarun binary and the real CLI,
# which Go's test cache cannot see, so a cached result could be stale.
# OTLP over gRPC is a build of its own (-tags otlpgrpc, docs/telemetry.md):
# its vet and tests run next, then a check that the default build links no
# gRPC (its package initialisation would cost every start; grpc_off.go).
# The modules are fetched first (go mod download), not in the middle of a
# test. Each go test runs as go test -json through testprogress
# (internal/testing/testprogress; its exit status is go test's): a line per
# package as it ends, with its counts, a line per end-to-end test as it
# ends, a failed test's output, a line naming what still runs after 50 s
# without one, and a closing line per run; the last line of make test is
# the account of all three: passed, failed, skipped, each skip named with
# its reason (docs/design.md §D38).
TEST_TALLY   := bin/test-tally.jsonl
TESTPROGRESS := bin/testprogress
test:
	go mod download
	go build -o $(TESTPROGRESS) ./internal/testing/testprogress
	go vet ./...
	@$(MAKE) -s --no-print-directory fmt-check
	@rm -f $(TEST_TALLY)
	@echo "== go test ./... (end-to-end tests against claude $(CLAUDE_CODE_CURRENT), the current version)"
	MALARUN_CLAUDE_BIN= MALARUN_CLAUDE_VERSION=$(CLAUDE_CODE_CURRENT) $(TEST_ENV) $(TESTPROGRESS) -label "go test ./..." -tally $(TEST_TALLY) -- \
		go test -json -race -count=1 $(TEST_PARALLEL) ./...
	@echo "== go test -tags otlpgrpc ./internal/telemetry/ (the build with OTLP over gRPC)"
	go vet -tags otlpgrpc ./internal/telemetry/ ./cmd/malarun/
	$(TEST_ENV) $(TESTPROGRESS) -label "go test -tags otlpgrpc" -tally $(TEST_TALLY) -- go test -json -race -count=1 -tags otlpgrpc ./internal/telemetry/
	@deps=$$(go list -deps ./cmd/malarun) || exit 1; n=$$(printf '%s\n' "$$deps" | grep -c grpc); if [ "$$n" != 0 ]; then \
		echo "the default build of cmd/malarun links $$n gRPC packages: OTLP over gRPC belongs behind the otlpgrpc tag" >&2; exit 1; fi
	@echo "== go test ./e2e/ against claude $(CLAUDE_CODE_OLDEST), the oldest supported version (tests that do not use the CLI ran above)"
	MALARUN_CLAUDE_BIN= MALARUN_CLAUDE_VERSION=$(CLAUDE_CODE_OLDEST) $(TEST_ENV) $(TESTPROGRESS) -label "go test ./e2e/ against claude $(CLAUDE_CODE_OLDEST)" -tally $(TEST_TALLY) -- \
		go test -json -race -count=1 $(TEST_PARALLEL) ./e2e/
	@$(MAKE) -s --no-print-directory e2e-check
	@$(TESTPROGRESS) -account $(TEST_TALLY)

# gofmt's verdict on every tracked Go file (a moved package's imports
# left out of order went unnoticed by vet and the tests).
fmt-check:
	@files=$$(gofmt -l $$(git ls-files '*.go')) || exit 1; if [ -n "$$files" ]; then \
		echo "not gofmt-formatted (run gofmt -w):" $$files >&2; exit 1; fi

# A fleet soak (e2e/soak_test.go): SOAK issues (ISSUESxCONCURRENCY), each
# against its own fake API and the current CLI, with faults mixed in, run
# by an orchestrator that follows `malarun exit-codes --json`. make test
# runs a short one (an issue per fault kind, 3 at a time); this is the
# long one, not in CI. It prints issues per hour and malarun's share of
# the fleet's CPU.
SOAK ?= 40x8
soak:
	MALARUN_SOAK=$(SOAK) MALARUN_CLAUDE_BIN= MALARUN_CLAUDE_VERSION=$(CLAUDE_CODE_CURRENT) go test -count=1 -v -timeout 60m -run TestFleetSoak ./e2e/

# Issue 38's cases at malarun's defaults, timed like the real API (a 200 s
# tool input, a 6-minute one on every attempt, 100 s thinking gaps, a
# stream that dies mid-text, the CLI's own fallback): minutes of real time
# each, mostly waiting, so every test of both pinned CLIs runs at once
# (about 7 minutes in all). .ci/run runs it after make test.
e2e-long: e2e-deps
	@set -e; pids=; for v in $(CLAUDE_CODE_VERSIONS); do \
		MALARUN_E2E_LONG=1 MALARUN_CLAUDE_BIN= MALARUN_CLAUDE_VERSION=$$v $(TEST_ENV) go test -count=1 -parallel 8 -timeout 20m -run 'TestLong' ./e2e/ \
			> .cache/e2e-long-$$v.log 2>&1 & pids="$$pids $$!"; done; \
	rc=0; for p in $$pids; do wait $$p || rc=1; done; \
	for v in $(CLAUDE_CODE_VERSIONS); do echo "== e2e-long against claude $$v"; cat .cache/e2e-long-$$v.log; done; exit $$rc

# The environment and parallelism of make test's go test runs. GORACE drops
# the race runtime's one second sleep at the exit of every test binary. The
# end-to-end tests run three at a time (each has its own HOME, fake API and
# state; those with an idle_timeout of a few seconds run alone, see
# e2e/harness_test.go): their time is mostly the CLI starting and timers.
TEST_ENV      := GORACE=atexit_sleep_ms=0
TEST_PARALLEL := -parallel 3
# make check's parallel tests: most of cmd/malarun's wait on a malarun
# process and its fake CLI (0.8 of a core busy at Go's default of
# GOMAXPROCS, 2 here), so six at a time halve its time for the same CPU.
CHECK_PARALLEL := -parallel 6

# Says which pinned CLIs are missing, so that the e2e package's "ok" above is
# not read as a pass: go test shows a passing package's output (the suite's
# own SKIPPING banner) only with -v. Last, where it is seen. With CI=true a
# missing CLI is a failure (the suite fails first anyway).
e2e-check:
	@missing=; for v in $(CLAUDE_CODE_VERSIONS); do \
		[ -x "$(call claude_bin,$$v)" ] || missing="$$missing $$v"; \
	done; \
	if [ -n "$$missing" ]; then \
		bar=$$(printf '%78s' '' | tr ' ' '!'); \
		printf '%s\n' "$$bar" "e2e: SKIPPED: claude$$missing not installed in $(CLAUDE_CODE_DIR)/, so the end-to-end" \
			"tests did not run (their \"ok\" above means nothing): run make e2e-deps" "$$bar" >&2; \
		if [ "$$CI" = true ]; then echo "e2e: CI=true, so this is a failure" >&2; exit 1; fi; \
	fi; \
	if ! command -v chromium >/dev/null && [ -z "$$MALARUN_CHROMIUM" ]; then \
		bar=$$(printf '%78s' '' | tr ' ' '!'); \
		printf '%s\n' "$$bar" "browser: SKIPPED: no chromium on PATH, so the tests that open the HTML pages in" \
			"a browser did not run: apt-get install chromium (make deps names what else is missing)" "$$bar" >&2; \
		if [ "$$CI" = true ]; then echo "browser: CI=true, so this is a failure" >&2; exit 1; fi; \
	fi

# What the tests need beyond Go and Node, each named with the target that
# needs it: the pinned CLIs (make e2e-deps), Chromium (the HTML pages'
# tests), groff (the manual page's), qemu-user-static (make test-arm64-qemu
# only) and etcd (make cluster-test only), and the commands that install
# what is missing (scripts/deps.sh). It reports and exits 0: make test
# skips, loudly, what lacks a dependency, and fails with CI=true. .ci/run
# installs the same packages.
deps:
	@scripts/deps.sh $(foreach v,$(CLAUDE_CODE_VERSIONS),$(v)=$(call claude_bin,$(v)))

# The deploy/ module (its own go.mod): the recipes checked against
# `malarun exit-codes --json`, and actionlint, pinned in deploy/go.mod.
# -count=1: the tests build malarun from ../, which the test cache cannot see.
deploy-test:
	cd deploy && go test -count=1 ./... && go tool actionlint ../deploy/github-actions/*.yml

# The cross-compilation check (issue 22; .ci/run runs it before make test):
# malarun and its tests must compile for macOS and for arm64 Linux, so that
# a Linux-only call in a shared file fails here, not on a user's Mac. Per
# target: go build, then go vet, which type-checks every package with its
# _test.go files (in-package and _test packages alike: a darwin-only error
# put in either kind of test file fails it). vet is what go test -c does
# short of linking; linking a binary per package costs more (38 s against
# 0.5 s per target, warm) and would show nothing more. CGO_ENABLED=0:
# malarun uses no cgo, and there is no C cross toolchain here.
# Cold, each target costs about 80 s on 2 cores (compiling the standard
# library and the modules for it); warm, about 2 s.
# tools/bench (pidfd, waitid) is Linux-only by design: linux/arm64 alone.
# The build with -tags otlpgrpc is left out: its gRPC modules cost about
# 45 s more per target cold (measured, darwin/arm64; 1 s warm), for one
# file with nothing platform-specific; make test vets it on the host. By
# hand: GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 go vet -tags otlpgrpc ./internal/telemetry/ ./cmd/malarun/
# deploy/ is left out: its modules (Kubernetes, Argo, BuildKit) cost 100 s
# more per target cold, for tests of Linux container recipes; check it by
# hand with: cd deploy && GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 go vet ./...
# CROSS_PACKAGES narrows the main module's part (make cross
# CROSS_PACKAGES=./internal/ui/...), CROSS_TARGETS the targets.
CROSS_TARGETS  ?= darwin/arm64 darwin/amd64 linux/arm64
CROSS_PACKAGES ?= ./...

cross:
	@failed=; for t in $(CROSS_TARGETS); do \
		echo "== cross $$t: go build, go vet (tests included)"; start=$$(date +%s); \
		export GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0; \
		{ go build -o /dev/null $(CROSS_PACKAGES) && go vet $(CROSS_PACKAGES) && \
		  if [ "$$GOOS" = linux ]; then (cd tools/bench && go vet ./...); fi; } || failed="$$failed $$t"; \
		echo "== cross $$t took $$(( $$(date +%s) - start )) s"; \
	done; \
	if [ -n "$$failed" ]; then \
		echo "cross: FAILED for$$failed: the code above does not compile there. Linux-only code" \
			"belongs in a _linux.go file, with a fallback for the others (issue 22)" >&2; \
		exit 1; \
	fi

# The linux/arm64 test binaries of ./internal/... run through
# qemu-aarch64-static (apt-get install qemu-user-static), which is invoked
# directly: no binfmt_misc. What qemu-user cannot do skips, listed with its
# reason (internal/testing/qemutest). PACKAGES narrows it. See the script.
test-arm64-qemu:
	@scripts/test-arm64-qemu.sh

# Installs every pinned CLI from npm into $(CLAUDE_CODE_DIR)/<version>
# (git-ignored). A version already installed is not fetched again. The
# current one is also linked as bin/claude (CLAUDE_LINK), the path to give
# malarun's --claude-bin by hand.
CLAUDE_LINK := bin/claude

e2e-deps: $(addprefix e2e-deps-,$(CLAUDE_CODE_VERSIONS))

e2e-deps-%:
	@bin=$(call claude_bin,$*); \
	if [ "$$($(claude_env) "$$bin" --version 2>/dev/null | cut -d' ' -f1)" = "$*" ]; then \
		echo "claude $* already installed: $$bin"; \
	else \
		mkdir -p $(CLAUDE_CODE_DIR)/$* && \
		npm install --prefix $(CLAUDE_CODE_DIR)/$* --no-audit --no-fund --loglevel=error \
			@anthropic-ai/claude-code@$* && \
		$(claude_env) "$$bin" --version || exit 1; \
	fi; \
	if [ "$*" = "$(CLAUDE_CODE_CURRENT)" ]; then \
		mkdir -p $(dir $(CLAUDE_LINK)) && ln -sfn "$$bin" $(CLAUDE_LINK) && echo "$(CLAUDE_LINK): the pinned claude $*, for --claude-bin $(abspath $(CLAUDE_LINK))"; \
	fi

# The Kubernetes recipe on a real control plane (issue 33): etcd (Debian's
# etcd-server), kube-apiserver and kube-controller-manager built from the
# Go module proxy by tools/kube, on 127.0.0.1; a kubelet stand-in runs the
# pods' malarun and the pinned CLI against the fake API. Needs root (mount
# namespaces). The binaries are kept in .cache/kube/<kubernetes>-<go>, so
# a new Kubernetes or Go version builds them again. See docs/cluster-test.md.
KUBE_VERSION := $(shell sed -n 's/^require k8s.io\/kubernetes \(v[0-9.]*\)$$/\1/p' tools/kube/go.mod)
KUBE_BIN     := $(abspath .cache/kube)/$(KUBE_VERSION)-$(shell go env GOVERSION)

cluster-bin:
	@scripts/cluster-bin.sh $(KUBE_BIN)

cluster-test: cluster-bin e2e-deps-$(CLAUDE_CODE_CURRENT)
	cd deploy/cluster && MALARUN_KUBE_BIN=$(KUBE_BIN) MALARUN_CLAUDE_DIR=$(abspath $(CLAUDE_CODE_DIR))/$(CLAUDE_CODE_CURRENT) \
		go test -count=1 -timeout 20m -v ./...

# Not in CI: the end-to-end tests against the newest CLI on npm, to see
# drift before a pin moves. Installs it into $(CLAUDE_CODE_DIR)/latest (npm
# fetches again only what changed) and names it by path, so the harness
# checks no version; tests gated on a version still use its --version.
e2e-latest:
	mkdir -p $(CLAUDE_CODE_DIR)/latest
	npm install --prefix $(CLAUDE_CODE_DIR)/latest --no-audit --no-fund --loglevel=error \
		@anthropic-ai/claude-code@latest
	@echo "== go test ./e2e/ against claude $$($(claude_env) $(call claude_bin,latest) --version) (latest; pinned: $(CLAUDE_CODE_VERSIONS))"
	MALARUN_CLAUDE_BIN=$(call claude_bin,latest) MALARUN_CLAUDE_VERSION=latest go test -race -count=1 ./e2e/

# Measures malarun against the goals of issue 8 and prints the tables that
# BENCHMARKS.md records (about 6 minutes; needs make e2e-deps for the real CLI).
bench:
	@scripts/bench.sh

# malarun summary's bounds at full size (issue 49): each form on a planted
# timeline of 300,000 distinct phases and on 20,000 issues with ten 10 MB
# reasons, the built binary on 2 processors: fails past md 1 MiB, JSON
# 64 MiB, the HTML index 16 MiB, 5 s or 500 MB (about a minute; a smaller one
# runs in the unit tests: TestHostileStateDirsStayBounded).
bench-summary:
	go test ./cmd/malarun -run '^$$' -bench BenchmarkSummaryHostile -benchtime 1x

# How long the fuzzer may minimize each input, as executions. Go's default
# is 60 s, and it minimizes every new interesting input, not only a failing
# one: FuzzDecode's seeds are whole transcripts, so a short run spent
# nearly all its time minimizing (29 executions in 20 s in CI). Each run
# ends with a line "fuzz: elapsed: ..., execs: N" (printed without -v):
# how much fuzzing was done. A failing input is still written to
# testdata/fuzz, only less minimized (FUZZ_MINIMIZE=60s is Go's default).
FUZZ_MINIMIZE ?= 200x

fuzz:
	go test -run '^$$' -fuzz FuzzDecode -fuzztime 60s -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/stream/
	go test -run '^$$' -fuzz FuzzMachine -fuzztime 60s -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/attempt/
	go test -run '^$$' -fuzz FuzzReadResult -fuzztime 60s -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/stream/
	go test -run '^$$' -fuzz FuzzJSONString -fuzztime 60s -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/ui/
	go test -run '^$$' -fuzz FuzzInertWriter -fuzztime 60s -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/ui/
	go test -run '^$$' -fuzz FuzzRecordFromStream -fuzztime 60s -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/supervisor/
	go test -run '^$$' -fuzz FuzzExtractCheckpointAsTheRegexpsDid -fuzztime 20s -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/ctxpressure/
	go test -run '^$$' -fuzz FuzzUsageLimitTextAsTheRegexpDid -fuzztime 20s -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/attempt/
	go test -run '^$$' -fuzz FuzzTranscriptNumberAsTheRegexpDid -fuzztime 20s -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/replay/

# A short fuzz in CI (.ci/run): random input sequences against the attempt
# machine's invariants (one stop, never without a reason, an ending never
# changes), random lines against the decoder (every kept number in range),
# random strings cut anywhere against encoding/json (a result copied from
# its transcript and streamed into the --json report), random text cut at
# random against the sanitiser (the stream form is the string form; nothing
# a terminal acts on comes out), and random streams through the supervisor
# into the record (every record it builds can be saved and read back).
# CI counts executions (about 90 s on 2 cores) rather than giving a time:
# Go 1.26's fuzzer can fail a run that ends on -fuzztime with "context
# deadline exceeded" and no failing input (a race between its timeout and
# its workers' context in internal/fuzz), which would fail CI by chance.
fuzz-ci:
	go test -run '^$$' -fuzz FuzzMachine -fuzztime 500000x -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/attempt/
	go test -run '^$$' -fuzz FuzzDecode -fuzztime 200000x -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/stream/
	go test -run '^$$' -fuzz FuzzReadResult -fuzztime 150000x -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/stream/
	go test -run '^$$' -fuzz FuzzJSONString -fuzztime 150000x -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/ui/
	go test -run '^$$' -fuzz FuzzInertWriter -fuzztime 200000x -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/ui/
	go test -run '^$$' -fuzz FuzzRecordFromStream -fuzztime 60000x -fuzzminimizetime $(FUZZ_MINIMIZE) ./internal/supervisor/

clean:
	rm -rf bin .cache

# The Claude Code CLI version the end-to-end tests run against (pinned).
CLAUDE_CODE_VERSION := 2.1.197
CLAUDE_CODE_DIR     := .cache/claude-code
VERSION             ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: build test e2e-deps bench fuzz clean

build:
	go build -ldflags "-X main.version=$(VERSION)" -o bin/malarun ./cmd/malarun

# The test command (README and .ci/run). End-to-end tests use the CLI that
# e2e-deps installs; without it they skip locally and fail in CI (CI=true).
# -count=1: the e2e tests build and run the malarun binary and the real CLI,
# which Go's test cache cannot see, so a cached result could be stale.
test:
	go vet ./...
	go test -race -count=1 ./...

# Installs the pinned real CLI from npm into $(CLAUDE_CODE_DIR) (git-ignored).
e2e-deps:
	mkdir -p $(CLAUDE_CODE_DIR)
	npm install --prefix $(CLAUDE_CODE_DIR) --no-audit --no-fund --loglevel=error \
		@anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION)
	$(CLAUDE_CODE_DIR)/node_modules/.bin/claude --version

# Measures malarun against the goals of issue 8 and prints the tables that
# BENCHMARKS.md records (about 6 minutes; needs make e2e-deps for the real CLI).
bench:
	@scripts/bench.sh

fuzz:
	go test -run '^$$' -fuzz FuzzDecode -fuzztime 60s ./internal/stream/

clean:
	rm -rf bin .cache

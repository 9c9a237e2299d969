# `make test` is the one command that sets up what the tests need and runs
# everything: static checks, the Go tests with the race detector (unit,
# golden, end-to-end against real a2asrv agents, fuzz seed corpora) and the
# conformance suite (the real @ag-ui/client generations from npm against the
# bridge, with Go, @a2a-js/sdk, ADK JS and Mastra agents behind it), then the browser tests
# (the web console and the CopilotKit app in headless Chromium).

GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
CHROMIUM    ?= /usr/bin/chromium
FUZZTIME    ?= 20s
BENCHTIME   ?= 1s
# make bench also runs the load tool (cmd/bridge-bench) at this size;
# BENCH_FLAGS adds any other flag, e.g. BENCH_FLAGS='-store memory -json'.
BENCH_RUNS        ?= 200
BENCH_CHUNKS      ?= 500
BENCH_CONCURRENCY ?= 10
BENCH_FLAGS       ?=

# make bench-users: every combination of agent (@a2a-js/sdk, a2a-go) and
# reader (@ag-ui/client HttpAgent, the Go reader) in both shapes of issue 19,
# one bridge-bench invocation each; reports go to BENCH_USERS_OUT.
BENCH_USERS_OUT   ?= bench/results/users
BENCH_USERS_FLAGS ?=

SOAK_CONCURRENCY  ?= 1000
SOAK_DURATION     ?= 10m
SOAK_FLAGS        ?=

.PHONY: engine-stats test check gotest redis cacerts image bench-deps loadtest fuzz-short conformance conformance-deps browsertest browsertest-deps fuzz soak soak-abuse bench bench-users demo build

test: check gotest loadtest fuzz-short conformance browsertest

build:
	$(GO) build -o bridge ./cmd/bridge

# The run engine's measures of issue 32 (file and function sizes of
# package tasks, single-agent/team forks, A2A calls outside upstream.go,
# public codes written more than once).
engine-stats:
	$(GO) run ./internal/enginestats

check:
	@echo "== gofmt"
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@echo "== go vet"
	$(GO) vet ./...
	@echo "== staticcheck"
	$(GO) run $(STATICCHECK) ./...

# The Redis store's tests and the scale-out tests (server: three
# instances, kill -9) start their own redis-server (no persistence, a
# free loopback port), so only the binary is needed here.
redis:
	@command -v redis-server >/dev/null || { \
		echo "== installing redis-server (the Redis store's tests start one)"; \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq redis-server >/dev/null; \
	}

# The image test (cmd/bridge-image) ships Debian's CA bundle in the image.
cacerts:
	@[ -f /etc/ssl/certs/ca-certificates.crt ] || { \
		echo "== installing ca-certificates (the image ships its CA bundle)"; \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq ca-certificates >/dev/null; \
	}

# cmd/bridge-bench's end-to-end test runs the @a2a-js/sdk agent and the
# @ag-ui/client reader of the benchmark (bench/jsagent, bench/aguireader),
# so their pinned packages are installed first.
bench-deps:
	@command -v node >/dev/null || { echo "node (>= 20) is required for the bench's JS agent and reader"; exit 1; }
	cd bench/jsagent && npm ci --no-audit --no-fund
	cd bench/aguireader && npm ci --no-audit --no-fund

gotest: redis cacerts bench-deps
	@echo "== go test -race"
	$(GO) test -race -count=1 ./...

# Load tests count events across many concurrent runs; the race detector
# slows them tenfold, so they run here without it (go test -race skips them).
loadtest:
	@echo "== load tests (1,000 concurrent WebSocket runs)"
	$(GO) test -count=1 -run 'TestThousand' ./server/

# The framework agents (Google ADK for JS, Mastra) have their own pinned
# package in conformance/frameworks: their dependency trees are large and
# must not move the suite's own pins.
conformance-deps:
	@command -v node >/dev/null || { echo "node (>= 20) is required for the conformance suite"; exit 1; }
	cd conformance && npm ci --no-audit --no-fund
	cd conformance/frameworks && npm ci --no-audit --no-fund

conformance: conformance-deps
	@echo "== conformance harness self-test (its verdicts on canned good and bad streams)"
	node conformance/harness-selftest.mjs
	@echo "== conformance (real @ag-ui/client 1.0.0, 0.0.59, 0.0.36)"
	node conformance/run.mjs

# Debian's Chromium (Playwright's own browser downloads are not available
# everywhere this runs), the pinned npm packages of the browser tests and of
# the CopilotKit app (examples/copilotkit), and the app built with Vite. A
# machine where apt cannot install Chromium skips the browser tests with a
# SKIPPED line instead of failing.
browsertest-deps:
	@if [ ! -x "$(CHROMIUM)" ]; then \
		echo "== installing Debian's chromium (apt-get)"; \
		mkdir -p console/e2e/.work; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO="sudo -n"; \
		{ $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core; } \
			>console/e2e/.work/apt.log 2>&1 || echo "apt-get failed; see console/e2e/.work/apt.log"; \
	fi
	@command -v node >/dev/null || { echo "node (>= 20) is required for the browser tests"; exit 1; }
	@if [ -x "$(CHROMIUM)" ]; then \
		cd console/e2e && npm ci --no-audit --no-fund && cd ../../examples/copilotkit && npm ci --no-audit --no-fund && npm run build --silent -- --logLevel warn; \
	fi

browsertest: browsertest-deps
	@echo "== the console's JavaScript units (JSON Patch, the event fold) and the CopilotKit runtime's start-up errors"
	node --test --test-reporter=spec console/e2e/unit/
	@echo "== browser tests (the console and the CopilotKit app in headless Chromium)"
	@if [ -x "$(CHROMIUM)" ]; then \
		CHROMIUM="$(CHROMIUM)" node console/e2e/run.mjs --no-app-build; \
	else \
		echo "SKIPPED: browser tests: no Chromium at $(CHROMIUM) and apt-get could not install it"; \
	fi

# A short fuzz run per target in every test run, beyond the seed corpora go
# test replays; `make fuzz` goes longer. It counts executions rather than
# seconds: Go 1.26's fuzz coordinator can fail a target with "context
# deadline exceeded" when a wall-clock -fuzztime ends on a busy machine
# (go.dev/issue/75804, fixed in Go 1.27), and a count has no deadline.
fuzz-short:
	@echo "== short fuzz runs of every target"
	@$(MAKE) --no-print-directory fuzz FUZZTIME=1000x

# Longer fuzzing of every decoder of untrusted input and of the translator.
fuzz:
	@for spec in $$($(GO) test -list 'Fuzz.*' ./... | awk '/^Fuzz/{n++; f[n]=$$1} /^ok/{for(i=1;i<=n;i++) print $$2":"f[i]; n=0}'); do \
		pkg=$${spec%%:*}; name=$${spec##*:}; \
		echo "== $$pkg $$name"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done

# The Go microbenchmarks, then the load tool: the bridge's CPU per streamed
# chunk against the limit and the @ag-ui/a2a peer (bench/README.md). Not
# part of make test: it takes a minute and its numbers are not assertions.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./agui/ ./mapping/ ./tasks/
	$(GO) run ./cmd/bridge-bench -runs $(BENCH_RUNS) -chunks $(BENCH_CHUNKS) -concurrency $(BENCH_CONCURRENCY) $(BENCH_FLAGS)

# The tables of issue 19 (bench/README.md): relay, limit, bridge and peer
# side by side, in the bulk shape (200 runs × 500 chunks, 10 in flight) and
# the paced one (200 × 100, a chunk every 20 ms, 100 in flight), for each
# agent and reader, on the memory store. Eight invocations, about a quarter
# of an hour; not part of make test. Each writes NAME.txt (the report),
# NAME.json (the same run) and NAME.log (progress) to BENCH_USERS_OUT.
bench-users:
	@mkdir -p $(BENCH_USERS_OUT)
	$(GO) build -o $(BENCH_USERS_OUT)/.bridge-bench ./cmd/bridge-bench
	$(GO) build -o $(BENCH_USERS_OUT)/.bridge ./cmd/bridge
	@for shape in bulk paced; do for agent in js go; do for reader in httpagent go; do \
		name=$$shape-$$agent-$$reader; echo "== $$name"; \
		$(BENCH_USERS_OUT)/.bridge-bench -shape $$shape -agent $$agent -reader $$reader -store memory \
			-bridge $(BENCH_USERS_OUT)/.bridge $(BENCH_USERS_FLAGS) -json-file $(BENCH_USERS_OUT)/$$name.json \
			>$(BENCH_USERS_OUT)/$$name.txt 2>$(BENCH_USERS_OUT)/$$name.log || { cat $(BENCH_USERS_OUT)/$$name.log; exit 1; }; \
		cat $(BENCH_USERS_OUT)/$$name.txt; \
	done; done; done
	@rm -f $(BENCH_USERS_OUT)/.bridge-bench $(BENCH_USERS_OUT)/.bridge

# The soak (cmd/bridge-soak): many concurrent runs of every kind through a
# real bridge in front of the demo agents, every event checked, then the
# bridge's goroutines, heap, RSS and open fds compared with its baseline.
# Not in make test (ten minutes); figures in BENCHMARKS.md.
soak:
	$(GO) run ./cmd/bridge-soak -concurrency $(SOAK_CONCURRENCY) -duration $(SOAK_DURATION) $(SOAK_FLAGS)

# The same under abuse (issue 20), all at once beside the honest runs:
# endless agents read by stalling and vanishing clients, WebSocket
# subscribe/run floods, slow bodies, slowloris, oversized bodies. With the
# run budget on: SOAK_FLAGS='-max-run-bytes 1048576'.
soak-abuse:
	$(GO) run ./cmd/bridge-soak -abuse -concurrency $(SOAK_CONCURRENCY) -duration $(SOAK_DURATION) $(SOAK_FLAGS)

demo:
	$(GO) run ./cmd/bridge demo

# The container image as an OCI tarball, with no container daemon
# (cmd/bridge-image; the Dockerfile builds the same image with one):
# load it with `docker load -i a2a-agui-bridge.oci.tar` (or podman load,
# skopeo copy oci-archive:…, crane push).
IMAGE_TAG     ?= a2a-agui-bridge:dev
IMAGE_ARCH    ?= $(shell $(GO) env GOARCH)
IMAGE_TARBALL ?= a2a-agui-bridge.oci.tar

image: cacerts
	@mkdir -p .image
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -ldflags='-s -w' -o .image/bridge ./cmd/bridge
	$(GO) run ./cmd/bridge-image -bin .image/bridge -tag $(IMAGE_TAG) -version $(IMAGE_TAG:a2a-agui-bridge:%=%) -o $(IMAGE_TARBALL)

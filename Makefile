# `make test` is the one command that sets up what the tests need and runs
# everything: static checks, the Go tests with the race detector (unit,
# golden, end-to-end against real a2asrv agents, fuzz seed corpora) and the
# conformance suite (the real @ag-ui/client generations from npm against the
# bridge, with Go and @a2a-js/sdk agents behind it).

GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 20s
BENCHTIME   ?= 1s

.PHONY: test check gotest redis loadtest conformance conformance-deps fuzz bench demo build

test: check gotest loadtest conformance

build:
	$(GO) build -o bridge ./cmd/bridge

check:
	@echo "== gofmt"
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@echo "== go vet"
	$(GO) vet ./...
	@echo "== staticcheck"
	$(GO) run $(STATICCHECK) ./...

# The Redis store's tests start their own redis-server (no persistence, a
# free loopback port), so only the binary is needed here.
redis:
	@command -v redis-server >/dev/null || { \
		echo "== installing redis-server (the Redis store's tests start one)"; \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq redis-server >/dev/null; \
	}

gotest: redis
	@echo "== go test -race"
	$(GO) test -race -count=1 ./...

# Load tests count events across many concurrent runs; the race detector
# slows them tenfold, so they run here without it (go test -race skips them).
loadtest:
	@echo "== load tests (1,000 concurrent WebSocket runs)"
	$(GO) test -count=1 -run 'TestThousand' ./cmd/bridge/

conformance-deps:
	@command -v node >/dev/null || { echo "node (>= 20) is required for the conformance suite"; exit 1; }
	cd conformance && npm ci --no-audit --no-fund

conformance: conformance-deps
	@echo "== conformance harness self-test (its verdicts on canned good and bad streams)"
	node conformance/harness-selftest.mjs
	@echo "== conformance (real @ag-ui/client 1.0.0, 0.0.59, 0.0.36)"
	node conformance/run.mjs

# Longer fuzzing of every decoder of untrusted input and of the translator.
fuzz:
	@for spec in $$($(GO) test -list 'Fuzz.*' ./... | awk '/^Fuzz/{n++; f[n]=$$1} /^ok/{for(i=1;i<=n;i++) print $$2":"f[i]; n=0}'); do \
		pkg=$${spec%%:*}; name=$${spec##*:}; \
		echo "== $$pkg $$name"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./agui/ ./mapping/ ./tasks/

demo:
	$(GO) run ./cmd/bridge demo

# Loopback — one Makefile for the local binary, the tests and the Lambdas.
GO        ?= go
BUILD     ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS   := -s -w -X github.com/loopback-hq/loopback/shared/buildinfo.Build=$(BUILD)
STATICCHECK ?= v0.8.2
export CGO_ENABLED = 0

.PHONY: build dev test test-e2e web test-web lint spec spec-check bench clean

## build: the local binary at bin/loopback
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/loopback ./cmd/loopback

## dev: build and run Loopback locally on http://127.0.0.1:8080 (data in ./.loopback)
dev: build
	./bin/loopback serve --addr 127.0.0.1:8080 --data ./.loopback

## test: every test (Go with the race detector, the contract freeze, the template lint)
test: spec-check lint
	CGO_ENABLED=1 $(GO) test -race -count=1 ./...
	cfn-lint template.yaml
	$(MAKE) test-e2e
	$(MAKE) test-web

## test-e2e: the MCP end-to-end suite: the official TypeScript SDK against bin/loopback
test-e2e: build
	cd e2e && npm ci --no-audit --no-fund && npm test

## web: rebuild the inbox into web/dist (embedded in the binary; commit it with the sources)
web:
	cd web && npm ci --no-audit --no-fund && npm run build

## test-web: the inbox's unit tests (Vitest) and browser tests (Debian's headless Chromium against bin/loopback)
test-web: build web/node_modules/.package-lock.json
	cd web && npm run test:unit && npm run test:e2e

# web/node_modules, installed again only when web/package-lock.json changes.
web/node_modules/.package-lock.json: web/package-lock.json
	cd web && npm ci --no-audit --no-fund

## lint: gofmt, go vet and staticcheck
lint:
	@out=$$(gofmt -l cmd shared functions web/*.go); test -z "$$out" || { echo "gofmt would change: $$out"; exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK) ./...

## spec: regenerate the emitted contract and shared/contract/schema/ from spec/main.tsp
spec:
	cd spec && npm ci --no-audit --no-fund && npm run build

## spec-check: fail if spec/main.tsp no longer emits spec/revisions/*/ or shared/contract/schema/ unchanged
spec-check:
	bash spec/check-frozen.sh

## bench: the Go benchmarks and the MCP waiting benchmark (figures go in docs/benchmarks.md)
bench: build
	$(GO) test -run '^$$' -bench . -benchmem -count=3 ./shared/...
	$(GO) run ./bench/mcpwait -bin bin/loopback -replies 200 -waiters 10000 -settle 35s

clean:
	rm -rf bin

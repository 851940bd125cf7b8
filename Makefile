# Loopback — one Makefile for the local binary, the tests and the Lambdas.
GO        ?= go
# The build is named by the time of the last commit that changed its code, so that a build changes
# only when the code does (and `sam deploy` replaces only the functions whose code changed: a commit
# of docs or of the inbox alone leaves every Lambda byte for byte the same); outside git, the time
# now. With -trimpath and an empty -buildid nothing else of the machine or the moment goes in.
code_time = $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ -- $(1) 2>/dev/null | grep . || date -u +%Y-%m-%dT%H:%M:%SZ)
BUILD        ?= $(call code_time,go.mod go.sum cmd shared functions web/dist web/embed.go)
LAMBDA_STAMP ?= $(call code_time,go.mod go.sum shared functions)
LDFLAGS   := -s -w -buildid= -X github.com/loopback-hq/loopback/shared/buildinfo.Build=$(BUILD)
LAMBDA_LDFLAGS := -s -w -buildid= -X github.com/loopback-hq/loopback/shared/buildinfo.Build=$(LAMBDA_STAMP)
STATICCHECK ?= v0.8.2
export CGO_ENABLED = 0
# The project's own tools first: cfn-lint and moto_server from .venv (make setup).
export PATH := $(CURDIR)/.venv/bin:$(PATH)

.PHONY: build dev aws-local setup test test-e2e test-e2e-aws test-claude-code test-codex test-python test-soak test-reach web test-web lint spec spec-check bench bench-replypath clean

## build: the local binary at bin/loopback
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/loopback ./cmd/loopback

## dev: build and run Loopback locally on http://127.0.0.1:8080 (data in ./.loopback)
dev: build
	./bin/loopback serve --addr 127.0.0.1:8080 --data ./.loopback

## aws-local: the AWS deployment's own Lambdas on this machine, behind local API Gateways (template.yaml), on moto: http://127.0.0.1:8080
aws-local: build
	./bin/loopback aws-local --addr 127.0.0.1:8080 --data ./.loopback-aws

## setup: install what the tests need into the project (scripts/setup; quick when done)
setup:
	@bash scripts/setup

# go test starts packages in the order it is given them, two at a time on two cores: the longest
# (over a minute each under -race) go first, so that none of them is left running alone at the end.
GO_TEST_LONGEST = ./shared/dynamo ./shared/sqlite ./cmd/loopback ./shared/awsrt ./shared/mcptools ./shared/awslocal

## test: set up, then every test (Go with the race detector, the contract freeze, the template lint)
# LOOPBACK_REQUIRE_ALL: a test that would skip for a missing tool fails instead.
# Two lanes at a time where one would leave the machine waiting: the Python SDK's test spends 70 s
# of real time on a call the SDKs' 60 s would cut, so it runs beside the Go tests; the MCP clients'
# suites (about 40% of the machine idle: moto, the clients' own timers) run beside the browser suite
# (a quarter idle). Each line a lane prints starts with its name. The binary is built once, before:
# the lanes run it, and neither may build it again under the other (TEST_BUILD=).
test: export LOOPBACK_REQUIRE_ALL = 1
test: setup
	$(MAKE) spec-check lint
	$(MAKE) build $(MCP_VENV)/.installed
	$(MAKE) -j2 TEST_BUILD= lane-go lane-python
	cfn-lint template.yaml
	$(MAKE) sam-build
	$(MAKE) -j2 TEST_BUILD= lane-web lane-clients
	$(MAKE) test-soak
	$(MAKE) test-reach

# What each test target builds first: bin/loopback, unless `make test` built it already.
TEST_BUILD ?= build

## test-go: the Go tests with the race detector
test-go:
	CGO_ENABLED=1 $(GO) test -race -count=1 $(GO_TEST_LONGEST) ./...

# lane NAME,TARGETS: make each target in turn, every line of their output prefixed with [NAME].
lane = set -o pipefail; for t in $(2); do $(MAKE) --no-print-directory $$t || exit 1; done 2>&1 | awk '{ print "[$(1)] " $$0; fflush() }'
.PHONY: test-go lane-go lane-python lane-web lane-clients
lane-go lane-python lane-web lane-clients: SHELL := /bin/bash
lane-go:
	+@$(call lane,go,test-go)
lane-python:
	+@$(call lane,python,test-python)
lane-web:
	+@$(call lane,web,test-web)
lane-clients:
	+@$(call lane,clients,test-e2e test-e2e-aws test-claude-code test-codex)

## test-reach: every reply reaches its agent after a crash, on SQLite and on DynamoDB (moto): agents waiting, kill -9, replies, agents back (bench/reach)
test-reach: $(TEST_BUILD)
	$(GO) run ./bench/reach -bin bin/loopback -agents 200 -answer 80
	$(GO) run ./bench/reach -bin bin/loopback -agents 100 -answer 60 -store dynamodb

## test-soak: the short fault and load proof: agents, sockets and replies with the server killed and restarted (bench/soak)
test-soak: $(TEST_BUILD)
	$(GO) run ./bench/soak -bin bin/loopback -agents 8 -sockets 4 -duration 15s

## test-e2e: the MCP end-to-end suite: the official TypeScript SDK against bin/loopback
test-e2e: $(TEST_BUILD) e2e/node_modules/.package-lock.json
	cd e2e && npm test

## test-e2e-aws: the MCP suite and the inbox's browser tests against `loopback aws-local` on moto
# The browser suite's inbox.test.mjs, history.test.mjs (55 asks closed and paged back: moto's
# slowest, docs/benchmarks.md), triage.test.mjs (issue 29's triage flow, CloudFront's compression),
# connect.test.mjs (MCP OAuth's consent), passkey.test.mjs and sso.test.mjs (single sign-on through
# mockoidc) only: about 90 s, 135 s, 150 s, 15 s, 30 s and 10 s here (inbox.test.mjs took 212–230 s at
# load 17–20; each file has 300 s). Their photographs go to a scratch folder, not docs/screenshots
# (which `serve` takes). push.test.mjs needs pushes to reach
# a stand-in on 127.0.0.1, which only a test-only variable allows and template.yaml rightly does
# not give the fan-out; screenshots.test.mjs photographs the same inbox again.
test-e2e-aws: $(TEST_BUILD) e2e/node_modules/.package-lock.json web/node_modules/.package-lock.json
	cd e2e && LOOPBACK_E2E_TARGET=aws-local npm test
	cd web && LOOPBACK_E2E_TARGET=aws-local LOOPBACK_SCREENSHOTS=$${TMPDIR:-/tmp}/loopback-aws-local-shots node --test --test-reporter=spec --test-concurrency=1 --test-timeout=300000 test/e2e/inbox.test.mjs test/e2e/history.test.mjs test/e2e/triage.test.mjs test/e2e/connect.test.mjs test/e2e/passkey.test.mjs test/e2e/sso.test.mjs

# e2e/node_modules, installed again only when e2e/package-lock.json changes.
e2e/node_modules/.package-lock.json: e2e/package-lock.json
	cd e2e && npm ci --no-audit --no-fund

## test-claude-code: the real Claude Code CLI (pinned in e2e/claude-code) against bin/loopback, a stand-in model API
# Asks and approvals on `loopback serve`; approvals on `loopback aws-local` too (all but the
# interactive case, which is the same code on both).
test-claude-code: $(TEST_BUILD) e2e/claude-code/node_modules/.package-lock.json
	cd e2e/claude-code && npm test
	cd e2e/claude-code && npm run test:aws

# e2e/claude-code/node_modules (Claude Code's native binary, about 400 MB): only for this target.
e2e/claude-code/node_modules/.package-lock.json: e2e/claude-code/package-lock.json
	cd e2e/claude-code && npm ci --no-audit --no-fund

## test-codex: the real Codex CLI (pinned in e2e/codex) against bin/loopback, a stand-in Responses API: approvals through `loopback hook`
# About 2 s once installed; npm ci fetches Codex's native binary (about 390 MB) from npm only.
test-codex: $(TEST_BUILD) e2e/codex/node_modules/.package-lock.json
	cd e2e/codex && npm test

e2e/codex/node_modules/.package-lock.json: e2e/codex/package-lock.json
	cd e2e/codex && npm ci --no-audit --no-fund

## test-python: the official Python MCP SDK (pinned in e2e/python/requirements.txt, in .venv-mcp) against bin/loopback
MCP_VENV = .venv-mcp
test-python: $(TEST_BUILD) $(MCP_VENV)/.installed
	cd e2e/python && ../../$(MCP_VENV)/bin/python -m pytest -q -p no:cacheprovider

# .venv-mcp, made again only when e2e/python/requirements.txt changes.
$(MCP_VENV)/.installed: e2e/python/requirements.txt
	rm -rf $(MCP_VENV) && python3 -m venv $(MCP_VENV)
	$(MCP_VENV)/bin/python -m pip install -q --disable-pip-version-check -r e2e/python/requirements.txt
	touch $@

## web: rebuild the inbox into web/dist (embedded in the binary; commit it with the sources)
web:
	cd web && npm ci --no-audit --no-fund && npm run build

## test-web: the inbox's unit tests (Vitest) and browser tests (Debian's headless Chromium against bin/loopback; the notification-answer test's agent is e2e/'s MCP TypeScript SDK)
test-web: $(TEST_BUILD) web/node_modules/.package-lock.json e2e/node_modules/.package-lock.json
	cd web && npm run test:unit && npm run test:e2e

# web/node_modules, installed again only when web/package-lock.json changes.
web/node_modules/.package-lock.json: web/package-lock.json
	cd web && npm ci --no-audit --no-fund

## lint: gofmt, go.mod tidy, go vet and staticcheck
lint:
	@$(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }
	@out=$$(gofmt -l cmd shared functions infra bench web/*.go); test -z "$$out" || { echo "gofmt would change: $$out"; exit 1; }
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
	$(GO) run ./bench/mcpwait -bin bin/loopback -tasks 100000 -settle 35s
	$(GO) run ./bench/soak -bin bin/loopback -agents 50 -sockets 50 -duration 2m

clean:
	rm -rf bin .aws-sam

.PHONY: build-lambdas lambda-cache sam-build deploy quota-check smoke bootstrap teammate agent-token tokens revoke bench-lambdas

# --- Lambdas ------------------------------------------------------------------------------------
# `sam build` runs `make build-<LogicalId>` in the repository root with ARTIFACTS_DIR set
# (template.yaml: BuildMethod makefile, CodeUri .); each target leaves one `bootstrap` there, for
# provided.al2023 on arm64. `make build-lambdas` runs every one of them, as sam build would, into a
# scratch folder; `make sam-build` (part of `make test`) runs sam build itself and checks the same.
LAMBDA_BUILD = GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -trimpath -tags lambda.norpc -ldflags '$(LAMBDA_LDFLAGS)'
# Each function: its template.yaml logical ID = its main package under functions/. Every function
# of the HTTP API runs the one functions/api (a function per route, for least-privilege IAM); every
# other function has a folder of its own. A new function is one line here (infra/templatecheck
# fails when this list and template.yaml disagree).
LAMBDA_DIRS = \
  ApiWhoamiFunction=api \
  ApiSnapshotFunction=api \
  ApiAsksListFunction=api \
  ApiAsksReadFunction=api \
  ApiAsksReplyFunction=api \
  ApiSearchFunction=api \
  ApiExamplesFunction=api \
  ApiTicketsFunction=api \
  ApiFilesFunction=api \
  ApiPushFunction=api \
  ApiActionsFunction=api \
  ApiMailSettingsFunction=api \
  ApiPassesFunction=api \
  SsoFunction=api \
  ApiPasskeysFunction=api \
  ApiRulesFunction=api \
  ApiEscalationFunction=api \
  ApiSlackFunction=api \
  SlackAppFunction=api \
  SlackInstallFunction=api \
  OAuthFunction=api \
  ApiConnectFunction=api \
  ApiDefaultFunction=api \
  WsConnectFunction=ws-connect \
  WsDisconnectFunction=ws-disconnect \
  StreamFanoutFunction=stream-fanout \
  McpFunction=mcp \
  SweeperFunction=sweeper \
  UploadCheckFunction=upload-check
LAMBDAS = $(foreach f,$(LAMBDA_DIRS),$(firstword $(subst =, ,$(f))))
lambda_dir = $(patsubst $(1)=%,%,$(filter $(1)=%,$(LAMBDA_DIRS)))

.PHONY: $(addprefix build-,$(LAMBDAS))
$(addprefix build-,$(LAMBDAS)): build-%:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/$(call lambda_dir,$*)

## build-lambdas: every function through its build-<LogicalId> target, into a scratch ARTIFACTS_DIR
build-lambdas:
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	for id in $(LAMBDAS); do \
	  $(MAKE) --no-print-directory build-$$id ARTIFACTS_DIR=$$dir/$$id >/dev/null || exit 1; \
	  $(call check_bootstrap,$$dir/$$id); \
	done

# check_bootstrap DIR (in a loop over $$id): DIR/bootstrap is there and is a linux/arm64 ELF (64-bit,
# little-endian, machine 0xb7); its size is printed. build-lambdas and sam-build check the same.
check_bootstrap = test -x $(1)/bootstrap || { echo "$$id: no bootstrap was left"; exit 1; }; \
	case $$(head -c 20 $(1)/bootstrap | od -An -tx1 | tr -d ' \n') in 7f454c46020101*b700*) ;; *) echo "$$id: not a linux/arm64 ELF"; exit 1;; esac; \
	printf '%-22s %10d bytes\n' $$id $$(stat -c %s $(1)/bootstrap)

## bench-replypath: a person's answer → the agent's call returns, beside mcp-feedback-enhanced and (with AGENTRQ_SRC, a copy of its repository) AgentRQ (docs/benchmarks.md)
bench-replypath:
	bench/replypath/run --asks 200

## bench-lambdas: each function's size and cold initialisation against moto (docs/benchmarks.md)
bench-lambdas:
	$(GO) run ./bench/coldstart -runs 20

## lambda-cache: compile every package the functions use for linux/arm64, once, into Go's build cache
# samconfig.toml builds the 30 functions at once (parallel = true: 40 s here, against 66 s one by
# one), which is right when Go's build cache has their packages: each build is then a link. On a
# machine that has not built them yet, 30 builds would each compile the same packages at the same
# time (11 minutes on 2 cores, and a compiler's memory each); one `go build` of every function
# first compiles each package once. sam-build and make deploy (infra/deploy) run it first, and so
# should anyone running sam build by hand on a new machine.
lambda-cache:
	$(LAMBDA_BUILD) ./functions/...

## sam-build: `sam build` itself into a scratch folder, each function checked as a linux/arm64 bootstrap (make setup installs aws-sam-cli into .venv-sam)
SAM ?= $(firstword $(wildcard .venv-sam/bin/sam) sam)
sam-build: lambda-cache
	@if ! command -v $(SAM) >/dev/null 2>&1; then echo "sam-build: sam is not installed: run make setup (it installs aws-sam-cli into .venv-sam)"; exit 1; fi; \
	dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	SAM_CLI_TELEMETRY=0 $(SAM) build --build-dir $$dir/build --cache-dir $$dir/cache >$$dir/log 2>&1 || { cat $$dir/log; exit 1; }; \
	for id in $(LAMBDAS); do \
	  $(call check_bootstrap,$$dir/build/$$id); \
	done; \
	n=$$(ls $$dir/build/*/bootstrap | wc -l); echo "sam build: $$n functions built, each a linux/arm64 bootstrap"; \
	test $$n -eq $(words $(LAMBDAS)) || { echo "sam build built $$n functions, want $(words $(LAMBDAS))"; exit 1; }

# Deploying (docs/deploy.md). STACK and REGION follow samconfig.toml unless given.
STACK  ?= loopback
REGION ?= $(shell aws configure get region 2>/dev/null)
OUTPUT  = aws cloudformation describe-stacks --stack-name $(STACK) $(if $(REGION),--region $(REGION)) --query "Stacks[0].Outputs[?OutputKey=='$(1)'].OutputValue" --output text

## deploy: pick the MCP function's reserved concurrency from the Lambda quota, build the inbox, sam build, sam deploy, upload the inbox, refresh CloudFront (infra/deploy)
# MCP_RESERVED (McpReservedConcurrency) and STAGE, when given, win over samconfig.toml's
# parameter_overrides, which are kept (a custom domain set there is deployed); without either,
# MCP_RESERVED is 50 when the account's quota has room for it and 0 (unreserved, explained) on a
# new account's 10. SAMCONFIG: another SAM CLI configuration file.
MCP_RESERVED ?=
STAGE ?=
SAMCONFIG ?= samconfig.toml
DEPLOY = $(GO) run ./infra/deploy --stack '$(STACK)' $(if $(REGION),--region '$(REGION)') $(if $(STAGE),--stage '$(STAGE)') \
  $(if $(MCP_RESERVED),--mcp-reserved '$(MCP_RESERVED)') --samconfig '$(SAMCONFIG)' --sam '$(SAM)'
deploy:
	$(DEPLOY)

## quota-check: what the account's Lambda concurrency quota leaves for the MCP function's reservation
quota-check:
	@$(DEPLOY) --quota-only

## smoke: check a deployed stack end to end from here: make smoke URL=https://… TOKEN=<person's> AGENT_TOKEN=<agent's>
smoke:
	@test -n "$(URL)" -a -n "$(TOKEN)" -a -n "$(AGENT_TOKEN)" || { echo "usage: make smoke URL=https://d….cloudfront.net TOKEN=lb_…(a person's) AGENT_TOKEN=lb_…(an agent's)"; exit 2; }
	LOOPBACK_TOKEN='$(TOKEN)' LOOPBACK_AGENT_TOKEN='$(AGENT_TOKEN)' $(GO) run ./infra/smoke --url '$(URL)'

## bootstrap: a new space on a deployed stack, its owner's and an agent's credentials: make bootstrap NAME=you
BOOTSTRAP = $(if $(REGION),AWS_REGION=$(REGION)) $(GO) run ./infra/bootstrap --table $$($(call OUTPUT,AskTableName))
bootstrap:
	@test -n "$(NAME)" || { echo "usage: make bootstrap NAME=you"; exit 2; }
	$(BOOTSTRAP) --name '$(NAME)' --url $$($(call OUTPUT,InboxUrl)) --mcp $$($(call OUTPUT,McpUrl)) --vapid $$($(call OUTPUT,VapidParameter)) --action-key $$($(call OUTPUT,ActionKeyParameter))

## teammate: a teammate's (person's) credential: make teammate SPACE=sp_… NAME=ada
teammate:
	@test -n "$(NAME)" -a -n "$(SPACE)" || { echo "usage: make teammate SPACE=sp_… NAME=ada"; exit 2; }
	$(BOOTSTRAP) --space '$(SPACE)' --person --name '$(NAME)' --url $$($(call OUTPUT,InboxUrl))

## agent-token: another agent's credential (MCP only): make agent-token SPACE=sp_… NAME=laptop
agent-token:
	@test -n "$(NAME)" -a -n "$(SPACE)" || { echo "usage: make agent-token SPACE=sp_… NAME=laptop"; exit 2; }
	$(BOOTSTRAP) --space '$(SPACE)' --agent --name '$(NAME)' --mcp $$($(call OUTPUT,McpUrl))

## tokens: a space's credentials: make tokens SPACE=sp_…
tokens:
	@test -n "$(SPACE)" || { echo "usage: make tokens SPACE=sp_…"; exit 2; }
	$(BOOTSTRAP) --space '$(SPACE)' --list

## revoke: revoke a credential; its sockets, waits, tickets and tasks end too: make revoke SPACE=sp_… ID=cred_…
revoke:
	@test -n "$(ID)" -a -n "$(SPACE)" || { echo "usage: make revoke SPACE=sp_… ID=cred_…"; exit 2; }
	$(BOOTSTRAP) --space '$(SPACE)' --revoke '$(ID)'

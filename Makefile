# Ensemble: `make run` starts the runtime with the web UI; `make test` runs every test.
# Everything the targets need beyond Go and Node.js is installed by .ci/run (chromium) or by npm.

GO       ?= go
NPM      ?= npm
BIN      := bin/ensemble
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X github.com/ensemblework/ensemble/app.Version=$(VERSION)
UI_STAMP := frontend/node_modules/.package-lock.json

.PHONY: run build ui ui-deps test test-go test-ui vet bench clean

## run: build the web UI and start `ensemble serve` (data in the OS's data folder, or $ENSEMBLE_DATA)
run: ui
	$(GO) run -ldflags "$(LDFLAGS)" . serve $(ARGS)

## build: the headless binary, with the web UI embedded, in bin/
build: ui
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) .

ui-deps: $(UI_STAMP)
$(UI_STAMP): frontend/package.json frontend/package-lock.json
	cd frontend && $(NPM) ci --no-audit --no-fund

## ui: build the web UI into frontend/dist (embedded by the Go build)
ui: ui-deps
	cd frontend && $(NPM) run build

## test: everything: vet, the UI's unit tests, the Go tests (with real SQLite, real Chromium, the binary)
test: ui vet test-ui test-go

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './frontend/node_modules/*'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

test-ui: ui-deps
	cd frontend && $(NPM) test

test-go:
	$(GO) test -count=1 ./...

## bench: the figures docs/benchmarks.md records
bench: ui
	$(GO) test -run '^$$' -bench . -benchtime 2x ./app/
	$(GO) test -run '^$$' -bench . -benchmem ./runtime/... ./engines/...

clean:
	rm -rf bin frontend/node_modules
	find frontend/dist -mindepth 1 ! -name .keep -delete

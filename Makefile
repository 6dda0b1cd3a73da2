# Ensemble: `make run` starts the runtime with the web UI; `make test` runs every test.
# Everything the targets need beyond Go and Node.js is installed by .ci/run (chromium) or by npm.

GO       ?= go
NPM      ?= npm
BIN      := bin/ensemble
PREFIX   ?= $(HOME)/.local
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X github.com/ensemblework/ensemble/app.Version=$(VERSION)
UI_STAMP := frontend/node_modules/.package-lock.json

# go-winres turns build/windows (the manifest, version info) into .syso files that `go build` links
# into the Windows binaries (the tool is pinned in go.mod); they are made by `make cross` and removed
# after it, never committed.
WINRES   := tool go-winres
SYSO     := rsrc_windows_amd64.syso rsrc_windows_arm64.syso

# The desktop window needs cgo and, on Linux, GTK 3 and WebKitGTK 4.1 (libgtk-3-dev libwebkit2gtk-4.1-dev).
comma := ,
DESKTOP_TAGS := desktop,production$(if $(filter Linux,$(shell uname -s)),$(comma)webkit2_41)

.PHONY: run install build desktop cross ui ui-deps test test-go test-ui vet bench bench-board clean

## run: build bin/ensemble (the web UI embedded) and start `bin/ensemble serve` (data in the OS's
## data folder, or $ENSEMBLE_DATA); the other commands are bin/ensemble's, or `make install`'s
run: build
	./$(BIN) serve $(ARGS)

## install: bin/ensemble into $(PREFIX)/bin (default ~/.local/bin), so `ensemble` is on the PATH
install: build
	install -Dm755 $(BIN) $(DESTDIR)$(PREFIX)/bin/ensemble
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "$(PREFIX)/bin is not on your PATH: add it, or run $(PREFIX)/bin/ensemble";; esac

## build: the headless binary, with the web UI embedded, in bin/
build: ui
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) .

## desktop: the desktop app (window + runtime) in bin/
desktop: ui
	CGO_ENABLED=1 $(GO) build -trimpath -tags $(DESKTOP_TAGS) -ldflags "$(LDFLAGS)" -o $(BIN)-desktop .

## cross: what builds here for the other platforms: the headless binary for Linux, macOS and Windows
## (amd64, arm64, no cgo) and the Windows desktop app (Wails needs no cgo there)
## (the Windows ones with build/windows/ensemble.exe.manifest and version info embedded)
cross: ui
	$(GO) $(WINRES) make --in build/windows/winres.json --out rsrc --arch amd64,arm64
	for os in linux darwin windows; do for arch in amd64 arm64; do \
		ext=$$( [ $$os = windows ] && echo .exe ); \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/ensemble-$$os-$$arch$$ext . || { rm -f $(SYSO); exit 1; }; \
	done; done
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GO) build -trimpath -tags desktop,production -ldflags "$(LDFLAGS) -H windowsgui" -o bin/ensemble-desktop-windows-amd64.exe . || { rm -f $(SYSO); exit 1; }
	rm -f $(SYSO)

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

## test-ui: the UI's type and template check (svelte-check), then its unit tests (vitest)
test-ui: ui-deps
	cd frontend && $(NPM) run check
	cd frontend && $(NPM) test

# The app package drives the real agent CLIs, Chromium and the relay end to end: past go test's
# default 10 minutes on a two-core machine. It runs after the other packages, not beside them:
# its pages in Chromium wait on a runtime that other packages' Chromiums and agent CLIs would
# starve on two cores.
test-go:
	$(GO) test -count=1 -timeout 15m $$($(GO) list ./... | grep -v '/app$$')
	$(GO) test -count=1 -timeout 25m ./app/

## bench: the figures docs/benchmarks.md records (the board load benchmark needs Chromium; skipped without it)
bench: ui
	$(GO) test -run '^$$' -bench . -benchtime 2x ./app/
	$(GO) test -run '^$$' -bench . -benchmem ./runtime/... ./engines/...
	$(GO) test -run '^$$' -bench . -benchtime 20x ./browser/

## bench-board: only the board with 1,000 tasks in Chromium (20 loads: first paint, time to
## interactive against its 400 ms p95 budget, the painted frame), as `make bench` runs it
bench-board: ui
	$(GO) test -run '^$$' -bench BenchmarkBoardFirstPaint -benchtime 2x ./app/

clean:
	rm -rf bin frontend/node_modules $(SYSO)
	find frontend/dist -mindepth 1 ! -name .keep -delete

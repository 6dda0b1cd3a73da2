package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/internal/gosource"
)

const module = "github.com/ensemblework/ensemble"

// TestImportRules pins the layout's rules on what may depend on what, on every system the binary
// is built for: they held only by habit before.
func TestImportRules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	rules := []struct {
		pkgs   string // a go list pattern
		banned []string
		why    string
	}{
		{"./engines/...", []string{module + "/runtime/"}, "the agents' drivers stand apart from the runtime: it uses them through engines.Host"},
		{"./relay/...", []string{module + "/runtime/", "modernc.org/sqlite"}, "the relay keeps nothing and is deployed alone"},
		{"./browser/...", []string{module + "/runtime/"}, "the browser broker stands apart from the runtime, behind a small interface"},
		{"./bridge/...", []string{"modernc.org/sqlite", module + "/runtime/store", module + "/runtime/ledger", module + "/runtime/events"},
			"the bridge process (ensemble mcp) never opens the database: it reaches the runtime over HTTP"},
		{"./runtime/bridge/...", []string{module + "/runtime/assistant"},
			"the bridge's server side runs the tools (runtime/tools) and reads skills (runtime/skills), not the assistant's turn loop"},
		{"./runtime/judge", []string{module + "/"}, "the judge is a pure function of the call and the settings"},
		{"./runtime/webfetch", []string{module + "/"}, "reading a web page is one idea, used by the assistant, nodes and the browser broker alike"},
		{"./runtime/problem", []string{module + "/"}, "every domain package returns its problems, so it sits below them all"},
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, r := range rules {
			for pkg, deps := range depsOf(t, goos, r.pkgs) {
				for _, d := range deps {
					if d == pkg || strings.HasPrefix(d, pkg+"/") && (r.pkgs == "./runtime/judge" || r.pkgs == "./runtime/webfetch" || r.pkgs == "./runtime/problem") {
						continue
					}
					for _, b := range r.banned {
						if d == strings.TrimSuffix(b, "/") || strings.HasPrefix(d, b) {
							t.Errorf("%s (GOOS=%s) depends on %s: %s", pkg, goos, d, r.why)
						}
					}
				}
			}
		}
	}
}

// TestOnlyTheWindowImportsWails: the desktop window is one file; everything else builds and runs
// without a display.
func TestOnlyTheWindowImportsWails(t *testing.T) {
	err := gosource.Walk(".", gosource.Options{Tests: true, Mode: parser.ImportsOnly}, func(path string, _ *token.FileSet, f *ast.File) error {
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(p, "github.com/wailsapp/") && path != filepath.Join("app", "window.go") {
				t.Errorf("%s imports %s: only app/window.go may", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// depsOf lists each package matching pattern with what it depends on (tests left out), as built
// for goos.
func depsOf(t *testing.T, goos, pattern string) map[string][]string {
	t.Helper()
	if _, err := os.Stat(strings.TrimSuffix(strings.TrimPrefix(pattern, "./"), "/...")); err != nil {
		return nil // not in the tree yet
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", pattern)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s (GOOS=%s): %v", pattern, goos, err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			m[f[0]] = slices.Clone(f[1:])
		}
	}
	return m
}

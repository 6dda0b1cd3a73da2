//go:build linux

package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/codex"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/jobs"
)

// TestCodexRunAfterSetup: after `ensemble mcp setup codex` put the person's ensemble entry in
// $CODEX_HOME/config.toml, a run of the real Codex still opens its thread (it failed with "url is
// not supported for stdio in mcp_servers.ensemble" when the run's server had the same name), its
// model is offered both the run's tools and the person's bridge, and --check says Codex has it.
func TestCodexRunAfterSetup(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Codex; not in -short")
	}
	bin, err := buildBinary() // before HOME changes: go build finds its caches there
	if err != nil {
		t.Fatal(err)
	}
	codexBin := enginetest.InstallNPM(t, "@openai/codex", "0.171.0", "codex")
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	model := enginetest.NewServer(t)
	// A model outside Codex's bundled catalog, so it offers MCP tools to the model directly.
	codexSetup("scripted-model")(t, model.URL)
	data := t.TempDir()
	setup := exec.Command(bin, "--data", data, "mcp", "setup", "codex")
	setup.Dir = t.TempDir()
	out, err := setup.CombinedOutput()
	config := filepath.Join(os.Getenv("CODEX_HOME"), "config.toml")
	if err != nil || !strings.Contains(string(out), config) {
		t.Fatalf("ensemble mcp setup codex: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(config); !strings.Contains(string(b), "[mcp_servers.ensemble]") || !strings.Contains(string(b), "model_provider") {
		t.Fatalf("config.toml after setup:\n%s", b)
	}

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: data, Addr: "127.0.0.1:0", Log: log,
		Drivers: map[string]engines.Driver{"codex": codex.New(codex.WithBinary(codexBin), codex.WithLogger(log))}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}

	model.Script(enginetest.Say("Nothing to change."))
	var j jobs.Job
	if err := c.do(context.Background(), "POST", "/api/agent/assign", map[string]any{
		"title": "Look around", "agent": "codex", "folder": t.TempDir(),
		// Sandbox off: Codex starts the person's servers inside a sandboxed run's sandbox, where the
		// binary built in /tmp is not (the sandbox has a /tmp of its own).
		"settings": map[string]any{"mode": "ask", "maxTurns": 5, "sandbox": false}}, &j); err != nil {
		t.Fatal(err)
	}
	j = waitRun(t, c, j.ID, jobs.Done)
	if j.Summary != "Nothing to change." {
		t.Errorf("summary %q", j.Summary)
	}
	var tools []string
	for _, r := range model.Requests() {
		for _, tl := range r.Tools {
			tools = append(tools, tl.Name)
		}
	}
	for _, want := range []string{"mcp__" + engines.OwnServer + "__ask_person", "mcp__ensemble__ensemble_search"} {
		if !slices.Contains(tools, want) {
			t.Errorf("the model was not offered %s; it had %v", want, tools)
		}
	}

	check := exec.Command(bin, "mcp", "setup", "--check", "codex")
	check.Env = append(os.Environ(), "PATH="+filepath.Dir(codexBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := check.CombinedOutput(); err != nil || !strings.Contains(string(out), "Codex CLI has the ensemble server, on, in "+config) {
		t.Errorf("--check codex: %v\n%s", err, out)
	}
}

package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestAgentsListsInstalledCLIs installs the real agent CLIs from npm, puts them on PATH, and checks
// that `ensemble agents` lists each with its version and sign-in state.
func TestAgentsListsInstalledCLIs(t *testing.T) {
	if testing.Short() {
		t.Skip("installs agent CLIs from npm")
	}
	claude := enginetest.InstallNPM(t, "@anthropic-ai/claude-code", "2.1.197", "claude")
	codex := enginetest.InstallNPM(t, "@openai/codex", "0.171.0", "codex")
	opencode := enginetest.InstallNPM(t, "opencode-ai", "1.18.33", "opencode")
	path := filepath.Dir(claude) + string(os.PathListSeparator) + filepath.Dir(codex) + string(os.PathListSeparator) +
		filepath.Dir(opencode) + string(os.PathListSeparator) + os.Getenv("PATH")
	t.Setenv("PATH", path)
	home := t.TempDir() // nobody signed in here
	t.Setenv("HOME", home)
	t.Setenv("SHELL", "/bin/false") // the login shell's PATH would be this machine's, not the test's
	// A key only in Ensemble's environment: runs go without it (spec 003 §6), so Claude Code is
	// not signed in for them, and the list says how to give Claude Code a key.
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-only-in-the-environment")
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	code, out := ensemble(t, "--data", rt.cfg.DataDir, "agents", "--refresh")
	if code != 0 {
		t.Fatalf("ensemble agents: %d\n%s", code, out)
	}
	t.Logf("\n%s", out)
	for _, want := range []string{
		`(?m)^claude\s+yes\s+2\.1\.197\s+no\s+its own\s+claude$`,
		`(?m)^codex\s+yes\s+0\.171\.0\s+no\s+Ensemble's\s+codex login$`,
		`(?m)^opencode\s+yes\s+1\.18\.33\s+on first use\s+Ensemble's\s+opencode auth login$`,
		`(?m)^gemini\s+no\s+-\s+-\s+-\s+gemini$`,
		`(?m)^claude: Claude Code is not signed in for Ensemble's runs: they go without ANTHROPIC_API_KEY .*"apiKeyHelper"`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no line matching %s", want)
		}
	}
	// Assigning a run to an agent that is not signed in says so, with the command.
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	err = c.do(context.Background(), "POST", "/api/agent/assign", map[string]any{"title": "x", "agent": "claude", "folder": t.TempDir()}, nil)
	if err == nil || !regexp.MustCompile("not signed in.*`claude`").MatchString(err.Error()) {
		t.Errorf("assigning to a signed-out claude: %v", err)
	}
}

//go:build linux

package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestRealClaudeUsesBridge configures the real Claude Code from npm with `ensemble mcp setup claude`
// and has it, driven by the scripted model in a loopback-only network namespace, list Ensemble's
// tools and call ensemble_search.
func TestRealClaudeUsesBridge(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Claude Code; not in -short")
	}
	claude := enginetest.InstallNPM(t, "@anthropic-ai/claude-code", "2.1.197", "claude")
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	s := startServe(t, data)
	c := &client{f: s.f, http: httpClient()}
	ctx := context.Background()
	var made struct {
		Secret string `json:"secret"`
	}
	if err := c.do(ctx, "POST", "/api/keys", map[string]any{"name": "claude code"}, &made); err != nil {
		t.Fatal(err)
	}
	if err := c.do(ctx, "POST", "/api/tasks", map[string]any{"title": "Fix the login retry"}, nil); err != nil {
		t.Fatal(err)
	}
	folder := t.TempDir()
	setup := exec.Command(bin, "--data", data, "mcp", "setup", "claude")
	setup.Dir = folder
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("ensemble mcp setup claude: %v\n%s", err, out)
	}

	model := enginetest.NewServer(t)
	model.Script(
		enginetest.ToolCall("mcp__ensemble__ensemble_search", map[string]any{"query": "login retry"}),
		enginetest.Say("Found the login task.").WhenLastUser("Fix the login retry"),
	)
	home := enginetest.ClaudeHome(t, model.URL)
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, claude, "-p", "Find the task about the login retry in Ensemble.", "--output-format", "json",
		"--mcp-config", filepath.Join(folder, ".mcp.json"), "--allowedTools", "mcp__ensemble__ensemble_search", "--model", "claude-sonnet-4-5")
	cmd.Dir = folder
	cmd.Env = append(os.Environ(), "HOME="+home, "ENSEMBLE_KEY="+made.Secret, "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	var offered bool
	for _, r := range model.Requests() {
		for _, tl := range r.Tools {
			if tl.Name == "mcp__ensemble__ensemble_brief" {
				offered = true
			}
		}
	}
	if !offered {
		t.Errorf("the model was never offered Ensemble's tools")
	}
	tr, ok := model.LastToolResult()
	if !ok || tr.IsError || !strings.Contains(tr.Content, "Fix the login retry") {
		t.Errorf("the model got %+v, want ensemble_search's hits", tr)
	}
	if !strings.Contains(string(out), "Found the login task.") {
		t.Errorf("claude answered %s", out)
	}
}

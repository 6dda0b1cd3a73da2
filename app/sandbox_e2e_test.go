//go:build linux

package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/claude"
	"github.com/ensemblework/ensemble/engines/codex"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/needs"
)

// claudeUnderJudge is the real Claude Code for the runtime tests.
var claudeUnderJudge = agentUnderJudge{
	name: "claude", pkg: "@anthropic-ai/claude-code", version: "2.1.197", bin: "claude",
	driver: func(bin string, log *slog.Logger) engines.Driver {
		return claude.New(claude.WithBinary(bin), claude.WithLogger(log))
	},
	setup: func(t *testing.T, url string) {
		t.Setenv("HOME", enginetest.ClaudeHome(t, url))
		t.Setenv("TMPDIR", t.TempDir())
	},
}

// TestClaudeSandboxHolds: Claude Code through the runtime, in Run unattended with the sandbox on
// (its own sandbox-runtime): inline interpreter code the judge leaves to the sandbox cannot delete
// a folder in the home or write ~/.bashrc, the trace names the sandbox on every step and marks
// what it stopped; a command asking to leave the sandbox waits on Needs me even in Run unattended;
// with the sandbox off, Ask mode asks before the same code runs.
func TestClaudeSandboxHolds(t *testing.T) {
	sandboxHolds(t, claudeUnderJudge, "claude", true)
}

// TestCodexSandboxHolds is TestClaudeSandboxHolds for Codex, which runs whole inside Ensemble's
// sandbox with its own inside it (its own alone re-runs a stopped command outside it).
func TestCodexSandboxHolds(t *testing.T) {
	sandboxHolds(t, agentUnderJudge{name: "codex", pkg: "@openai/codex", version: "0.171.0", bin: "codex",
		driver: func(bin string, log *slog.Logger) engines.Driver {
			return codex.New(codex.WithBinary(bin), codex.WithLogger(log))
		}, setup: codexSetup("gpt-5.5")}, "ensemble", false)
}

// TestOpencodeSandboxHolds is TestClaudeSandboxHolds for OpenCode, which has no sandbox of its
// own: the whole agent runs inside Ensemble's.
func TestOpencodeSandboxHolds(t *testing.T) {
	sandboxHolds(t, agentUnderJudge{name: "opencode", pkg: "opencode-ai", version: "1.18.33", bin: "opencode",
		driver: acpDriver("opencode"), setup: func(t *testing.T, url string) {
			home, env := enginetest.OpencodeEnv(t, url)
			setEnv(t, home, env)
		}}, "ensemble", false)
}

func sandboxHolds(t *testing.T, a agentUnderJudge, by string, escalates bool) {
	if testing.Short() {
		t.Skipf("drives the real %s; not in -short", a.name)
	}
	bin := enginetest.InstallNPM(t, a.pkg, a.version, a.bin)
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	model := enginetest.NewServer(t)
	a.setup(t, model.URL)
	c := startAgentRuntime(t, a, bin)
	home := os.Getenv("HOME")
	assign := func(t *testing.T, settings map[string]any) jobs.Job {
		t.Helper()
		var j jobs.Job
		settings["maxTurns"] = 10
		if err := c.do(context.Background(), "POST", "/api/agent/assign", map[string]any{
			"title": "Tidy up", "agent": a.name, "folder": t.TempDir(), "settings": settings}, &j); err != nil {
			t.Fatal(err)
		}
		return j
	}

	t.Run("UnattendedSandboxStopsIt", func(t *testing.T) {
		cn := enginetest.NewCanaries(t, home)
		model.Script(enginetest.Shell(cn.DeleteFolder), enginetest.Shell(cn.WriteBashrc), enginetest.Say("done"))
		j := waitRun(t, c, assign(t, map[string]any{"mode": "unattended"}).ID, jobs.Done)
		cn.Check(t, model)
		steps, stopped := 0, 0
		for _, ev := range runTrace(t, c, j.ID) {
			switch ev.kind {
			case jobs.KindStarted:
				if ev.Sandbox == nil || ev.Sandbox.By != by {
					t.Errorf("run.started names the sandbox %+v, want %q", ev.Sandbox, by)
				}
			case jobs.KindToolStart:
				steps++
				if ev.Sandbox == nil || ev.Sandbox.By != by || ev.Sandbox.Note == "" {
					t.Errorf("step %d names the sandbox %+v, want %q", ev.Step, ev.Sandbox, by)
				}
			case jobs.KindToolEnd:
				if ev.SandboxStopped {
					stopped++
				}
			}
		}
		if steps != 2 || stopped != 2 {
			t.Errorf("%d steps, %d of them marked as stopped by the sandbox; want 2 and 2", steps, stopped)
		}
	})

	t.Run("AskModeWithoutSandboxAsksFirst", func(t *testing.T) {
		cn := enginetest.NewCanaries(t, home)
		model.Script(enginetest.Shell(cn.DeleteFolder), enginetest.Say("I will leave it."))
		j := assign(t, map[string]any{"mode": "ask", "sandbox": false})
		d := waitNeed(t, c, j.ID)
		if d.Kind != needs.Permission || !strings.Contains(d.Call, "rmtree") {
			t.Fatalf("decision = %+v", d)
		}
		if err := c.do(context.Background(), "POST", "/api/needs/"+d.ID+"/answer", map[string]any{"option": jobs.Deny}, nil); err != nil {
			t.Fatal(err)
		}
		waitRun(t, c, j.ID, jobs.Done)
		cn.Check(t, model)
		for _, ev := range runTrace(t, c, j.ID) {
			if ev.kind == jobs.KindStarted && (ev.Sandbox == nil || ev.Sandbox.By != "" || !strings.Contains(ev.Sandbox.Note, "off")) {
				t.Errorf("a run with the sandbox off says %+v", ev.Sandbox)
			}
		}
	})

	if !escalates {
		return
	}
	t.Run("LeavingTheSandboxWaitsOnNeedsMe", func(t *testing.T) {
		// A command Run unattended would let through inside the sandbox: outside it, it asks.
		model.Script(
			enginetest.ToolCall("Bash", map[string]any{"command": "touch escaped.txt", "description": "retry", "dangerouslyDisableSandbox": true}),
			enginetest.Say("I will stay inside."),
		)
		j := assign(t, map[string]any{"mode": "unattended"})
		escaped := filepath.Join(j.WorkDir, "escaped.txt")
		d := waitNeed(t, c, j.ID)
		if d.Kind != needs.Permission || !strings.Contains(d.Reason, "outside the sandbox") {
			t.Fatalf("decision = %+v", d)
		}
		if err := c.do(context.Background(), "POST", "/api/needs/"+d.ID+"/answer", map[string]any{"option": jobs.Deny}, nil); err != nil {
			t.Fatal(err)
		}
		waitRun(t, c, j.ID, jobs.Done)
		if _, err := os.Stat(escaped); err == nil {
			t.Error("the command refused outside the sandbox ran")
		}
	})
}

// TestClaudeWithoutBubblewrapDoesNotStart: on a computer without bubblewrap, a run of Claude Code
// with the sandbox on does not start, and says what to install or to turn off; with the sandbox
// off it runs.
func TestClaudeWithoutBubblewrapDoesNotStart(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Claude Code; not in -short")
	}
	a := claudeUnderJudge
	bin := enginetest.InstallNPM(t, a.pkg, a.version, a.bin)
	if !enginetest.InLoopbackNamespaceWithout(t, "bwrap") {
		return
	}
	model := enginetest.NewServer(t)
	a.setup(t, model.URL)
	c := startAgentRuntime(t, a, bin)
	model.Script(enginetest.Say("done"))
	var j jobs.Job
	if err := c.do(context.Background(), "POST", "/api/agent/assign", map[string]any{
		"title": "Tidy up", "agent": "claude", "folder": t.TempDir(), "settings": map[string]any{"mode": "unattended"}}, &j); err != nil {
		t.Fatal(err)
	}
	j = waitRun(t, c, j.ID, jobs.Failed)
	// The preflight says the same before any run: `ensemble agents` and Settings → Agents.
	var list struct {
		Agents []engines.Detection `json:"agents"`
	}
	if err := c.do(context.Background(), "GET", "/api/agents?refresh=1", nil, &list); err != nil {
		t.Fatal(err)
	}
	for _, d := range list.Agents {
		if d.Name == "claude" && (d.Sandbox == nil || d.Sandbox.OK || !strings.Contains(d.Sandbox.Problem, "sudo apt install bubblewrap")) {
			t.Errorf("the preflight says %+v, want bubblewrap named", d.Sandbox)
		}
	}
	for _, want := range []string{"needs bwrap", "sudo apt install bubblewrap", "turn the sandbox off for this run"} {
		if !strings.Contains(j.Error, want) {
			t.Errorf("the run's error %q does not say %q", j.Error, want)
		}
	}
	if j.Attempts > 1 {
		t.Errorf("a missing sandbox was retried %d times", j.Attempts)
	}
	if err := c.do(context.Background(), "POST", "/api/agent/assign", map[string]any{
		"title": "Tidy up", "agent": "claude", "folder": t.TempDir(), "settings": map[string]any{"mode": "unattended", "sandbox": false}}, &j); err != nil {
		t.Fatal(err)
	}
	waitRun(t, c, j.ID, jobs.Done)
}

// startAgentRuntime starts a runtime with the agent a's driver for bin and a client of its API.
func startAgentRuntime(t *testing.T, a agentUnderJudge, bin string) *client {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0", Log: log,
		Drivers: map[string]engines.Driver{a.name: a.driver(bin, log)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
}

package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/claude"
	"github.com/ensemblework/ensemble/engines/codex"
	"github.com/ensemblework/ensemble/engines/enginetest"
)

// planAgent is one plan's real agent CLI, set up against the scripted model.
type planAgent struct {
	provider, agent   string
	pkg, version, bin string
	model             string
	driver            func(bin string, log *slog.Logger) engines.Driver
	setup             func(t *testing.T, url string)
	// toolsOff: the agent is offered none of its own tools (Claude Code's --tools ""). Codex keeps
	// a few that act on nothing (MCP resource listing, asking the person, viewing a picture), and
	// Ensemble declines every approval it asks for.
	toolsOff bool
	// mcp is how the agent names Ensemble's tools to its model: "mcp__ensemble_run__" (Claude Code,
	// Codex), "ensemble_run_" (OpenCode), "mcp_ensemble_run_" (Gemini CLI).
	mcp string
	// inMessage: Ensemble's instructions lead the session's first message (an ACP agent takes
	// no system prompt from its client), so the agent's own system prompt stays before them.
	inMessage bool
	// fresh: each message starts a new session with the conversation so far (Gemini CLI, whose
	// sessions cannot be reloaded within the minute they were made).
	fresh bool
}

// ownTools are an agent's own tools that act on the computer or the web.
var ownTools = regexp.MustCompile(`^(exec_command|write_stdin|shell|apply_patch|web_search|Bash|Edit|Write|Read|WebFetch|WebSearch|Agent|Task)$|spawn_agent`)

// TestAssistantOnPlans runs the assistant on the person's own plan (spec 003 §8): the real Claude
// Code, Codex, OpenCode and Gemini CLI from npm, against the scripted model in a loopback-only namespace,
// answer `ensemble chat` with Ensemble's instructions, calling Ensemble's tools over the turn's MCP
// server; the write lands through the same code as a model-key turn, and the next message resumes
// the same session.
func TestAssistantOnPlans(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real agent CLIs; not in -short")
	}
	for _, a := range planAgents() {
		t.Run(a.provider, func(t *testing.T) { assistantOnPlan(t, a) })
	}
}

// planAgents are the plans' real agent CLIs, pinned.
func planAgents() []planAgent {
	return []planAgent{{
		provider: "claude-code", agent: "claude", pkg: "@anthropic-ai/claude-code", version: "2.1.197", bin: "claude",
		model: "claude-sonnet-4-5", toolsOff: true, mcp: "mcp__ensemble_run__",
		driver: func(bin string, log *slog.Logger) engines.Driver {
			return claude.New(claude.WithBinary(bin), claude.WithLogger(log))
		},
		setup: func(t *testing.T, url string) {
			t.Setenv("HOME", enginetest.ClaudeHome(t, url))
			t.Setenv("TMPDIR", t.TempDir())
		},
	}, {
		// A model outside Codex's bundled catalog: for gpt-5.5 Codex defers MCP tools behind its
		// tool_search, which a real model calls first and the scripted one does not.
		provider: "codex", agent: "codex", pkg: "@openai/codex", version: "0.171.0", bin: "codex", model: "scripted-model",
		driver: func(bin string, log *slog.Logger) engines.Driver {
			return codex.New(codex.WithBinary(bin), codex.WithLogger(log))
		},
		setup: codexSetup("scripted-model"), mcp: "mcp__ensemble_run__",
	}, {
		// A chat turn's permission rules deny OpenCode's own tools, so it offers its model none.
		// Its model is the test provider's.
		provider: "opencode", agent: "opencode", pkg: "opencode-ai", version: "1.18.33", bin: "opencode",
		model: "fake/fake-model", mcp: "ensemble_run_", inMessage: true, toolsOff: true,
		driver: acpDriver("opencode"),
		setup: func(t *testing.T, url string) {
			home, env := enginetest.OpencodeEnv(t, url)
			setEnv(t, home, env)
		},
	}, {
		// A chat turn's admin policy denies Gemini CLI's own tools, so it offers its model none. A
		// pinned model skips Gemini's model router.
		provider: "gemini-cli", agent: "gemini", pkg: "@google/gemini-cli", version: "0.61.0", bin: "gemini",
		model: "gemini-2.5-flash", mcp: "mcp_ensemble_run_", inMessage: true, toolsOff: true,
		driver: acpDriver("gemini"),
		setup: func(t *testing.T, url string) {
			home, env := enginetest.GeminiEnv(t, url)
			setEnv(t, home, env)
			// The driver drops GEMINI_API_KEY from the agent's environment (it would bill a key,
			// not the plan); Gemini CLI reads the dummy key from its own ~/.gemini/.env instead.
			key := []byte("GEMINI_API_KEY=" + env["GEMINI_API_KEY"] + "\n")
			if err := os.WriteFile(filepath.Join(home, ".gemini", ".env"), key, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		fresh: true,
	}}
}

func assistantOnPlan(t *testing.T, a planAgent) {
	bin := enginetest.InstallNPM(t, a.pkg, a.version, a.bin)
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	model := enginetest.NewServer(t)
	a.setup(t, model.URL)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0", Log: log,
		Drivers: map[string]engines.Driver{a.agent: a.driver(bin, log)}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	data := "--data=" + rt.cfg.DataDir

	model.Script(
		enginetest.Say("Adding it.").Call(a.mcp+"hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Water the plants"}}}),
		enginetest.Say("I added Water the plants to To do."),
	)
	code, out := ensemble(t, data, "chat", "--provider", a.provider, "--model", a.model, "add a task: water the plants")
	if code != 0 || !strings.Contains(out, "✓ Added 1 task: “Water the plants”") || !strings.Contains(out, "I added Water the plants to To do.") {
		t.Fatalf("chat: %d %q", code, out)
	}
	id := regexp.MustCompile(`cnv_[0-9a-f]+`).FindString(out)
	var titles, actor string
	err = rt.store.Reader().QueryRow(`SELECT group_concat(title), (SELECT actor_kind FROM ledger_groups ORDER BY seq DESC LIMIT 1) FROM tasks`).Scan(&titles, &actor)
	if err != nil || titles != "Water the plants" || actor != "assistant" {
		t.Fatalf("after the turn: tasks %q, last write by %q (%v)", titles, actor, err)
	}
	var first enginetest.Request
	for _, r := range model.Requests() {
		if r.Side == "" && r.Step == 0 {
			first = r // the agent's own request, not a side one (titles, probes)
			break
		}
	}
	system := first.System // Claude Code's system prompt; Codex sends its base instructions as a developer message
	for _, m := range first.Messages {
		for _, b := range m.Blocks {
			if m.Role == "system" {
				system += b.Text
			}
		}
	}
	if a.inMessage {
		system = first.LastUserText()
	}
	if !strings.Contains(system, "You are Ensemble's assistant") {
		t.Errorf("the agent's instructions are not Ensemble's: %.300q", system)
	}
	for _, tool := range first.Tools {
		if !strings.HasPrefix(tool.Name, a.mcp) && (a.toolsOff || ownTools.MatchString(tool.Name)) {
			t.Errorf("the agent was offered its own tool %q in a chat", tool.Name)
		}
	}
	if !strings.Contains(first.LastUserText(), "add a task: water the plants") {
		t.Errorf("the message reached the agent as %q", first.LastUserText())
	}

	// The next message resumes the session: the model sees the first exchange without a transcript
	// (a fresh agent gets a new session with the transcript).
	model.Script(enginetest.Say("Just Water the plants."))
	code, out = ensemble(t, data, "chat", "--conversation", id, "--provider", a.provider, "--model", a.model, "what is on my list?")
	if code != 0 || !strings.Contains(out, "Just Water the plants.") {
		t.Fatalf("second message: %d %q", code, out)
	}
	reqs := model.Requests()
	last := reqs[len(reqs)-1]
	transcript := strings.Contains(last.LastUserText(), "Earlier in this conversation:\n\nThe person: add a task: water the plants")
	switch {
	case a.fresh && !transcript:
		t.Errorf("the second turn's new session did not get the conversation so far: %q", last.LastUserText())
	case !a.fresh && (transcript || len(last.Messages) < 4):
		t.Errorf("the second turn did not resume the session: %d messages, last %q", len(last.Messages), last.LastUserText())
	}
}

// TestAssistantOnPlansCutOff runs each plan's real agent CLI against a model whose every reply
// breaks off (the connection dropped, or the body ended before its end marker), so that the
// agent's own retries break off too: the chat ends saying the answer was cut off, the saved reply
// is marked so with the text that came, and the next message tells the agent. Gemini CLI 0.61.0
// takes a body that ends early as a whole reply after its retries and says nothing of it over ACP,
// so only its dropped connection can be told.
func TestAssistantOnPlansCutOff(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real agent CLIs; not in -short")
	}
	breaks := map[string][]string{
		"claude": {enginetest.BreakDrop, enginetest.BreakEnd}, "codex": {enginetest.BreakDrop, enginetest.BreakEnd},
		"opencode": {enginetest.BreakDrop}, "gemini": {enginetest.BreakDrop},
	}
	for _, a := range planAgents() {
		for _, brk := range breaks[a.agent] {
			t.Run(a.provider+"/"+brk, func(t *testing.T) { assistantOnPlanCutOff(t, a, brk) })
		}
	}
}

func assistantOnPlanCutOff(t *testing.T, a planAgent, brk string) {
	bin := enginetest.InstallNPM(t, a.pkg, a.version, a.bin)
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	model := enginetest.NewServer(t)
	a.setup(t, model.URL)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0", Log: log,
		Drivers: map[string]engines.Driver{a.agent: a.driver(bin, log)}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	data := "--data=" + rt.cfg.DataDir

	cut := enginetest.Say("The first half of the answer")
	cut.BreakOff = brk
	var answered atomic.Bool // every reply breaks off until the first message is over
	model.Script(cut.When(enginetest.Match{Func: func(*enginetest.Request) bool { return !answered.Load() }}).Forever())
	code, out := ensemble(t, data, "chat", "--provider", a.provider, "--model", a.model, "tell me something")
	if code != 1 || !strings.Contains(out, "The connection between "+aiPlanTitle(a.provider)+" and its model, "+a.model+", broke off before") {
		t.Fatalf("chat: %d %q", code, out)
	}
	id := regexp.MustCompile(`cnv_[0-9a-f]+`).FindString(out)
	var text string
	var cutOff bool
	if err := rt.store.Reader().QueryRow(`SELECT text, cut_off FROM assistant_messages WHERE conversation_id = ? AND role = 'assistant'`, id).Scan(&text, &cutOff); err != nil || !cutOff {
		t.Fatalf("saved reply %q, cut off %v (%v)", text, cutOff, err)
	}
	// What is kept, before the sentence saying it was cut off, is text the chat showed as it
	// streamed, the part that came included: an agent that retried the broken reply itself
	// streamed each attempt and kept its last (Codex) or all of them as one message (OpenCode),
	// and Claude Code streams a note of its own after it ("API Error: Connection closed…").
	shown, _, _ := strings.Cut(out, "\nContinue with:")
	kept, _, _ := strings.Cut(text, "\n\nThe connection between")
	if strings.Contains(shown, "The first half of the answer") &&
		(!strings.Contains(kept, "The first half of the answer") || !strings.Contains(shown, kept)) {
		t.Errorf("the saved reply %q does not keep the text that came, %q", text, shown)
	}

	// The next message tells the agent its last answer was cut off: in the resumed session's
	// prompt, or in the conversation so far for an agent that starts afresh.
	answered.Store(true)
	model.Script(enginetest.Say("Here is all of it."))
	code, out = ensemble(t, data, "chat", "--conversation", id, "--provider", a.provider, "--model", a.model, "go on")
	if code != 0 || !strings.Contains(out, "Here is all of it.") {
		t.Fatalf("second message: %d %q", code, out)
	}
	reqs := model.Requests()
	var told bool
	for _, r := range reqs[len(reqs)-1].Messages {
		for _, b := range r.Blocks {
			told = told || strings.Contains(b.Text, "cut off")
		}
	}
	if !told {
		t.Errorf("the agent was not told its last answer was cut off: %q", reqs[len(reqs)-1].LastUserText())
	}
}

// aiPlanTitle is how the sentences name a plan's agent.
func aiPlanTitle(provider string) string {
	return map[string]string{"claude-code": "Claude Code", "codex": "Codex", "opencode": "OpenCode", "gemini-cli": "Gemini CLI"}[provider]
}

package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/claude"
	"github.com/ensemblework/ensemble/engines/enginetest"
)

// modelCanaries are secrets kept on this computer, by name, each reaching a model request from a
// source of its own: the person's message, a record's title (in a write's receipt), a skill's
// title (in the instructions) and a page's body (in a tool's result).
var modelCanaries = map[string]string{
	"TYPED_TOKEN": "Zq8-typed-5b1e-leakprobe",
	"TITLE_TOKEN": "Zq8-title-9c2f-leakprobe",
	"SKILL_TOKEN": "Zq8-skill-3d7a-leakprobe",
	"PAGE_TOKEN":  "Zq8-page-6e4b-leakprobe",
}

// TestKeptSecretsNeverReachAModel keeps four secrets through `ensemble secrets set`, titles a task
// and a skill with two, writes one into a page, and has the assistant, over two turns of one chat,
// read the page and update the task, the first message holding the fourth. Every request the
// scripted model logs, of either turn, holds none of them; each source's text still arrives, hidden.
// Through each model API the runtime speaks (Anthropic, an OpenAI-compatible server, a local
// Ollama) and through the real Claude Code on the person's plan.
func TestKeptSecretsNeverReachAModel(t *testing.T) {
	for _, p := range []struct{ provider, base string }{{"anthropic", ""}, {"openai", "/v1"}, {"ollama", "/v1"}} {
		t.Run(p.provider, func(t *testing.T) {
			model := enginetest.NewServer(t)
			t.Setenv("ANTHROPIC_API_KEY", "dummy")
			t.Setenv("ANTHROPIC_BASE_URL", model.URL)
			base := ""
			if p.base != "" {
				base = model.URL + p.base
			}
			keptSecretsChat(t, model, nil, p.provider, "scripted-model", base, "")
		})
	}
	t.Run("claude-code", func(t *testing.T) {
		if testing.Short() {
			t.Skip("drives the real Claude Code; not in -short")
		}
		bin := enginetest.InstallNPM(t, "@anthropic-ai/claude-code", "2.1.197", "claude")
		if !enginetest.InLoopbackNamespace(t) {
			return
		}
		model := enginetest.NewServer(t)
		t.Setenv("HOME", enginetest.ClaudeHome(t, model.URL))
		t.Setenv("TMPDIR", t.TempDir())
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		keptSecretsChat(t, model, map[string]engines.Driver{"claude": claude.New(claude.WithBinary(bin), claude.WithLogger(log))},
			"claude-code", "claude-sonnet-4-5", "", "mcp__ensemble_run__")
	})
}

// keptSecretsChat runs the scene of TestKeptSecretsNeverReachAModel on provider; prefix is how the
// agent names Ensemble's tools to its model ("" on a model API).
func keptSecretsChat(t *testing.T, model *enginetest.Server, drivers map[string]engines.Driver, provider, modelName, base, prefix string) {
	dir := t.TempDir()
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: dir, Addr: "127.0.0.1:0",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Drivers: drivers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	token := readToken(t, rt)
	do := func(method, path string, body any) ([]byte, map[string]any) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, rt.URL+path, strings.NewReader(string(b)))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
		}
		var m map[string]any
		json.Unmarshal(out, &m)
		return out, m
	}
	// turn sends one message and returns its conversation's id; the turn streams as server-sent events.
	turn := func(body map[string]any) string {
		t.Helper()
		body["provider"], body["model"], body["baseUrl"] = provider, modelName, base
		out, _ := do("POST", "/api/assistant/turn", body)
		if !strings.Contains(string(out), "event: done") {
			t.Fatalf("the turn did not end with its reply:\n%s", out)
		}
		return regexp.MustCompile(`cnv_[0-9a-f]+`).FindString(string(out))
	}
	for name, v := range modelCanaries {
		if code, out := ensembleIn(t, v+"\n", "--data="+dir, "secrets", "set", name); code != 0 {
			t.Fatalf("secrets set %s: %q", name, out)
		}
	}
	_, task := do("POST", "/api/tasks", map[string]any{"title": "Rotate " + modelCanaries["TITLE_TOKEN"]})
	_, page := do("POST", "/api/pages", map[string]any{"title": "Deploy notes", "body": "The token is " + modelCanaries["PAGE_TOKEN"] + "."})
	do("PUT", "/api/assistant/skills/deploys", map[string]any{"title": "Deploy with " + modelCanaries["SKILL_TOKEN"], "body": "Read the notes first."})

	model.Script(
		enginetest.ToolCall(prefix+"hub_read_page", map[string]any{"id": page["id"]}),
		enginetest.ToolCall(prefix+"hub_update_task", map[string]any{"id": task["id"], "status": "done"}),
		enginetest.Say("Done."),
	)
	conv := turn(map[string]any{"text": "my token is " + modelCanaries["TYPED_TOKEN"] + "; read the deploy notes and mark the rotate task done"})
	turn1 := len(model.Requests())
	model.Script(enginetest.Say("Still done."))
	turn(map[string]any{"conversationId": conv, "text": "and now?"})

	reqs := model.Requests()
	if turn1 < 3 || len(reqs) <= turn1 {
		t.Fatalf("the model was sent %d requests in the first turn and %d in the second", turn1, len(reqs)-turn1)
	}
	var all strings.Builder
	for _, r := range reqs {
		b, _ := json.Marshal(r)
		all.Write(b)
		for name, v := range modelCanaries {
			if i := strings.Index(string(b), v); i >= 0 {
				t.Errorf("model request %d (%s) holds %s: …%s…", r.Seq, r.Path, name, b[max(0, i-120):min(len(b), i+len(v)+40)])
			}
		}
	}
	// Each source reached the model, hidden; the second turn's history holds the first turn's.
	var later strings.Builder
	for _, r := range reqs[turn1:] {
		b, _ := json.Marshal(r)
		later.Write(b)
	}
	for where, want := range map[string]string{
		"the page's text, in a tool result":           "The token is [secret PAGE_TOKEN]",
		"the typed value, in the next turn's history": "my token is [secret TYPED_TOKEN]",
		"the task's title, in the next turn":          "Rotate [secret TITLE_TOKEN]",
		"the skill's title, in the instructions":      "Deploy with [secret SKILL_TOKEN]",
	} {
		text := all.String()
		if where != "the page's text, in a tool result" {
			text = later.String()
		}
		if !strings.Contains(text, want) {
			t.Errorf("%s did not reach the model as %q", where, want)
		}
	}
}

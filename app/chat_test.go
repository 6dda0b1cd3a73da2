package app

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestChatCommand drives `ensemble chat` against a runtime whose assistant talks to the scripted
// model server (through ANTHROPIC_BASE_URL, as a person's own key would).
func TestChatCommand(t *testing.T) {
	model := enginetest.NewServer(t)
	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	t.Setenv("ANTHROPIC_BASE_URL", model.URL)
	rt := startTestRuntime(t)
	data := "--data=" + rt.cfg.DataDir

	if code, out := ensemble(t, data, "chat", "--list"); code != 0 || !strings.Contains(out, "No chats yet.") {
		t.Fatalf("empty list: %d %q", code, out)
	}
	if code, out := ensemble(t, data, "chat", "hello"); code != 1 || !strings.Contains(out, "Choose a model") {
		t.Fatalf("no model anywhere: %d %q", code, out)
	}
	model.Script(
		enginetest.Say("On it.").Call("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Draft brief"}, {"title": "Call Mira"}}}),
		enginetest.Say("Added both."),
		enginetest.Say("They are in To do."),
	)
	code, out := ensemble(t, data, "chat", "--model", "Test Model", "add two tasks:", "draft brief and call Mira")
	if code != 0 {
		t.Fatalf("chat: %d %q", code, out)
	}
	want := "On it.\n✓ Added 2 tasks: “Draft brief” and “Call Mira”.\nAdded both.\n"
	m := regexp.MustCompile(`(?s)^(.*)Continue with: ensemble chat --conversation (cnv_[0-9a-f]+) "…"\n$`).FindStringSubmatch(out)
	if m == nil || m[1] != want {
		t.Fatalf("chat printed %q, want %q and where to continue", out, want)
	}
	id := m[2]
	if reqs := model.Requests(); reqs[0].Model != "Test Model" || !strings.HasSuffix(reqs[0].LastUserText(), "</context>\n\nadd two tasks: draft brief and call Mira") {
		t.Fatalf("first request: model %q, text %q", reqs[0].Model, reqs[0].LastUserText())
	}

	code, out = ensemble(t, data, "chat", "--conversation", id, "--model", "Test Model", "where are they?")
	if code != 0 || !strings.HasPrefix(out, "They are in To do.\n") {
		t.Fatalf("continue: %d %q", code, out)
	}
	reqs := model.Requests()
	if last := reqs[len(reqs)-1]; len(last.Messages) != 3 {
		t.Fatalf("continuing sent %d messages, want the earlier two and the new one", len(last.Messages))
	}

	code, out = ensemble(t, data, "chat", "--list")
	if code != 0 || !regexp.MustCompile(id+` +\d{4}-\d\d-\d\d \d\d:\d\d +4 +add two tasks: draft brief and call Mira\n`).MatchString(out) {
		t.Fatalf("list: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "chat", "--conversation", "cnv_nope", "--model", "m", "hi"); code != 1 || !strings.Contains(out, "There is no such conversation") {
		t.Fatalf("unknown conversation: %d %q", code, out)
	}
	// A model that fails: its sentence, exit 1.
	model.Script(enginetest.Fail(400, "no such model"))
	if code, out = ensemble(t, data, "chat", "--model", "Test Model", "--provider", "anthropic", "hi"); code != 1 || !strings.Contains(out, "ensemble: Test Model could not answer") {
		t.Fatalf("failing model: %d %q", code, out)
	}
}

func TestChatWithoutRuntime(t *testing.T) {
	data := "--data=" + t.TempDir()
	if code, out := ensemble(t, data, "chat", "hi"); code != 1 || !strings.Contains(out, "Ensemble is not running") || !strings.Contains(out, "start it with `ensemble serve`") {
		t.Errorf("chat: %d %q", code, out)
	}
	if code, out := ensemble(t, data, "chat", "--list"); code != 1 || !strings.Contains(out, "Ensemble is not running") {
		t.Errorf("chat --list: %d %q", code, out)
	}
	if code, out := ensemble(t, data, "chat"); code != 1 || !strings.Contains(out, "write a message") {
		t.Errorf("chat with no message: %d %q", code, out)
	}
	if code, out := ensemble(t, "chat", "--help"); code != 0 || !strings.Contains(out, "--conversation") || !strings.Contains(out, "--list") {
		t.Errorf("chat --help: %d %q", code, out)
	}
}

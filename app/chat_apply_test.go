package app

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/assistant"
)

// quickAgent is a stand-in agent that ends each run at once.
type quickAgent struct{}

func (quickAgent) Name() string { return "stand-in" }

func (quickAgent) Start(ctx context.Context, spec engines.Spec, h engines.Host) (engines.Run, error) {
	r := &pipeRun{done: make(chan struct{})}
	close(r.done)
	return r, nil
}

// TestChatAppliesHeldChanges: an assignment waits for Apply even under the default policy; the
// chat lists it and says how to apply it, --apply applies it once, and at a terminal the person
// picks which changes to apply by number.
func TestChatAppliesHeldChanges(t *testing.T) {
	model := enginetest.NewServer(t)
	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	t.Setenv("ANTHROPIC_BASE_URL", model.URL)
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Drivers: map[string]engines.Driver{"stand-in": quickAgent{}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	data := "--data=" + rt.cfg.DataDir
	code, out := ensemble(t, data, "tasks", "add", "Fix login")
	m := regexp.MustCompile(`\((tsk_[0-9a-f]+)\)`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("tasks add: %d %q", code, out)
	}
	taskID, folder := m[1], t.TempDir()
	assign := map[string]any{"taskId": taskID, "agent": "stand-in", "folder": folder}

	model.Script(enginetest.ToolCall("hub_assign_to_agent", assign), enginetest.Say("It waits for your Apply."))
	code, out = ensemble(t, data, "chat", "--model", "Test Model", "have the agent fix login")
	m = regexp.MustCompile(`(?s)Waiting for Apply:\n  1\. Assign “Fix login” to Stand-in in .+\.\n1 change waits for Apply: ensemble chat --apply (cnv_[0-9a-f]+)\n`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("chat: %d %q", code, out)
	}
	conv := m[1]
	if code, out = ensemble(t, data, "chat", "--apply", conv); code != 0 || out != "✓ Assigned “Fix login” to Stand-in; the run is queued.\n" {
		t.Fatalf("--apply: %d %q", code, out)
	}
	if code, out = ensemble(t, data, "chat", "--apply", conv); code != 1 || !strings.Contains(out, "Nothing here waits for Apply.") {
		t.Fatalf("second --apply: %d %q", code, out)
	}

	// At a terminal: a wrong answer is asked again; "2" applies the second change only.
	model.Script(enginetest.ToolCall("hub_assign_to_agent", assign).Call("hub_assign_to_agent", map[string]any{"taskId": taskID, "agent": "stand-in", "folder": folder, "model": "m2"}),
		enginetest.Say("Both wait for your Apply."))
	c, err := connect(context.Background(), &globals{data: rt.cfg.DataDir})
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	err = chat(context.Background(), c, assistant.TurnRequest{ConversationID: conv, Model: "Test Model", Text: "twice"}, strings.NewReader("9\n2\n"), &buf, io.Discard)
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, buf.String())
	}
	want := "Apply? [a]ll / numbers / [n]o: Answer a, n, or numbers from 1 to 2 (such as 1 3).\nApply? [a]ll / numbers / [n]o: ✓ Assigned “Fix login” to Stand-in; the run is queued.\n"
	if got := buf.String(); !strings.Contains(got, "  2. Assign “Fix login” to Stand-in in ") || !strings.Contains(got, "(model m2).\n") || !strings.HasSuffix(got, want) {
		t.Fatalf("chat printed %q", got)
	}
	if code, out = ensemble(t, data, "chat", "--apply", conv); code != 0 || strings.Count(out, "✓ Assigned") != 1 {
		t.Fatalf("the first change: %d %q", code, out)
	}
}

func TestParsePick(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		ok   bool
	}{
		{"a", []int{0, 1, 2}, true},
		{"n", nil, true},
		{"", nil, true},
		{"3 1,3", []int{2, 0}, true},
		{"4", nil, false},
		{"x", nil, false},
	} {
		got, ok := parsePick(c.in+"\n", 3)
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("parsePick(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

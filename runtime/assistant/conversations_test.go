package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

// runtimeEnv is a Service over a database file, as one runtime process has it.
type runtimeEnv struct {
	st  *store.Store
	bus *events.Bus
	svc *Service
}

// openRuntime opens the database at path and a Service over it whose model is model.
func openRuntime(t *testing.T, path string, model *enginetest.Server) *runtimeEnv {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	w := ledger.New(st, bus)
	svc := New(Config{Records: records.New(st, w), Store: st, Writer: w, Timeout: time.Minute,
		Providers: func(p, base string) (models.Provider, error) {
			return models.NewAnthropic("test", model.URL, time.Minute), nil
		}})
	e := &runtimeEnv{st: st, bus: bus, svc: svc}
	t.Cleanup(e.close)
	return e
}

func (e *runtimeEnv) close() {
	e.svc.Close(context.Background())
	e.bus.Close()
	e.st.Close()
}

func ask(t *testing.T, svc *Service, conv, text string) (Reply, error) {
	t.Helper()
	return svc.Turn(context.Background(), TurnRequest{ConversationID: conv, Text: text, Model: "m"}, nil)
}

// requestTexts is the role and text of each message a model request carried.
func requestTexts(r enginetest.Request) []string {
	var out []string
	for _, m := range r.Messages {
		var text []string
		for _, b := range m.Blocks {
			if b.Type == "text" {
				text = append(text, b.Text)
			}
		}
		out = append(out, m.Role+": "+withoutContext(strings.Join(text, "")))
	}
	return out
}

// withoutContext is a message sent to the model without the <context> block in front of it.
func withoutContext(s string) string {
	if strings.HasPrefix(s, "<context>") {
		if _, rest, ok := strings.Cut(s, "</context>\n\n"); ok {
			return rest
		}
	}
	return s
}

func TestConversationSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ensemble.db")
	model := enginetest.NewServer(t)
	model.Script(
		enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Draft brief"}}}),
		enginetest.Say("Added “Draft brief”."),
		enginetest.Say("It is in To do."),
	)
	first := openRuntime(t, path, model)
	r, err := ask(t, first.svc, "", "  add a task:\n draft brief  ")
	if err != nil {
		t.Fatal(err)
	}
	if r.MessageID == "" {
		t.Fatalf("reply %+v has no message id", r)
	}
	first.close()

	again := openRuntime(t, path, model)
	list, err := again.svc.List(context.Background(), 0)
	if err != nil || len(list) != 1 {
		t.Fatalf("list %+v %v", list, err)
	}
	if got := list[0]; got.ID != r.ConversationID || got.Title != "add a task: draft brief" || got.Messages != 2 || got.Busy {
		t.Fatalf("summary %+v", got)
	}
	c, err := again.svc.Conversation(context.Background(), r.ConversationID)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 2 || c.Messages[0].Role != "user" || c.Messages[1].Text != "Added “Draft brief”." ||
		len(c.Messages[1].Tools) != 1 || c.Messages[1].Tools[0].Status != "done" || c.Messages[1].ID != r.MessageID {
		t.Fatalf("messages %+v", c.Messages)
	}
	if _, err := ask(t, again.svc, r.ConversationID, "where is it?"); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	got := requestTexts(reqs[len(reqs)-1])
	if len(got) != 3 || got[0] != "user: add a task:\n draft brief" || !strings.HasPrefix(got[1], "assistant: Added “Draft brief”.\n\nAdded 1 task") ||
		!strings.Contains(got[1], "(ensemble://task/") || got[2] != "user: where is it?" {
		t.Fatalf("history sent after the restart: %q", got)
	}
}

func TestStopKeepsWhatWasStreamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ensemble.db")
	model := enginetest.NewServer(t)
	model.Script(enginetest.Say("Half an ans").ThenHang(), enginetest.Say("Go on then."))
	e := openRuntime(t, path, model)
	sub := e.bus.Subscribe(64)
	ctx := context.Background()

	texts := make(chan string, 16)
	ids := make(chan string, 1)
	type result struct {
		r   Reply
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := e.svc.Turn(ctx, TurnRequest{Text: "tell me everything", Model: "m"}, func(ev Event) {
			switch ev.Type {
			case "conversation":
				ids <- ev.ConversationID
			case "text":
				texts <- ev.Text
			}
		})
		done <- result{r, err}
	}()
	id := <-ids
	select {
	case <-texts:
	case <-time.After(10 * time.Second):
		t.Fatal("no text streamed")
	}
	// Mid-turn, the question is already saved and the conversation is busy.
	c, err := e.svc.Conversation(ctx, id)
	if err != nil || !c.Busy || len(c.Messages) != 1 || c.Messages[0].Text != "tell me everything" {
		t.Fatalf("mid-turn %+v %v", c, err)
	}
	if _, err := ask(t, e.svc, id, "and?"); !problem.Is(err, problem.KindConflict) {
		t.Fatalf("a second turn while answering: %v", err)
	}
	if err := e.svc.Stop(ctx, id); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if !errors.Is(res.err, ErrStopped) || res.err.Error() != "Stopped." {
		t.Fatalf("turn ended with %v", res.err)
	}
	c, _ = e.svc.Conversation(ctx, id)
	last := c.Messages[len(c.Messages)-1]
	if c.Busy || len(c.Messages) != 2 || !last.Stopped || last.Error || last.Text != "Half an ans" {
		t.Fatalf("after Stop %+v", c)
	}
	if err := e.svc.Stop(ctx, id); !problem.Is(err, problem.KindConflict) {
		t.Fatalf("Stop with nothing running: %v", err)
	}
	if err := e.svc.Stop(ctx, "cnv_nope"); !problem.Is(err, problem.KindNotFound) {
		t.Fatalf("Stop of an unknown conversation: %v", err)
	}
	// The stopped reply is history: the model sees what it had said.
	if _, err := ask(t, e.svc, id, "go on"); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	if got := requestTexts(reqs[len(reqs)-1]); !reflect.DeepEqual(got, []string{"user: tell me everything", "assistant: Half an ans", "user: go on"}) {
		t.Fatalf("history after Stop %q", got)
	}
	// Each change was announced: created, the stopped reply, the next question, its reply.
	var changes []string
	for len(changes) < 4 {
		select {
		case ev := <-sub.C:
			if ev.Kind != KindConversation {
				continue
			}
			var ch ConversationChange
			json.Unmarshal(ev.Data, &ch)
			if ch.ID != id {
				t.Fatalf("event for %s", ch.ID)
			}
			changes = append(changes, ch.Change)
		case <-time.After(5 * time.Second):
			t.Fatalf("events %v", changes)
		}
	}
	if !reflect.DeepEqual(changes, []string{"created", "message", "message", "message"}) {
		t.Fatalf("events %v", changes)
	}
}

func TestDeleteStopsAndForgets(t *testing.T) {
	model := enginetest.NewServer(t)
	model.Script(enginetest.Say("Hello."), enginetest.Hang())
	e := openRuntime(t, filepath.Join(t.TempDir(), "ensemble.db"), model)
	ctx := context.Background()
	r, err := ask(t, e.svc, "", "hi")
	if err != nil {
		t.Fatal(err)
	}
	// A second conversation is answering when it is deleted.
	ids := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		_, err := e.svc.Turn(ctx, TurnRequest{Text: "wait for it", Model: "m"}, func(ev Event) {
			if ev.Type == "conversation" {
				ids <- ev.ConversationID
			}
		})
		done <- err
	}()
	busy := <-ids
	if _, err := model.WaitForRequest(ctx, func(r *enginetest.Request) bool { return withoutContext(r.LastUserText()) == "wait for it" }); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{busy, r.ConversationID} {
		if err := e.svc.Delete(ctx, id); err != nil {
			t.Fatalf("delete %s: %v", id, err)
		}
	}
	if err := <-done; !errors.Is(err, ErrStopped) {
		t.Fatalf("the deleted conversation's turn ended with %v", err)
	}
	for _, id := range []string{busy, r.ConversationID} {
		if _, err := e.svc.Conversation(ctx, id); !problem.Is(err, problem.KindNotFound) {
			t.Fatalf("conversation %s after delete: %v", id, err)
		}
		if err := e.svc.Delete(ctx, id); !problem.Is(err, problem.KindNotFound) {
			t.Fatalf("second delete of %s: %v", id, err)
		}
		if _, err := ask(t, e.svc, id, "still there?"); !problem.Is(err, problem.KindNotFound) {
			t.Fatalf("a turn in deleted %s: %v", id, err)
		}
	}
	var n int
	e.st.Reader().QueryRow("SELECT count(*) FROM assistant_messages").Scan(&n)
	if list, _ := e.svc.List(ctx, 0); len(list) != 0 || n != 0 {
		t.Fatalf("left: %d conversations, %d messages", len(list), n)
	}
}

func TestSettings(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		name   string
		change SettingsChange
		want   Settings
		err    string
	}{
		{"nothing", SettingsChange{}, DefaultSettings(), ""},
		{"model and policy", SettingsChange{Model: s(" claude-x "), WritePolicy: s("preview")},
			Settings{Provider: "anthropic", Model: "claude-x", WritePolicy: "preview", AllowedWriteAreas: writeAreas}, ""},
		{"any base URL of the person's own", SettingsChange{Provider: s("openai"), BaseURL: s("https://models.example/v1"), Effort: s("high")},
			Settings{Provider: "openai", BaseURL: "https://models.example/v1", Effort: "high", WritePolicy: "immediate", AllowedWriteAreas: writeAreas}, ""},
		{"write areas, in order", SettingsChange{AllowedWriteAreas: &[]string{"pages", "tasks"}},
			Settings{Provider: "anthropic", WritePolicy: "immediate", AllowedWriteAreas: []string{"tasks", "pages"}}, ""},
		{"no writes at all", SettingsChange{AllowedWriteAreas: &[]string{}},
			Settings{Provider: "anthropic", WritePolicy: "immediate", AllowedWriteAreas: []string{}}, ""},
		{"bad area", SettingsChange{AllowedWriteAreas: &[]string{"tasks", "mail"}}, Settings{}, `Write area "mail" is not one of tasks, pages, projects, people, repos, agents, workflows.`},
		{"empty is the default", SettingsChange{Provider: s(""), WritePolicy: s("")}, DefaultSettings(), ""},
		{"bad policy", SettingsChange{WritePolicy: s("later")}, Settings{}, `Write policy "later" is not one of immediate, preview or needs-me.`},
		{"bad provider", SettingsChange{Provider: s("gemini")}, Settings{}, `Provider "gemini" is not one of anthropic, openai, ollama, claude-code, codex, opencode or gemini-cli.`},
		{"bad base URL", SettingsChange{BaseURL: s("file:///etc/passwd")}, Settings{}, "is not an http(s) address"},
		{"bad effort", SettingsChange{Effort: s("max; rm")}, Settings{}, "is not a level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.change.apply(DefaultSettings())
			if tc.err != "" {
				if !problem.Is(err, problem.KindInvalid) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v %v, want %+v", got, err, tc.want)
			}
		})
	}
}

func TestSettingsPersistAndFillTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ensemble.db")
	model := enginetest.NewServer(t)
	model.Script(enginetest.Say("Hi."), enginetest.Say("Hi again."))
	e := openRuntime(t, path, model)
	ctx := context.Background()
	if _, err := e.svc.Turn(ctx, TurnRequest{Text: "hi"}, nil); err == nil || !strings.Contains(err.Error(), "Choose a model") {
		t.Fatalf("turn with no model anywhere: %v", err)
	}
	m, low := "claude-sonnet-4-5", "low"
	if _, err := e.svc.SetSettings(ctx, SettingsChange{Model: &m, Effort: &low}); err != nil {
		t.Fatal(err)
	}
	bad := "sometimes"
	if _, err := e.svc.SetSettings(ctx, SettingsChange{Model: &bad, WritePolicy: &bad}); err == nil {
		t.Fatal("a bad policy was taken")
	}
	e.close()
	e = openRuntime(t, path, model)
	got, err := e.svc.Settings(ctx)
	want := Settings{Provider: "anthropic", Model: "claude-sonnet-4-5", Effort: "low", WritePolicy: "immediate", AllowedWriteAreas: writeAreas}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("settings after restart %+v %v, want %+v", got, err, want)
	}
	if _, err := e.svc.Turn(ctx, TurnRequest{Text: "hi"}, nil); err != nil {
		t.Fatal(err)
	}
	// The settings' model belongs to their provider: a turn naming another one must name its model.
	if _, err := e.svc.Turn(ctx, TurnRequest{Text: "hi", Provider: "openai"}, nil); err == nil || !strings.Contains(err.Error(), "Choose a model") {
		t.Fatalf("turn for another provider: %v", err)
	}
	if _, err := e.svc.Turn(ctx, TurnRequest{Text: "hi", Model: "Asked For"}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	if reqs[0].Model != "claude-sonnet-4-5" || reqs[1].Model != "Asked For" {
		t.Fatalf("models %q, %q", reqs[0].Model, reqs[1].Model)
	}
}

func TestHistoryOf(t *testing.T) {
	u := func(text string) Message { return Message{Role: "user", Text: text} }
	a := func(text string) Message { return Message{Role: "assistant", Text: text} }
	failed := Message{Role: "assistant", Text: "m could not answer", Error: true}
	stoppedEmpty := Message{Role: "assistant", Stopped: true}
	stoppedHalf := Message{Role: "assistant", Text: "half", Stopped: true}
	withWrite := Message{Role: "assistant", Text: "Added it.", history: "Added it.\n\nAdded 1 task"}
	long := []Message{}
	for i := range 10 {
		long = append(long, u(string(rune('a'+i))), a(string(rune('A'+i))))
	}
	for _, tc := range []struct {
		name string
		msgs []Message
		want []string
	}{
		{"empty", nil, nil},
		{"pair", []Message{u("q"), a("r")}, []string{"user: q", "assistant: r"}},
		{"history text", []Message{u("q"), withWrite}, []string{"user: q", "assistant: Added it.\n\nAdded 1 task"}},
		{"error turn skipped", []Message{u("q1"), failed, u("q2"), a("r2")}, []string{"user: q2", "assistant: r2"}},
		{"unanswered question at the end", []Message{u("q1"), a("r1"), u("q2")}, []string{"user: q1", "assistant: r1"}},
		{"stopped with nothing skipped", []Message{u("q1"), stoppedEmpty, u("q2"), a("r2")}, []string{"user: q2", "assistant: r2"}},
		{"stopped with text kept", []Message{u("q1"), stoppedHalf}, []string{"user: q1", "assistant: half"}},
		{"last 12", long, []string{"user: d", "assistant: D", "user: e", "assistant: E", "user: f", "assistant: F", "user: g", "assistant: G",
			"user: h", "assistant: H", "user: i", "assistant: I", "user: j", "assistant: J"}[2:]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range historyOf(tc.msgs) {
				got = append(got, m.Role+": "+m.Text)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTitleOf(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"  Plan the\n\tlaunch  ", "Plan the launch"},
		{strings.Repeat("a", 80), strings.Repeat("a", 80)},
		{strings.Repeat("é", 81), strings.Repeat("é", 79) + "…"},
	} {
		if got := titleOf(tc.in); got != tc.want {
			t.Errorf("titleOf(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

package assistant

import (
	"context"
	"encoding/json"
	"path/filepath"
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
	"github.com/ensemblework/ensemble/runtime/tools/toolstest"
)

// byPerson is who a test's own writes are recorded as.
var byPerson = ledger.Actor{Kind: ledger.Person}

// raw is a tool's input as JSON.
var raw = toolstest.Input

type fixture struct {
	st  *store.Store
	rec *records.Service
	svc *Service
	srv *enginetest.Server
}

var wires = []string{"anthropic", "openai"}

func newFixture(t *testing.T, wire string, timeout time.Duration) *fixture {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	t.Cleanup(func() { bus.Close(); st.Close() })
	w := ledger.New(st, bus)
	rec := records.New(st, w)
	srv := enginetest.NewServer(t)
	svc := New(Config{Records: rec, Store: st, Writer: w, Timeout: timeout, Providers: func(p, base string) (models.Provider, error) {
		if p == "openai" {
			return models.NewOpenAI("test", srv.URL, timeout), nil
		}
		return models.NewAnthropic("test", srv.URL, timeout), nil
	}})
	return &fixture{st: st, rec: rec, svc: svc, srv: srv}
}

func (f *fixture) turn(t *testing.T, wire, text string) (Reply, []Event, error) {
	t.Helper()
	var evs []Event
	r, err := f.svc.Turn(context.Background(), TurnRequest{Text: text, Provider: wire, Model: "Test Model"}, func(e Event) { evs = append(evs, e) })
	return r, evs, err
}

func (f *fixture) count(t *testing.T, q string) int {
	t.Helper()
	var n int
	if err := f.st.Reader().QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCreateTwoTasksIsOneUndoGroup(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			f := newFixture(t, wire, time.Minute)
			f.srv.Script(
				enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Draft brief"}, {"title": "Call Mira", "priority": "high"}}}),
				enginetest.Say("Added “Draft brief” and “Call Mira”."),
			)
			groupsBefore := f.count(t, "SELECT count(*) FROM ledger_groups")
			r, evs, err := f.turn(t, wire, "create two tasks: draft brief and call Mira")
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != "Added “Draft brief” and “Call Mira”." || r.Steps != 2 {
				t.Fatalf("reply %+v", r)
			}
			tasks, _ := f.rec.ListTasks(context.Background(), records.TaskFilter{})
			if len(tasks) != 2 || tasks[0].Title != "Draft brief" || tasks[1].Title != "Call Mira" || tasks[1].Priority != "high" {
				t.Fatalf("tasks %+v", tasks)
			}
			if n := f.count(t, "SELECT count(*) FROM ledger_groups") - groupsBefore; n != 1 {
				t.Fatalf("%d ledger groups, want 1", n)
			}
			var actor, summary string
			f.st.Reader().QueryRow("SELECT actor_kind, summary FROM ledger_groups ORDER BY seq DESC LIMIT 1").Scan(&actor, &summary)
			if actor != "assistant" || summary != "Added 2 tasks: “Draft brief” and “Call Mira”." {
				t.Fatalf("ledger group by %q: %q", actor, summary)
			}
			row := r.Tools[0]
			if row.Status != "done" || row.Summary != "Added 2 tasks: “Draft brief” and “Call Mira”." || row.Group == "" {
				t.Fatalf("row %+v", row)
			}
			for _, tk := range tasks {
				if strings.Contains(row.Summary, tk.ID) {
					t.Fatal("summary names an id")
				}
			}
			if evs[0].Type != "conversation" || evs[len(evs)-1].Type != "done" {
				t.Fatalf("events %+v", evs)
			}
			tr, _ := f.srv.LastToolResult()
			if tr.IsError || !strings.Contains(tr.Content, tasks[0].ID) {
				t.Fatalf("tool result %+v", tr)
			}
			// One Undo takes both away.
			if _, err := f.rec.Undo(context.Background(), ledger.Actor{Kind: ledger.Person}); err != nil {
				t.Fatal(err)
			}
			if tasks, _ := f.rec.ListTasks(context.Background(), records.TaskFilter{}); len(tasks) != 0 {
				t.Fatalf("after Undo: %+v", tasks)
			}
		})
	}
}

func TestUnknownToolAndInvalidInputDispatchNothing(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			f := newFixture(t, wire, time.Minute)
			f.srv.Script(
				enginetest.ToolCall("hub_delete_everything", map[string]any{}),
				enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"name": "no title"}}}),
				enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Fine", "status": "someday"}}}),
				enginetest.Say("I could not do that."),
			)
			groupsBefore := f.count(t, "SELECT count(*) FROM ledger_groups")
			r, _, err := f.turn(t, wire, "do something odd")
			if err != nil {
				t.Fatal(err)
			}
			reqs := f.srv.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d requests", len(reqs))
			}
			want := []string{"There is no tool named \"hub_delete_everything\" in this turn; the tools you can call are ",
				"The input for hub_create_tasks is not valid, so nothing was done. The field tasks[0].title is missing; it is required. " +
					"The field tasks[0].name is not one of the fields of tasks[0] (due, labels, page, priority, status and title).",
				"The input for hub_create_tasks is not valid, so nothing was done. The field tasks[0].status must be one of “proposed”, “todo”, “in_progress”, “waiting_approval”, “blocked”, “done” or “dropped”, not “someday”."}
			for i, w := range want {
				tr, ok := reqs[i+1].LastToolResult()
				if !ok || !strings.Contains(tr.Content, w) || !strings.Contains(strings.ToLower(tr.Content), "nothing was done") {
					t.Fatalf("request %d tool result %+v, want %q", i+1, tr, w)
				}
				if wire == "anthropic" && !tr.IsError {
					t.Fatalf("request %d: not marked as an error", i+1)
				}
				if r.Tools[i].Status != "error" {
					t.Fatalf("row %+v", r.Tools[i])
				}
			}
			if n := f.count(t, "SELECT count(*) FROM tasks"); n != 0 {
				t.Fatalf("%d tasks", n)
			}
			if n := f.count(t, "SELECT count(*) FROM ledger_groups"); n != groupsBefore {
				t.Fatal("something was written")
			}
		})
	}
}

func TestRefusedMoveIsTheToolsError(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			f := newFixture(t, wire, time.Minute)
			task, err := f.rec.Tasks().Create(context.Background(), ledger.Actor{Kind: ledger.Person},
				records.TaskInput{Title: records.Some("Ship it"), Status: records.Some(records.Proposed)})
			if err != nil {
				t.Fatal(err)
			}
			f.srv.Script(
				enginetest.ToolCall("hub_update_task", map[string]any{"id": task.ID, "status": "done"}),
				enginetest.ToolCall("hub_update_task", map[string]any{"id": task.ID, "status": "todo"}),
				enginetest.Say("Moved it to To do."),
			)
			r, _, err := f.turn(t, wire, "finish Ship it")
			if err != nil {
				t.Fatal(err)
			}
			tr, _ := f.srv.Requests()[1].LastToolResult()
			if tr.Content == "" || !strings.Contains(tr.Content, "A task that is Proposed cannot move to Done") {
				t.Fatalf("tool result %+v", tr)
			}
			if r.Tools[1].Summary != "Updated task “Ship it”: moved it to To do." {
				t.Fatalf("row %+v", r.Tools[1])
			}
			got, _ := f.rec.Tasks().Get(context.Background(), task.ID)
			if got.Status != records.Todo {
				t.Fatalf("status %s", got.Status)
			}
		})
	}
}

func TestModelThatNeverAnswersTimesOut(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			f := newFixture(t, wire, 2*time.Second)
			f.srv.Script(enginetest.Hang())
			_, _, err := f.turn(t, wire, "hello")
			want := "Test Model did not answer within 2 seconds, so I stopped waiting. Ask again, or try a narrower question."
			if err == nil || err.Error() != want {
				t.Fatalf("err %v", err)
			}
			c, err := f.svc.Conversation(context.Background(), f.svc.lastID(t))
			if err != nil || len(c.Messages) != 2 || c.Messages[1].Text != want || !c.Messages[1].Error {
				t.Fatalf("saved %+v %v", c.Messages, err)
			}
		})
	}
}

func TestLastStepHasToolsOff(t *testing.T) {
	f := newFixture(t, "anthropic", time.Minute)
	f.srv.Script(enginetest.ToolCall("hub_list_tasks", map[string]any{}).Repeat(MaxSteps-1), enginetest.Say("Nothing there."))
	r, _, err := f.turn(t, "anthropic", "list forever")
	if err != nil {
		t.Fatal(err)
	}
	if r.Steps != MaxSteps || r.Text != "Nothing there." {
		t.Fatalf("reply %+v", r)
	}
	reqs := f.srv.Requests()
	var body struct {
		ToolChoice struct{ Type string } `json:"tool_choice"`
	}
	json.Unmarshal(reqs[len(reqs)-1].Body, &body)
	if body.ToolChoice.Type != "none" {
		t.Fatalf("last request tool_choice %q", body.ToolChoice.Type)
	}
	body.ToolChoice.Type = ""
	json.Unmarshal(reqs[0].Body, &body)
	if body.ToolChoice.Type == "none" {
		t.Fatal("first request had tools off")
	}
}

func TestNudgeAndHistory(t *testing.T) {
	f := newFixture(t, "openai", time.Minute)
	f.srv.Script(
		enginetest.Say("Let me check your tasks."),
		enginetest.ToolCall("hub_list_tasks", map[string]any{}),
		enginetest.Say("You have no tasks."),
		enginetest.Say("Still none."),
	)
	r, _, err := f.turn(t, "openai", "what is on my list?")
	if err != nil || r.Text != "You have no tasks." {
		t.Fatalf("%+v %v", r, err)
	}
	if got := f.srv.Requests()[1].LastUserText(); got != nudge {
		t.Fatalf("nudge %q", got)
	}
	r2, err := f.svc.Turn(context.Background(), TurnRequest{ConversationID: r.ConversationID, Text: "and now?", Provider: "openai", Model: "m"}, nil)
	if err != nil || r2.Text != "Still none." {
		t.Fatalf("%+v %v", r2, err)
	}
	last := f.srv.Requests()[3]
	if len(last.Messages) < 3 {
		t.Fatalf("history not sent: %+v", last.Messages)
	}
}

// lastID is the only conversation's id (tests only).
func (s *Service) lastID(t *testing.T) string {
	t.Helper()
	list, err := s.List(context.Background(), 0)
	if err != nil || len(list) != 1 {
		t.Fatalf("%d conversations, %v", len(list), err)
	}
	return list[0].ID
}

// TestBaseURLStaysOnThisComputer: a request may point a provider only at a model server on this
// computer, since the provider's key goes with it.
func TestBaseURLStaysOnThisComputer(t *testing.T) {
	f := newFixture(t, "openai", time.Minute)
	f.srv.Script(enginetest.Say("Hello."), enginetest.Say("Hello.")) // the two allowed ones
	for _, tc := range []struct {
		base string
		ok   bool
	}{
		{"https://evil.example/v1", false},
		{"http://10.0.0.5:11434/v1", false},
		{"file:///etc/passwd", false},
		{"http://127.0.0.1:11434/v1", true},
		{"http://localhost:1234/v1", true},
	} {
		_, err := f.svc.Turn(context.Background(), TurnRequest{Text: "hi", Provider: "openai", Model: "m", BaseURL: tc.base}, nil)
		if refused := problem.Is(err, problem.KindInvalid) && strings.Contains(err.Error(), "on this computer"); refused == tc.ok {
			t.Errorf("base URL %s: err %v, want allowed=%v", tc.base, err, tc.ok)
		}
	}
}

package assistant

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// recordsState is the live tasks' and pages' titles, to prove a refused call changed nothing.
func (f *fixture) recordsState(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	tasks, err := f.rec.Tasks().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := f.rec.Pages().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range tasks {
		out = append(out, "task:"+x.Title)
	}
	for _, x := range pages {
		out = append(out, "page:"+x.Title)
	}
	return strings.Join(out, ",")
}

func (f *fixture) newTask(t *testing.T, title string) records.Task {
	t.Helper()
	task, err := f.rec.Tasks().Create(context.Background(), byPerson, records.TaskInput{Title: records.Some(title)})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func (f *fixture) newPage(t *testing.T, title string) records.Page {
	t.Helper()
	p, err := f.rec.Pages().Create(context.Background(), byPerson, records.PageInput{Title: records.Some(title), Body: records.Some("Body")})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPrepareFailureReachesModel: a call whose Prepare refuses it (a record named by a title that
// matches none or several, a page in Trash) reaches the model as an error, under every policy, and
// nothing is dispatched: no record changes and no proposal is saved.
func TestPrepareFailureReachesModel(t *testing.T) {
	cases := []struct {
		name  string
		tool  string
		input func(f *fixture) map[string]any
		want  string
	}{
		{"update a task no title names", "hub_update_task",
			func(*fixture) map[string]any { return map[string]any{"id": "No such task", "title": "x"} },
			"There is no task with that id or title"},
		{"trash a title two tasks share", "hub_delete_tasks",
			func(*fixture) map[string]any { return map[string]any{"ids": []string{"Dup"}} },
			"Item 1 of the list: 2 tasks are titled “Dup”; call hub_list_tasks and name the one meant by its id."},
		{"edit a page in Trash", "hub_edit_page",
			func(f *fixture) map[string]any {
				p := f.newPage(t, "Old notes")
				if _, err := f.rec.Pages().Trash(context.Background(), byPerson, p.ID); err != nil {
					t.Fatal(err)
				}
				return map[string]any{"id": p.ID, "edits": []map[string]string{{"old": "Body", "new": "New"}}}
			},
			"The page “Old notes” is in Trash; restore it first to change it."},
	}
	for _, policy := range []string{Immediate, Preview} {
		for _, c := range cases {
			t.Run(policy+"/"+c.name, func(t *testing.T) {
				f := newFixture(t, "anthropic", time.Minute)
				f.policy(t, policy)
				f.newTask(t, "Dup")
				f.newTask(t, "Dup")
				f.srv.Script(enginetest.ToolCall(c.tool, c.input(f)), enginetest.Say("It failed."))
				before := f.recordsState(t)
				r, _, err := f.turn(t, "anthropic", "do it")
				if err != nil {
					t.Fatal(err)
				}
				tr, _ := f.srv.Requests()[1].LastToolResult()
				if !tr.IsError || !strings.Contains(tr.Content, c.want) {
					t.Errorf("the model was told %+v, want an error with %q", tr, c.want)
				}
				if row := r.Tools[0]; row.Status != "error" || row.ProposalID != "" {
					t.Errorf("row %+v", row)
				}
				if f.recordsState(t) != before || f.count(t, "SELECT count(*) FROM assistant_proposals") != 0 {
					t.Error("a call refused by Prepare was dispatched")
				}
			})
		}
	}
}

// TestHeldCardShowsRisk: a held write's row (its card) carries the tool's area and risk, in the
// turn and when the conversation is read again; none of these is marked as without Undo.
func TestHeldCardShowsRisk(t *testing.T) {
	cases := []struct {
		tool  string
		input func(f *fixture) map[string]any
		area  string
		risk  tools.Risk
	}{
		{"hub_create_page", func(*fixture) map[string]any { return map[string]any{"title": "Notes"} }, "pages", tools.RiskLow},
		{"hub_update_task", func(f *fixture) map[string]any {
			return map[string]any{"id": f.newTask(t, "Draft brief").ID, "priority": "high"}
		}, "tasks", tools.RiskMedium},
		{"hub_delete_tasks", func(f *fixture) map[string]any {
			return map[string]any{"ids": []string{f.newTask(t, "Draft brief").ID}}
		}, "tasks", tools.RiskHigh},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			f := newFixture(t, "anthropic", time.Minute)
			f.policy(t, Preview)
			f.srv.Script(enginetest.ToolCall(c.tool, c.input(f)), enginetest.Say("Proposed."))
			r, _, err := f.turn(t, "anthropic", "do it")
			if err != nil {
				t.Fatal(err)
			}
			conv, err := f.svc.Conversation(context.Background(), r.ConversationID)
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range []ToolRow{r.Tools[0], conv.Messages[1].Tools[0]} {
				if row.Status != "proposed" || row.Area != c.area || row.Risk != c.risk || row.NoUndo {
					t.Errorf("row %+v, want area %s, risk %s", row, c.area, c.risk)
				}
			}
		})
	}
}

// TestPrepareFixesTheRecord: a task named by title is held by its id, previewed by its title, and
// Apply changes that task even when another task has taken the same title since.
func TestPrepareFixesTheRecord(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "anthropic", time.Minute)
	f.policy(t, Preview)
	task := f.newTask(t, "Draft brief")
	f.srv.Script(enginetest.ToolCall("hub_update_task", map[string]any{"id": "draft brief", "title": "Final brief"}), enginetest.Say("Proposed."))
	r, _, err := f.turn(t, "anthropic", "rename draft brief")
	if err != nil {
		t.Fatal(err)
	}
	row := r.Tools[0]
	if row.Preview != "Update task “Draft brief”: rename it to “Final brief”." {
		t.Fatalf("preview %q", row.Preview)
	}
	var saved string
	if err := f.st.Reader().QueryRow("SELECT input FROM assistant_proposals WHERE id = ?", row.ProposalID).Scan(&saved); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(saved, task.ID) || strings.Contains(saved, "draft brief") {
		t.Fatalf("held input %s, want the task's id in place of its title", saved)
	}
	other := f.newTask(t, "Draft brief")
	if _, err := f.svc.Apply(ctx, r.ConversationID, []string{row.ProposalID}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{task.ID: "Final brief", other.ID: "Draft brief"} {
		if got, _ := f.rec.Tasks().Get(ctx, id); got.Title != want {
			t.Errorf("task titled %q, want %q", got.Title, want)
		}
	}
}

// TestApplyRechecksThroughPrepare: Apply prepares a held write again against the records as they
// are then, so a record trashed since the proposal fails the Apply with Prepare's reason and
// nothing lands.
func TestApplyRechecksThroughPrepare(t *testing.T) {
	cases := []struct {
		name string
		tool string
		// hold returns the input to hold and what the person does before Apply.
		hold func(f *fixture) (map[string]any, func())
		want string
	}{
		{"trash tasks by title", "hub_delete_tasks", func(f *fixture) (map[string]any, func()) {
			task := f.newTask(t, "Draft brief")
			return map[string]any{"ids": []string{"Draft brief"}}, func() { f.rec.Tasks().Trash(context.Background(), byPerson, task.ID) }
		}, "Task “Draft brief” (item 1 of the list) is already in Trash."},
		{"update a task", "hub_update_task", func(f *fixture) (map[string]any, func()) {
			task := f.newTask(t, "Draft brief")
			return map[string]any{"id": "Draft brief", "priority": "high"}, func() { f.rec.Tasks().Trash(context.Background(), byPerson, task.ID) }
		}, "The task “Draft brief” is in Trash"},
		{"replace a page", "hub_update_page", func(f *fixture) (map[string]any, func()) {
			p := f.newPage(t, "Plan")
			return map[string]any{"id": "Plan", "body": "New"}, func() { f.rec.Pages().Trash(context.Background(), byPerson, p.ID) }
		}, "The page “Plan” is in Trash"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, "anthropic", time.Minute)
			f.policy(t, Preview)
			input, meddle := c.hold(f)
			f.srv.Script(enginetest.ToolCall(c.tool, input), enginetest.Say("Proposed."))
			r, _, err := f.turn(t, "anthropic", "do it")
			if err != nil {
				t.Fatal(err)
			}
			if r.Tools[0].Status != "proposed" {
				t.Fatalf("row %+v", r.Tools[0])
			}
			meddle()
			before := f.recordsState(t)
			_, err = f.svc.Apply(ctx, r.ConversationID, nil)
			var ae *ApplyError
			if !errors.As(err, &ae) || !strings.Contains(ae.Msg, "can no longer be applied: "+c.want) {
				t.Fatalf("apply: %v, want %q", err, c.want)
			}
			if ae.Tools[0].Status != "error" || f.recordsState(t) != before {
				t.Errorf("receipt %+v; records changed: %v", ae.Tools[0], f.recordsState(t) != before)
			}
		})
	}
}

package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/tools"
)

type wfStep = map[string]any

func workflowCall(title string, steps ...wfStep) map[string]any {
	return map[string]any{"title": title, "steps": steps}
}

func ref(s string) map[string]any { return map[string]any{"$ref": s} }

func (f *fixture) workflowSteps(t *testing.T, proposalID string) []workflowStepState {
	t.Helper()
	var raw string
	if err := f.st.Reader().QueryRow("SELECT steps FROM assistant_workflows WHERE proposal_id = ?", proposalID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var steps []workflowStepState
	if err := json.Unmarshal([]byte(raw), &steps); err != nil {
		t.Fatal(err)
	}
	return steps
}

// TestWorkflowAppliesAsOneUndo: a workflow that makes a project and then a task labelled with the
// project's name ($ref) waits for Apply whatever the policy, previews each step, applies once of
// two concurrent Applies, in one Undo group that takes both away.
func TestWorkflowAppliesAsOneUndo(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, wire, time.Minute) // policy immediate: the workflow still waits
			f.srv.Script(
				enginetest.ToolCall(tools.WorkflowTool, workflowCall("Launch plan",
					wfStep{"id": "proj", "tool": "hub_create_project", "input": map[string]any{"name": "Launch"}},
					wfStep{"id": "tasks", "tool": "hub_create_tasks", "input": map[string]any{"tasks": []any{
						map[string]any{"title": "Kickoff", "labels": []any{ref("proj.project.name")}}}}},
				)),
				enginetest.Say("I proposed the workflow; apply it to run both steps."),
			)
			r, _, err := f.turn(t, wire, "set up the launch project with a kickoff task")
			if err != nil {
				t.Fatal(err)
			}
			row := r.Tools[0]
			want := "Workflow “Launch plan”, 2 steps under one Apply, all or nothing:\n1. Add project “Launch”.\n2. Add 1 task: “Kickoff”."
			if row.Status != "proposed" || row.ProposalID == "" || row.Preview != want {
				t.Fatalf("row %+v", row)
			}
			if f.count(t, "SELECT count(*) FROM projects") != 0 || f.tasks(t) != 0 {
				t.Fatal("a held workflow changed the records before Apply")
			}
			if s := f.workflowSteps(t, row.ProposalID); len(s) != 2 || s[0].Status != "waiting" {
				t.Fatalf("steps %+v", s)
			}

			groups := f.count(t, "SELECT count(*) FROM ledger_groups")
			applied := f.applyTwice(t, r.ConversationID, row.ProposalID)[0]
			if f.count(t, "SELECT count(*) FROM projects") != 1 || f.tasks(t) != 1 {
				t.Fatalf("two Applies: %d projects, %d tasks", f.count(t, "SELECT count(*) FROM projects"), f.tasks(t))
			}
			if n := f.count(t, "SELECT count(*) FROM ledger_groups") - groups; n != 1 {
				t.Fatalf("%d ledger groups, want 1", n)
			}
			tasks, _ := f.rec.ListTasks(ctx, records.TaskFilter{})
			if len(tasks) != 1 || len(tasks[0].Labels) != 1 || tasks[0].Labels[0] != "Launch" {
				t.Fatalf("the ref was not filled in: %+v", tasks)
			}
			if applied.Status != "done" || applied.Group == "" || len(applied.Refs) != 2 ||
				!strings.Contains(applied.Summary, "1. Added project “Launch”.") || !strings.Contains(applied.Summary, "2. Added 1 task: “Kickoff”.") {
				t.Fatalf("applied row %+v", applied)
			}
			if s := f.workflowSteps(t, row.ProposalID); s[0].Status != "applied" || s[1].Summary != "Added 1 task: “Kickoff”." {
				t.Fatalf("steps %+v", s)
			}

			if _, err := f.svc.Undo(ctx, applied.Group); err != nil {
				t.Fatal(err)
			}
			if f.count(t, "SELECT count(*) FROM projects WHERE deleted_at IS NULL") != 0 || f.tasks(t) != 0 {
				t.Fatal("Undo did not take both steps away")
			}
		})
	}
}

// TestWorkflowRefusals: forward and unknown refs, reads, outside writes, nested workflows and
// repeated ids are refused when proposed, naming the step and the place.
func TestWorkflowRefusals(t *testing.T) {
	r := tools.HubTools()
	mk := func(id, tool string, input map[string]any) wfStep {
		return wfStep{"id": id, "tool": tool, "input": input}
	}
	proj := mk("proj", "hub_create_project", map[string]any{"name": "Launch"})
	cases := []struct {
		name  string
		steps []wfStep
		want  string
	}{
		{"forward ref", []wfStep{mk("a", "hub_create_project", map[string]any{"name": ref("b.created.0.title")}),
			mk("b", "hub_create_tasks", map[string]any{"tasks": []any{map[string]any{"title": "x"}}})},
			`Step 1 ("a"), at input.name: $ref "b.created.0.title" points forward, at step 2`},
		{"own step", []wfStep{proj, mk("b", "hub_create_tasks", map[string]any{"tasks": []any{map[string]any{"title": ref("b.created.0.title")}}})},
			`Step 2 ("b"), at input.tasks.0.title: $ref "b.created.0.title" points at its own step`},
		{"unknown ref", []wfStep{proj, mk("b", "hub_create_page", map[string]any{"title": ref("nope.project.name")})},
			`names no step; the steps before this one are "proj"`},
		{"read step", []wfStep{proj, mk("look", "hub_list_tasks", map[string]any{})},
			`Step 2 ("look"): hub_list_tasks is a read`},
		{"outside write", []wfStep{proj, mk("go", "hub_assign_to_agent", map[string]any{"taskId": "t"})},
			"runs outside the records transaction"},
		{"nested", []wfStep{proj, mk("inner", tools.WorkflowTool, map[string]any{})},
			"a workflow cannot run another workflow"},
		{"repeated id", []wfStep{proj, mk("proj", "hub_create_project", map[string]any{"name": "B"})},
			`the id "proj" is already step 1's`},
		{"bad id", []wfStep{proj, mk("Two", "hub_create_project", map[string]any{"name": "B"})},
			"must be lowercase letters"},
		{"one step", []wfStep{proj}, "A workflow has 2 to 12 steps, not 1"},
		{"ref where a list goes", []wfStep{proj, mk("b", "hub_create_tasks", map[string]any{"tasks": ref("proj.project")})},
			`Step 2 ("b"): the input for hub_create_tasks is not valid`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw, _ := json.Marshal(workflowCall("Plan", c.steps...))
			_, err := r.Get(tools.WorkflowTool).Preview(context.Background(), &tools.ToolContext{}, raw)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}

	// Through the model: a forward ref is a tool error and nothing is held.
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			f := newFixture(t, wire, time.Minute)
			f.srv.Script(
				enginetest.ToolCall(tools.WorkflowTool, workflowCall("Plan", cases[0].steps...)),
				enginetest.Say("I could not propose it."),
			)
			r, _, err := f.turn(t, wire, "do it")
			if err != nil {
				t.Fatal(err)
			}
			if row := r.Tools[0]; row.Status != "error" || !strings.Contains(row.Summary, "points forward") {
				t.Fatalf("row %+v", row)
			}
			// The openai wire marks a tool error in its text.
			if tr, _ := f.srv.LastToolResult(); !strings.Contains(tr.Content, `at input.name`) || !tr.IsError && !strings.HasPrefix(tr.Content, "Error") {
				t.Fatalf("the model was told %+v", tr)
			}
			if n := f.count(t, "SELECT count(*) FROM assistant_proposals"); n != 0 {
				t.Fatalf("%d proposals held", n)
			}
		})
	}
}

// TestWorkflowFailingStepLandsNothing: when a later step fails on Apply nothing lands, the receipt
// names the step and why, the per-step state says so, and Retry, once the cause is gone, runs it
// whole.
func TestWorkflowFailingStepLandsNothing(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "anthropic", time.Minute)
	me := ledger.Actor{Kind: ledger.Person}
	old, err := f.rec.Tasks().Create(ctx, me, records.TaskInput{Title: records.Some("Old name")})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Script(
		enginetest.ToolCall(tools.WorkflowTool, workflowCall("Tidy up",
			wfStep{"id": "add", "tool": "hub_create_tasks", "input": map[string]any{"tasks": []any{map[string]any{"title": "New work"}}}},
			wfStep{"id": "rename", "tool": "hub_update_task", "input": map[string]any{"id": old.ID, "title": "New name"}},
			wfStep{"id": "page", "tool": "hub_create_page", "input": map[string]any{"title": ref("add.created.0.title")}},
		)),
		enginetest.Say("Proposed."),
	)
	r, _, err := f.turn(t, "anthropic", "tidy up")
	if err != nil {
		t.Fatal(err)
	}
	id := r.Tools[0].ProposalID
	if !strings.Contains(r.Tools[0].Preview, "3. Add page “(the title of the task made in step 1)”.") {
		t.Fatalf("preview %q", r.Tools[0].Preview)
	}
	if _, err := f.rec.Tasks().Trash(ctx, me, old.ID); err != nil {
		t.Fatal(err)
	}
	before, pages := f.tasks(t), f.count(t, "SELECT count(*) FROM pages")
	_, err = f.svc.Apply(ctx, r.ConversationID, []string{id})
	var ae *ApplyError
	if !errors.As(err, &ae) || len(ae.Tools) != 1 || ae.Tools[0].Status != "error" {
		t.Fatalf("apply: %v", err)
	}
	for _, want := range []string{`Step 2 of 3 ("rename", hub_update_task) failed`, "Nothing in the workflow was applied", "step 1 was rolled back", "step 3 was not run"} {
		if !strings.Contains(ae.Msg, want) {
			t.Errorf("receipt %q lacks %q", ae.Msg, want)
		}
	}
	if f.tasks(t) != before || f.count(t, "SELECT count(*) FROM pages") != pages {
		t.Fatal("a failed workflow landed a step")
	}
	s := f.workflowSteps(t, id)
	if s[0].Status != "not applied" || s[1].Status != failed || s[1].Error == "" || s[2].Status != "not applied" {
		t.Fatalf("steps %+v", s)
	}

	// Retry once the task is back: the whole workflow runs.
	if _, err := f.rec.Undo(ctx, me); err != nil {
		t.Fatal(err)
	}
	rows, err := f.svc.Apply(ctx, r.ConversationID, []string{id})
	if err != nil || rows[0].Status != "done" || f.tasks(t) != before+2 || f.count(t, "SELECT count(*) FROM pages") != pages+1 {
		t.Fatalf("retry: %+v, %v", rows, err)
	}
	var title string
	f.st.Reader().QueryRow("SELECT title FROM pages ORDER BY rowid DESC LIMIT 1").Scan(&title)
	if title != "New work" {
		t.Fatalf("page titled %q from the ref", title)
	}
}

// TestWorkflowPlanHashBindsApply: a saved plan that no longer matches its hash is not applied.
func TestWorkflowPlanHashBindsApply(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "openai", time.Minute)
	f.srv.Script(
		enginetest.ToolCall(tools.WorkflowTool, workflowCall("Two",
			wfStep{"id": "a", "tool": "hub_create_project", "input": map[string]any{"name": "A"}},
			wfStep{"id": "b", "tool": "hub_create_project", "input": map[string]any{"name": "B"}},
		)),
		enginetest.Say("Proposed."),
	)
	r, _, err := f.turn(t, "openai", "two projects")
	if err != nil {
		t.Fatal(err)
	}
	id := r.Tools[0].ProposalID
	_, err = f.st.Writer().Exec("UPDATE assistant_proposals SET input = replace(input, '\"B\"', '\"Other\"') WHERE id = ?", id)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Apply(ctx, r.ConversationID, []string{id})
	if err == nil || !strings.Contains(err.Error(), "steps changed since they were proposed") {
		t.Fatalf("apply: %v", err)
	}
	if n := f.count(t, "SELECT count(*) FROM projects"); n != 0 {
		t.Fatalf("%d projects made", n)
	}
}

// TestWorkflowPreviewOfRefStep: a step whose tool cannot preview a record not yet made says the
// tool, what each ref stands for, and its plain values.
func TestWorkflowPreviewOfRefStep(t *testing.T) {
	f := newFixture(t, "anthropic", time.Minute)
	raw, _ := json.Marshal(workflowCall("Launch",
		wfStep{"id": "proj", "tool": "hub_create_project", "input": map[string]any{"name": "Launch"}},
		wfStep{"id": "up", "tool": "hub_update_project", "input": map[string]any{"id": ref("proj.project.id"), "status": "paused"}},
	))
	got, err := tools.HubTools().Get(tools.WorkflowTool).Preview(context.Background(), f.svc.toolContext(context.Background(), "cnv_x", nil), raw)
	if err != nil || !strings.HasSuffix(got, "\n2. Update project with id: (the project made in step 1); status: “paused”.") {
		t.Fatalf("preview %q, %v", got, err)
	}
}

// TestWorkflowStepChangesWhatAnEarlierStepMade: a later step looks up, by id, the project an
// earlier step made inside the same transaction, and changes it.
func TestWorkflowStepChangesWhatAnEarlierStepMade(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "anthropic", time.Minute)
	f.srv.Script(
		enginetest.ToolCall(tools.WorkflowTool, workflowCall("Pause launch",
			wfStep{"id": "proj", "tool": "hub_create_project", "input": map[string]any{"name": "Launch"}},
			wfStep{"id": "pause", "tool": "hub_update_project", "input": map[string]any{"id": ref("proj.project.id"), "status": "paused"}},
		)),
		enginetest.Say("Proposed."),
	)
	r, _, err := f.turn(t, "anthropic", "make the launch project, paused")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Apply(ctx, r.ConversationID, []string{r.Tools[0].ProposalID}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	var status string
	if err := f.st.Reader().QueryRow("SELECT status FROM projects WHERE name = 'Launch'").Scan(&status); err != nil || status != "paused" {
		t.Fatalf("project status %q, %v", status, err)
	}
}

package assistant

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/records"
)

func (f *fixture) policy(t *testing.T, p string) {
	t.Helper()
	if _, err := f.svc.SetSettings(context.Background(), SettingsChange{WritePolicy: &p}); err != nil {
		t.Fatal(err)
	}
}

// applyTwice applies one held write from two clients at once: exactly one Apply must land and the
// other be refused as a conflict. It returns the rows of the one that landed.
func (f *fixture) applyTwice(t *testing.T, conv, proposal string) []ToolRow {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	rows := make([][]ToolRow, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[i], errs[i] = f.svc.Apply(context.Background(), conv, []string{proposal})
		}()
	}
	wg.Wait()
	var applied []ToolRow
	var ok, conflicts int
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
			applied = rows[i]
		case problem.Is(err, problem.KindConflict):
			conflicts++
		default:
			t.Errorf("apply: %v", err)
		}
	}
	if ok != 1 || conflicts != 1 {
		t.Fatalf("two Applies: %d applied, %d refused (errs %v)", ok, conflicts, errs)
	}
	return applied
}

func (f *fixture) tasks(t *testing.T) int {
	return f.count(t, "SELECT count(*) FROM tasks WHERE deleted_at IS NULL")
}

// TestPreviewHoldsUntilApply: under preview a write changes nothing until Apply; two Applies at
// once apply it exactly once; the receipt's Undo and Redo restore every field.
func TestPreviewHoldsUntilApply(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, wire, time.Minute)
			f.policy(t, Preview)
			f.srv.Script(
				enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Draft brief", "priority": "high"}, {"title": "Call Mira"}}}),
				enginetest.Say("I proposed two tasks; apply them to add them."),
			)
			before := f.tasks(t)
			r, _, err := f.turn(t, wire, "add two tasks")
			if err != nil {
				t.Fatal(err)
			}
			if f.tasks(t) != before {
				t.Fatal("a held write changed the records before Apply")
			}
			row := r.Tools[0]
			if row.Status != "proposed" || row.ProposalID == "" || row.Preview != "Add 2 tasks: “Draft brief” and “Call Mira”." {
				t.Fatalf("row %+v", row)
			}
			if tr, _ := f.srv.Requests()[1].LastToolResult(); !strings.Contains(tr.Content, "Not done yet") || tr.IsError {
				t.Errorf("the model was told %+v", tr)
			}
			if !strings.Contains(f.srv.Requests()[0].System, "wait for the person's Apply") {
				t.Error("the instructions do not say writes wait for Apply")
			}

			f.applyTwice(t, r.ConversationID, row.ProposalID)
			if f.tasks(t) != before+2 {
				t.Fatalf("two Applies made %d tasks", f.tasks(t)-before)
			}

			c, err := f.svc.Conversation(ctx, r.ConversationID)
			if err != nil {
				t.Fatal(err)
			}
			applied := c.Messages[1].Tools[0]
			if applied.Status != "done" || applied.Group == "" || len(applied.Refs) != 2 || applied.ProposalID != row.ProposalID {
				t.Fatalf("applied row %+v", applied)
			}
			if _, err := f.svc.Undo(ctx, applied.Group); err != nil {
				t.Fatal(err)
			}
			if c, _ = f.svc.Conversation(ctx, r.ConversationID); f.tasks(t) != before || !c.Messages[1].Tools[0].Undone {
				t.Fatalf("after Undo: %d tasks, row %+v", f.tasks(t)-before, c.Messages[1].Tools[0])
			}
			if _, err := f.svc.Redo(ctx, applied.Group); err != nil {
				t.Fatal(err)
			}
			got, err := f.rec.Tasks().Get(ctx, applied.Refs[0].ID)
			if err != nil || got.Title != "Draft brief" || got.Priority != "high" {
				t.Fatalf("after Redo: %+v, %v", got, err)
			}

			// The next turn hears how the held write stands.
			f.srv.Script(enginetest.Say("They are added."))
			if _, err := f.svc.Turn(ctx, TurnRequest{ConversationID: r.ConversationID, Text: "did it work?", Provider: wire, Model: "Test Model"}, nil); err != nil {
				t.Fatal(err)
			}
			reqs := f.srv.Requests()
			if last := reqs[len(reqs)-1].LastUserText(); !strings.Contains(last, "applied: Added 2 tasks") {
				t.Errorf("the next turn was not told the write was applied: %q", last)
			}
		})
	}
}

// TestApplyFailureLandsNothing: when one held write fails, none of the Apply lands; the failed one
// says why and the others still wait, and Apply after a discard applies the rest.
func TestApplyFailureLandsNothing(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "anthropic", time.Minute)
	f.policy(t, Preview)
	task, err := f.rec.Tasks().Create(ctx, ledger.Actor{Kind: ledger.Person}, records.TaskInput{Title: records.Some("Old name")})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Script(
		enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "New work"}}}),
		enginetest.ToolCall("hub_update_task", map[string]any{"id": task.ID, "title": "New name"}),
		enginetest.Say("Proposed."),
	)
	r, _, err := f.turn(t, "anthropic", "add and rename")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.rec.Tasks().Trash(ctx, ledger.Actor{Kind: ledger.Person}, task.ID); err != nil {
		t.Fatal(err)
	}
	before := f.tasks(t)
	_, err = f.svc.Apply(ctx, r.ConversationID, nil)
	var ae *ApplyError
	if !errors.As(err, &ae) || !strings.Contains(ae.Msg, "Nothing was applied") || len(ae.Tools) != 2 {
		t.Fatalf("apply: %v", err)
	}
	if ae.Tools[0].Status != "proposed" || ae.Tools[1].Status != "error" || f.tasks(t) != before {
		t.Fatalf("receipts %+v, %d tasks added", ae.Tools, f.tasks(t)-before)
	}
	if err := f.svc.Discard(ctx, ae.Tools[1].ProposalID); err != nil {
		t.Fatal(err)
	}
	rows, err := f.svc.Apply(ctx, r.ConversationID, nil)
	if err != nil || len(rows) != 1 || rows[0].Status != "done" || f.tasks(t) != before+1 {
		t.Fatalf("retry: %+v, %v, %d tasks added", rows, err, f.tasks(t)-before)
	}
	if _, err := f.svc.Apply(ctx, r.ConversationID, nil); err == nil {
		t.Error("a third Apply found something to apply")
	}
}

// TestNeedsMeAppliesOnAnswer: under needs-me a write waits on Needs me and lands when the person
// answers Apply there.
func TestNeedsMeAppliesOnAnswer(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "anthropic", time.Minute)
	nd := needs.New(f.st, f.svc.cfg.Writer)
	f.svc.cfg.Needs = nd
	t.Cleanup(func() { f.svc.Close(ctx) })
	f.policy(t, NeedsMe)
	f.srv.Script(
		enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Book flights"}}}),
		enginetest.Say("It waits on Needs me."),
	)
	before := f.tasks(t)
	r, _, err := f.turn(t, "anthropic", "add a task")
	if err != nil {
		t.Fatal(err)
	}
	if r.Tools[0].Status != "waiting" || f.tasks(t) != before {
		t.Fatalf("row %+v, %d tasks added", r.Tools[0], f.tasks(t)-before)
	}
	var d needs.Decision
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		open, err := nd.List(ctx, needs.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(open) == 1 {
			d = open[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no decision on Needs me")
		}
	}
	if !strings.Contains(d.Question, "Apply this medium-risk change? Add 1 task: “Book flights”") || d.Options[0] != "Apply" {
		t.Fatalf("decision %+v", d)
	}
	if _, err := nd.Answer(ctx, d.ID, needs.Choose(0), needs.ByBrowser); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); f.tasks(t) != before+1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the answer did not apply the write")
		}
	}
	c, err := f.svc.Conversation(ctx, r.ConversationID)
	if err != nil || c.Messages[1].Tools[0].Status != "done" {
		t.Fatalf("row after the answer: %+v, %v", c.Messages[1].Tools, err)
	}
}

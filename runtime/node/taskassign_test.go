package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
)

var byPerson = ledger.Actor{Kind: ledger.Person}

func grace(d time.Duration) func(*Config) { return func(c *Config) { c.AssignGrace = d } }

func (f *fixture) newTask(in records.TaskInput) records.Task {
	f.t.Helper()
	if !in.Title.Set {
		in.Title = records.Some("Write the release notes")
	}
	task, err := f.rec.Tasks().Create(context.Background(), byPerson, in)
	if err != nil {
		f.t.Fatal(err)
	}
	return task
}

func (f *fixture) changeTask(id string, in records.TaskInput) {
	f.t.Helper()
	if _, err := f.rec.Tasks().Update(context.Background(), byPerson, id, in); err != nil {
		f.t.Fatal(err)
	}
}

// taskTurns are the task's turns, oldest first, as "on|off status node".
func (f *fixture) taskTurns(task string) []Turn {
	f.t.Helper()
	ts, err := f.svc.queryTurns(context.Background(), f.st.Reader(), "WHERE operation_id LIKE ? ORDER BY created_at, rowid", "task:"+task+":%")
	if err != nil {
		f.t.Fatal(err)
	}
	return ts
}

func (f *fixture) waitTaskTurns(task string, n int) []Turn {
	f.t.Helper()
	f.waitFor("the task's turns", func() bool { return len(f.taskTurns(task)) >= n })
	return f.taskTurns(task)
}

func ptrTo(s string) *string { return &s }

// Giving a task to a node tells it once, after the grace, in its DM, with the task as a link
// and what it says; another change to the task tells nobody.
func TestTaskAssignedTellsNodeOnce(t *testing.T) {
	f := newFixture(t, grace(50*time.Millisecond))
	n := f.node("Scout")
	f.model.Script(enginetest.Say("I will draft them myself today."))
	task := f.newTask(records.TaskInput{Page: records.Some("Cover the new sync."), Due: records.Some(ptrTo("2026-12-20")),
		Labels: records.Some([]string{"docs"}), AssigneeNodeID: records.Some(&n.ID)})
	turns := f.waitTaskTurns(task.ID, 1)
	if on := turns[0]; on.Reason != ReasonTask || on.RoomID != n.DMRoomID || !strings.Contains(on.OperationID, ":on:") ||
		!on.RunAfter.After(on.CreatedAt) {
		t.Fatalf("the turn = %+v", on)
	}
	f.settle()
	f.changeTask(task.ID, records.TaskInput{Priority: records.Some("high")})
	f.settle()
	if got := f.nodeTexts(n.DMRoomID); len(got) != 1 || got[0] != "I will draft them myself today." {
		t.Fatalf("the node's replies = %q", got)
	}
	reqs := f.model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the model was asked %d times, want 1", len(reqs))
	}
	user := reqs[0].LastUserText()
	for _, want := range []string{"[Write the release notes](ensemble://task/" + task.ID + ")", "Cover the new sync.", "Due: 2026-12-20",
		"Labels: docs", "information, not orders", "agent session", "Work board"} {
		if !strings.Contains(user, want) {
			t.Errorf("the note lacks %q:\n%s", want, user)
		}
	}
	if ts := f.taskTurns(task.ID); len(ts) != 1 {
		t.Fatalf("after a change to the priority, the task has %d turns, want 1", len(ts))
	}
	// The work board of a later turn lists the task.
	f.model.Script(enginetest.Say("Still on it."))
	f.post(n.DMRoomID, "How is it going?")
	f.settle()
	reqs = f.model.Requests()
	if last := reqs[len(reqs)-1].LastUserText(); !strings.Contains(last, "Work board") || !strings.Contains(last, task.ID) {
		t.Fatalf("the later turn's message lacks the work board:\n%s", last)
	}
}

// Changing the owner in the grace drops the waiting turn: no model call, no word.
func TestTaskOwnerChangedInGraceDropsTurn(t *testing.T) {
	f := newFixture(t, grace(time.Hour))
	a, b := f.node("Scout"), f.node("Writer")
	task := f.newTask(records.TaskInput{AssigneeNodeID: records.Some(&a.ID)})
	f.waitTaskTurns(task.ID, 1)
	if w, err := f.svc.WorkOnTask(context.Background(), task.ID); err != nil || w == nil || w.Doing != "thinking" || w.Node.ID != a.ID {
		t.Fatalf("the work on the task while its turn waits = %+v, %v", w, err)
	}
	f.changeTask(task.ID, records.TaskInput{AssigneeNodeID: records.Some(&b.ID)})
	turns := f.waitTaskTurns(task.ID, 3)
	if turns[0].NodeID != a.ID || turns[0].Status != TurnDropped {
		t.Fatalf("the first node's turn = %+v, want dropped", turns[0])
	}
	if off := turns[1]; !strings.Contains(off.OperationID, ":off:") || off.Status != TurnDropped || off.NodeID != a.ID {
		t.Fatalf("the taking back = %+v, want a dropped off turn for the first node", off)
	}
	if on := turns[2]; on.NodeID != b.ID || on.Status != TurnQueued || on.RoomID != b.DMRoomID {
		t.Fatalf("the second node's turn = %+v", on)
	}
	f.changeTask(task.ID, records.TaskInput{OwnerID: records.Some[*string](nil)})
	f.waitFor("the second turn dropped", func() bool {
		ts := f.taskTurns(task.ID)
		return len(ts) == 4 && ts[2].Status == TurnDropped
	})
	if n := len(f.model.Requests()); n != 0 {
		t.Fatalf("the model was asked %d times, want none", n)
	}
	if got := append(f.nodeTexts(a.DMRoomID), f.nodeTexts(b.DMRoomID)...); len(got) != 0 {
		t.Fatalf("the nodes said %q", got)
	}
}

// A node that acted on its task is told to stop when the task is taken from it.
func TestTaskTakenAfterActingTellsNodeToStop(t *testing.T) {
	f := newFixture(t, grace(10*time.Millisecond))
	n := f.node("Scout")
	task := f.newTask(records.TaskInput{AssigneeNodeID: records.Some(&n.ID)})
	f.model.Script(
		enginetest.ToolCall("hub_update_task", map[string]any{"id": task.ID, "status": "in_progress"}),
		enginetest.Say("On it."),
		enginetest.Say("Stopped the draft.").When(enginetest.Match{LastUserContains: "no longer yours"}),
	)
	f.waitTaskTurns(task.ID, 1)
	f.settle()
	if got, _ := f.rec.Tasks().Get(context.Background(), task.ID); got.Status != records.InProgress {
		t.Fatalf("the node did not act: the task is %s", got.Status)
	}
	f.changeTask(task.ID, records.TaskInput{OwnerID: records.Some[*string](nil)})
	turns := f.waitTaskTurns(task.ID, 2)
	f.settle()
	turns = f.taskTurns(task.ID)
	off := turns[1]
	if !strings.Contains(off.OperationID, ":off:") || off.Status != TurnDone || off.NodeID != n.ID || off.RoomID != n.DMRoomID {
		t.Fatalf("the taking back = %+v, want a done off turn in the DM", off)
	}
	if got := f.nodeTexts(n.DMRoomID); len(got) != 2 || got[1] != "Stopped the draft." {
		t.Fatalf("the node's replies = %q", got)
	}
	if !strings.Contains(off.Note, "your owner took it back") {
		t.Fatalf("the note = %q", off.Note)
	}
}

// A task given to a crew goes to its lead, in the crew's room; deleting the crew leaves the task
// unassigned.
func TestTaskGivenToCrewGoesToLead(t *testing.T) {
	f := newFixture(t, grace(10*time.Millisecond))
	lead, dev := f.node("Lead"), f.node("Dev")
	r := f.crew("Launch", lead.ID, dev, lead)
	f.model.Script(enginetest.Say("Dev will build it.").When(enginetest.Match{SystemContains: "You are Lead"}))
	task := f.newTask(records.TaskInput{AssigneeRoomID: records.Some(&r.ID)})
	turns := f.waitTaskTurns(task.ID, 1)
	if turns[0].NodeID != lead.ID || turns[0].RoomID != r.ID {
		t.Fatalf("the turn = %+v, want the lead in the crew's room", turns[0])
	}
	f.settle()
	if got := authorsOf(f, r.ID); len(got) != 1 || got[0] != lead.ID {
		t.Fatalf("the crew's answers came from %v, want the lead", got)
	}
	if req := f.model.Requests()[0]; !strings.Contains(req.LastUserText(), "which you lead") {
		t.Fatalf("the lead's note:\n%s", req.LastUserText())
	}
	if err := f.svc.DeleteRoom(context.Background(), r.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.rec.Tasks().Get(context.Background(), task.ID); got.AssigneeRoomID != nil {
		t.Fatalf("the task is still with the deleted crew %s", *got.AssigneeRoomID)
	}
}

// A paused node is not woken: its turn is recorded dropped, and resuming it tells it nothing.
func TestTaskGivenToPausedNodeDoesNotWake(t *testing.T) {
	f := newFixture(t, grace(10*time.Millisecond))
	n := f.node("Scout")
	paused := StatusPaused
	if _, err := f.svc.Update(context.Background(), n.ID, NodeChange{Status: &paused}); err != nil {
		t.Fatal(err)
	}
	task := f.newTask(records.TaskInput{AssigneeNodeID: records.Some(&n.ID)})
	turns := f.waitTaskTurns(task.ID, 1)
	if turns[0].Status != TurnDropped || turns[0].Error != "the node is paused" {
		t.Fatalf("the turn = %+v", turns[0])
	}
	f.changeTask(task.ID, records.TaskInput{Priority: records.Some("high")})
	f.settle()
	if n := len(f.model.Requests()); n != 0 {
		t.Fatalf("the model was asked %d times, want none", n)
	}
	if err := f.svc.Delete(context.Background(), n.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.rec.Tasks().Get(context.Background(), task.ID); got.AssigneeNodeID != nil {
		t.Fatal("the task is still with the deleted node")
	}
}

// A turn about the task that has not acted yet is withdrawn when the task goes to someone else:
// it is aborted, posts nothing, and the node is not told to stop.
func TestTaskTakenBeforeActingWithdrawsTurn(t *testing.T) {
	f := newFixture(t, grace(10*time.Millisecond))
	n := f.node("Scout")
	f.model.Script(enginetest.Say("I will start now.").After(time.Minute))
	task := f.newTask(records.TaskInput{AssigneeNodeID: records.Some(&n.ID)})
	f.waitFor("the task's turn running", func() bool {
		ts := f.taskTurns(task.ID)
		return len(ts) == 1 && ts[0].Status == TurnRunning && len(f.model.Requests()) == 1
	})
	f.changeTask(task.ID, records.TaskInput{OwnerID: records.Some[*string](nil)})
	f.settle()
	turns := f.taskTurns(task.ID)
	if len(turns) != 2 || turns[0].Status != TurnAborted {
		t.Fatalf("the turns = %+v, want the first aborted", turns)
	}
	if off := turns[1]; off.Status != TurnDropped || off.Error != "withdrawn before it acted" {
		t.Fatalf("the taking back = %+v, want dropped: withdrawn before it acted", off)
	}
	if got := f.nodeTexts(n.DMRoomID); len(got) != 0 {
		t.Fatalf("the node said %q", got)
	}
	if n := len(f.model.Requests()); n != 1 {
		t.Fatalf("the model was asked %d times, want 1", n)
	}
}

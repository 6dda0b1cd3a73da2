package node

import (
	"context"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// waitForRequest waits until the model has had n requests.
func (f *fixture) waitForRequests(n int) {
	f.t.Helper()
	f.waitFor("the model's request", func() bool { return len(f.model.Requests()) >= n })
}

func titles(f *fixture) []string {
	var out []string
	for _, t := range f.tasks() {
		out = append(out, t.Title)
	}
	return out
}

// A turn cut off after its first write and before its second resumes after the restart with a
// note of what ran, and does not run the first again.
func TestRestartAfterActingResumes(t *testing.T) {
	f := newFixture(t)
	n := f.node("Scout")
	f.model.Script(
		enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Alpha"}}}),
		enginetest.Hang(),
		enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Beta"}}}).WhenLastUser("cut off by a restart after it ran these tools"),
		enginetest.Say("Added Alpha and Beta."),
	)
	f.post(n.DMRoomID, "Add two tasks, Alpha and Beta, one at a time.")
	f.waitForRequests(2)
	f.restart()
	f.settle()
	if got := titles(f); strings.Join(got, ",") != "Alpha,Beta" && strings.Join(got, ",") != "Beta,Alpha" {
		t.Fatalf("tasks = %v, want Alpha and Beta once each", got)
	}
	if got := f.nodeTexts(n.DMRoomID); len(got) != 1 || got[0] != "Added Alpha and Beta." {
		t.Fatalf("replies = %q", got)
	}
	turns, _ := f.svc.Turns(context.Background(), n.ID, 10)
	var resumed *Turn
	for i := range turns {
		if turns[i].Reason == ReasonResume {
			resumed = &turns[i]
		}
	}
	if resumed == nil || resumed.OriginID == "" || resumed.Status != TurnDone {
		t.Fatalf("no finished resumed turn pointing at its origin: %+v", turns)
	}
}

// A turn cut off before it acted runs again from the start after the restart.
func TestRestartBeforeActingReruns(t *testing.T) {
	f := newFixture(t)
	n := f.node("Scout")
	f.model.Script(
		enginetest.Hang(),
		enginetest.Say("Hello again."),
	)
	f.post(n.DMRoomID, "Hello")
	f.waitForRequests(1)
	f.restart()
	f.settle()
	reqs := f.model.Requests()
	last := reqs[len(reqs)-1]
	if strings.Contains(last.System+lastUser(last), "cut off by a restart") {
		t.Fatal("a turn that had not acted was resumed instead of run again")
	}
	if !strings.Contains(lastUser(last), "Hello") {
		t.Fatalf("the rerun's message lacks the person's words: %q", lastUser(last))
	}
	if got := f.nodeTexts(n.DMRoomID); len(got) != 1 || got[0] != "Hello again." {
		t.Fatalf("replies = %q", got)
	}
	turns, _ := f.svc.Turns(context.Background(), n.ID, 10)
	if len(turns) != 1 || turns[0].Status != TurnDone {
		t.Fatalf("turns = %+v, want the one turn, run again and done", turns)
	}
}

func lastUser(r enginetest.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			var b strings.Builder
			for _, bl := range r.Messages[i].Blocks {
				b.WriteString(bl.Text)
			}
			return b.String()
		}
	}
	return ""
}

// A node's proposal waits on its card; a restart parks nothing that matters: the card is still
// answerable afterwards, and its answer reaches the node in a new turn.
func TestCardPendingAcrossRestart(t *testing.T) {
	f := newFixture(t)
	n := f.node("Scout")
	f.model.Script(
		enginetest.ToolCall("node_create", map[string]any{"name": "Rita", "role": "researcher", "charter": "You research."}),
		enginetest.Say("(no reply)"),
		enginetest.Say("Rita is ready in her DM.").WhenLastUser("approved your card"),
	)
	f.post(n.DMRoomID, "Make me a researcher node called Rita.")
	f.waitFor("the card", func() bool { cs, _ := f.svc.PendingCards(context.Background()); return len(cs) == 1 })
	f.settle() // the call waits CardWait (2 s here), then the turn parks
	f.restart()
	cards, _ := f.svc.PendingCards(context.Background())
	if len(cards) != 1 {
		t.Fatalf("after the restart, %d cards wait, want 1", len(cards))
	}
	// Answered on Needs me, as a phone or `ensemble needs` would.
	var c Card
	jsonUnmarshal(t, cards[0].Data, &c)
	if _, err := f.needs.Answer(context.Background(), c.DecisionID, needsChoose(0), "cli"); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the card to settle", func() bool {
		m, _ := f.svc.Message(context.Background(), cards[0].ID)
		var c Card
		jsonUnmarshal(t, m.Data, &c)
		return c.Status == CardApproved
	})
	f.settle()
	if _, err := f.svc.Node(context.Background(), "rita"); err != nil {
		t.Fatalf("the approved node was not made: %v", err)
	}
	if got := f.nodeTexts(n.DMRoomID); len(got) != 1 || got[0] != "Rita is ready in her DM." {
		t.Fatalf("replies = %q", got)
	}
}

package node

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
)

func (f *fixture) crew(title string, lead string, ns ...Node) Room {
	f.t.Helper()
	var ids []string
	for _, n := range ns {
		ids = append(ids, n.ID)
	}
	r, err := f.svc.CreateCrew(context.Background(), NewCrew{Title: title, NodeIDs: ids, LeadNodeID: lead})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func authorsOf(f *fixture, room string) []string {
	var out []string
	for _, m := range f.messages(room) {
		if m.Author == AuthorNode && m.Kind == KindText {
			out = append(out, m.NodeID)
		}
	}
	return out
}

// In a crew only the lead answers, however many nodes a message names; a mention of one member
// alone wakes only it.
func TestCrewLeadAnswersAndMentionWakesOne(t *testing.T) {
	f := newFixture(t)
	lead, dev, tester := f.node("Lead"), f.node("Dev"), f.node("Tester")
	r := f.crew("Launch", lead.ID, lead, dev, tester)
	f.model.Script(
		enginetest.Say("Lead here.").When(enginetest.Match{SystemContains: "You are Lead"}),
		enginetest.Say("Dev here.").When(enginetest.Match{SystemContains: "You are Dev"}),
	)
	f.post(r.ID, "What is the plan, @dev and @tester?")
	f.settle()
	if got := authorsOf(f, r.ID); len(got) != 1 || got[0] != lead.ID {
		t.Fatalf("after a message naming two nodes, the answers came from %v; want only the lead", got)
	}
	f.post(r.ID, "@dev can you look at the build?")
	f.settle()
	if got := authorsOf(f, r.ID); len(got) != 2 || got[1] != dev.ID {
		t.Fatalf("after a message naming @dev alone, the answers came from %v; want the lead then dev", got)
	}
	if n := len(f.model.Requests()); n != 2 {
		t.Fatalf("the model was asked %d times, want 2: a node's message in a crew wakes nobody", n)
	}
}

// Two nodes that keep mentioning each other are stopped by the brakes: one status line, nobody
// woken, until the person writes.
func TestBrakesStopANodeLoop(t *testing.T) {
	f := newFixture(t)
	a, b := f.node("Ana"), f.node("Bo")
	f.model.Script(
		enginetest.Say("@bo over to you.").When(enginetest.Match{SystemContains: "You are Ana"}).Forever(),
		enginetest.Say("@ana back to you.").When(enginetest.Match{SystemContains: "You are Bo"}).Forever(),
	)
	var room string
	err := f.svc.cfg.Writer.Exec(context.Background(), func(tx *ledger.Tx) error {
		var err error
		if room, err = f.svc.createRoomTx(tx, RoomTask, "Side task", "", "", []string{a.ID, b.ID}); err != nil {
			return err
		}
		r, err := f.svc.roomIn(tx.Context(), tx, room)
		if err != nil {
			return err
		}
		m, err := f.svc.insertMessageTx(tx, Message{RoomID: room, Author: AuthorNode, NodeID: a.ID, Kind: KindText, Body: "@bo start please"})
		if err != nil {
			return err
		}
		_, err = f.svc.routeTx(tx, r, m)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f.svc.wake()
	f.settle()
	var brakes, texts int
	for _, m := range f.messages(room) {
		switch {
		case m.Kind == KindStatusLn:
			brakes++
			if !strings.Contains(m.Body, "12 deep") {
				t.Errorf("the brake line is %q", m.Body)
			}
		case m.Kind == KindText:
			texts++
		}
	}
	if brakes != 1 {
		t.Fatalf("%d brake lines, want 1", brakes)
	}
	if texts != MaxDepth+1 {
		t.Fatalf("%d messages before the brake, want %d (the first and a chain %d deep)", texts, MaxDepth+1, MaxDepth)
	}
}

// A held write becomes one card; of two clients answering it at once, one settles it and the
// other gets a conflict. The node is woken with the result.
func TestHeldWriteCardSettlesOnce(t *testing.T) {
	f := newFixture(t)
	pol := "preview"
	if _, err := f.asst.SetSettings(context.Background(), assistantChange(pol)); err != nil {
		t.Fatal(err)
	}
	n := f.node("Scout")
	f.model.Script(
		enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Write the launch post"}}}),
		enginetest.Say("(no reply)"),
		enginetest.Say("Added it.").WhenLastUser("approved your card"),
	)
	f.post(n.DMRoomID, "Add a task to write the launch post.")
	f.settle()
	if len(f.tasks()) != 0 {
		t.Fatal("the held write ran before it was approved")
	}
	cards, _ := f.svc.PendingCards(context.Background())
	if len(cards) != 1 {
		t.Fatalf("%d cards, want 1", len(cards))
	}
	card := cards[0]
	if !card.Private || !strings.Contains(card.Body, "Write the launch post") {
		t.Fatalf("card = %+v", card)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = f.svc.Answer(context.Background(), card.ID, Approve, "browser")
		}()
	}
	wg.Wait()
	ok, conflicts := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case problem.KindOf(err) == problem.KindConflict:
			conflicts++
		default:
			t.Fatalf("answer: %v", err)
		}
	}
	if ok != 1 || conflicts != 1 {
		t.Fatalf("%d answers settled and %d conflicted; want one each", ok, conflicts)
	}
	f.settle()
	if ts := f.tasks(); len(ts) != 1 {
		t.Fatalf("after approval, tasks = %+v", ts)
	}
	if got := f.nodeTexts(n.DMRoomID); len(got) != 1 || got[0] != "Added it." {
		t.Fatalf("the node's replies after the card = %q", got)
	}
	// The card's Needs me mirror settled with it.
	var c Card
	m, _ := f.svc.Message(context.Background(), card.ID)
	jsonUnmarshal(t, m.Data, &c)
	d, err := f.needs.Get(context.Background(), c.DecisionID)
	if err != nil || d.Status == "open" {
		t.Fatalf("the Needs me mirror is %+v, %v", d, err)
	}
	if _, err := f.svc.Answer(context.Background(), card.ID, Discard, "cli"); problem.KindOf(err) != problem.KindConflict {
		t.Fatalf("a late answer: %v", err)
	}
}

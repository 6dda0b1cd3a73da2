package node

import (
	"context"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/jobs"
)

// node_session_delete asks on a card even when the node may act alone; nothing stops before the
// owner answers. Approved, the run going on is stopped and the session is deleted: the node can
// no longer send it anything.
func TestSessionDeleteAlwaysAsks(t *testing.T) {
	sf := newSessFix(t)
	n := sf.node("Dev")
	ctx := context.Background()
	j := sf.start(n, "Refactor the parser")
	sf.waitJob(j.ID, running, "the run")
	sf.model.Script(
		enginetest.ToolCall(ToolSessionDelete, map[string]any{"session": j.ID}),
		enginetest.Say("Deleted, as you approved."),
	)
	sf.post(n.DMRoomID, "Delete the parser session, we are done with it.")
	card := sf.waitCard(n.DMRoomID)
	if got, _ := sf.js.Get(ctx, j.ID); !card.Private || !strings.Contains(card.Body, "delete the agent session "+j.ID) || got.Status != jobs.Running {
		t.Fatalf("before the answer: card %q (private %v), run %s; want an owner-only card and the run going on", card.Body, card.Private, got.Status)
	}
	if _, err := sf.svc.Answer(ctx, card.ID, Approve, "browser"); err != nil {
		t.Fatal(err)
	}
	sf.waitJob(j.ID, ended, "the run to stop")
	sf.waitFor("the session to be deleted", func() bool {
		d, err := sf.svc.cfg.Sessions.Get(ctx, j.ID)
		return err == nil && d.DeletedAt != nil
	})
	sf.settle()
	if _, err := sf.svc.sendToSession(ctx, dmOrigin(n), j.ID, "", "One more thing.", DeliverQueue); err == nil {
		t.Fatal("a message went to a deleted session")
	}
	if texts := sf.nodeTexts(n.DMRoomID); len(texts) != 1 || texts[0] != "Deleted, as you approved." {
		t.Fatalf("the node said %q", texts)
	}
}

// The owner deletes from the card at once; a session no node manages, or one already deleted,
// is refused and stays as it was.
func TestDeleteAgentSessionFromTheCard(t *testing.T) {
	sf := newSessFix(t)
	sf.model.Script(enginetest.Say("Noted.").Forever())
	n := sf.node("Dev")
	ctx := context.Background()
	j := sf.start(n, "Write the changelog")
	sf.waitJob(j.ID, running, "the run")
	sf.agent.next <- "Wrote it."
	sf.waitJob(j.ID, ended, "the run to end")
	if err := sf.svc.DeleteAgentSession(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if d, err := sf.svc.cfg.Sessions.Get(ctx, j.ID); err != nil || d.DeletedAt == nil {
		t.Fatalf("after delete: %+v, %v", d, err)
	}
	if err := sf.svc.DeleteAgentSession(ctx, j.ID); err == nil {
		t.Fatal("a session was deleted twice")
	}
	if err := sf.svc.DeleteAgentSession(ctx, "ses_nope"); err == nil {
		t.Fatal("an unknown session was deleted")
	}
	if got := sf.count("SELECT count(*) FROM node_session_events WHERE kind = 'delete'"); got != 1 {
		t.Fatalf("%d delete events, want 1", got)
	}
}

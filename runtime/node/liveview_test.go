//go:build !windows

package node

import (
	"context"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/problem"
)

// liveCards are the live cards in a room, in order.
func (f *fixture) liveCards(room string) []LiveCard {
	f.t.Helper()
	var out []LiveCard
	for _, m := range f.messages(room) {
		if c, ok := liveCardOf(m); ok {
			if !m.Private {
				f.t.Errorf("live card %s is not owner-only", m.ID)
			}
			out = append(out, c)
		}
	}
	return out
}

func TestLiveViewCard(t *testing.T) {
	f, n, _ := termFixture(t)
	ctx := context.Background()
	s := f.svc
	turn := Turn{NodeID: n.ID, RoomID: n.DMRoomID, ByOwner: true}
	open := func() *nodeTerm {
		t.Helper()
		a, err := s.terminalOpen(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		term, err := s.term(n, a.Session)
		if err != nil {
			t.Fatal(err)
		}
		return term
	}

	// One card per session: a second call answers the same card.
	term := open()
	a1, err := s.postLive(ctx, turn, n, term)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := s.postLive(ctx, turn, n, term)
	if err != nil || a2.MessageID != a1.MessageID {
		t.Fatalf("second live_view: %+v %v, want card %s", a2, err, a1.MessageID)
	}
	cards := f.liveCards(n.DMRoomID)
	if len(cards) != 1 {
		t.Fatalf("%d live cards, want 1", len(cards))
	}
	if c := cards[0]; c.Status != LiveOpen || c.Kind != "terminal" || c.LiveID != term.sess.ID() || c.Session != term.sess.ID() ||
		c.Title != "bash in "+n.Slug && c.Title != "sh in "+n.Slug || c.StartedAt.IsZero() {
		t.Fatalf("card = %+v", c)
	}

	// stop ends the card and its views, and leaves the terminal open; the next call posts a new one.
	to, err := s.OpenTakeover(ctx, a1.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.stopLive(ctx, term); err != nil {
		t.Fatal(err)
	}
	if c := f.liveCards(n.DMRoomID)[0]; c.Status != LiveEnded || c.EndedBy != "node" || c.EndReason != LiveStopped || c.EndedAt == nil {
		t.Fatalf("stopped card = %+v", c)
	}
	if _, err := s.TakeoverInfo(to.ID); problem.KindOf(err) != problem.KindNotFound {
		t.Fatalf("the view on a stopped card is still open: %v", err)
	}
	if _, err := s.OpenTakeover(ctx, a1.MessageID); problem.KindOf(err) != problem.KindConflict {
		t.Fatalf("a takeover of an ended card: %v, want a conflict", err)
	}
	if _, err := s.terminalRead(n, terminalReadIn{Session: term.sess.ID()}); err != nil {
		t.Fatalf("the terminal closed with its card: %v", err)
	}
	a3, err := s.postLive(ctx, turn, n, term)
	if err != nil || a3.MessageID == a1.MessageID {
		t.Fatalf("live_view after stop: %+v %v, want a new card", a3, err)
	}

	// terminal_close ends the card: closed by the node.
	if _, err := s.terminalClose(n, term.sess.ID()); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the card to end", func() bool { return f.liveCards(n.DMRoomID)[1].Status == LiveEnded })
	if c := f.liveCards(n.DMRoomID)[1]; c.EndedBy != "node" || c.EndReason != LiveClosed {
		t.Fatalf("closed card = %+v", c)
	}

	// The shell exiting ends it too, by nobody.
	term = open()
	if _, err := s.postLive(ctx, turn, n, term); err != nil {
		t.Fatal(err)
	}
	if _, err := term.sess.Write([]byte("exit\r")); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the card to end", func() bool { c := f.liveCards(n.DMRoomID); return c[len(c)-1].Status == LiveEnded })
	if c := f.liveCards(n.DMRoomID); c[len(c)-1].EndedBy != "" || c[len(c)-1].EndReason != LiveClosed {
		t.Fatalf("exited card = %+v", c[len(c)-1])
	}
}

// In control, the node's terminal_send waits until the owner hands the terminal back, and
// terminal_read still works; watching, the owner's typing reaches the shell.
func TestLiveTakeoverControl(t *testing.T) {
	f, n, _ := termFixture(t)
	ctx := context.Background()
	s := f.svc
	a, err := s.terminalOpen(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	term, _ := s.term(n, a.Session)
	live, err := s.postLive(ctx, Turn{NodeID: n.ID, RoomID: n.DMRoomID, ByOwner: true}, n, term)
	if err != nil {
		t.Fatal(err)
	}
	to, err := s.OpenTakeover(ctx, live.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if to.Mode != ModeWatch || to.Kind != "terminal" || to.Session != a.Session || !to.MaxEndsAt.Equal(to.EndsAt.Add(TakeoverMax-TakeoverWindow)) {
		t.Fatalf("takeover = %+v", to)
	}
	view, err := s.StartTakeover(to.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartTakeover(to.ID); problem.KindOf(err) != problem.KindConflict {
		t.Fatalf("a second start: %v", err)
	}

	// Watching, the owner types in the shell.
	if err := view.Input(Input{T: "tty", Text: "echo owner-$((40+2))"}); err != nil {
		t.Fatal(err)
	}
	if err := view.Input(Input{T: "tty-key", Key: "Enter"}); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the owner's line to run", func() bool { return hasScreenLine(term.sess.Tail(0), "owner-42") })
	if err := view.Input(Input{T: "tty-key", Key: "Meta+X"}); problem.KindOf(err) != problem.KindInvalid {
		t.Fatalf("an unknown key: %v", err)
	}

	// In control, the node waits.
	if _, err := s.TakeoverControl(to.ID, true); err != nil {
		t.Fatal(err)
	}
	other, _ := s.OpenTakeover(ctx, live.MessageID)
	if _, err := s.TakeoverControl(other.ID, true); problem.KindOf(err) != problem.KindConflict {
		t.Fatalf("a second view took control: %v", err)
	}
	sent := make(chan TerminalAnswer, 1)
	go func() {
		a, err := s.terminalSend(ctx, n, terminalSendIn{Session: a.Session, Text: "echo node-$((1+1))\n"})
		if err != nil {
			t.Error(err)
		}
		sent <- a
	}()
	f.waitFor("the node's send to wait", func() bool { return term.waiting.Load() == 1 })
	if _, err := s.terminalRead(n, terminalReadIn{Session: a.Session}); err != nil {
		t.Fatalf("terminal_read in control: %v", err)
	}
	select {
	case a := <-sent:
		t.Fatalf("terminal_send went on in the owner's control: %+v", a)
	default:
	}
	if hasScreenLine(term.sess.Tail(0), "node-2") {
		t.Fatal("the node typed while the owner had control")
	}
	// A send whose turn gives up says why.
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.terminalSend(short, n, terminalSendIn{Session: a.Session, Text: "true\n"}); err == nil || err.Error() != "Your owner has taken control of this terminal; wait for them to hand it back." {
		t.Fatalf("a cancelled send in control: %v", err)
	}
	if _, err := s.TakeoverControl(to.ID, false); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-sent:
		if !hasScreenLine(a.Screen, "node-2") || a.Note == "" {
			t.Fatalf("after hand back: %+v", a)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("terminal_send did not go on after the owner handed back")
	}

	// Stopping ends the view and gives control back.
	if _, err := s.TakeoverControl(to.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EndTakeover(to.ID, ReasonStopped); err != nil {
		t.Fatal(err)
	}
	<-view.Done()
	if term.controlled() != nil || view.Info().EndReason != ReasonStopped {
		t.Fatalf("after stop: controlled %v, %+v", term.controlled() != nil, view.Info())
	}
}

// A terminal its host kept through a restart comes back without its live card; watching the card
// links them again instead of ending it.
func TestLiveCardAfterRestart(t *testing.T) {
	f, n, _ := termFixture(t)
	ctx := context.Background()
	s := f.svc
	a, err := s.terminalOpen(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	term, _ := s.term(n, a.Session)
	live, err := s.postLive(ctx, Turn{NodeID: n.ID, RoomID: n.DMRoomID, ByOwner: true}, n, term)
	if err != nil {
		t.Fatal(err)
	}
	term.setLiveCard("") // as AdoptTerminals leaves a terminal taken back after a restart
	to, err := s.OpenTakeover(ctx, live.MessageID)
	if err != nil || to.Session != a.Session || term.liveCard() != live.MessageID {
		t.Fatalf("OpenTakeover = %+v, %v; card %q", to, err, term.liveCard())
	}
}

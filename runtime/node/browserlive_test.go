package node

import (
	"context"
	"encoding/json"
	"errors"
	"image/color"
	"testing"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/node/livetest"
)

var _ Browser = (*livetest.Browser)(nil)

// browserFixture is a node with two tabs of its own in a fake browser: t1 with a title, t2 without.
func browserFixture(t *testing.T) (*fixture, Node, *livetest.Browser) {
	t.Helper()
	fb := &livetest.Browser{}
	f := newFixture(t, func(c *Config) { c.Browser = fb })
	n := f.node("Scout")
	fb.Add(nodeWork(n.ID), browser.TabInfo{ID: "t1", URL: "https://shop.example/cart?session=s3cr3t", Title: "Your cart"})
	fb.Add(nodeWork(n.ID), browser.TabInfo{ID: "t2", URL: "https://portal.example/sign-in"})
	fb.Add("node:someone-else:own", browser.TabInfo{ID: "t9", URL: "https://else.example/"})
	return f, n, fb
}

func ownerTurnOf(n Node) Turn { return Turn{NodeID: n.ID, RoomID: n.DMRoomID, ByOwner: true} }

func TestBrowserLiveCard(t *testing.T) {
	f, n, _ := browserFixture(t)
	s, ctx := f.svc, context.Background()

	a, err := s.postTabLive(ctx, ownerTurnOf(n), n, "t1")
	if err != nil || a.Status != LiveOpen || a.Tab != "t1" {
		t.Fatalf("post: %+v %v", a, err)
	}
	m, _ := s.Message(ctx, a.MessageID)
	c, ok := liveCardOf(m)
	if !ok || c.Kind != "browser" || c.Tab != "t1" || c.Title != "Your cart" || c.Session != "" || len(c.LiveID) != 18 || !m.Private {
		t.Fatalf("card = %+v (%v), private %v", c, ok, m.Private)
	}
	if again, _ := s.postTabLive(ctx, ownerTurnOf(n), n, "t1"); again.MessageID != a.MessageID {
		t.Fatalf("a second call posted another card: %+v", again)
	}
	if b, _ := s.postTabLive(ctx, ownerTurnOf(n), n, "t2"); b.MessageID == "" {
		t.Fatal("no card for t2")
	} else if m2, _ := s.Message(ctx, b.MessageID); mustCard(t, m2).Title != "portal.example" {
		t.Fatalf("a tab without a title is named by its site: %+v", mustCard(t, m2))
	}
	for _, tab := range []string{"t9", "t404"} {
		if _, err := s.postTabLive(ctx, ownerTurnOf(n), n, tab); err == nil {
			t.Errorf("%s: a card of a tab not the node's", tab)
		}
	}

	stopped, err := s.stopTabLive(ctx, n, "t1")
	if err != nil || stopped.Status != LiveEnded {
		t.Fatalf("stop: %+v %v", stopped, err)
	}
	m, _ = s.Message(ctx, a.MessageID)
	if c := mustCard(t, m); c.Status != LiveEnded || c.EndReason != LiveStopped || c.EndedBy != "node" {
		t.Fatalf("stopped card = %+v", c)
	}
	if next, _ := s.postTabLive(ctx, ownerTurnOf(n), n, "t1"); next.MessageID == a.MessageID {
		t.Fatal("after stop, the next live_view answered the ended card")
	}
}

func mustCard(t *testing.T, m Message) LiveCard {
	t.Helper()
	c, ok := liveCardOf(m)
	if !ok {
		t.Fatalf("message %s is not a live card", m.ID)
	}
	return c
}

func TestBrowserTakeoverInput(t *testing.T) {
	f, n, fb := browserFixture(t)
	s, ctx := f.svc, context.Background()
	a, _ := s.postTabLive(ctx, ownerTurnOf(n), n, "t1")
	tk, err := s.OpenTakeover(ctx, a.MessageID)
	if err != nil || tk.Kind != "browser" || tk.Mode != ModeWatch || tk.Tab != "t1" || tk.Browser != "tab" || tk.Session != "" {
		t.Fatalf("open: %+v %v", tk, err)
	}
	v, err := s.StartTakeover(tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	var frames []browser.Frame
	stop, err := v.Screencast(ctx, browser.ScreencastOptions{MaxWidth: 1024, Quality: 45}, func(f browser.Frame) { frames = append(frames, f) })
	if err != nil {
		t.Fatal(err)
	}
	fb.Paint(color.RGBA{200, 0, 0, 255})
	stop()
	if len(frames) != 2 || frames[0].Width != 256 || len(frames[1].JPEG) == 0 {
		t.Fatalf("frames: %d, first %dx%d", len(frames), frames[0].Width, frames[0].Height)
	}

	// Watching, the owner's input is ignored (a ping counts), and the node keeps the tab.
	if err := v.Input(Input{T: "tap", X: 0.5, Y: 0.5}); err != nil || len(fb.Inputs()) != 0 || s.tabControlled(n.ID, "t1") {
		t.Fatalf("watching: %v, inputs %v", err, fb.Inputs())
	}
	switched := v.Switched()
	if _, err := s.TakeoverControl(tk.ID, true); err != nil {
		t.Fatal(err)
	}
	select {
	case <-switched:
	default:
		t.Fatal("taking control did not say the view switched")
	}
	if !s.tabControlled(n.ID, "t1") || s.tabControlled(n.ID, "t2") {
		t.Fatal("in control: tabControlled does not say so for t1 only")
	}
	for _, in := range []Input{{T: "tap", X: 0.25, Y: 0.75}, {T: "wheel", X: 0.5, Y: 0.5, DY: 120}, {T: "text", Text: "123456"}, {T: "key", Key: "Enter"}, {T: "key", Key: "Ctrl+a"}} {
		if err := v.Input(in); err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
	}
	want := []browser.Input{{Kind: "tap", X: 0.25, Y: 0.75}, {Kind: "wheel", X: 0.5, Y: 0.5, DY: 120}, {Kind: "text", Text: "123456"}, {Kind: "key", Key: "Enter"}, {Kind: "key", Key: "Ctrl+a"}}
	if got := fb.Inputs(); len(got) != len(want) {
		t.Fatalf("inputs = %+v", got)
	} else {
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("input %d = %+v, want %+v", i, got[i], want[i])
			}
		}
	}
	for _, bad := range []Input{{T: "tap", X: 1.5, Y: 0.2}, {T: "tap", X: -0.1}, {T: "key", Key: "Launch the missiles"}, {T: "text"}, {T: "tty", Text: "ls"}, {T: "wheel", DY: 1e9}} {
		if err := v.Input(bad); err == nil {
			t.Errorf("%+v was taken", bad)
		}
	}
	waited := make(chan error, 1)
	go func() {
		_, err := s.waitTab(ctx, n.ID, "t1")
		waited <- err
	}()
	select {
	case err := <-waited:
		t.Fatalf("the node's tool went on while the owner had the tab: %v", err)
	default:
	}
	if _, err := s.TakeoverControl(tk.ID, false); err != nil || s.tabControlled(n.ID, "t1") {
		t.Fatalf("hand back: %v, still controlled %v", err, s.tabControlled(n.ID, "t1"))
	}
	if err := <-waited; err != nil {
		t.Fatalf("the waiting tool after the hand back: %v", err)
	}
	if w, err := s.waitTab(ctx, n.ID, "t2"); err != nil || w {
		t.Fatalf("a tab nobody controls: waited %v, %v", w, err)
	}

	// A tool whose turn ends while the owner has the tab hears so.
	s.TakeoverControl(tk.ID, true)
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if w, err := s.waitTab(gone, n.ID, "t1"); !w || !errors.Is(err, ErrTabControlled) {
		t.Fatalf("a tool's turn ending while the owner has the tab: waited %v, %v", w, err)
	}
	s.TakeoverControl(tk.ID, false)

	// One view in control at a time.
	other, _ := s.OpenTakeover(ctx, a.MessageID)
	s.TakeoverControl(tk.ID, true)
	if _, err := s.TakeoverControl(other.ID, true); err == nil {
		t.Fatal("a second view took control")
	}
	s.EndTakeover(tk.ID, ReasonStopped)
	if s.tabControlled(n.ID, "t1") {
		t.Fatal("a stopped view kept control")
	}
}

func TestBrowserTabClosed(t *testing.T) {
	for _, c := range []struct {
		name          string
		byNode        bool
		by, toEndedAs string
	}{
		{"closed by the node", true, "node", ReasonClosedByNode},
		{"its lease lapsed", false, "", ReasonClosed},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, n, fb := browserFixture(t)
			s, ctx := f.svc, context.Background()
			a, _ := s.postTabLive(ctx, ownerTurnOf(n), n, "t1")
			tk, _ := s.OpenTakeover(ctx, a.MessageID)
			v, _ := s.StartTakeover(tk.ID)
			s.TakeoverControl(tk.ID, true)

			fb.Remove(nodeWork(n.ID), "t1")
			s.browserTabClosed(n.ID, "t1", c.byNode)
			select {
			case <-v.Done():
			default:
				t.Fatal("the view did not end")
			}
			if info := v.Info(); info.EndReason != c.toEndedAs {
				t.Fatalf("ended %q, want %q", info.EndReason, c.toEndedAs)
			}
			m, _ := s.Message(ctx, a.MessageID)
			if card := mustCard(t, m); card.Status != LiveEnded || card.EndReason != LiveClosed || card.EndedBy != c.by {
				t.Fatalf("card = %+v", card)
			}
			if s.tabControlled(n.ID, "t1") {
				t.Fatal("a closed tab is still controlled")
			}
			if _, err := s.OpenTakeover(ctx, a.MessageID); !errors.Is(err, ErrLiveEnded) {
				t.Fatalf("open an ended card: %v", err)
			}
		})
	}
	// A card whose tab went while nobody heard (the runtime restarted) ends when opened.
	f, n, fb := browserFixture(t)
	a, _ := f.svc.postTabLive(context.Background(), ownerTurnOf(n), n, "t2")
	fb.Remove(nodeWork(n.ID), "t2")
	if _, err := f.svc.OpenTakeover(context.Background(), a.MessageID); !errors.Is(err, ErrLiveEnded) {
		t.Fatalf("open a card whose tab is gone: %v", err)
	}
}

// loginCard posts a sign-in card as the browser tools do, with only what a takeover reads.
func loginCard(t *testing.T, f *fixture, n Node, data string) string {
	t.Helper()
	var m Message
	err := f.svc.cfg.Writer.Exec(context.Background(), func(tx *ledger.Tx) error {
		var err error
		m, err = f.svc.insertMessageTx(tx, Message{RoomID: n.DMRoomID, Author: AuthorNode, NodeID: n.ID, Kind: KindText,
			Body: "Sign in to portal.example", Data: json.RawMessage(data), Private: true})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m.ID
}

func TestLoginTakeover(t *testing.T) {
	f, n, fb := browserFixture(t)
	s, ctx := f.svc, context.Background()
	live, _ := s.postTabLive(ctx, ownerTurnOf(n), n, "t2")
	watch, _ := s.OpenTakeover(ctx, live.MessageID)
	login := loginCard(t, f, n, `{"type":"login","status":"pending","tab":"t2","purpose":"sign_in"}`)

	tk, err := s.OpenLoginTakeover(ctx, login)
	if err != nil || tk.Mode != ModeControl || tk.Browser != "clean" || tk.Kind != "browser" || tk.Tab != "t2" || tk.LoginCardID != login {
		t.Fatalf("open: %+v %v", tk, err)
	}
	if open, _ := fb.Clean("t2"); !open || !s.tabControlled(n.ID, "t2") {
		t.Fatalf("clean browser open %v, tab controlled %v", open, s.tabControlled(n.ID, "t2"))
	}
	if _, err := s.TakeoverInfo(watch.ID); err == nil {
		t.Fatal("the watch of the tab did not make way for the sign-in")
	}
	if _, err := s.TakeoverControl(tk.ID, false); err == nil {
		t.Fatal("a sign-in's view went to watching")
	}
	if _, err := s.OpenLoginTakeover(ctx, login); err == nil {
		t.Fatal("a second sign-in's view took a tab in control")
	}
	v, _ := s.StartTakeover(tk.ID)
	if err := v.Input(Input{T: "text", Text: "owner@example.com"}); err != nil || len(fb.Inputs()) != 1 {
		t.Fatalf("typing into the clean browser: %v %v", err, fb.Inputs())
	}

	// I'm done, not signed in yet: the view stays, saying why.
	got, err := s.FinishTakeover(ctx, tk.ID, true)
	if err != nil || got.Ended || got.Note == "" {
		t.Fatalf("done, not signed in: %+v %v", got, err)
	}
	fb.SignedIn = true
	got, err = s.FinishTakeover(ctx, tk.ID, true)
	if err != nil || !got.Ended || got.EndReason != ReasonSignedIn {
		t.Fatalf("done, signed in: %+v %v", got, err)
	}
	if open, _ := fb.Clean("t2"); open || s.tabControlled(n.ID, "t2") {
		t.Fatal("the clean browser stayed open or the tab controlled after the sign-in")
	}

	for _, c := range []struct{ name, data string }{
		{"a sign-in no longer waiting", `{"type":"login","status":"signed_in","tab":"t2"}`},
		{"not a sign-in card", `{"type":"live","kind":"browser","tab":"t2"}`},
	} {
		if _, err := s.OpenLoginTakeover(ctx, loginCard(t, f, n, c.data)); err == nil {
			t.Errorf("%s: opened", c.name)
		}
	}

	// The clean browser cannot start: the view shows the tab and says so.
	fb.CleanErr = errors.New("no display")
	tk, err = s.OpenLoginTakeover(ctx, login)
	if err != nil || tk.Browser != "tab" || tk.Note == "" {
		t.Fatalf("without the clean browser: %+v %v", tk, err)
	}
	if got, _ := s.FinishTakeover(ctx, tk.ID, false); got.EndReason != ReasonStopped {
		t.Fatalf("stop: %+v", got)
	}
}

//go:build !windows

package node

import (
	"context"
	"testing"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/node/livetest"
	"github.com/ensemblework/ensemble/runtime/store"
)

// LiveFixture is a node with a terminal open and its live card posted, for the tests of package
// node_test that drive it through the API server (which imports this package).
type LiveFixture struct {
	Svc     *Service
	Store   *store.Store
	Bus     *events.Bus
	Writer  *ledger.Writer
	Session string
	CardID  string
	node    Node
	term    *nodeTerm
}

func NewLiveFixture(t *testing.T) *LiveFixture {
	t.Helper()
	f, n, _ := termFixture(t)
	ctx := context.Background()
	a, err := f.svc.terminalOpen(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	term, _ := f.svc.term(n, a.Session)
	live, err := f.svc.postLive(ctx, Turn{NodeID: n.ID, RoomID: n.DMRoomID, ByOwner: true}, n, term)
	if err != nil {
		t.Fatal(err)
	}
	return &LiveFixture{Svc: f.svc, Store: f.st, Bus: f.bus, Writer: f.svc.cfg.Writer, Session: a.Session, CardID: live.MessageID, node: n, term: term}
}

// Send is the node's terminal_send of text.
func (l *LiveFixture) Send(ctx context.Context, text string) (TerminalAnswer, error) {
	return l.Svc.terminalSend(ctx, l.node, terminalSendIn{Session: l.Session, Text: text})
}

// SendsWaiting counts the node's sends waiting for the owner to hand control back.
func (l *LiveFixture) SendsWaiting() int { return int(l.term.waiting.Load()) }

// StopLive is the node's live_view {stop: true}.
func (l *LiveFixture) StopLive(ctx context.Context) error {
	_, err := l.Svc.stopLive(ctx, l.term)
	return err
}

// BrowserLiveFixture is a node with a tab t1 of its own in a fake browser and its live card
// posted, and a sign-in card for its tab t2, for the API tests of package node_test.
type BrowserLiveFixture struct {
	LiveFixture
	Browser     *livetest.Browser
	Tab         string
	LoginCardID string
}

func NewBrowserLiveFixture(t *testing.T) *BrowserLiveFixture {
	t.Helper()
	f, n, fb := browserFixture(t)
	live, err := f.svc.postTabLive(context.Background(), ownerTurnOf(n), n, "t1")
	if err != nil {
		t.Fatal(err)
	}
	login := loginCard(t, f, n, `{"type":"login","status":"pending","tab":"t2"}`)
	return &BrowserLiveFixture{LiveFixture: LiveFixture{Svc: f.svc, Store: f.st, Bus: f.bus, Writer: f.svc.cfg.Writer, CardID: live.MessageID, node: n},
		Browser: fb, Tab: "t1", LoginCardID: login}
}

// TabControlled is the browser tools' check of a tab (tabControlled).
func (b *BrowserLiveFixture) TabControlled(tab string) bool {
	return b.Svc.tabControlled(b.node.ID, tab)
}

// NodeID is the fixture's node.
func (l *LiveFixture) NodeID() string { return l.node.ID }

// BrowserTabClosedForTest is browserTabClosed, as the browser tools call it.
func (s *Service) BrowserTabClosedForTest(nodeID, tab string, byNode bool) {
	s.browserTabClosed(nodeID, tab, byNode)
}

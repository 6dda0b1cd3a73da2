package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// A node's own browser tab, live (spec 002 §8.17): live_view {kind: "browser", tab} posts the
// owner's card of it, from which the owner watches the tab stream as JPEG frames and takes control
// of it, when the node's browser tools on it wait (tabControlled). A sign-in's card opens the same
// view of the clean browser (§8.16.2, browserlogin.go). The tab's end ends its card and its views
// (browserTabClosed).

// liveTab is one browser tab as live cards and takeovers see it.
type liveTab struct {
	work   browser.Work
	tab    string
	nodeID string

	liveMu sync.Mutex // one change of the live card at a time
	liveControl
}

// liveTabs are the tabs with a live card or a takeover, by work and tab.
type liveTabs struct {
	mu    sync.Mutex // guards the following field
	byKey map[string]*liveTab
}

func tabKey(w browser.Work, tab string) string { return string(w) + "\x00" + tab }

// liveTabOf is the tab's entry; made when create, else nil when there is none.
func (s *Service) liveTabOf(w browser.Work, tab, nodeID string, create bool) *liveTab {
	s.tabs.mu.Lock()
	defer s.tabs.mu.Unlock()
	lt := s.tabs.byKey[tabKey(w, tab)]
	if lt == nil && create {
		if s.tabs.byKey == nil {
			s.tabs.byKey = map[string]*liveTab{}
		}
		lt = &liveTab{work: w, tab: tab, nodeID: nodeID, liveControl: liveControl{busy: "You control this tab in another view; stop that view first."}}
		s.tabs.byKey[tabKey(w, tab)] = lt
	}
	return lt
}

// tabControlled says whether the owner has control of one of a node's own tabs now: its browser
// tools on that tab answer that the owner has the tab, or wait, until it is handed back. The
// browser tools call it before each action on a tab.
func (s *Service) tabControlled(nodeID, tab string) bool {
	lt := s.liveTabOf(nodeWork(nodeID), tab, nodeID, false)
	return lt != nil && lt.controlled() != nil
}

// waitTab waits while the owner controls one of a node's own tabs, as terminal_send waits for a
// terminal, and says whether it did: at once when the node has the tab, else when the owner hands
// it back or their view ends; ErrTabControlled when ctx ends first. The browser tools call it
// before each action on a tab.
func (s *Service) waitTab(ctx context.Context, nodeID, tab string) (bool, error) {
	lt := s.liveTabOf(nodeWork(nodeID), tab, nodeID, false)
	if lt == nil {
		return false, nil
	}
	return lt.waitBack(ctx, ErrTabControlled)
}

// ErrTabControlled is the answer of a node's browser tool on a tab its owner controls.
var ErrTabControlled = problem.New(problem.KindConflict, "Your owner has taken control of this tab; wait until they hand it back, or use another tab.")

// tabInfo is one of work's tabs, if it is open.
func (s *Service) tabInfo(w browser.Work, tab string) (browser.TabInfo, bool) {
	if s.cfg.Browser == nil {
		return browser.TabInfo{}, false
	}
	for _, ti := range s.cfg.Browser.Tabs(w) {
		if ti.ID == tab {
			return ti, true
		}
	}
	return browser.TabInfo{}, false
}

func newLiveTabID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "lv" + hex.EncodeToString(b)
}

var errNoLiveBrowser = problem.New(problem.KindConflict, "This computer has no browser, so there is no live view of a tab.")

// postTabLive posts the live card of one of the node's tabs in the turn's thread, or answers the
// one open already.
func (s *Service) postTabLive(ctx context.Context, turn Turn, n Node, tab string) (LiveAnswer, error) {
	if s.cfg.Browser == nil {
		return LiveAnswer{}, errNoLiveBrowser
	}
	w := nodeWork(n.ID)
	ti, ok := s.tabInfo(w, tab)
	if !ok {
		return LiveAnswer{}, problem.NotFound("Tab %q is not one of your open tabs; browser_tabs lists them.", tab)
	}
	lt := s.liveTabOf(w, tab, n.ID, true)
	lt.liveMu.Lock()
	defer lt.liveMu.Unlock()
	if card := lt.liveCard(); card != "" {
		return LiveAnswer{Tab: tab, MessageID: card, Status: LiveOpen, Note: "Your owner's live card of this tab is already open in the chat."}, nil
	}
	title := ti.Title
	if title == "" {
		title = siteOf(ti.URL)
	}
	data, _ := json.Marshal(LiveCard{Type: liveTypeCard, Kind: "browser", Status: LiveOpen, LiveID: newLiveTabID(), Title: title,
		Tab: tab, StartedAt: s.now()})
	var m Message
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		var err error
		m, err = s.insertMessageTx(tx, Message{RoomID: roomOfLane(turn.Lane, turn.RoomID), Author: AuthorNode, NodeID: n.ID,
			Kind: KindText, Body: "Live browser: " + title, Data: data, Private: true, Depth: turn.Depth + 1, TurnID: turn.ID})
		return err
	})
	if err != nil {
		return LiveAnswer{}, err
	}
	lt.setLiveCard(m.ID)
	s.noteLive(KindLiveView, LiveStep{Step: "posted", NodeID: n.ID, Tab: tab, LiveCardID: m.ID, Kind: "browser"})
	return LiveAnswer{Tab: tab, MessageID: m.ID, Status: LiveOpen,
		Note: "Your owner has a live card of this tab in the chat; they may watch it or take control, when your browser tools on it wait."}, nil
}

// stopTabLive ends a tab's live card and the views on it; the tab stays open.
func (s *Service) stopTabLive(ctx context.Context, n Node, tab string) (LiveAnswer, error) {
	lt := s.liveTabOf(nodeWork(n.ID), tab, n.ID, false)
	card := ""
	if lt != nil {
		lt.liveMu.Lock()
		defer lt.liveMu.Unlock()
		card = lt.liveCard()
	}
	if card == "" {
		return LiveAnswer{Tab: tab, Status: LiveEnded, Note: "No live card of this tab is open."}, nil
	}
	if err := s.endLiveCard(ctx, card, "node", LiveStopped); err != nil {
		return LiveAnswer{}, err
	}
	lt.setLiveCard("")
	s.endTakeoversOf(card, ReasonLiveStopped)
	s.noteLive(KindLiveView, LiveStep{Step: "ended", NodeID: n.ID, Tab: tab, LiveCardID: card, Kind: "browser", Reason: LiveStopped})
	return LiveAnswer{Tab: tab, MessageID: card, Status: LiveEnded, Note: "The live card is ended; the tab is still open."}, nil
}

// browserTabClosed ends the live card of a node's own tab that has closed, and every view of it
// (a sign-in's too): byNode when the node closed it (browser_close; the card says so and the views
// end closed_by_node), else its lease lapsed or its browser went. The browser tools call it when a
// tab closes.
func (s *Service) browserTabClosed(nodeID, tab string, byNode bool) {
	w := nodeWork(nodeID)
	s.tabs.mu.Lock()
	lt := s.tabs.byKey[tabKey(w, tab)]
	delete(s.tabs.byKey, tabKey(w, tab))
	s.tabs.mu.Unlock()
	if lt == nil {
		return
	}
	lt.liveMu.Lock()
	defer lt.liveMu.Unlock()
	by, reason := "", ReasonClosed
	if byNode {
		by, reason = "node", ReasonClosedByNode
	}
	if card := lt.liveCard(); card != "" {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(s.life), 10*time.Second)
		defer cancel()
		if err := s.endLiveCard(ctx, card, by, LiveClosed); err != nil {
			s.log.Warn("node live card not ended", "message", card, "err", err)
		}
		lt.setLiveCard("")
		s.noteLive(KindLiveView, LiveStep{Step: "ended", NodeID: nodeID, Tab: tab, LiveCardID: card, Kind: "browser", Reason: LiveClosed})
	}
	s.endTakeoversOfTab(lt, reason)
}

// endTakeoversOfTab ends every takeover of a tab.
func (s *Service) endTakeoversOfTab(lt *liveTab, reason string) {
	s.takeovers.mu.Lock()
	var of []*liveTakeover
	for _, to := range s.takeovers.byID {
		if to.tab == lt {
			of = append(of, to)
		}
	}
	s.takeovers.mu.Unlock()
	for _, to := range of {
		to.end(reason)
	}
}

// openTabTakeover opens a watching view of the tab a browser live card shows. A card whose tab has
// closed is ended too, and answers ErrLiveEnded.
func (s *Service) openTabTakeover(ctx context.Context, m Message, c LiveCard) (Takeover, error) {
	if s.cfg.Browser == nil {
		return Takeover{}, errNoLiveBrowser
	}
	w := nodeWork(m.NodeID)
	_, open := s.tabInfo(w, c.Tab)
	lt := s.liveTabOf(w, c.Tab, m.NodeID, open)
	if lt != nil && open {
		lt.liveMu.Lock()
		if lt.liveCard() == "" {
			lt.setLiveCard(m.ID) // the runtime restarted; the broker kept the tab (a held one)
		}
		lt.liveMu.Unlock()
	}
	if !open || lt.liveCard() != m.ID {
		if err := s.endLiveCard(ctx, m.ID, "", LiveClosed); err != nil {
			return Takeover{}, err
		}
		return Takeover{}, ErrLiveEnded
	}
	now := s.now()
	to := &liveTakeover{s: s, tab: lt, created: now, done: make(chan struct{}), lastSeen: now, switched: make(chan struct{}),
		info: Takeover{ID: newTakeoverID(), Kind: "browser", Mode: ModeWatch, Browser: "tab", LiveCardID: m.ID, Tab: c.Tab,
			EndsAt: now.Add(TakeoverWindow), MaxEndsAt: now.Add(TakeoverMax)}}
	s.addTakeover(to)
	s.noteLive(KindTakeoverStep, LiveStep{Step: "created", TakeoverID: to.info.ID, Tab: c.Tab, LiveCardID: m.ID, Kind: "browser"})
	return to.snapshot(), nil
}

// Kind is what the view shows: terminal or browser.
func (v *TakeoverView) Kind() string { return v.to.info.Kind } // never changes

// Screencast streams the browser view's tab (the clean browser's page, for a sign-in's) to each,
// at the size and quality o asks, until stop or ctx ends.
func (v *TakeoverView) Screencast(ctx context.Context, o browser.ScreencastOptions, each func(browser.Frame)) (stop func(), err error) {
	if v.to.tab == nil {
		return nil, problem.Conflict("A terminal's view has no screencast.")
	}
	return v.to.s.cfg.Browser.Screencast(ctx, v.to.tab.work, v.to.tab.tab, o, each)
}

// Switched is closed when a browser view's mode changes (its pictures' size and quality follow).
func (v *TakeoverView) Switched() <-chan struct{} {
	v.to.mu.Lock()
	defer v.to.mu.Unlock()
	return v.to.switched
}

// browserInput applies the owner's input to the tab in control; watching, it is ignored (the page
// sends none; a ping still counts).
func (v *TakeoverView) browserInput(in Input) error {
	to := v.to
	if in.T == "ping" {
		return nil
	}
	bi, err := browserInputOf(in)
	if err != nil {
		return err
	}
	if to.snapshot().Mode != ModeControl {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(to.s.life), 10*time.Second)
	defer cancel()
	if err := to.s.cfg.Browser.Input(ctx, to.tab.work, to.tab.tab, bi); err != nil {
		return err
	}
	to.inputs.Add(1)
	return nil
}

package node

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// ToolLiveView posts the owner's live card of a terminal or of one of the node's browser tabs (spec
// 002 §8.17): one owner-only card in the chat, from which the owner watches it, types in a terminal,
// and takes control.
const ToolLiveView = "live_view" // offered with the terminal tools (terminalTools)

// LiveCard is a live card's data: a text message whose data.type is "live", so a client that
// knows no live views still shows its words.
type LiveCard struct {
	Type      string     `json:"type"`   // live
	Kind      string     `json:"kind"`   // terminal, browser
	Status    string     `json:"status"` // open, ended
	LiveID    string     `json:"liveId"` // the session's id; lv + 16 hex digits for a tab
	Title     string     `json:"title"`
	Session   string     `json:"session,omitempty"` // a terminal's
	Tab       string     `json:"tab,omitempty"`     // a browser tab's
	StartedAt time.Time  `json:"startedAt"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	EndedBy   string     `json:"endedBy,omitempty"`   // node
	EndReason string     `json:"endReason,omitempty"` // closed, stopped
}

// Live card statuses and why one ended.
const (
	LiveOpen     = "open"
	LiveEnded    = "ended"
	LiveClosed   = "closed"  // the terminal or tab ended: terminal_close, its shell exiting, its time; browser_close, its lease
	LiveStopped  = "stopped" // the node ended the view (live_view {stop: true})
	liveTypeCard = "live"
)

type liveViewIn struct {
	Kind    string `json:"kind" jsonschema:"what to show: terminal or browser" check:"enum=terminal|browser"`
	Session string `json:"session,omitempty" jsonschema:"for a terminal: its id (ts…)" check:"maxLength=40"`
	Tab     string `json:"tab,omitempty" jsonschema:"for browser: one of your tabs (t1…), as browser_tabs lists them" check:"maxLength=40"`
	Stop    bool   `json:"stop,omitempty" jsonschema:"end the card and any view on it; the terminal or tab stays open"`
}

// LiveAnswer is what live_view answers.
type LiveAnswer struct {
	Session   string `json:"session,omitempty"`
	Tab       string `json:"tab,omitempty"`
	MessageID string `json:"messageId,omitempty"`
	Status    string `json:"status"`
	Note      string `json:"note"`
}

func liveViewTool(def func(name, desc string) tools.Tool) tools.Tool {
	return tools.Define(def(ToolLiveView, "Show your owner one of your terminals or browser tabs live, on a card in this chat: they watch it (and type in a terminal) and can take control, when your tools on it wait. A second call answers the same card; stop: true ends the card and leaves the terminal or tab open."),
		tools.Typed[liveViewIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in liveViewIn) (tools.Result, error) {
			c, err := ownerTurn(tc, "Live views are only for turns your owner started.")
			if err != nil {
				return tools.Result{}, err
			}
			if in.Kind == "browser" {
				return c.s.liveTabTool(ctx, c, in)
			}
			if in.Session == "" {
				return tools.Result{}, problem.Invalid("Say which terminal to show: session (ts…).")
			}
			t, err := c.s.term(c.node, in.Session)
			if err != nil {
				return tools.Result{}, err
			}
			var a LiveAnswer
			if in.Stop {
				a, err = c.s.stopLive(ctx, t)
			} else {
				a, err = c.s.postLive(ctx, c.rt.turn, c.node, t)
			}
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Summary: a.Note, Data: a}, nil
		}})
}

// liveTabTool is live_view of one of the node's tabs.
func (s *Service) liveTabTool(ctx context.Context, c *turnCtx, in liveViewIn) (tools.Result, error) {
	if in.Tab == "" {
		return tools.Result{}, problem.Invalid("Say which tab to show: tab (t1…), as browser_tabs lists them.")
	}
	var a LiveAnswer
	var err error
	if in.Stop {
		a, err = s.stopTabLive(ctx, c.node, in.Tab)
	} else {
		a, err = s.postTabLive(ctx, c.rt.turn, c.node, in.Tab)
	}
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Summary: a.Note, Data: a}, nil
}

// postLive posts the terminal's live card in the turn's thread, or answers the one open already.
func (s *Service) postLive(ctx context.Context, turn Turn, n Node, t *nodeTerm) (LiveAnswer, error) {
	t.liveMu.Lock()
	defer t.liveMu.Unlock()
	id := t.sess.ID()
	if card := t.liveCard(); card != "" {
		return LiveAnswer{Session: id, MessageID: card, Status: LiveOpen, Note: "Your owner's live card of this terminal is already open in the chat."}, nil
	}
	select {
	case <-t.sess.Done():
		return LiveAnswer{}, problem.Conflict("Terminal %s has ended; open another with terminal_open.", id)
	default:
	}
	data, _ := json.Marshal(LiveCard{Type: liveTypeCard, Kind: "terminal", Status: LiveOpen, LiveID: id, Title: t.title,
		Session: id, StartedAt: s.now()})
	var m Message
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		var err error
		m, err = s.insertMessageTx(tx, Message{RoomID: roomOfLane(turn.Lane, turn.RoomID), Author: AuthorNode, NodeID: n.ID,
			Kind: KindText, Body: "Live terminal: " + t.title, Data: data, Private: true, Depth: turn.Depth + 1, TurnID: turn.ID})
		return err
	})
	if err != nil {
		return LiveAnswer{}, err
	}
	t.setLiveCard(m.ID)
	s.noteLive(KindLiveView, LiveStep{Step: "posted", NodeID: n.ID, Session: id, LiveCardID: m.ID, Kind: "terminal"})
	return LiveAnswer{Session: id, MessageID: m.ID, Status: LiveOpen,
		Note: "Your owner has a live card of this terminal in the chat; they may watch, type in it, or take control."}, nil
}

// stopLive ends the terminal's live card and the views on it; the terminal stays open.
func (s *Service) stopLive(ctx context.Context, t *nodeTerm) (LiveAnswer, error) {
	t.liveMu.Lock()
	defer t.liveMu.Unlock()
	card := t.liveCard()
	if card == "" {
		return LiveAnswer{Session: t.sess.ID(), Status: LiveEnded, Note: "No live card of this terminal is open."}, nil
	}
	if err := s.endLiveCard(ctx, card, "node", LiveStopped); err != nil {
		return LiveAnswer{}, err
	}
	t.setLiveCard("")
	s.endTakeoversOf(card, ReasonLiveStopped)
	s.noteLive(KindLiveView, LiveStep{Step: "ended", NodeID: t.nodeID, Session: t.sess.ID(), LiveCardID: card, Kind: "terminal", Reason: LiveStopped})
	return LiveAnswer{Session: t.sess.ID(), MessageID: card, Status: LiveEnded, Note: "The live card is ended; the terminal is still open."}, nil
}

// terminalEnded ends the live card of a terminal that has ended, and the views on it.
func (s *Service) terminalEnded(t *nodeTerm) {
	t.liveMu.Lock()
	defer t.liveMu.Unlock()
	card := t.liveCard()
	if card == "" {
		return
	}
	by := ""
	if t.closedByNode.Load() {
		by = "node"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.endLiveCard(ctx, card, by, LiveClosed); err != nil {
		s.log.Warn("node live card not ended", "message", card, "err", err)
	}
	t.setLiveCard("")
	s.endTakeoversOf(card, ReasonClosed)
	s.noteLive(KindLiveView, LiveStep{Step: "ended", NodeID: t.nodeID, Session: t.sess.ID(), LiveCardID: card, Kind: "terminal", Reason: LiveClosed})
}

// endLiveCard marks a live card ended, by whom and why.
func (s *Service) endLiveCard(ctx context.Context, id, by, reason string) error {
	return s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		m, err := s.messageIn(tx.Context(), tx, id)
		if err != nil {
			return err
		}
		c, ok := liveCardOf(m)
		if !ok || c.Status == LiveEnded {
			return ledger.ErrNoChange
		}
		now := s.now()
		c.Status, c.EndedAt, c.EndedBy, c.EndReason = LiveEnded, &now, by, reason
		m.Data, _ = json.Marshal(c)
		return s.updateMessageTx(tx, m)
	})
}

// liveCardOf is a message's live card, if it is one.
func liveCardOf(m Message) (LiveCard, bool) {
	var c LiveCard
	if m.Kind != KindText || json.Unmarshal(m.Data, &c) != nil || c.Type != liveTypeCard {
		return LiveCard{}, false
	}
	return c, true
}

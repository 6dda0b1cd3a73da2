package node

import (
	"cmp"
	"context"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
)

// The ledger of live views and takeovers (spec 002 §8.17): each step by id, kind, mode and
// reason; never what was typed or shown.
const (
	KindLiveView        events.Kind = "node.live_view"        // data: LiveStep: a live card posted or ended
	KindTakeoverStep    events.Kind = "node.takeover"         // data: LiveStep: a takeover created, switched or ended
	KindTerminalSession events.Kind = "node.terminal_session" // data: LiveStep: a node's terminal opened or ended
)

// LiveStep is the data of the live views' events.
type LiveStep struct {
	Step       string `json:"step"` // posted, ended; created, control, watch, ended; opened, closed
	NodeID     string `json:"nodeId,omitempty"`
	Session    string `json:"session,omitempty"`
	Tab        string `json:"tab,omitempty"`
	LiveCardID string `json:"liveCardId,omitempty"`
	TakeoverID string `json:"takeoverId,omitempty"`
	Kind       string `json:"kind,omitempty"` // terminal, browser
	Reason     string `json:"reason,omitempty"`
	Inputs     int    `json:"inputs,omitempty"` // how many of the owner's inputs a view applied, never what they were
}

func liveEventSpecs() []events.Spec {
	return []events.Spec{
		{Kind: KindLiveView, Payload: LiveStep{}, Doc: "a node's live card was posted or ended"},
		{Kind: KindTakeoverStep, Payload: LiveStep{}, Doc: "the owner opened, switched or ended a view of a node's terminal or browser tab, or of a sign-in's clean browser"},
		{Kind: KindTerminalSession, Payload: LiveStep{}, Doc: "a node's terminal was opened or ended"},
	}
}

// noteLive ledgers one step; it never blocks the caller's work on the database for long.
func (s *Service) noteLive(kind events.Kind, st LiveStep) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.life), 5*time.Second)
	defer cancel()
	subject := cmp.Or(st.Session, st.Tab, st.TakeoverID)
	if err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error { return tx.Emit(kind, subject, st) }); err != nil {
		s.log.Warn("node: ledger a live view's step", "kind", kind, "err", err)
	}
}

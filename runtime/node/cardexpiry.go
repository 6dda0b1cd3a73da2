package node

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/needs"
)

// backgroundCardLife is how long a card raised by background work (a routine's run) waits for
// the owner before it expires (spec 002 §6.5): the work has moved on by then.
const backgroundCardLife = 30 * time.Minute

// cardExpiry is when a card raised in lane expires; zero for never.
func cardExpiry(lane string, now time.Time) *time.Time {
	if !strings.HasPrefix(lane, "work:rtn_") {
		return nil
	}
	at := now.Add(backgroundCardLife)
	return &at
}

// expireCards expires the pending cards whose time ran out, and those of plan steps that ended:
// answering one later says it expired, and its Needs me mirror closes with it.
func (s *Service) expireCards(ctx context.Context) {
	type pending struct {
		id   string
		card Card
	}
	cards, err := queryAll(ctx, s.cfg.Store.Reader(), "read pending cards",
		`SELECT id, data FROM node_messages WHERE kind = 'approval' AND json_extract(data, '$.status') = 'pending'`, nil,
		func(sc scanner) (pending, error) {
			var p pending
			var data string
			err := sc.Scan(&p.id, &data)
			json.Unmarshal([]byte(data), &p.card)
			return p, err
		})
	if err != nil {
		return
	}
	now := s.now()
	for _, p := range cards {
		if !s.cardOutlived(ctx, p.card, now) || s.awaited(p.id) {
			continue
		}
		if p.card.Type == CardLogin {
			if err := s.expireLogin(ctx, p.id); err != nil && s.life.Err() == nil {
				s.log.Warn("node: expire a sign-in card", "message", p.id, "err", err)
			}
			continue
		}
		if err := s.expireCard(ctx, p.id); err != nil && s.life.Err() == nil {
			s.log.Warn("node: expire a card", "message", p.id, "err", err)
		}
	}
}

// cardOutlived reports whether a pending card's time ran out or its plan step ended.
func (s *Service) cardOutlived(ctx context.Context, c Card, now time.Time) bool {
	if c.ExpiresAt != nil && now.After(*c.ExpiresAt) {
		return true
	}
	mission, step, _, ok := stepOfTurn(Turn{Lane: c.Lane})
	if !ok {
		return false
	}
	m, err := s.Mission(ctx, mission)
	if err != nil {
		return true // the plan is gone
	}
	st := m.step(step)
	return m.ended() || st == nil || st.Status != StepWorking
}

// awaited reports whether a tool call is waiting on the card right now: its turn parks soon.
func (s *Service) awaited(messageID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waits[messageID] != nil
}

// expireCard marks one pending card expired, with its mirror.
func (s *Service) expireCard(ctx context.Context, id string) error {
	var closed *needs.Decision
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		m, err := s.messageIn(tx.Context(), tx, id)
		if err != nil {
			return err
		}
		var c Card
		json.Unmarshal(m.Data, &c)
		if c.Status != CardPending {
			return nil
		}
		// The one writer orders this after any answer: a card still pending here is pending.
		c.Status = CardExpired
		m.Data, _ = json.Marshal(c)
		if c.DecisionID != "" {
			d, err := needs.Expire(tx, c.DecisionID)
			if err != nil && !errors.Is(err, needs.ErrSettled) {
				return err
			}
			if err == nil {
				closed = &d
			}
		}
		return s.updateMessageTx(tx, m)
	})
	if err == nil && closed != nil && s.cfg.Needs != nil {
		s.cfg.Needs.Settled(*closed)
	}
	return err
}

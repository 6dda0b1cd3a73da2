package assistant

import (
	"context"
	"errors"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// A write held under the needs-me policy waits in two places at once: for Apply (or Discard) in the
// chat, and for an answer on Needs me, where a person on a phone sees it. It settles once, in
// whichever place is first, and that settles the other:
//
//   - The decision is stored in the transaction that holds the write, and the proposal names it
//     (decision_id), so a held write is never without its card.
//   - Apply or Discard in the chat answers the decision (by [needs.ByChat]) in the transaction that
//     makes the write's change or drops it: a compare-and-set on the decision and one on the
//     proposal, committed together. An answer on Needs me after it is told the chat answered.
//   - An answer on Needs me settles the decision first; its waiter (awaitNeedsMe) then applies or
//     discards the write. Apply or Discard in the chat after that answer is refused, saying it
//     was answered there, unless the write already failed when applied, which the chat may retry
//     or drop.

// Ways a held write is settled.
type via int

const (
	viaChat    via = iota // Apply or Discard in the chat
	viaNeedsMe            // the answer on its Needs me card
)

// The options of a held write's Needs me card.
const (
	optionApply   = 0
	optionDiscard = 1
)

// needsDecision is a held write's Needs me card.
func needsDecision(t *tools.Tool, preview string) needs.Decision {
	return needs.NewQuestion(needs.Source{Title: "Assistant"}, needsQuestion(t, preview), []string{"Apply", "Discard"}, optionApply, false)
}

// postNeedsMe puts the card of held write t on Needs me inside tx and returns its decision's id,
// or "" where there is no Needs me (the write then waits for the chat only).
func (s *Service) postNeedsMe(tx *ledger.Tx, t *tools.Tool, preview string) (string, error) {
	if s.cfg.Needs == nil {
		return "", nil
	}
	d, err := needs.Post(tx, needsDecision(t, preview))
	if err != nil {
		return "", fmt.Errorf("assistant: put the held write on Needs me: %w", err)
	}
	return d.ID, nil
}

// awaitNeedsMe applies or discards the held write proposal when its decision is answered on Needs
// me. It waits for as long as the Service runs; a restart expires the decision and asks again
// ([Service.Resume]). A decision the chat answered, or that expired, needs nothing more.
func (s *Service) awaitNeedsMe(proposal, decision string) {
	if s.cfg.Needs == nil || decision == "" {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		d, err := s.cfg.Needs.Wait(s.life, decision)
		if err != nil || d.Status != needs.Answered || d.AnsweredBy == needs.ByChat || d.Answer == nil {
			return
		}
		ctx := context.WithoutCancel(s.life)
		if d.Answer.Option == optionApply {
			if _, err := s.apply(ctx, "", []string{proposal}, viaNeedsMe); err != nil {
				s.cfg.Log.Info("assistant: apply from Needs me", "proposal", proposal, "err", err)
			}
			return
		}
		if err := s.discard(ctx, proposal, viaNeedsMe); err != nil {
			s.cfg.Log.Info("assistant: discard from Needs me", "proposal", proposal, "err", err)
		}
	}()
}

// Resume asks again, on Needs me, about every write held there when the runtime last stopped (a
// restart expires the old decisions): each gets a new card, named on its proposal.
func (s *Service) Resume(ctx context.Context) error {
	rows, err := s.cfg.Store.Reader().QueryContext(ctx, "SELECT "+proposalCols+
		" FROM assistant_proposals WHERE policy = 'needs-me' AND status = 'proposed' ORDER BY created_at")
	if err != nil {
		return fmt.Errorf("assistant: held writes: %w", err)
	}
	ps, err := scanProposals(rows)
	if err != nil {
		return fmt.Errorf("assistant: held writes: %w", err)
	}
	for _, p := range ps {
		var decision string
		err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
			var err error
			if decision, err = s.postNeedsMe(tx, s.cfg.Tools.Get(p.tool), p.preview); err != nil || decision == "" {
				return err
			}
			_, err = tx.ExecContext(tx.Context(), "UPDATE assistant_proposals SET decision_id = ?, updated_at = ? WHERE id = ? AND status = 'proposed'",
				decision, store.Stamp(tx.Now()), p.id)
			return err
		})
		if err != nil {
			return fmt.Errorf("assistant: ask again about %s: %w", p.id, err)
		}
		s.awaitNeedsMe(p.id, decision)
	}
	return nil
}

// settleDecision settles, inside tx, the Needs me card p waits on, as the write settles by way:
// from the chat it answers the card with option, which must still be open (or expired, or the
// write failed when applied); from the card's own answer there is nothing left to settle. It
// returns the decision to wake once tx commits, or nil.
func settleDecision(tx *ledger.Tx, p proposal, option int, way via) (*needs.Decision, error) {
	if p.decision == "" || way == viaNeedsMe {
		return nil, nil
	}
	d, err := needs.Settle(tx, p.decision, needs.Choose(option), needs.ByChat)
	var se *needs.SettledError
	switch {
	case err == nil:
		return &d, nil
	case !errors.As(err, &se):
		return nil, err
	case chatMay(se.Decision, p):
		return nil, nil
	}
	return nil, &heldConflict{answeredOnNeedsMe(p, se.Decision)}
}

// chatMay reports whether the chat may still apply or discard p, whose card d was settled without
// it: the card expired or was withdrawn (no one waits there), or its answer was acted on and the
// write failed, which the chat may retry or drop.
func chatMay(d needs.Decision, p proposal) bool {
	return d.Status != needs.Answered || p.status == failed
}

// answeredOnNeedsMe says that p was answered on Needs me, by whom and when.
func answeredOnNeedsMe(p proposal, d needs.Decision) string {
	return fmt.Sprintf("%s was already answered on Needs me %s, so nothing more is done here.", tools.Clause(p.preview), d.AnsweredPhrase())
}

// decidedElsewhere is the sentence refusing the chat's Apply or Discard of p when its Needs me card
// was answered there, or "" when the chat may go on. It is read before the write is made; the
// transaction that makes it checks again (settleDecision).
func (s *Service) decidedElsewhere(ctx context.Context, p proposal) string {
	if s.cfg.Needs == nil || p.decision == "" {
		return ""
	}
	d, err := s.cfg.Needs.Get(ctx, p.decision)
	if err != nil || d.Status == needs.Open || d.AnsweredBy == needs.ByChat || chatMay(d, p) {
		return ""
	}
	return answeredOnNeedsMe(p, d)
}

// wakeSettled wakes the waiters of the decisions a committed Apply or Discard answered.
func (s *Service) wakeSettled(ds []*needs.Decision) {
	for _, d := range ds {
		if d != nil {
			s.cfg.Needs.Settled(*d)
		}
	}
}

package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// The mission outbox (spec 002 §6.2 Durability): effects written in the transaction that decided
// them, delivered right after it commits and by a sweep every OutboxSweep. A delivered effect
// queues a turn carrying the effect's operation id, unique on node_turns, so an effect delivered
// twice (a crash between the turn and the mark) starts nothing new.

// OutboxSweep is how often undelivered effects are looked for.
const OutboxSweep = 5 * time.Second

// Effects.
const (
	EffectStartStep = "start_step"
	EffectReport    = "report"
	EffectJudge     = "judge"
	EffectAskOwner  = "ask_owner"
)

// outboxTx writes an effect; the same operation id written twice is one effect.
func outboxTx(t *ledger.Tx, mission, kind, op string, payload any) error {
	b, _ := json.Marshal(payload)
	_, err := t.ExecContext(t.Context(), `INSERT INTO node_outbox (id, mission_id, kind, payload, operation_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (operation_id) DO NOTHING`,
		ledger.NewID("obx_"), mission, kind, string(b), op, store.Stamp(t.Now()))
	if err != nil {
		return fmt.Errorf("node: write an effect: %w", err)
	}
	return nil
}

type effect struct {
	ID, Mission, Kind, Op string
	Payload               struct {
		Step    string `json:"step"`
		Attempt int    `json:"attempt"`
		Why     string `json:"why"`
	}
}

// deliverSoon delivers the outbox now, in the background of the service's life.
func (s *Service) deliverSoon() {
	if s.life.Err() != nil {
		return // closing: the next start's sweep delivers it
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.deliverOutbox(s.life); err != nil && s.life.Err() == nil {
			s.log.Warn("node: deliver mission effects", "err", err)
		}
	}()
}

// sweepOutbox delivers what is left every OutboxSweep until the service closes.
func (s *Service) sweepOutbox() {
	s.every(OutboxSweep, "deliver mission effects", func(ctx context.Context) error {
		err := s.deliverOutbox(ctx)
		s.sweepRuns(ctx)
		return err
	})
}

// deliverOutbox delivers every pending effect, each in its own transaction with its mark.
func (s *Service) deliverOutbox(ctx context.Context) error {
	rows, err := s.cfg.Store.Reader().QueryContext(ctx, `SELECT id, mission_id, kind, payload, operation_id FROM node_outbox
		WHERE delivered_at IS NULL ORDER BY created_at, rowid LIMIT 100`)
	if err != nil {
		return fmt.Errorf("node: read the outbox: %w", err)
	}
	var pending []effect
	for rows.Next() {
		var e effect
		var payload string
		if err := rows.Scan(&e.ID, &e.Mission, &e.Kind, &payload, &e.Op); err != nil {
			rows.Close()
			return err
		}
		_ = json.Unmarshal([]byte(payload), &e.Payload)
		pending = append(pending, e)
	}
	rows.Close()
	for _, e := range pending {
		if sent, err := s.dispatchStep(ctx, e); sent || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
			var delivered *string
			if err := t.QueryRowContext(ctx, "SELECT delivered_at FROM node_outbox WHERE id = ?", e.ID).Scan(&delivered); err != nil || delivered != nil {
				return err
			}
			if err := s.deliverTx(t, e); err != nil {
				return err
			}
			_, err := t.ExecContext(ctx, "UPDATE node_outbox SET delivered_at = ?, tries = tries + 1 WHERE id = ?", store.Stamp(t.Now()), e.ID)
			return err
		})
		if err != nil {
			_ = s.cfg.Writer.Exec(context.WithoutCancel(ctx), func(t *ledger.Tx) error {
				_, err2 := t.ExecContext(t.Context(), "UPDATE node_outbox SET tries = tries + 1, error = ? WHERE id = ?", err.Error(), e.ID)
				return err2
			})
			return err
		}
	}
	if len(pending) > 0 {
		s.wake()
	}
	return nil
}

// deliverTx turns one effect into the turn (or line) it stands for.
func (s *Service) deliverTx(t *ledger.Tx, e effect) error {
	ctx := t.Context()
	m, err := s.missionIn(ctx, t, e.Mission)
	if err != nil {
		return err
	}
	var byOwner bool
	_ = t.QueryRowContext(ctx, "SELECT by_owner FROM node_missions WHERE id = ?", m.ID).Scan(&byOwner)
	switch e.Kind {
	case EffectStartStep:
		st := m.step(e.Payload.Step)
		if st == nil || m.ended() || st.Status != StepWorking || st.Attempt != e.Payload.Attempt {
			return nil // an earlier attempt's start, or a stopped plan: nothing to do
		}
		return s.enqueueTx(t, Turn{NodeID: st.NodeID, RoomID: m.RoomID, Lane: "work:" + m.ID + ":" + st.ID + ":" + st.NodeID,
			Reason: ReasonPlan, ByOwner: byOwner, Depth: 1, OperationID: e.Op, ConversationID: st.ConversationID,
			Note: stepNote(m, st)})
	case EffectReport, EffectJudge:
		return s.enqueueTx(t, Turn{NodeID: m.LeadID, RoomID: m.RoomID, Lane: convLane(m.RoomID, false), Reason: ReasonPlan,
			ByOwner: byOwner, OperationID: e.Op, Note: leadNote(m, e)})
	case EffectAskOwner:
		_, err := s.insertMessageTx(t, Message{RoomID: m.RoomID, Author: AuthorSystem, Kind: KindStatusLn, Private: true,
			Body: fmt.Sprintf("The plan “%s” needs you: %s (step %s). Say how to go on, or stop the plan.", m.Goal, e.Payload.Why, e.Payload.Step)})
		return err
	}
	return fmt.Errorf("node: unknown effect %q.", e.Kind)
}

// stepNote is a step's turn's note: its brief, requirements, the mission's constraints, the
// results before it and how to end.
func stepNote(m Mission, st *MissionStep) string {
	var b strings.Builder
	fmt.Fprintf(&b, "A step of the plan “%s” (step %s, %s, attempt %d).\n\nYour part:\n%s\n", m.Goal, st.ID, st.Kind, st.Attempt, st.Brief)
	if a := st.Attempts[len(st.Attempts)-1]; a.Note != "" {
		fmt.Fprintf(&b, "\n%s\n", a.Note)
	} else if a.Tested != "" {
		fmt.Fprintf(&b, "\nCheck the candidate %s.\n", a.Tested)
	}
	for _, id := range st.RequirementIDs {
		for _, r := range m.Contract.Requirements {
			if r.ID == id {
				fmt.Fprintf(&b, "\nRequirement %s: %s\n", r.ID, r.Text)
				for _, a := range r.Acceptance {
					fmt.Fprintf(&b, "- acceptance %s: %s\n", a.ID, a.Text)
				}
			}
		}
	}
	if c := constraintLines(m.Contract.Constraints); c != "" {
		fmt.Fprintf(&b, "\nConstraints (already applied; do not check them):\n%s", c)
	}
	for _, a := range st.After {
		if p := m.step(a); p != nil && len(p.Attempts) > 0 {
			if r := p.Attempts[len(p.Attempts)-1].Report; r != nil {
				fmt.Fprintf(&b, "\nResult of %s (%s): %s\n", p.ID, p.Outcome, r.Summary)
			}
		}
	}
	b.WriteString("\nEnd with node_step_report (a verify names each check, the criteria it covers and its verdict), or node_step_blocked if you cannot go on.")
	return b.String()
}

func constraintLines(c PlanConstraints) string {
	var b strings.Builder
	for _, kv := range [][2]string{{"computer", c.Computer}, {"folder", c.Folder}, {"repos", strings.Join(c.Repos, ", ")},
		{"branch", c.Branch}, {"publish", c.Publish}, {"environment", c.Environment}, {"agent", c.Agent}, {"model", c.Model},
		{"effort", c.Effort}, {"substitution", c.Substitution}, {"parallel", c.Parallel}, {"notes", c.Notes}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "- %s: %s\n", kv[0], kv[1])
		}
	}
	return b.String()
}

// leadNote is the lead's report or judgement turn: every step's result and the ledger.
func leadNote(m Mission, e effect) string {
	var b strings.Builder
	if e.Kind == EffectJudge {
		fmt.Fprintf(&b, "The plan “%s” needs your judgement: %s Decide how to go on and tell your owner, in one message.\n", m.Goal, e.Payload.Why)
		if m.ended() {
			fmt.Fprintf(&b, "Nothing else can move, so the plan has ended: %s. Report it in that message.\n", m.State)
		}
	} else {
		fmt.Fprintf(&b, "The plan “%s” has ended: %s. Send your owner one report: what was asked, what was done, by whom, what was checked and what is still open.\n", m.Goal, m.State)
	}
	for _, st := range m.Steps {
		fmt.Fprintf(&b, "\n- %s (%s): %s, %s", st.ID, st.Kind, st.Status, st.Outcome)
		if len(st.Attempts) > 0 {
			a := st.Attempts[len(st.Attempts)-1]
			if a.Report != nil {
				fmt.Fprintf(&b, ": %s", a.Report.Summary)
				for _, c := range a.Report.Checks {
					if c.Verdict == "fail" {
						fmt.Fprintf(&b, " [failed check %s: %s]", c.Name, c.Note)
					}
				}
			}
		}
		if len(st.HeldBy) > 0 {
			fmt.Fprintf(&b, " (held by %s)", strings.Join(st.HeldBy, ", "))
		}
	}
	for _, r := range m.Contract.Requirements {
		fmt.Fprintf(&b, "\nRequirement %s: %s", r.ID, m.Ledger[r.ID])
	}
	return b.String()
}

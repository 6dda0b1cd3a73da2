package assistant

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// Proposal statuses.
const (
	proposed  = "proposed"
	applied   = "applied"
	failed    = "failed"
	discarded = "discarded"
)

// holdPolicy is the policy a write of t runs under: "" to run it now, else why it waits. Under
// needs-me every held write waits on Needs me, those that always wait (an agent's assignment, a
// workflow) too: the riskiest writes are the last that should wait where a person on a phone
// never sees them.
func holdPolicy(t *tools.Tool, policy string) string {
	switch {
	case !t.IsWrite:
		return ""
	case policy == NeedsMe:
		return NeedsMe
	case t.AlwaysHold:
		return "always"
	case policy == Preview:
		return policy
	}
	return ""
}

// hold saves a write for Apply instead of running it, and returns what the model is told. input
// is prepared, and the preview is worked out from it now, from the records as they are; Apply
// prepares and checks everything again.
func (s *Service) hold(ctx context.Context, tc *tools.ToolContext, convID string, t *tools.Tool, callID string, input json.RawMessage, policy string) (ToolRow, string, error) {
	preview, err := t.Preview(ctx, tc, input)
	if err != nil {
		return ToolRow{}, "", err
	}
	id := ledger.NewID("prp_")
	var decision string
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		if policy == NeedsMe {
			// Its card is stored with it: a held write never waits where no one is shown it.
			var err error
			if decision, err = s.postNeedsMe(tx, t, preview); err != nil {
				return err
			}
		}
		now := store.Stamp(tx.Now())
		_, err := tx.ExecContext(tx.Context(), `INSERT INTO assistant_proposals
			(id, conversation_id, call_id, tool, input, preview, policy, status, decision_id, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, 'proposed', ?, ?, ?)`,
			id, convID, callID, t.Name, string(input), preview, policy, decision, now, now)
		if err != nil {
			return err
		}
		return saveWorkflow(tx, id, convID, callID, t.Name, input) // a workflow's plan hash and steps
	})
	if err != nil {
		return ToolRow{}, "", fmt.Errorf("assistant: hold %s: %w", t.Name, err)
	}
	row := card(ToolRow{CallID: callID, Name: t.Name, IsWrite: true, Status: "proposed", Summary: preview, Preview: preview, ProposalID: id}, t)
	where := "for the person's Apply in the chat"
	if policy == NeedsMe {
		row.Status = "waiting"
		where = "for the person's answer on Needs me (or Apply in the chat)"
		s.awaitNeedsMe(id, decision)
	}
	return row, heldTold(where, preview), nil
}

// heldTold is what the model is told of a write held where.
func heldTold(where, preview string) string {
	return fmt.Sprintf("Not done yet: this change waits %s: %s Nothing has changed. Tell the person what you proposed; do not call the tool again for it.", where, tools.Sentence(preview))
}

// card marks a held write's row with what its card shows beside the preview: its area, its risk,
// and whether it can be undone once applied. t is nil for a tool no longer registered.
func card(r ToolRow, t *tools.Tool) ToolRow {
	if t != nil {
		r.Area, r.Risk, r.NoUndo = t.Area, t.Risk, t.Undoable == tools.NoUndo
	}
	return r
}

// needsQuestion is the Needs me question for a held write: its preview with its risk, and a
// warning when it cannot be undone, since the person answers there without the chat's card.
func needsQuestion(t *tools.Tool, preview string) string {
	if t == nil {
		return "Apply this change? " + preview
	}
	q := fmt.Sprintf("Apply this %s-risk change? %s", t.Risk, preview)
	if t.Undoable == tools.NoUndo {
		q += " It cannot be undone."
	}
	return q
}

// heldRow is a held write's row as it stands, with its card's marks.
func (s *Service) heldRow(p proposal) ToolRow { return card(p.row(), s.cfg.Tools.Get(p.tool)) }

// proposal is a held write as saved. decision is the Needs me card it waits on too, if any.
type proposal struct {
	id, conv, callID, tool, preview, policy, status, errText, decision string
	input                                                              json.RawMessage
	result                                                             *tools.Result
}

func (p proposal) row() ToolRow {
	r := ToolRow{CallID: p.callID, Name: p.tool, IsWrite: true, ProposalID: p.id, Preview: p.preview, Summary: p.preview}
	switch p.status {
	case applied:
		r.Status = "done"
		if p.result != nil {
			r.Summary, r.Refs, r.Group = p.result.Summary, p.result.Refs, p.result.Group
		}
	case failed:
		r.Status, r.Summary = "error", p.errText
	case discarded:
		r.Status, r.Summary = "discarded", "Discarded: "+p.preview
	default:
		r.Status = "proposed"
		if p.policy == NeedsMe {
			r.Status = "waiting"
		}
	}
	return r
}

const proposalCols = "id, conversation_id, call_id, tool, input, preview, policy, status, error, result, decision_id"

func scanProposals(rows *sql.Rows) ([]proposal, error) {
	defer rows.Close()
	var out []proposal
	for rows.Next() {
		var p proposal
		var input, result string
		if err := rows.Scan(&p.id, &p.conv, &p.callID, &p.tool, &input, &p.preview, &p.policy, &p.status, &p.errText, &result, &p.decision); err != nil {
			return nil, fmt.Errorf("assistant: read proposals: %w", err)
		}
		p.input = json.RawMessage(input)
		if result != "" {
			p.result = new(tools.Result)
			if err := json.Unmarshal([]byte(result), p.result); err != nil {
				return nil, fmt.Errorf("assistant: read proposal %s: %w", p.id, err)
			}
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// proposals reads the proposals named, all of one conversation, or, with no ids, the
// conversation's that wait for Apply.
func (s *Service) proposals(ctx context.Context, convID string, ids []string) ([]proposal, error) {
	db := s.cfg.Store.Reader()
	if len(ids) == 0 {
		rows, err := db.QueryContext(ctx, "SELECT "+proposalCols+" FROM assistant_proposals WHERE conversation_id = ? AND status IN ('proposed', 'failed') ORDER BY created_at, rowid", convID)
		if err != nil {
			return nil, fmt.Errorf("assistant: read proposals: %w", err)
		}
		return scanProposals(rows)
	}
	var out []proposal
	for _, id := range ids {
		rows, err := db.QueryContext(ctx, "SELECT "+proposalCols+" FROM assistant_proposals WHERE id = ?", id)
		if err != nil {
			return nil, fmt.Errorf("assistant: read proposal: %w", err)
		}
		ps, err := scanProposals(rows)
		if err != nil {
			return nil, err
		}
		if len(ps) == 0 || (convID != "" && ps[0].conv != convID) {
			return nil, problem.Invalid("There is no such proposal in this conversation; it may have been deleted with it.")
		}
		convID = ps[0].conv // one Apply, one conversation
		out = append(out, ps...)
	}
	return out, nil
}

// heldConflict is a held write already decided (applied, discarded, or answered on Needs me): Apply
// and Discard return it as it is, without marking the write failed.
type heldConflict struct{ msg string }

func (e *heldConflict) Error() string { return e.msg }

// Kind makes a decided write a conflict: its state no longer takes the action.
func (e *heldConflict) Kind() problem.Kind { return problem.KindConflict }

// ApplyError is an Apply that failed, with the receipts that say why: the calls that landed before
// it (only outside writes run after others landed), the call that failed and the ones not
// attempted. Retry resends only those still waiting or failed.
type ApplyError struct {
	Msg   string
	Tools []ToolRow
}

func (e *ApplyError) Error() string { return e.Msg }

// Apply runs held writes: the ids given, or, with none, every write the conversation holds. It
// checks each again (the tool, its input against the schema, the records as they are now, through
// the tool's own checks) and runs the Hub writes in one transaction with one Undo group, marking
// each applied in that same transaction, so a second Apply, concurrent or after a crash, never
// repeats one. If one fails, none of them lands: it is marked failed with its reason and the rest
// stay waiting. Outside writes (starting an agent run) run afterwards, one at a time, each claiming
// its proposal in the transaction that makes its change; the first that fails stops the rest.
//
// A write that waits on Needs me too is settled there by the same Apply: its card is answered in
// the transaction that makes the change. One answered on Needs me is refused here.
func (s *Service) Apply(ctx context.Context, convID string, ids []string) ([]ToolRow, error) {
	return s.apply(ctx, convID, ids, viaChat)
}

func (s *Service) apply(ctx context.Context, convID string, ids []string, way via) ([]ToolRow, error) {
	ps, err := s.proposals(ctx, convID, ids)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, problem.Invalid("Nothing here waits for Apply.")
	}
	for _, p := range ps {
		if msg := s.decidedElsewhere(ctx, p); msg != "" && way == viaChat {
			return nil, &heldConflict{msg}
		}
		switch p.status {
		case applied:
			return nil, &heldConflict{alreadyApplied(p)}
		case discarded:
			return nil, &heldConflict{wasDiscarded(p)}
		}
	}
	var settled []*needs.Decision // the cards this Apply answered, woken once it commits
	var inside, outside []int
	for i, p := range ps {
		if t := s.cfg.Tools.Get(p.tool); t != nil && t.Outside != nil {
			outside = append(outside, i)
		} else {
			inside = append(inside, i)
		}
	}
	results := make([]*tools.Result, len(ps)) // set once a write landed
	if len(inside) > 0 {
		bad := -1
		landed := make([]tools.Result, len(ps))
		_, err = s.cfg.Records.Batch(ctx, s.toolContext(ctx, ps[0].conv, nil).Actor, "", func(b *records.Batch) error {
			tx := b.Tx()
			var summaries []string
			var answered []*needs.Decision
			for _, i := range inside {
				p := ps[i]
				res, err := s.applyOne(ctx, b, p)
				if err != nil {
					bad = i
					return err
				}
				res.Group = tx.GroupID()
				d, err := markApplied(tx, p, res, way)
				if err != nil {
					bad = i
					return err
				}
				answered = append(answered, d)
				landed[i] = res
				summaries = append(summaries, tools.Clause(res.Summary))
			}
			tx.Describe("%s.", strings.Join(summaries, "; "))
			settled = answered
			return tx.Emit(KindConversation, ps[0].conv, ConversationChange{ID: ps[0].conv, Change: "message"})
		})
		if err != nil {
			return nil, s.applyFailed(ctx, ps, results, bad, err)
		}
		s.wakeSettled(settled)
		for _, i := range inside {
			results[i] = &landed[i]
		}
	}
	for _, i := range outside {
		res, err := s.applyOutside(ctx, ps[i], way)
		if err != nil {
			return nil, s.applyFailed(ctx, ps, results, i, err)
		}
		results[i] = &res
	}
	rows := make([]ToolRow, len(ps))
	for i, p := range ps {
		p.status, p.result = applied, results[i]
		rows[i] = s.heldRow(p)
	}
	return rows, nil
}

// The sentences refusing a held write that was settled before this Apply or Discard.
func alreadyApplied(p proposal) string { return tools.Clause(p.preview) + " was already applied." }
func wasDiscarded(p proposal) string {
	return tools.Clause(p.preview) + " was discarded, so it cannot be applied."
}
func alreadySettled(p proposal) string {
	return tools.Clause(p.preview) + " was already applied or discarded."
}

// markApplied marks p applied with its receipt inside tx, answering its Needs me card when the
// chat applies it, or says it was applied, discarded or answered meanwhile (a second Apply, which
// must then change nothing). It returns the card it answered, to wake once tx commits.
func markApplied(tx *ledger.Tx, p proposal, res tools.Result, way via) (*needs.Decision, error) {
	d, err := settleDecision(tx, p, optionApply, way)
	if err != nil {
		return nil, err
	}
	receipt, _ := json.Marshal(res)
	done, err := tx.ExecContext(tx.Context(), `UPDATE assistant_proposals SET status = 'applied', error = '', result = ?, updated_at = ?
		WHERE id = ? AND status IN ('proposed', 'failed')`, string(receipt), store.Stamp(tx.Now()), p.id)
	if err != nil {
		return nil, fmt.Errorf("assistant: mark %s applied: %w", p.id, err)
	}
	if n, _ := done.RowsAffected(); n == 0 {
		return nil, &heldConflict{alreadySettled(p)}
	}
	return d, workflowApplied(tx, p, res)
}

// heldTool is the tool of a held write, checked again: it still exists and takes the input.
func (s *Service) heldTool(ctx context.Context, p proposal) (*tools.Tool, error) {
	t := s.cfg.Tools.Get(p.tool)
	if t == nil || !t.IsWrite {
		return nil, fmt.Errorf("%s can no longer be applied: the tool %s is gone.", tools.Clause(p.preview), p.tool)
	}
	if err := s.writeAllowed(ctx, t); err != nil {
		return nil, fmt.Errorf("%s can no longer be applied: %s", tools.Clause(p.preview), tools.Sentence(err.Error()))
	}
	if err := t.Validate(p.input); err != nil {
		return nil, fmt.Errorf("%s can no longer be applied: %s", tools.Clause(p.preview), tools.Sentence(err.Error()))
	}
	return t, nil
}

// heldWrite is a held write checked again: its tool still exists and takes the input, and the
// input passes the tool's Prepare against the records as tc reads them now, as it did when held.
func (s *Service) heldWrite(ctx context.Context, tc *tools.ToolContext, p proposal) (*tools.Tool, json.RawMessage, error) {
	t, err := s.heldTool(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	input, err := t.Prepared(ctx, tc, p.input)
	if err != nil {
		return nil, nil, &sentenceError{fmt.Sprintf("%s can no longer be applied: %s", tools.Clause(p.preview), tools.Sentence(err.Error())), err}
	}
	return t, input, nil
}

// applyOne checks one held write again and makes it inside b. Its tool reads through b, so it
// sees what the held writes before it in this Apply changed.
func (s *Service) applyOne(ctx context.Context, b *records.Batch, p proposal) (tools.Result, error) {
	tc := s.toolContext(ctx, p.conv, nil)
	tc.Records = b.Reads()
	t, input, err := s.heldWrite(ctx, tc, p)
	if err != nil {
		return tools.Result{}, err
	}
	if err := checkWorkflowPlan(b.Tx(), p); err != nil {
		return tools.Result{}, err
	}
	return t.Write(ctx, tc, b, input)
}

// applyOutside checks one held outside write again and makes it. The tool claims the proposal in
// the transaction that makes its change (for an assignment, the one that saves the run, before the
// run is queued), so of two Applies at once exactly one changes anything.
func (s *Service) applyOutside(ctx context.Context, p proposal, way via) (tools.Result, error) {
	tc := s.toolContext(ctx, p.conv, nil)
	t, input, err := s.heldWrite(ctx, tc, p)
	if err != nil {
		return tools.Result{}, err
	}
	claimed := false
	var answered *needs.Decision
	res, err := t.Outside(ctx, tc, input, func(tx *ledger.Tx, res tools.Result) error {
		d, err := markApplied(tx, p, res, way)
		if err != nil {
			return err
		}
		claimed, answered = true, d
		return tx.Emit(KindConversation, p.conv, ConversationChange{ID: p.conv, Change: "message"})
	})
	if err == nil && !claimed {
		return tools.Result{}, fmt.Errorf("assistant: %s did not record its Apply", p.tool)
	}
	if err == nil {
		s.wakeSettled([]*needs.Decision{answered})
	}
	return res, err
}

// applyFailed records why an Apply failed and returns the receipts: those in landed applied, the
// one at bad failed, the rest still waiting.
func (s *Service) applyFailed(ctx context.Context, ps []proposal, landed []*tools.Result, bad int, cause error) error {
	var ce *heldConflict
	if errors.As(cause, &ce) || bad < 0 {
		return cause
	}
	msg := cause.Error()
	err := s.cfg.Writer.Exec(context.WithoutCancel(ctx), func(tx *ledger.Tx) error {
		_, err := tx.ExecContext(tx.Context(), "UPDATE assistant_proposals SET status = 'failed', error = ?, updated_at = ? WHERE id = ? AND status IN ('proposed', 'failed')",
			msg, store.Stamp(tx.Now()), ps[bad].id)
		if err != nil {
			return err
		}
		if err := workflowFailed(tx, ps[bad], cause); err != nil {
			return err
		}
		return tx.Emit(KindConversation, ps[0].conv, ConversationChange{ID: ps[0].conv, Change: "message"})
	})
	if err != nil {
		return errors.Join(cause, err)
	}
	rows := make([]ToolRow, len(ps))
	n := 0
	for i, p := range ps {
		if landed[i] != nil {
			p.status, p.result = applied, landed[i]
			n++
		}
		rows[i] = s.heldRow(p)
		if i == bad {
			rows[i].Status, rows[i].Summary = "error", msg
		}
	}
	sentence := msg
	switch {
	case n > 0:
		sentence = fmt.Sprintf("%d of %d changes were applied; then: %s", n, len(ps), msg)
	case len(ps) > 1:
		sentence = fmt.Sprintf("Nothing was applied: %s", msg)
	}
	return &ApplyError{Msg: sentence, Tools: rows}
}

// Discard drops a held write; it can no longer be applied. One that waits on Needs me too has its
// card answered Discard in the same transaction; one answered on Needs me is refused.
func (s *Service) Discard(ctx context.Context, id string) error {
	return s.discard(ctx, id, viaChat)
}

func (s *Service) discard(ctx context.Context, id string, way via) error {
	ps, err := s.proposals(ctx, "", []string{id})
	if err != nil {
		return err
	}
	p := ps[0]
	if msg := s.decidedElsewhere(ctx, p); msg != "" && way == viaChat {
		return &heldConflict{msg}
	}
	var changed int64
	var answered *needs.Decision
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		res, err := tx.ExecContext(tx.Context(), "UPDATE assistant_proposals SET status = 'discarded', updated_at = ? WHERE id = ? AND status IN ('proposed', 'failed')",
			store.Stamp(tx.Now()), id)
		if err != nil {
			return err
		}
		if changed, _ = res.RowsAffected(); changed == 0 {
			return nil
		}
		if answered, err = settleDecision(tx, p, optionDiscard, way); err != nil {
			return err
		}
		return tx.Emit(KindConversation, p.conv, ConversationChange{ID: p.conv, Change: "message"})
	})
	var ce *heldConflict
	switch {
	case errors.As(err, &ce):
		return err
	case err != nil:
		return fmt.Errorf("assistant: discard: %w", err)
	case changed == 0:
		return &heldConflict{alreadySettled(p)}
	}
	s.wakeSettled([]*needs.Decision{answered})
	return nil
}

// proposalRows reads the current state of the conversation's held writes, by proposal id, with
// whether each applied write's group has since been undone.
func (s *Service) proposalRows(ctx context.Context, convID string) (map[string]ToolRow, error) {
	rows, err := s.cfg.Store.Reader().QueryContext(ctx, "SELECT "+proposalCols+" FROM assistant_proposals WHERE conversation_id = ?", convID)
	if err != nil {
		return nil, fmt.Errorf("assistant: read proposals: %w", err)
	}
	ps, err := scanProposals(rows)
	if err != nil {
		return nil, err
	}
	out := make(map[string]ToolRow, len(ps))
	for _, p := range ps {
		out[p.id] = s.heldRow(p)
	}
	return out, nil
}

// Undo reverses a write the assistant made (a receipt's Undo), as the person.
func (s *Service) Undo(ctx context.Context, group string) (ledger.Group, error) {
	return s.cfg.Records.UndoGroup(ctx, ledger.Actor{Kind: ledger.Person}, group)
}

// Redo replays a write the person undid from its receipt.
func (s *Service) Redo(ctx context.Context, group string) (ledger.Group, error) {
	return s.cfg.Records.RedoGroup(ctx, ledger.Actor{Kind: ledger.Person}, group)
}

// undone reports which of the groups are undone now.
func (s *Service) undone(ctx context.Context, groups []string) (map[string]bool, error) {
	return ledger.Undone(ctx, s.cfg.Store.Reader(), groups)
}

// overlay brings the tool rows of saved messages up to date: a held write as it stands now
// (applied, failed, discarded) and a write whose group was undone since.
func (s *Service) overlay(ctx context.Context, convID string, msgs []Message) error {
	held, err := s.proposalRows(ctx, convID)
	if err != nil {
		return err
	}
	var groups []string
	for i := range msgs {
		for j := range msgs[i].Tools {
			t := &msgs[i].Tools[j]
			if r, ok := held[t.ProposalID]; ok && t.ProposalID != "" {
				*t = r
			}
			if t.Group != "" {
				groups = append(groups, t.Group)
			}
		}
	}
	undone, err := s.undone(ctx, groups)
	if err != nil {
		return err
	}
	for i := range msgs {
		for j := range msgs[i].Tools {
			t := &msgs[i].Tools[j]
			t.Undone = t.Group != "" && undone[t.Group]
		}
	}
	return nil
}

// heldNote tells the model how the conversation's held writes stand, since the person may have
// applied or discarded them between messages: "" when there are none.
func (s *Service) heldNote(ctx context.Context, convID string) string {
	rows, err := s.cfg.Store.Reader().QueryContext(ctx, "SELECT "+proposalCols+" FROM assistant_proposals WHERE conversation_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 10", convID)
	if err != nil {
		return ""
	}
	ps, err := scanProposals(rows)
	if err != nil || len(ps) == 0 {
		return ""
	}
	lines := []string{"How the writes you proposed stand now:"}
	for i := len(ps) - 1; i >= 0; i-- {
		p := ps[i]
		state := "still waiting for the person"
		switch p.status {
		case applied:
			state = "applied"
			if p.result != nil {
				state = "applied: " + p.result.Summary
			}
		case failed:
			state = "failed when applied: " + p.errText
		case discarded:
			state = "discarded by the person"
		}
		lines = append(lines, fmt.Sprintf("- %s — %s", p.preview, state))
	}
	return strings.Join(lines, "\n")
}

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
	"github.com/ensemblework/ensemble/runtime/records"
)

// Proposal statuses.
const (
	proposed  = "proposed"
	applied   = "applied"
	failed    = "failed"
	discarded = "discarded"
)

// holdPolicy is the policy a write of t runs under: "" to run it now, else why it waits.
func holdPolicy(t *Tool, policy string) string {
	switch {
	case !t.IsWrite:
		return ""
	case t.AlwaysHold:
		return "always"
	case policy == Preview || policy == NeedsMe:
		return policy
	}
	return ""
}

// hold saves a write for Apply instead of running it, and returns what the model is told. input
// is prepared, and the preview is worked out from it now, from the records as they are; Apply
// prepares and checks everything again.
func (s *Service) hold(ctx context.Context, tc *ToolContext, convID string, t *Tool, callID string, input json.RawMessage, policy string) (ToolRow, string, error) {
	preview, err := t.Preview(ctx, tc, input)
	if err != nil {
		return ToolRow{}, "", err
	}
	id := ledger.NewID("prp_")
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		now := stamp(tx.Now())
		_, err := tx.ExecContext(tx.Context(), `INSERT INTO assistant_proposals
			(id, conversation_id, call_id, tool, input, preview, policy, status, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, 'proposed', ?, ?)`,
			id, convID, callID, t.Name, string(input), preview, policy, now, now)
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
		where = "for the person's answer on Needs me"
		s.askNeedsMe(id, needsQuestion(t, preview))
	}
	told := fmt.Sprintf("Not done yet: this change waits %s (%s). Nothing has changed. Tell the person what you proposed; do not call the tool again for it.", where, preview)
	return row, told, nil
}

// card marks a held write's row with what its card shows beside the preview: its area, its risk,
// and whether it can be undone once applied. t is nil for a tool no longer registered.
func card(r ToolRow, t *Tool) ToolRow {
	if t != nil {
		r.Area, r.Risk, r.NoUndo = t.Area, t.Risk, t.Undoable == NoUndo
	}
	return r
}

// needsQuestion is the Needs me question for a held write: its preview with its risk, and a
// warning when it cannot be undone, since the person answers there without the chat's card.
func needsQuestion(t *Tool, preview string) string {
	if t == nil {
		return "Apply this change? " + preview
	}
	q := fmt.Sprintf("Apply this %s-risk change? %s", t.Risk, preview)
	if t.Undoable == NoUndo {
		q += " It cannot be undone."
	}
	return q
}

// heldRow is a held write's row as it stands, with its card's marks.
func (s *Service) heldRow(p proposal) ToolRow { return card(p.row(), s.cfg.Tools.Get(p.tool)) }

// askNeedsMe puts a held write on Needs me, asking question, and applies or discards it by the
// answer. It waits for as long as the Service runs; a restart asks again (Service.Resume).
func (s *Service) askNeedsMe(id, question string) {
	if s.cfg.Needs == nil {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		q := needs.NewQuestion(needs.Source{Title: "Assistant"}, question, []string{"Apply", "Discard"}, 0, false)
		a, err := s.cfg.Needs.Ask(s.life, q)
		if err != nil {
			return // the runtime stops, or the decision was settled elsewhere
		}
		ctx := context.WithoutCancel(s.life)
		if a.Option == 0 {
			if _, err := s.Apply(ctx, "", []string{id}); err != nil {
				s.cfg.Log.Info("assistant: apply from Needs me", "proposal", id, "err", err)
			}
			return
		}
		if err := s.Discard(ctx, id); err != nil {
			s.cfg.Log.Info("assistant: discard from Needs me", "proposal", id, "err", err)
		}
	}()
}

// Resume asks again, on Needs me, about every write held there when the runtime last stopped (a
// restart expires the old decisions).
func (s *Service) Resume(ctx context.Context) error {
	rows, err := s.cfg.Store.Reader().QueryContext(ctx,
		"SELECT id, tool, preview FROM assistant_proposals WHERE policy = 'needs-me' AND status = 'proposed' ORDER BY created_at")
	if err != nil {
		return fmt.Errorf("assistant: held writes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, tool, preview string
		if err := rows.Scan(&id, &tool, &preview); err != nil {
			return fmt.Errorf("assistant: held writes: %w", err)
		}
		s.askNeedsMe(id, needsQuestion(s.cfg.Tools.Get(tool), preview))
	}
	return rows.Err()
}

// proposal is a held write as saved.
type proposal struct {
	id, conv, callID, tool, preview, policy, status, errText string
	input                                                    json.RawMessage
	result                                                   *Result
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

const proposalCols = "id, conversation_id, call_id, tool, input, preview, policy, status, error, result"

func scanProposals(rows *sql.Rows) ([]proposal, error) {
	defer rows.Close()
	var out []proposal
	for rows.Next() {
		var p proposal
		var input, result string
		if err := rows.Scan(&p.id, &p.conv, &p.callID, &p.tool, &input, &p.preview, &p.policy, &p.status, &p.errText, &result); err != nil {
			return nil, fmt.Errorf("assistant: read proposals: %w", err)
		}
		p.input = json.RawMessage(input)
		if result != "" {
			p.result = new(Result)
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
			return nil, &InputError{"There is no such proposal in this conversation; it may have been deleted with it."}
		}
		convID = ps[0].conv // one Apply, one conversation
		out = append(out, ps...)
	}
	return out, nil
}

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
func (s *Service) Apply(ctx context.Context, convID string, ids []string) ([]ToolRow, error) {
	ps, err := s.proposals(ctx, convID, ids)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, &InputError{"Nothing here waits for Apply."}
	}
	for _, p := range ps {
		switch p.status {
		case applied:
			return nil, &ConflictError{fmt.Sprintf("%s was already applied.", p.preview)}
		case discarded:
			return nil, &ConflictError{fmt.Sprintf("%s was discarded.", p.preview)}
		}
	}
	var inside, outside []int
	for i, p := range ps {
		if t := s.cfg.Tools.Get(p.tool); t != nil && t.Outside != nil {
			outside = append(outside, i)
		} else {
			inside = append(inside, i)
		}
	}
	results := make([]*Result, len(ps)) // set once a write landed
	if len(inside) > 0 {
		bad := -1
		landed := make([]Result, len(ps))
		_, err = s.cfg.Records.Batch(ctx, s.toolContext(ps[0].conv).Actor, "", func(b *records.Batch) error {
			tx := b.Tx()
			var summaries []string
			for _, i := range inside {
				p := ps[i]
				res, err := s.applyOne(ctx, b, p)
				if err != nil {
					bad = i
					return err
				}
				res.Group = tx.GroupID()
				if err := markApplied(tx, p, res); err != nil {
					bad = i
					return err
				}
				landed[i] = res
				summaries = append(summaries, strings.TrimSuffix(res.Summary, "."))
			}
			tx.Describe("%s.", strings.Join(summaries, "; "))
			return tx.Emit(KindConversation, ps[0].conv, ConversationChange{ID: ps[0].conv, Change: "message"})
		})
		if err != nil {
			return nil, s.applyFailed(ctx, ps, results, bad, err)
		}
		for _, i := range inside {
			results[i] = &landed[i]
		}
	}
	for _, i := range outside {
		res, err := s.applyOutside(ctx, ps[i])
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

// markApplied marks p applied with its receipt inside tx, or says it was applied or discarded
// meanwhile (a second Apply, which must then change nothing).
func markApplied(tx *ledger.Tx, p proposal, res Result) error {
	receipt, _ := json.Marshal(res)
	done, err := tx.ExecContext(tx.Context(), `UPDATE assistant_proposals SET status = 'applied', error = '', result = ?, updated_at = ?
		WHERE id = ? AND status IN ('proposed', 'failed')`, string(receipt), stamp(tx.Now()), p.id)
	if err != nil {
		return fmt.Errorf("assistant: mark %s applied: %w", p.id, err)
	}
	if n, _ := done.RowsAffected(); n == 0 {
		return &ConflictError{fmt.Sprintf("%s was already applied or discarded.", p.preview)}
	}
	return workflowApplied(tx, p, res)
}

// heldTool is the tool of a held write, checked again: it still exists and takes the input.
func (s *Service) heldTool(ctx context.Context, p proposal) (*Tool, error) {
	t := s.cfg.Tools.Get(p.tool)
	if t == nil || !t.IsWrite {
		return nil, fmt.Errorf("%s can no longer be applied: the tool %s is gone.", p.preview, p.tool)
	}
	if err := s.writeAllowed(ctx, t); err != nil {
		return nil, fmt.Errorf("%s can no longer be applied: %w", strings.TrimSuffix(p.preview, "."), err)
	}
	if err := t.Validate(p.input); err != nil {
		return nil, fmt.Errorf("%s can no longer be applied: %v.", p.preview, err)
	}
	return t, nil
}

// heldWrite is a held write checked again: its tool still exists and takes the input, and the
// input passes the tool's Prepare against the records as tc reads them now, as it did when held.
func (s *Service) heldWrite(ctx context.Context, tc *ToolContext, p proposal) (*Tool, json.RawMessage, error) {
	t, err := s.heldTool(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	input, err := t.prepared(ctx, tc, p.input)
	if err != nil {
		return nil, nil, fmt.Errorf("%s can no longer be applied: %w", strings.TrimSuffix(p.preview, "."), err)
	}
	return t, input, nil
}

// applyOne checks one held write again and makes it inside b. Its tool reads through b, so it
// sees what the held writes before it in this Apply changed.
func (s *Service) applyOne(ctx context.Context, b *records.Batch, p proposal) (Result, error) {
	tc := s.toolContext(p.conv)
	tc.Records = b.Reads()
	t, input, err := s.heldWrite(ctx, tc, p)
	if err != nil {
		return Result{}, err
	}
	if err := checkWorkflowPlan(b.Tx(), p); err != nil {
		return Result{}, err
	}
	return t.Write(ctx, tc, b, input)
}

// applyOutside checks one held outside write again and makes it. The tool claims the proposal in
// the transaction that makes its change (for an assignment, the one that saves the run, before the
// run is queued), so of two Applies at once exactly one changes anything.
func (s *Service) applyOutside(ctx context.Context, p proposal) (Result, error) {
	tc := s.toolContext(p.conv)
	t, input, err := s.heldWrite(ctx, tc, p)
	if err != nil {
		return Result{}, err
	}
	claimed := false
	res, err := t.Outside(ctx, tc, input, func(tx *ledger.Tx, res Result) error {
		if err := markApplied(tx, p, res); err != nil {
			return err
		}
		claimed = true
		return tx.Emit(KindConversation, p.conv, ConversationChange{ID: p.conv, Change: "message"})
	})
	if err == nil && !claimed {
		return Result{}, fmt.Errorf("assistant: %s did not record its Apply", p.tool)
	}
	return res, err
}

// applyFailed records why an Apply failed and returns the receipts: those in landed applied, the
// one at bad failed, the rest still waiting.
func (s *Service) applyFailed(ctx context.Context, ps []proposal, landed []*Result, bad int, cause error) error {
	var ce *ConflictError
	if errors.As(cause, &ce) || bad < 0 {
		return cause
	}
	msg := cause.Error()
	err := s.cfg.Writer.Exec(context.WithoutCancel(ctx), func(tx *ledger.Tx) error {
		_, err := tx.ExecContext(tx.Context(), "UPDATE assistant_proposals SET status = 'failed', error = ?, updated_at = ? WHERE id = ? AND status IN ('proposed', 'failed')",
			msg, stamp(tx.Now()), ps[bad].id)
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

// Discard drops a held write; it can no longer be applied.
func (s *Service) Discard(ctx context.Context, id string) error {
	ps, err := s.proposals(ctx, "", []string{id})
	if err != nil {
		return err
	}
	var changed int64
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		res, err := tx.ExecContext(tx.Context(), "UPDATE assistant_proposals SET status = 'discarded', updated_at = ? WHERE id = ? AND status IN ('proposed', 'failed')",
			stamp(tx.Now()), id)
		if err != nil {
			return err
		}
		if changed, _ = res.RowsAffected(); changed == 0 {
			return nil
		}
		return tx.Emit(KindConversation, ps[0].conv, ConversationChange{ID: ps[0].conv, Change: "message"})
	})
	if err != nil {
		return fmt.Errorf("assistant: discard: %w", err)
	}
	if changed == 0 {
		return &ConflictError{fmt.Sprintf("%s was already applied or discarded.", ps[0].preview)}
	}
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
	out := map[string]bool{}
	for _, g := range groups {
		var state string
		err := s.cfg.Store.Reader().QueryRowContext(ctx, "SELECT state FROM ledger_groups WHERE id = ?", g).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("assistant: read group %s: %w", g, err)
		}
		out[g] = state == "undone"
	}
	return out, nil
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

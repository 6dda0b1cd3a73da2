package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/problem"
)

// Ref names a row an Undo or Redo changed.
type Ref struct {
	Table string
	ID    string
}

// ConflictError is returned when a row an Undo or Redo would restore has changed since; nothing is
// restored then.
type ConflictError struct {
	Undo      bool
	Summary   string
	Table, ID string
}

// Kind makes a changed row a conflict for the person: the undo cannot be made now.
func (e *ConflictError) Kind() problem.Kind { return problem.KindConflict }

func (e *ConflictError) Error() string {
	verb := "redo"
	if e.Undo {
		verb = "undo"
	}
	return fmt.Sprintf("Cannot %s ‘%s’: a record it touched has changed since.", verb, clause(e.Summary))
}

// Undo reverses the newest write group that is not undone, restoring every row it touched to its
// image before the write. If a row has changed since, nothing is restored and the error says which.
// refresh runs inside the same transaction with the rows restored, to announce them.
func (w *Writer) Undo(ctx context.Context, actor Actor, refresh func(*Tx, []Ref) error) (Group, error) {
	var target Group
	_, err := w.run(ctx, actor, "undo", func(t *Tx) error {
		g, err := t.findGroup(`kind = 'write' AND state = 'done' ORDER BY seq DESC LIMIT 1`)
		if err != nil {
			return err
		}
		if g == nil {
			return nothing("Nothing to undo.")
		}
		if err := t.replay(g, true, refresh); err != nil {
			return err
		}
		target = *g // as the undo left it
		return nil
	})
	return target, err
}

// Redo replays the group undone most recently, provided no new write came after that undo.
func (w *Writer) Redo(ctx context.Context, actor Actor, refresh func(*Tx, []Ref) error) (Group, error) {
	var target Group
	_, err := w.run(ctx, actor, "redo", func(t *Tx) error {
		g, err := t.findGroup(`kind = 'write' AND state = 'undone'
			AND NOT EXISTS (SELECT 1 FROM ledger_groups w WHERE w.kind = 'write' AND w.seq > ledger_groups.undone_seq)
			ORDER BY undone_seq DESC LIMIT 1`)
		if err != nil {
			return err
		}
		if g == nil {
			return nothing("Nothing to redo: no change was undone, or a new change was made since.")
		}
		if err := t.replay(g, false, refresh); err != nil {
			return err
		}
		target = *g // as the redo left it
		return nil
	})
	return target, err
}

// UndoGroup reverses the write group id, whichever is newest: a receipt's Undo. Rows a later write
// changed make it a ConflictError, and nothing is restored.
func (w *Writer) UndoGroup(ctx context.Context, actor Actor, id string, refresh func(*Tx, []Ref) error) (Group, error) {
	return w.replayGroup(ctx, actor, id, true, refresh)
}

// RedoGroup replays the undone write group id, provided its rows are still as the undo left them.
func (w *Writer) RedoGroup(ctx context.Context, actor Actor, id string, refresh func(*Tx, []Ref) error) (Group, error) {
	return w.replayGroup(ctx, actor, id, false, refresh)
}

func (w *Writer) replayGroup(ctx context.Context, actor Actor, id string, undo bool, refresh func(*Tx, []Ref) error) (Group, error) {
	var target Group
	kind, want := "redo", "undone"
	if undo {
		kind, want = "undo", "done"
	}
	_, err := w.run(ctx, actor, kind, func(t *Tx) error {
		g, err := t.findGroup(`kind = 'write' AND id = ?`, id)
		if err != nil {
			return err
		}
		switch {
		case g == nil:
			return nothing("There is no such change.")
		case g.State != want && undo:
			return nothing(fmt.Sprintf("‘%s’ is already undone.", clause(g.Summary)))
		case g.State != want:
			return nothing(fmt.Sprintf("‘%s’ is not undone.", clause(g.Summary)))
		}
		if err := t.replay(g, undo, refresh); err != nil {
			return err
		}
		target = *g // as the undo or redo left it: the reply shows the state after
		return nil
	})
	return target, err
}

// replay restores the group's before images (undo, newest change first) or after images (redo, in
// order), checking that each row is still as the group left it.
func (t *Tx) replay(g *Group, undo bool, refresh func(*Tx, []Ref) error) error {
	changes, err := t.groupChanges(g.ID)
	if err != nil {
		return err
	}
	verb := "Redid"
	if undo {
		verb = "Undid"
		for i, j := 0, len(changes)-1; i < j; i, j = i+1, j-1 {
			changes[i], changes[j] = changes[j], changes[i]
		}
	}
	refs := make([]Ref, 0, len(changes))
	seen := map[Ref]bool{}
	for _, c := range changes {
		expect, want := c.After, c.Before
		if !undo {
			expect, want = c.Before, c.After
		}
		cur, err := t.Get(c.Table, c.ID)
		if err != nil {
			return err
		}
		if cur.json() != expect.json() {
			return &ConflictError{Undo: undo, Summary: g.Summary, Table: c.Table, ID: c.ID}
		}
		if err := t.restore(c.Table, c.ID, cur, want); err != nil {
			return err
		}
		if r := (Ref{c.Table, c.ID}); !seen[r] {
			seen[r] = true
			refs = append(refs, r)
		}
	}
	t.Describe("%s: %s", verb, g.Summary)
	t.target = g.ID
	state, undoneSeq := "done", any(nil)
	if undo {
		state = "undone"
		if err := t.tx.QueryRowContext(t.ctx, "SELECT coalesce(max(seq), 0) + 1 FROM ledger_groups").Scan(&undoneSeq); err != nil {
			return fmt.Errorf("ledger: next seq: %w", err)
		}
	}
	if _, err := t.tx.ExecContext(t.ctx, "UPDATE ledger_groups SET state = ?, undone_seq = ? WHERE id = ?", state, undoneSeq, g.ID); err != nil {
		return fmt.Errorf("ledger: mark %s: %w", g.ID, err)
	}
	g.State = state
	if refresh != nil {
		return refresh(t, refs)
	}
	return nil
}

// restore makes the row with id equal to want (nil: absent), recording the change.
func (t *Tx) restore(table, id string, cur, want Row) error {
	switch {
	case want == nil:
		_, err := t.Delete(table, id)
		return err
	case cur == nil:
		return t.Insert(table, want)
	default:
		_, err := t.Update(table, id, want)
		return err
	}
}

func (t *Tx) findGroup(where string, args ...any) (*Group, error) {
	gs, err := queryGroups(t.ctx, t.tx, "SELECT "+groupCols+" FROM ledger_groups WHERE "+where, args...)
	if err != nil || len(gs) == 0 {
		return nil, err
	}
	return &gs[0], nil
}

func (t *Tx) groupChanges(id string) ([]Change, error) {
	rows, err := t.tx.QueryContext(t.ctx, "SELECT tbl, row_id, before, after FROM ledger_changes WHERE group_id = ? ORDER BY n", id)
	if err != nil {
		return nil, fmt.Errorf("ledger: read changes of %s: %w", id, err)
	}
	defer rows.Close()
	var out []Change
	for rows.Next() {
		var c Change
		var before, after sql.NullString
		if err := rows.Scan(&c.Table, &c.ID, &before, &after); err != nil {
			return nil, fmt.Errorf("ledger: read changes of %s: %w", id, err)
		}
		if c.Before, err = decodeRow(before); err != nil {
			return nil, err
		}
		if c.After, err = decodeRow(after); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// clause is a group's summary (a sentence, "Added 1 task: “Draft brief”.") made to sit inside
// another sentence: without the punctuation it ends with, so the two do not double it.
func clause(s string) string {
	return strings.TrimRight(strings.TrimSpace(s), ".!?;:, ")
}

package computer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// How long an answer is kept.
const (
	KeepOnce    = "once"    // this call only: never stored
	KeepMission = "mission" // the plan the turn works for, else its conversation
	KeepAlways  = "always"
)

// Answers keeps the owner's answers to computer cards in SQLite.
type Answers struct {
	Store  *store.Store
	Writer *ledger.Writer
}

// Keep stores the owner's answer for scopes, for mission or always.
func (a Answers) Keep(ctx context.Context, nodeID, mission, keep string, scopes []Scope) error {
	switch {
	case keep == KeepOnce:
		return nil
	case keep == KeepMission && mission == "":
		return errors.New("computer: an answer for this mission names no mission")
	case keep != KeepMission && keep != KeepAlways:
		return fmt.Errorf("computer: an answer is kept once, for the mission or always, not %q", keep)
	}
	if keep == KeepAlways {
		mission = ""
	}
	return a.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		for _, s := range scopes {
			_, err := tx.ExecContext(ctx, `INSERT INTO computer_answers (id, node_id, scope_kind, scope, keep, mission, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
				ledger.NewID("cka_"), nodeID, s.Kind, s.Value, keep, mission, store.Stamp(tx.Now()))
			if err != nil {
				return fmt.Errorf("computer: keep an answer: %w", err)
			}
		}
		return nil
	})
}

// Kept are the answers that hold for the node now: its Always ones and this mission's.
func (a Answers) Kept(ctx context.Context, nodeID, mission string) ([]Scope, error) {
	rows, err := a.Store.Reader().QueryContext(ctx, `SELECT scope_kind, scope FROM computer_answers
		WHERE node_id = ? AND (keep = 'always' OR (keep = 'mission' AND mission = ? AND mission != '')) ORDER BY created_at`, nodeID, mission)
	if err != nil {
		return nil, fmt.Errorf("computer: read kept answers: %w", err)
	}
	defer rows.Close()
	var out []Scope
	for rows.Next() {
		var s Scope
		if err := rows.Scan(&s.Kind, &s.Value); err != nil {
			return nil, fmt.Errorf("computer: read kept answers: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Forget drops a node's kept answers (the node was deleted), or one mission's (it ended).
func (a Answers) Forget(ctx context.Context, nodeID, mission string) error {
	return a.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		q, args := "DELETE FROM computer_answers WHERE node_id = ?", []any{nodeID}
		if mission != "" {
			q, args = "DELETE FROM computer_answers WHERE keep = 'mission' AND mission = ?", []any{mission}
		}
		_, err := tx.ExecContext(ctx, q, args...)
		return err
	})
}

// Answer is one answer kept for a node.
type Answer struct {
	ID        string    `json:"id"`
	NodeID    string    `json:"nodeId"`
	Scope     Scope     `json:"scope"`
	Keep      string    `json:"keep"` // mission or always
	Mission   string    `json:"mission,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// List is every answer kept for the node, newest first.
func (a Answers) List(ctx context.Context, nodeID string) ([]Answer, error) {
	rows, err := a.Store.Reader().QueryContext(ctx, `SELECT id, node_id, scope_kind, scope, keep, mission, created_at FROM computer_answers
		WHERE node_id = ? ORDER BY created_at DESC, id`, nodeID)
	if err != nil {
		return nil, fmt.Errorf("computer: list kept answers: %w", err)
	}
	defer rows.Close()
	out := []Answer{}
	for rows.Next() {
		var v Answer
		var at string
		if err := rows.Scan(&v.ID, &v.NodeID, &v.Scope.Kind, &v.Scope.Value, &v.Keep, &v.Mission, &at); err != nil {
			return nil, fmt.Errorf("computer: list kept answers: %w", err)
		}
		v.CreatedAt, _ = store.ParseTime(at)
		out = append(out, v)
	}
	return out, rows.Err()
}

// ErrNoAnswer is a kept answer that is not there.
var ErrNoAnswer = errors.New("computer: no such kept answer")

// Revoke drops one of the node's kept answers: its next call there asks again.
func (a Answers) Revoke(ctx context.Context, nodeID, id string) error {
	return a.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM computer_answers WHERE id = ? AND node_id = ?", id, nodeID)
		if err != nil {
			return fmt.Errorf("computer: revoke a kept answer: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNoAnswer
		}
		return nil
	})
}

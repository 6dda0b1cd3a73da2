package needs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// columns are the decisions table's columns in the order scan reads them.
const columns = `id, kind, run_id, title, question, call, touches, reason, options, recommended, why, free_text,
	created_at, status, answer_option, answer_text, answered_by, answered_at, closed_at, sign_in`

func insert(t *ledger.Tx, d Decision) error {
	touches, err := json.Marshal(d.Touches)
	if err != nil {
		return fmt.Errorf("needs: encode touches: %w", err)
	}
	options, err := json.Marshal(d.Options)
	if err != nil {
		return fmt.Errorf("needs: encode options: %w", err)
	}
	signIn := ""
	if d.SignIn != nil {
		b, _ := json.Marshal(d.SignIn)
		signIn = string(b)
	}
	_, err = t.ExecContext(t.Context(), `INSERT INTO decisions
		(id, kind, run_id, title, question, call, touches, reason, options, recommended, why, free_text, created_at, status, sign_in)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?)`,
		d.ID, string(d.Kind), d.Source.RunID, d.Source.Title, d.Question, d.Call, string(touches), d.Reason,
		string(options), d.Recommended, d.Why, d.FreeText, store.Stamp(d.Created), signIn)
	if err != nil {
		return fmt.Errorf("needs: save decision: %w", err)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

func scan(r scanner) (Decision, error) {
	var (
		d                              Decision
		kind, status, touches, options string
		signIn                         string
		created                        string
		option                         sql.NullInt64
		text, by, answeredAt, closedAt sql.NullString
	)
	err := r.Scan(&d.ID, &kind, &d.Source.RunID, &d.Source.Title, &d.Question, &d.Call, &touches, &d.Reason,
		&options, &d.Recommended, &d.Why, &d.FreeText, &created, &status, &option, &text, &by, &answeredAt, &closedAt, &signIn)
	if err != nil {
		return d, err
	}
	d.Kind, d.Status, d.Created = Kind(kind), Status(status), store.ReadTime(created)
	d.recommendSet = true
	if err := json.Unmarshal([]byte(touches), &d.Touches); err != nil {
		return d, fmt.Errorf("needs: decision %s: touches: %w", d.ID, err)
	}
	if err := json.Unmarshal([]byte(options), &d.Options); err != nil {
		return d, fmt.Errorf("needs: decision %s: options: %w", d.ID, err)
	}
	if signIn != "" {
		d.SignIn = new(SignIn)
		if err := json.Unmarshal([]byte(signIn), d.SignIn); err != nil {
			return d, fmt.Errorf("needs: decision %s: sign-in: %w", d.ID, err)
		}
	}
	if option.Valid {
		d.Answer = &Answer{Option: int(option.Int64), Text: text.String}
	}
	d.AnsweredBy = by.String
	if answeredAt.Valid {
		t := store.ReadTime(answeredAt.String)
		d.AnsweredAt = &t
	}
	if closedAt.Valid {
		t := store.ReadTime(closedAt.String)
		d.ClosedAt = &t
	}
	return d, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func get(ctx context.Context, q querier, id string) (Decision, error) {
	d, err := scan(q.QueryRowContext(ctx, "SELECT "+columns+" FROM decisions WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Decision{}, notFound(id)
	}
	if err != nil {
		return Decision{}, fmt.Errorf("needs: read %s: %w", id, err)
	}
	return d, nil
}

func getTx(t *ledger.Tx, id string) (Decision, error) { return get(t.Context(), t, id) }

// Package events is the runtime's live stream: every change appends an event to SQLite in the
// transaction that made it, and once that transaction commits the event is published to the
// subscribers in memory (the SSE clients).
//
// # Ordering
//
// Events are numbered by seq, the row id of the events table. Callers publish in commit order (the
// ledger holds its write lock from BEGIN until Publish returns), so subscribers see seq increasing.
// A client that missed events (it was offline, or it was dropped for falling behind) reads them back
// with [Since] and then follows the live stream, skipping what it already has by seq.
//
// # Kinds
//
// Each event's [Kind] is a constant declared in the package that emits it, beside the payload type
// its data holds, and listed in that package's EventSpecs ([Spec]); the UI's list of kinds is
// generated from those lists ([TypeScript]). A kind's family (the part before its dot) is what a
// [Filter] selects by, so one stream serves every view: the board asks for the families it shows,
// a run's trace for family "run" and the run as subject.
package events

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/ensemblework/ensemble/runtime/store"
	"time"
)

// Event is one entry of the stream. Data is the JSON of a typed payload chosen by the package that
// emits Kind (for example records.Task for "task.updated"), declared beside the Kind constant.
type Event struct {
	Seq     int64           `json:"seq"`
	At      time.Time       `json:"at"`
	Kind    Kind            `json:"kind"`
	Subject string          `json:"subject,omitempty"`
	Data    json.RawMessage `json:"data"`
}

// Execer is what Append needs: a *sql.Tx in practice.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Append records an event in the caller's transaction and returns it with its seq. It is not
// published: the caller does that after the transaction commits.
func Append(ctx context.Context, tx Execer, at time.Time, kind Kind, subject string, data any) (Event, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("events: encode %s: %w", kind, err)
	}
	at = at.UTC()
	res, err := tx.ExecContext(ctx, "INSERT INTO events (at, kind, subject, data) VALUES (?, ?, ?, ?)",
		store.Stamp(at), string(kind), subject, string(raw))
	if err != nil {
		return Event{}, fmt.Errorf("events: append %s: %w", kind, err)
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return Event{}, fmt.Errorf("events: append %s: %w", kind, err)
	}
	return Event{Seq: seq, At: at, Kind: kind, Subject: subject, Data: raw}, nil
}

// Querier is what the readers need: a *sql.DB or *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Since returns up to limit events with seq greater than after, oldest first.
func Since(ctx context.Context, db Querier, after int64, limit int) ([]Event, error) {
	return Select(ctx, db, Filter{}, after, limit)
}

func scan(rows *sql.Rows, after int64) ([]Event, error) {
	defer rows.Close()
	var evs []Event
	for rows.Next() {
		var ev Event
		var at, data string
		if err := rows.Scan(&ev.Seq, &at, &ev.Kind, &ev.Subject, &data); err != nil {
			return nil, err
		}
		ev.At, _ = store.ParseTime(at)
		ev.Data = json.RawMessage(data)
		evs = append(evs, ev)
	}
	return evs, rows.Err()
}

// Last returns the seq of the newest event, 0 when there is none.
func Last(ctx context.Context, db Querier) (int64, error) {
	var seq int64
	if err := db.QueryRowContext(ctx, "SELECT coalesce(max(seq), 0) FROM events").Scan(&seq); err != nil {
		return 0, fmt.Errorf("events: last seq: %w", err)
	}
	return seq, nil
}

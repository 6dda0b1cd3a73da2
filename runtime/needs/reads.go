package needs

import (
	"context"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/events"
)

// What other packages read of Needs me, so that only this package names the decisions table. The
// functions take a reader or a transaction.

// WaitingRuns lists the runs with an open question or permission.
func WaitingRuns(ctx context.Context, q events.Querier) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT run_id FROM decisions WHERE status = 'open' AND run_id != ''`)
	if err != nil {
		return nil, fmt.Errorf("needs: read waiting runs: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("needs: read waiting runs: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// OpenDecisions lists up to limit open decisions, oldest first.
func OpenDecisions(ctx context.Context, q events.Querier, limit int) ([]Decision, error) {
	out, err := decisions(ctx, q, "SELECT "+columns+` FROM decisions WHERE status = 'open' ORDER BY created_at, rowid LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("needs: read open decisions: %w", err)
	}
	return out, nil
}

// decisions runs a query of columns and scans each row; never nil.
func decisions(ctx context.Context, q events.Querier, query string, args ...any) ([]Decision, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Decision{}
	for rows.Next() {
		d, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// CountOpen counts the open decisions.
func CountOpen(ctx context.Context, q events.Querier) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM decisions WHERE status = 'open'").Scan(&n); err != nil {
		return 0, fmt.Errorf("needs: count open decisions: %w", err)
	}
	return n, nil
}

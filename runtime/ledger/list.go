package ledger

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/store"
)

const groupCols = `id, seq, kind, coalesce(target, ''), actor_kind, actor_id, actor_name, summary, at, state,
	(SELECT count(*) FROM ledger_changes c WHERE c.group_id = ledger_groups.id)`

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// List returns up to limit groups older than before (0: the newest), newest first.
func List(ctx context.Context, db events.Querier, before int64, limit int) ([]Group, error) {
	if before <= 0 {
		before = 1 << 62
	}
	return queryGroups(ctx, db, "SELECT "+groupCols+" FROM ledger_groups WHERE seq < ? ORDER BY seq DESC LIMIT ?", before, limit)
}

func queryGroups(ctx context.Context, db querier, q string, args ...any) ([]Group, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("ledger: read groups: %w", err)
	}
	defer rows.Close()
	var out []Group
	for rows.Next() {
		var g Group
		var at string
		if err := rows.Scan(&g.ID, &g.Seq, &g.Kind, &g.Target, &g.Actor.Kind, &g.Actor.ID, &g.Actor.Name,
			&g.Summary, &at, &g.State, &g.Changes); err != nil {
			return nil, fmt.Errorf("ledger: read groups: %w", err)
		}
		g.At, _ = store.ParseTime(at)
		out = append(out, g)
	}
	return out, rows.Err()
}

package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/events"
)

// Undone reports, for each of the groups that exists, whether it is undone now: a package that
// keeps a group's id with its own rows (the assistant's held writes) asks here, so only the ledger
// names its tables.
func Undone(ctx context.Context, q events.Querier, groups []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, g := range groups {
		var state string
		err := q.QueryRowContext(ctx, "SELECT state FROM ledger_groups WHERE id = ?", g).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("ledger: read group %s: %w", g, err)
		}
		out[g] = state == "undone"
	}
	return out, nil
}

package node

import (
	"context"
	"fmt"
)

// queryAll runs a query and scans every row with scan; what names the rows in its error ("read
// turns"). The list is never nil, so an empty one is [] in JSON.
func queryAll[T any](ctx context.Context, db querier, what, query string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("node: %s: %w", what, err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("node: %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("node: %s: %w", what, err)
	}
	return out, nil
}

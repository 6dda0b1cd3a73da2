package records

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// What other packages read of the records, so that only this package names their tables: the
// functions take a reader or a transaction (events.Querier), so a caller reads inside its own
// write when it must.

// TaskHead is a task as another package reads it to match work to it (runtime/sessions): its
// words, project and state, the page cut to its first part.
type TaskHead struct {
	ID, Title, Status string
	// LabelsJSON is the labels as stored, a JSON list: the words a matcher counts.
	LabelsJSON string
	Page       string // the page's first characters, as many as asked for
	ProjectID  *string
	UpdatedAt  time.Time
	DeletedAt  *time.Time // in Trash since; nil when not
}

const headColumns = `id, title, status, labels, substr(page, 1, ?), project_id, updated_at, deleted_at`

// TaskHeads reads the tasks with the ids, in Trash or not, each page cut to pageChars characters
// (the whole page when pageChars is 0 or less). A task that does not exist is left out.
func TaskHeads(ctx context.Context, q events.Querier, ids []string, pageChars int) ([]TaskHead, error) {
	list, _ := json.Marshal(ids)
	return taskHeads(ctx, q, `SELECT `+headColumns+` FROM tasks WHERE id IN (SELECT value FROM json_each(?))`,
		pageLimit(pageChars), string(list))
}

// RecentTaskHeads reads up to limit tasks not in Trash, the most recently changed first, each page
// cut to pageChars characters.
func RecentTaskHeads(ctx context.Context, q events.Querier, pageChars, limit int) ([]TaskHead, error) {
	return taskHeads(ctx, q, `SELECT `+headColumns+` FROM tasks WHERE deleted_at IS NULL
		ORDER BY updated_at DESC LIMIT ?`, pageLimit(pageChars), limit)
}

func pageLimit(n int) int {
	if n <= 0 {
		return math.MaxInt32 // the whole page (a negative length would count backwards)
	}
	return n
}

func taskHeads(ctx context.Context, q events.Querier, query string, args ...any) ([]TaskHead, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("records: read tasks: %w", err)
	}
	defer rows.Close()
	var out []TaskHead
	for rows.Next() {
		var t TaskHead
		var updated string
		var deleted sql.NullString
		if err := rows.Scan(&t.ID, &t.Title, &t.Status, &t.LabelsJSON, &t.Page, &t.ProjectID, &updated, &deleted); err != nil {
			return nil, fmt.Errorf("records: read tasks: %w", err)
		}
		t.UpdatedAt = store.ReadTime(updated)
		if deleted.Valid {
			d := store.ReadTime(deleted.String)
			t.DeletedAt = &d
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("records: read tasks: %w", err)
	}
	return out, nil
}

// SpaceName is the name of the space with the id.
func (s *Service) SpaceName(ctx context.Context, id string) (string, error) {
	var name string
	if err := s.db.QueryRowContext(ctx, "SELECT name FROM spaces WHERE id = ?", id).Scan(&name); err != nil {
		return "", fmt.Errorf("records: read space %s: %w", id, err)
	}
	return name, nil
}

// Ledger is the writer the records write through, for a package that keeps tables of its own
// beside them (the API's paired phones): every write goes through the one ledger.
func (s *Service) Ledger() *ledger.Writer { return s.w }

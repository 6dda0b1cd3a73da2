package records

import (
	"context"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// trashable is what Trash needs of a kind without knowing its types.
type trashable interface {
	announcer
	restoreAny(b *Batch, id string) (any, error)
	purge(b *Batch, id string) error
}

func (k *kind[T, In]) restoreAny(b *Batch, id string) (any, error) { return k.restore(b, id) }

// kindsByTable finds a kind from a ledger row's table, for Undo and Trash.
var kindsByTable = map[string]trashable{
	"tasks": taskKind, "projects": projectKind, "people": personKind, "repos": repoKind, "pages": pageKind,
	"files": fileKind,
}

// kindsByEvent finds a kind from the name used in routes and events ("task", "repo").
var kindsByEvent = map[string]trashable{
	"task": taskKind, "project": projectKind, "person": personKind, "repo": repoKind, "page": pageKind,
	"file": fileKind,
}

// TrashItem is one record in Trash.
type TrashItem struct {
	Kind      string `json:"kind"` // task, project, person, repo, page
	ID        string `json:"id"`
	Title     string `json:"title"`
	DeletedAt string `json:"deletedAt"`
}

// Trash lists what is in Trash, most recently deleted first.
func (s *Service) Trash(ctx context.Context) ([]TrashItem, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT 'task', id, title, deleted_at FROM tasks WHERE space_id = ?1 AND deleted_at IS NOT NULL
		UNION ALL SELECT 'project', id, name, deleted_at FROM projects WHERE space_id = ?1 AND deleted_at IS NOT NULL
		UNION ALL SELECT 'person', id, name, deleted_at FROM people WHERE space_id = ?1 AND deleted_at IS NOT NULL
		UNION ALL SELECT 'repo', id, name, deleted_at FROM repos WHERE space_id = ?1 AND deleted_at IS NOT NULL
		UNION ALL SELECT 'page', id, title, deleted_at FROM pages WHERE space_id = ?1 AND deleted_at IS NOT NULL
		ORDER BY 4 DESC`, s.space)
	if err != nil {
		return nil, fmt.Errorf("records: read Trash: %w", err)
	}
	defer rows.Close()
	items := []TrashItem{}
	for rows.Next() {
		var it TrashItem
		if err := rows.Scan(&it.Kind, &it.ID, &it.Title, &it.DeletedAt); err != nil {
			return nil, fmt.Errorf("records: read Trash: %w", err)
		}
		items = append(items, it)
	}
	return items, rows.Err()
}

func trashKind(name string) (trashable, error) {
	k, ok := kindsByEvent[name]
	if !ok {
		return nil, problem.Invalid("%q is not a kind of record; Trash holds task, project, person, repo and page.", name)
	}
	return k, nil
}

// Restore takes a record out of Trash and returns it.
func (s *Service) Restore(ctx context.Context, actor ledger.Actor, kindName, id string) (any, error) {
	k, err := trashKind(kindName)
	if err != nil {
		return nil, err
	}
	return do(ctx, s, actor, func(b *Batch) (any, error) { return k.restoreAny(b, id) })
}

// Purge deletes a record in Trash for good, first clearing the links other records have to it. It
// is recorded like any write, so Undo brings the record and its links back.
func (s *Service) Purge(ctx context.Context, actor ledger.Actor, kindName, id string) error {
	k, err := trashKind(kindName)
	if err != nil {
		return err
	}
	_, err = do(ctx, s, actor, func(b *Batch) (struct{}, error) { return struct{}{}, k.purge(b, id) })
	return err
}

// The links each kind clears before it is deleted for good. They are set here rather than in the
// kinds' literals because they refer back to other kinds, which Go's initialisation order forbids.
func init() {
	projectKind.unlink = func(b *Batch, id string) error { return clearRefs(b, "tasks", "project_id", id) }
	repoKind.unlink = func(b *Batch, id string) error { return clearRefs(b, "tasks", "repo_id", id) }
	pageKind.unlink = func(b *Batch, id string) error { return clearRefs(b, "pages", "parent_id", id) }
	personKind.unlink = func(b *Batch, id string) error {
		if err := clearRefs(b, "tasks", "owner_id", id); err != nil {
			return err
		}
		return dropFromPeople(b, id)
	}
}

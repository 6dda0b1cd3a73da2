package records

import (
	"context"

	"github.com/ensemblework/ensemble/runtime/ledger"
)

// Collection reads and writes the records of one kind. Each write is its own Undo group; the
// methods ending in In make the write as part of a [Batch].
type Collection[T, In any] struct {
	s *Service
	k *kind[T, In]
}

// Tasks is the person's tasks.
func (s *Service) Tasks() Collection[Task, TaskInput] {
	return Collection[Task, TaskInput]{s, taskKind}
}

// Projects is the person's projects.
func (s *Service) Projects() Collection[Project, ProjectInput] {
	return Collection[Project, ProjectInput]{s, projectKind}
}

// People is the people the person works with.
func (s *Service) People() Collection[Person, PersonInput] {
	return Collection[Person, PersonInput]{s, personKind}
}

// Repos is the person's repositories.
func (s *Service) Repos() Collection[Repo, RepoInput] {
	return Collection[Repo, RepoInput]{s, repoKind}
}

// Pages is the person's standalone pages.
func (s *Service) Pages() Collection[Page, PageInput] {
	return Collection[Page, PageInput]{s, pageKind}
}

// Name is the kind as a person reads it ("task").
func (c Collection[T, In]) Name() string { return c.k.name }

// List returns the records not in Trash.
func (c Collection[T, In]) List(ctx context.Context) ([]T, error) {
	return c.k.query(ctx, c.s.db, "space_id = ? AND deleted_at IS NULL ORDER BY "+c.k.order, c.s.space)
}

// Get returns one record, also from Trash.
func (c Collection[T, In]) Get(ctx context.Context, id string) (T, error) {
	return c.k.get(ctx, c.s.db, c.s.space, id, true)
}

// Create adds a record.
func (c Collection[T, In]) Create(ctx context.Context, actor ledger.Actor, in In) (T, error) {
	return do(ctx, c.s, actor, func(b *Batch) (T, error) { return c.CreateIn(b, in) })
}

// Update changes the fields in set.
func (c Collection[T, In]) Update(ctx context.Context, actor ledger.Actor, id string, in In) (T, error) {
	return do(ctx, c.s, actor, func(b *Batch) (T, error) { return c.UpdateIn(b, id, in) })
}

// Trash moves a record to Trash.
func (c Collection[T, In]) Trash(ctx context.Context, actor ledger.Actor, id string) (T, error) {
	return do(ctx, c.s, actor, func(b *Batch) (T, error) { return c.k.trash(b, id) })
}

// CreateIn adds a record as part of b.
func (c Collection[T, In]) CreateIn(b *Batch, in In) (T, error) {
	row, err := c.k.row(b, in, nil)
	if err != nil {
		var zero T
		return zero, err
	}
	return c.k.create(b, row)
}

// UpdateIn changes a record as part of b.
func (c Collection[T, In]) UpdateIn(b *Batch, id string, in In) (T, error) {
	cur, err := c.k.live(b, id)
	if err != nil {
		var zero T
		return zero, err
	}
	rec := c.k.decode(cur)
	row, err := c.k.row(b, in, &rec)
	if err != nil {
		var zero T
		return zero, err
	}
	return c.k.update(b, id, row)
}

// TrashIn moves a record to Trash as part of b.
func (c Collection[T, In]) TrashIn(b *Batch, id string) (T, error) { return c.k.trash(b, id) }

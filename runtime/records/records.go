// Package records holds the person's records: the personal space and its projects, tasks, pages,
// people and repositories, with Trash. Every write goes through the ledger, so it is recorded with
// its actor, announced as an event, and can be undone.
package records

import (
	"context"
	"errors"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// PersonalSpace is the id of the space every record lives in for now; the data model keeps space
// ids so that more spaces can come.
const PersonalSpace = "spc_personal"

// Service reads and writes records.
type Service struct {
	db    events.Querier // reads: the reader pool, or a batch's own transaction (Batch.Reads)
	w     *ledger.Writer // nil in a batch's read view
	space string
}

// New returns a Service over st, writing through w.
func New(st *store.Store, w *ledger.Writer) *Service {
	return &Service{db: st.Reader(), w: w, space: PersonalSpace}
}

// notFound says a record does not exist (or is in Trash where that matters).
func notFound(kind, id string) error {
	return problem.NotFound("There is no %s with id %q.", kind, id)
}

// IsNotFound reports whether err says a record (or anything else) does not exist.
func IsNotFound(err error) bool { return problem.Is(err, problem.KindNotFound) }

// errReadView is a write tried through a batch's read view: it must go through the batch, since a
// second transaction would wait for the batch's own forever.
var errReadView = errors.New("records: a batch's read view cannot write; write through the batch")

// Reads is the Service reading inside b's transaction, so a later write of the batch sees what an
// earlier one made (a workflow's steps refer to records made before them). It cannot write.
func (b *Batch) Reads() *Service {
	return &Service{db: b.t, space: b.s.space}
}

// Batch makes several writes in one transaction, recorded as one Undo group.
type Batch struct {
	s *Service
	t *ledger.Tx
}

// Batch runs fn in one write transaction by actor. summary describes the whole; if fn returns an
// error nothing is written.
func (s *Service) Batch(ctx context.Context, actor ledger.Actor, summary string, fn func(*Batch) error) (ledger.Group, error) {
	if s.w == nil {
		return ledger.Group{}, errReadView
	}
	return s.w.Do(ctx, actor, func(t *ledger.Tx) error {
		if err := fn(&Batch{s: s, t: t}); err != nil {
			return err
		}
		if summary != "" { // else fn described it
			t.Describe("%s", summary)
		}
		return nil
	})
}

// do runs one write as its own group, returning what fn made.
func do[T any](ctx context.Context, s *Service, actor ledger.Actor, fn func(*Batch) (T, error)) (T, error) {
	var out T
	if s.w == nil {
		return out, errReadView
	}
	_, err := s.w.Do(ctx, actor, func(t *ledger.Tx) error {
		var err error
		out, err = fn(&Batch{s: s, t: t})
		return err
	})
	return out, err
}

// Undo reverses the newest write and announces every record it restored.
func (s *Service) Undo(ctx context.Context, actor ledger.Actor) (ledger.Group, error) {
	return s.w.Undo(ctx, actor, s.announce)
}

// Redo replays the newest undone write.
func (s *Service) Redo(ctx context.Context, actor ledger.Actor) (ledger.Group, error) {
	return s.w.Redo(ctx, actor, s.announce)
}

// UndoGroup reverses one write group, newest or not (a receipt's Undo).
func (s *Service) UndoGroup(ctx context.Context, actor ledger.Actor, id string) (ledger.Group, error) {
	return s.w.UndoGroup(ctx, actor, id, s.announce)
}

// RedoGroup replays one undone write group.
func (s *Service) RedoGroup(ctx context.Context, actor ledger.Actor, id string) (ledger.Group, error) {
	return s.w.RedoGroup(ctx, actor, id, s.announce)
}

// announce emits, for each row an undo or redo touched, the event a client needs to show it as it
// now is.
func (s *Service) announce(t *ledger.Tx, refs []ledger.Ref) error {
	for _, r := range refs {
		k, ok := kindsByTable[r.Table]
		if !ok {
			continue
		}
		if err := k.announce(t, r.ID); err != nil {
			return err
		}
	}
	return nil
}

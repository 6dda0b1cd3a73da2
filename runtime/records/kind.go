package records

import (
	"context"
	"fmt"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// kind describes one record type to the code every type shares: reading, creating, updating, Trash,
// and the events that announce each change (its [changes]).
type kind[T, In any] struct {
	name    string  // as a person reads it
	changes changes // the kinds of event that announce its changes
	table   string
	prefix  string // of ids
	order   string // of lists
	decode  func(ledger.Row) T
	title   func(T) string
	// row checks an input and returns the columns to write; cur is nil for a new record.
	row func(b *Batch, in In, cur *T) (ledger.Row, error)
	// updated describes an update specially (a task's move), or returns "".
	updated func(before, after T) string
	// unlink clears what refers to the record before it is deleted for good.
	unlink func(b *Batch, id string) error
}

// announcer is the part of a kind that Undo and Trash need without knowing T.
type announcer interface {
	announce(t *ledger.Tx, id string) error
	kindName() string
}

func (k *kind[T, In]) kindName() string { return k.name }

// announce emits the record as it now is, after an undo or redo restored it.
func (k *kind[T, In]) announce(t *ledger.Tx, id string) error {
	row, err := t.Get(k.table, id)
	if err != nil {
		return err
	}
	switch {
	case row == nil:
		return t.Emit(k.changes.purged, id, Purged{ID: id})
	case row["deleted_at"] != nil:
		return t.Emit(k.changes.trashed, id, k.decode(row))
	default:
		return t.Emit(k.changes.updated, id, k.decode(row))
	}
}

func parseNullStamp(r ledger.Row, col string) *time.Time {
	if s := r.NullStr(col); s != nil {
		t := store.ReadTime(*s)
		return &t
	}
	return nil
}

// get reads one record of the space; trashed ones only if withTrash.
func (k *kind[T, In]) get(ctx context.Context, q events.Querier, space, id string, withTrash bool) (T, error) {
	var zero T
	where := "id = ? AND space_id = ?"
	if !withTrash {
		where += " AND deleted_at IS NULL"
	}
	rs, err := k.query(ctx, q, where, id, space)
	if err != nil {
		return zero, err
	}
	if len(rs) == 0 {
		return zero, notFound(k.name, id)
	}
	return rs[0], nil
}

func (k *kind[T, In]) query(ctx context.Context, q events.Querier, where string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, "SELECT * FROM "+k.table+" WHERE "+where, args...)
	if err != nil {
		return nil, fmt.Errorf("records: read %s: %w", k.table, err)
	}
	rs, err := ledger.ScanRows(rows)
	if err != nil {
		return nil, fmt.Errorf("records: read %s: %w", k.table, err)
	}
	out := make([]T, len(rs))
	for i, r := range rs {
		out[i] = k.decode(r)
	}
	return out, nil
}

// live returns the record's row if it exists and is not in Trash.
func (k *kind[T, In]) live(b *Batch, id string) (ledger.Row, error) {
	return b.live(k.table, k.name, id)
}

// live returns the row with id of table if it is in the batch's space and not in Trash.
func (b *Batch) live(table, name, id string) (ledger.Row, error) {
	row, err := b.t.Get(table, id)
	if err != nil {
		return nil, err
	}
	if row == nil || row.Str("space_id") != b.s.space || row["deleted_at"] != nil {
		return nil, notFound(name, id)
	}
	return row, nil
}

func (k *kind[T, In]) create(b *Batch, row ledger.Row) (T, error) {
	var zero T
	id := ledger.NewID(k.prefix)
	now := store.Stamp(b.t.Now())
	row["id"], row["space_id"], row["created_at"], row["updated_at"] = id, b.s.space, now, now
	if err := b.t.Insert(k.table, row); err != nil {
		return zero, err
	}
	return k.emit(b, id, k.changes.created, "Created %s “%s”")
}

func (k *kind[T, In]) update(b *Batch, id string, set ledger.Row) (T, error) {
	if len(set) == 0 {
		row, err := k.live(b, id)
		if err != nil {
			var zero T
			return zero, err
		}
		return k.decode(row), nil
	}
	before, err := k.live(b, id)
	if err != nil {
		var zero T
		return zero, err
	}
	set["updated_at"] = store.Stamp(b.t.Now())
	if _, err := b.t.Update(k.table, id, set); err != nil {
		var zero T
		return zero, err
	}
	rec, err := k.emit(b, id, k.changes.updated, "Updated %s “%s”")
	if err == nil && k.updated != nil {
		if d := k.updated(k.decode(before), rec); d != "" {
			b.t.Describe("%s", d)
		}
	}
	return rec, err
}

func (k *kind[T, In]) trash(b *Batch, id string) (T, error) {
	if _, err := k.live(b, id); err != nil {
		var zero T
		return zero, err
	}
	if _, err := b.t.Update(k.table, id, ledger.Row{"deleted_at": store.Stamp(b.t.Now())}); err != nil {
		var zero T
		return zero, err
	}
	return k.emit(b, id, k.changes.trashed, "Moved %s “%s” to Trash")
}

func (k *kind[T, In]) trashed(b *Batch, id string) error {
	row, err := b.t.Get(k.table, id)
	if err != nil {
		return err
	}
	if row == nil || row.Str("space_id") != b.s.space || row["deleted_at"] == nil {
		return notFound(k.name+" in Trash", id)
	}
	return nil
}

func (k *kind[T, In]) restore(b *Batch, id string) (T, error) {
	if err := k.trashed(b, id); err != nil {
		var zero T
		return zero, err
	}
	if _, err := b.t.Update(k.table, id, ledger.Row{"deleted_at": nil}); err != nil {
		var zero T
		return zero, err
	}
	return k.emit(b, id, k.changes.restored, "Restored %s “%s” from Trash")
}

func (k *kind[T, In]) purge(b *Batch, id string) error {
	if err := k.trashed(b, id); err != nil {
		return err
	}
	row, err := b.t.Get(k.table, id)
	if err != nil {
		return err
	}
	if k.unlink != nil {
		if err := k.unlink(b, id); err != nil {
			return err
		}
	}
	if _, err := b.t.Delete(k.table, id); err != nil {
		return err
	}
	b.t.Describe("Deleted %s “%s” for good", k.name, k.title(k.decode(row)))
	return b.t.Emit(k.changes.purged, id, Purged{ID: id})
}

// emit announces the record after a write and describes the write with format (kind, title).
func (k *kind[T, In]) emit(b *Batch, id string, kind events.Kind, format string) (T, error) {
	var zero T
	row, err := b.t.Get(k.table, id)
	if err != nil {
		return zero, err
	}
	rec := k.decode(row)
	if err := b.t.Emit(kind, id, rec); err != nil {
		return zero, err
	}
	b.t.Describe(format, k.name, k.title(rec))
	return rec, nil
}

// exists checks a reference the person gave: a live record of the table in the space.
func (b *Batch) exists(table, name, id string) error {
	if _, err := b.live(table, name, id); err != nil {
		return problem.Invalid("There is no %s with id %q.", name, id)
	}
	return nil
}

// clearRefs sets column to NULL in every row of table that points at id, through the ledger so
// Undo puts the links back.
func clearRefs(b *Batch, table, column, id string) error {
	rows, err := b.t.QueryContext(b.t.Context(), "SELECT id FROM "+table+" WHERE "+column+" = ?", id)
	if err != nil {
		return fmt.Errorf("records: find %s.%s: %w", table, column, err)
	}
	var ids []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, s)
	}
	rows.Close()
	for _, rid := range ids {
		if _, err := b.t.Update(table, rid, ledger.Row{column: nil}); err != nil {
			return err
		}
		if k, ok := kindsByTable[table]; ok {
			if err := k.announce(b.t, rid); err != nil {
				return err
			}
		}
	}
	return nil
}

package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
)

// Tx is a write transaction in progress. Its row methods keep the before and after image of every
// row they touch; reads inside the transaction go through [Tx.QueryContext] and [Tx.QueryRowContext].
type Tx struct {
	ctx     context.Context
	tx      *sql.Tx
	now     time.Time
	group   string
	target  string // the group an undo or redo reverses
	summary string
	changes []Change
	events  []events.Event
}

// Change is one row's image before and after a write. A nil Before means the row was created; a nil
// After that it was removed.
type Change struct {
	Table  string
	ID     string
	Before Row
	After  Row
}

// Now is the transaction's clock reading, the same for every row it writes.
func (t *Tx) Now() time.Time { return t.now }

// Context is the context the transaction runs under.
func (t *Tx) Context() context.Context { return t.ctx }

// GroupID is the id the transaction's Undo group gets if it commits with changes, so a receipt
// written in the same transaction can name it.
func (t *Tx) GroupID() string { return t.group }

// Describe sets the group's summary, a sentence a person reads in the ledger and on Undo.
func (t *Tx) Describe(format string, args ...any) { t.summary = fmt.Sprintf(format, args...) }

// QueryContext reads inside the transaction.
func (t *Tx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, q, args...)
}

// QueryRowContext reads one row inside the transaction.
func (t *Tx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, q, args...)
}

// ExecContext runs a statement inside the transaction without keeping row images: for tables that
// are not the person's records (runs, Needs me), written through [Writer.Exec].
func (t *Tx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, q, args...)
}

// Emit appends an event to be published once the transaction commits.
func (t *Tx) Emit(kind events.Kind, subject string, data any) error {
	ev, err := events.Append(t.ctx, t.tx, t.now, kind, subject, data)
	if err != nil {
		return err
	}
	t.events = append(t.events, ev)
	return nil
}

// Get reads a row by id inside the transaction; nil if there is none.
func (t *Tx) Get(table, id string) (Row, error) {
	if err := checkIdent(table); err != nil {
		return nil, err
	}
	rows, err := t.tx.QueryContext(t.ctx, "SELECT * FROM "+table+" WHERE id = ?", id)
	if err != nil {
		return nil, fmt.Errorf("ledger: read %s %s: %w", table, id, err)
	}
	all, err := ScanRows(rows)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	return all[0], nil
}

// Insert adds a row; row must hold "id".
func (t *Tx) Insert(table string, row Row) error {
	id, _ := row["id"].(string)
	if id == "" {
		return fmt.Errorf("ledger: insert into %s: row has no id", table)
	}
	if err := t.insert(table, row); err != nil {
		return err
	}
	after, err := t.Get(table, id)
	if err != nil {
		return err
	}
	t.changes = append(t.changes, Change{Table: table, ID: id, After: after})
	return nil
}

// Update sets columns of the row with id. It reports whether the row exists.
func (t *Tx) Update(table, id string, set Row) (bool, error) {
	before, err := t.Get(table, id)
	if err != nil || before == nil {
		return false, err
	}
	if err := t.update(table, id, set); err != nil {
		return true, err
	}
	after, err := t.Get(table, id)
	if err != nil {
		return true, err
	}
	t.changes = append(t.changes, Change{Table: table, ID: id, Before: before, After: after})
	return true, nil
}

// Delete removes the row with id. It reports whether the row existed.
func (t *Tx) Delete(table, id string) (bool, error) {
	before, err := t.Get(table, id)
	if err != nil || before == nil {
		return false, err
	}
	if _, err := t.tx.ExecContext(t.ctx, "DELETE FROM "+table+" WHERE id = ?", id); err != nil {
		return true, fmt.Errorf("ledger: delete %s %s: %w", table, id, err)
	}
	t.changes = append(t.changes, Change{Table: table, ID: id, Before: before})
	return true, nil
}

func (t *Tx) insert(table string, row Row) error {
	cols, args, err := columns(table, row)
	if err != nil {
		return err
	}
	q := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(cols, ", "),
		strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", "))
	if _, err := t.tx.ExecContext(t.ctx, q, args...); err != nil {
		return fmt.Errorf("ledger: insert into %s: %w", table, err)
	}
	return nil
}

func (t *Tx) update(table, id string, set Row) error {
	cols, args, err := columns(table, set)
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		return nil
	}
	for i := range cols {
		cols[i] += " = ?"
	}
	q := fmt.Sprintf("UPDATE %s SET %s WHERE id = ?", table, strings.Join(cols, ", "))
	if _, err := t.tx.ExecContext(t.ctx, q, append(args, id)...); err != nil {
		return fmt.Errorf("ledger: update %s %s: %w", table, id, err)
	}
	return nil
}

var ident = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// checkIdent keeps names that are spliced into SQL to plain identifiers. They come from code, never
// from a request, but a mistake here must fail loudly rather than build a strange statement.
func checkIdent(name string) error {
	if !ident.MatchString(name) {
		return fmt.Errorf("ledger: %q is not a table or column name", name)
	}
	return nil
}

// columns returns row's columns in a stable order with their values.
func columns(table string, row Row) ([]string, []any, error) {
	if err := checkIdent(table); err != nil {
		return nil, nil, err
	}
	cols := make([]string, 0, len(row))
	for c := range row {
		if err := checkIdent(c); err != nil {
			return nil, nil, err
		}
		cols = append(cols, c)
	}
	sort.Strings(cols)
	args := make([]any, len(cols))
	for i, c := range cols {
		args[i] = row[c]
	}
	return cols, args, nil
}

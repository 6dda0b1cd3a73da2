// Package ledger records who changed what. Every write to the person's records runs through
// [Writer.Do]: in one SQLite transaction it makes the change, keeps each row's image before and
// after, names the actor, and appends the change's events; after the commit it publishes those
// events. The writes of one Do form an Undo group that [Writer.Undo] and [Writer.Redo] reverse and
// replay exactly.
package ledger

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// ActorKind says what made a change.
type ActorKind string

const (
	Person    ActorKind = "person"
	Assistant ActorKind = "assistant"
	Node      ActorKind = "node"
	BridgeKey ActorKind = "bridge"
	AgentRun  ActorKind = "run"
	System    ActorKind = "system"
)

// Actor is who made a change: the kind, and the id and name of the node, key or run where there is one.
type Actor struct {
	Kind ActorKind `json:"kind"`
	ID   string    `json:"id,omitempty"`
	Name string    `json:"name,omitempty"`
}

// Group is one ledger entry: a write, or the undo or redo of one.
type Group struct {
	ID      string    `json:"id"`
	Seq     int64     `json:"seq"`
	Kind    string    `json:"kind"` // write, undo, redo
	Target  string    `json:"target,omitempty"`
	Actor   Actor     `json:"actor"`
	Summary string    `json:"summary"`
	At      time.Time `json:"at"`
	State   string    `json:"state"` // done, undone (writes only)
	Changes int       `json:"changes"`
}

// Writer runs write transactions. It is safe for concurrent use; writes are serialised.
type Writer struct {
	db  *sql.DB
	bus *events.Bus
	now func() time.Time

	mu sync.Mutex // held from BEGIN until the group's events are published, so seq order is publish order
}

// New returns a Writer over the store's write pool, publishing on bus.
func New(st *store.Store, bus *events.Bus) *Writer {
	return &Writer{db: st.Writer(), bus: bus, now: time.Now}
}

// ErrNothing is matched (errors.Is) by the error of an Undo or Redo with nothing to reverse or replay.
var ErrNothing = errors.New("ledger: nothing to undo or redo")

// nothing is a sentence for the person that matches ErrNothing.
type nothing string

func (e nothing) Error() string        { return string(e) }
func (e nothing) Is(target error) bool { return target == ErrNothing }

// Kind makes nothing to undo a conflict: the history's state does not allow it now.
func (e nothing) Kind() problem.Kind { return problem.KindConflict }

// ErrNoChange is returned by Do's function to commit nothing and record no group.
var ErrNoChange = errors.New("ledger: no change")

// Do runs fn in a write transaction recorded as one group by actor. fn describes the change with
// [Tx.Describe]. If fn returns an error nothing is written or published. If fn returns ErrNoChange
// (or makes no change), nothing is recorded and Do returns a zero Group and nil.
func (w *Writer) Do(ctx context.Context, actor Actor, fn func(*Tx) error) (Group, error) {
	return w.run(ctx, actor, "write", fn)
}

// Exec runs fn in a write transaction that is not a person's record change: it records no Undo
// group, but its events are appended and published like any other (runs, Needs me, sessions).
func (w *Writer) Exec(ctx context.Context, fn func(*Tx) error) error {
	_, err := w.run(ctx, Actor{Kind: System}, "exec", fn)
	return err
}

func (w *Writer) run(ctx context.Context, actor Actor, kind string, fn func(*Tx) error) (Group, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	sqlTx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return Group{}, fmt.Errorf("ledger: begin: %w", err)
	}
	defer sqlTx.Rollback()
	t := &Tx{ctx: ctx, tx: sqlTx, now: w.now().UTC(), group: newID("grp_")}
	if err := fn(t); err != nil {
		if errors.Is(err, ErrNoChange) {
			return Group{}, nil
		}
		return Group{}, err
	}
	var g Group
	switch {
	case kind == "exec":
	case len(t.changes) == 0 && kind == "write":
		return Group{}, nil
	default:
		var err error
		if g, err = t.record(actor, kind); err != nil {
			return Group{}, err
		}
	}
	if err := sqlTx.Commit(); err != nil {
		return Group{}, fmt.Errorf("ledger: commit: %w", err)
	}
	w.bus.Publish(t.events...)
	return g, nil
}

func (t *Tx) record(actor Actor, kind string) (Group, error) {
	var seq int64
	if err := t.tx.QueryRowContext(t.ctx, "SELECT coalesce(max(seq), 0) + 1 FROM ledger_groups").Scan(&seq); err != nil {
		return Group{}, fmt.Errorf("ledger: next seq: %w", err)
	}
	if t.summary == "" {
		t.summary = fmt.Sprintf("%d changes", len(t.changes))
	}
	g := Group{ID: t.group, Seq: seq, Kind: kind, Target: t.target, Actor: actor, Summary: t.summary,
		At: t.now, State: "done", Changes: len(t.changes)}
	var tgt any
	if t.target != "" {
		tgt = t.target
	}
	_, err := t.tx.ExecContext(t.ctx, `INSERT INTO ledger_groups
		(id, seq, kind, target, actor_kind, actor_id, actor_name, summary, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		g.ID, g.Seq, kind, tgt, string(actor.Kind), actor.ID, actor.Name, g.Summary, store.Stamp(g.At))
	if err != nil {
		return Group{}, fmt.Errorf("ledger: record group: %w", err)
	}
	for i, c := range t.changes {
		_, err := t.tx.ExecContext(t.ctx, `INSERT INTO ledger_changes (group_id, n, tbl, row_id, before, after)
			VALUES (?, ?, ?, ?, ?, ?)`, g.ID, i, c.Table, c.ID, c.Before.json(), c.After.json())
		if err != nil {
			return Group{}, fmt.Errorf("ledger: record change: %w", err)
		}
	}
	ev, err := events.Append(t.ctx, t.tx, t.now, groupEvent(kind), g.ID, g)
	if err != nil {
		return Group{}, err
	}
	t.events = append(t.events, ev)
	return g, nil
}

// The kinds of ledger event, one for each group recorded: subject the group's id, data its [Group].
const (
	KindWrite events.Kind = "ledger.write"
	KindUndo  events.Kind = "ledger.undo"
	KindRedo  events.Kind = "ledger.redo"
)

// EventSpecs lists the ledger's kinds of event, for the catalog.
func EventSpecs() []events.Spec { return events.Specs(Group{}, KindWrite, KindUndo, KindRedo) }

// groupEvent is the kind of event that announces a group of kind (write, undo, redo).
func groupEvent(kind string) events.Kind {
	switch kind {
	case "undo":
		return KindUndo
	case "redo":
		return KindRedo
	}
	return KindWrite
}

// newID returns prefix followed by 16 random hex digits.
func newID(prefix string) string {
	var b [8]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// NewID returns a fresh record id with the given prefix (such as "tsk_").
func NewID(prefix string) string { return newID(prefix) }

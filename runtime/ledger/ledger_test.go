package ledger

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/store"
)

func newWriter(t testing.TB) (*Writer, *events.Bus, *store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	bus := events.NewBus()
	return New(st, bus), bus, st
}

func count(t testing.TB, st *store.Store, table string) int {
	t.Helper()
	var n int
	st.Reader().QueryRow("SELECT count(*) FROM " + table).Scan(&n)
	return n
}

func TestFailedWritePublishesNothing(t *testing.T) {
	w, bus, st := newWriter(t)
	sub := bus.Subscribe(10)
	boom := errors.New("boom")
	_, err := w.Do(context.Background(), Actor{Kind: Person}, func(tx *Tx) error {
		if err := tx.Insert("spaces", Row{"id": "spc_x", "name": "X", "kind": "shared", "created_at": "now"}); err != nil {
			return err
		}
		if err := tx.Emit("space.created", "spc_x", map[string]string{"id": "spc_x"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if len(sub.C) != 0 || count(t, st, "events") != 0 || count(t, st, "spaces") != 1 || count(t, st, "ledger_groups") != 0 {
		t.Errorf("a failed write left %d published, %d events, %d spaces, %d groups",
			len(sub.C), count(t, st, "events"), count(t, st, "spaces"), count(t, st, "ledger_groups"))
	}
}

func TestDoWithoutChangesRecordsNothing(t *testing.T) {
	w, _, st := newWriter(t)
	g, err := w.Do(context.Background(), Actor{Kind: Person}, func(tx *Tx) error { return nil })
	if err != nil || g.ID != "" || count(t, st, "ledger_groups") != 0 {
		t.Errorf("empty Do: group %+v, err %v, %d groups", g, err, count(t, st, "ledger_groups"))
	}
}

func TestExecPublishesWithoutAGroup(t *testing.T) {
	w, bus, st := newWriter(t)
	sub := bus.Subscribe(10)
	err := w.Exec(context.Background(), func(tx *Tx) error {
		if _, err := tx.ExecContext(tx.Context(), "INSERT INTO spaces (id, name, kind, created_at) VALUES ('spc_y', 'Y', 'shared', 'now')"); err != nil {
			return err
		}
		return tx.Emit("space.created", "spc_y", map[string]string{"id": "spc_y"})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sub.C) != 1 || count(t, st, "ledger_groups") != 0 || count(t, st, "spaces") != 2 {
		t.Errorf("Exec: %d published, %d groups, %d spaces", len(sub.C), count(t, st, "ledger_groups"), count(t, st, "spaces"))
	}
	if _, err := w.Undo(context.Background(), Actor{Kind: Person}, nil); !errors.Is(err, ErrNothing) {
		t.Errorf("Undo after Exec: %v, want ErrNothing", err)
	}
}

func TestRowImagesRoundTrip(t *testing.T) {
	for _, r := range []Row{
		{"id": "a", "n": int64(3), "f": 1.5, "whole": float64(2), "s": "x", "null": nil},
	} {
		got, err := decodeRow(sqlText(r.json()))
		if err != nil {
			t.Fatal(err)
		}
		if got.json() != r.json() {
			t.Errorf("round trip: %v → %v", r, got)
		}
	}
}

func sqlText(v any) sql.NullString {
	s, ok := v.(string)
	return sql.NullString{String: s, Valid: ok}
}

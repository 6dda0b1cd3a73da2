package ledger

import (
	"context"
	"errors"
	"testing"
)

// TestUndoGroupOutOfOrder undoes an older group while a newer one stands, redoes it, and refuses
// an undo whose rows a later write changed.
func TestUndoGroupOutOfOrder(t *testing.T) {
	w, _, st := newWriter(t)
	ctx := context.Background()
	me := Actor{Kind: Person}
	insert := func(id, name string) Group {
		g, err := w.Do(ctx, me, func(tx *Tx) error {
			tx.Describe("add %s", name)
			return tx.Insert("spaces", Row{"id": id, "name": name, "kind": "shared", "created_at": "now"})
		})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	name := func(id string) string {
		var n string
		st.Reader().QueryRow("SELECT name FROM spaces WHERE id = ?", id).Scan(&n)
		return n
	}
	a, _ := insert("spc_a", "A"), insert("spc_b", "B")

	if _, err := w.UndoGroup(ctx, me, a.ID, nil); err != nil {
		t.Fatalf("undo the older group: %v", err)
	}
	if name("spc_a") != "" || name("spc_b") != "B" {
		t.Fatalf("after undo: a=%q b=%q", name("spc_a"), name("spc_b"))
	}
	if _, err := w.UndoGroup(ctx, me, a.ID, nil); !errors.Is(err, ErrNothing) {
		t.Errorf("a second undo: %v, want ErrNothing", err)
	}
	if _, err := w.RedoGroup(ctx, me, a.ID, nil); err != nil || name("spc_a") != "A" {
		t.Fatalf("redo: %v, a=%q", err, name("spc_a"))
	}
	if _, err := w.RedoGroup(ctx, me, a.ID, nil); !errors.Is(err, ErrNothing) {
		t.Errorf("a second redo: %v, want ErrNothing", err)
	}
	// A later write to the row makes the undo a conflict that changes nothing.
	if _, err := w.Do(ctx, me, func(tx *Tx) error {
		_, err := tx.Update("spaces", "spc_a", Row{"name": "A2"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var conflict *ConflictError
	if _, err := w.UndoGroup(ctx, me, a.ID, nil); !errors.As(err, &conflict) || name("spc_a") != "A2" {
		t.Errorf("undo after a later change: %v, a=%q", err, name("spc_a"))
	}
	if _, err := w.UndoGroup(ctx, me, "grp_missing", nil); !errors.Is(err, ErrNothing) {
		t.Errorf("unknown group: %v", err)
	}
}

// TestUndoRedoAnswerTheStateAfter checks that every Undo and Redo returns the group as it left
// it, not as it found it, and that its sentences do not double the summary's full stop.
func TestUndoRedoAnswerTheStateAfter(t *testing.T) {
	w, _, _ := newWriter(t)
	ctx := context.Background()
	me := Actor{Kind: Person}
	g, err := w.Do(ctx, me, func(tx *Tx) error {
		tx.Describe("Added 1 space: “A”.")
		return tx.Insert("spaces", Row{"id": "spc_a", "name": "A", "kind": "shared", "created_at": "now"})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name string
		do   func() (Group, error)
		want string
	}{
		{"Undo", func() (Group, error) { return w.Undo(ctx, me, nil) }, "undone"},
		{"Redo", func() (Group, error) { return w.Redo(ctx, me, nil) }, "done"},
		{"UndoGroup", func() (Group, error) { return w.UndoGroup(ctx, me, g.ID, nil) }, "undone"},
		{"RedoGroup", func() (Group, error) { return w.RedoGroup(ctx, me, g.ID, nil) }, "done"},
	} {
		got, err := step.do()
		if err != nil || got.ID != g.ID || got.State != step.want {
			t.Errorf("%s: group %s state %q, %v; want %s state %q", step.name, got.ID, got.State, err, g.ID, step.want)
		}
	}
	_, err = w.RedoGroup(ctx, me, g.ID, nil)
	if err == nil || err.Error() != "‘Added 1 space: “A”’ is not undone." {
		t.Errorf("redo of a group that is done: %v", err)
	}
	conflict := &ConflictError{Undo: true, Summary: "Added 1 space: “A”."}
	if got := conflict.Error(); got != "Cannot undo ‘Added 1 space: “A”’: a record it touched has changed since." {
		t.Errorf("conflict sentence %q", got)
	}
}

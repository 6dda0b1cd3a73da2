package records

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

var me = ledger.Actor{Kind: ledger.Person}

func newService(t testing.TB) (*Service, *events.Bus, *store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	bus := events.NewBus()
	return New(st, ledger.New(st, bus)), bus, st
}

func ptr[T any](v T) *T { return &v }

// snapshot is every record of every kind, for comparing the whole database before and after.
func snapshot(t *testing.T, s *Service) map[string]any {
	t.Helper()
	ctx := context.Background()
	out := map[string]any{}
	rows, err := s.db.QueryContext(ctx, "SELECT * FROM tasks ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	out["tasks"], _ = ledger.ScanRows(rows)
	for _, table := range []string{"projects", "people", "repos", "pages"} {
		rows, err := s.db.QueryContext(ctx, "SELECT * FROM "+table+" ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		out[table], _ = ledger.ScanRows(rows)
	}
	return out
}

func TestUndoRedoMultiRecordWrite(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newService(t)
	// Something already there, which the batch changes: Undo must bring back every field of it.
	first, err := s.Tasks().Create(ctx, me, TaskInput{Title: Some("Write the brief"), Labels: Some([]string{"docs"}),
		Due: Some(ptr("2026-12-01")), Page: Some("# Brief\n")})
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, s)

	var created Task
	g, err := s.Batch(ctx, ledger.Actor{Kind: ledger.Assistant}, "Planned the launch", func(b *Batch) error {
		p, err := s.Projects().CreateIn(b, ProjectInput{Name: Some("Launch")})
		if err != nil {
			return err
		}
		who, err := s.People().CreateIn(b, PersonInput{Name: Some("Mira"), Role: Some("Designer")})
		if err != nil {
			return err
		}
		created, err = s.Tasks().CreateIn(b, TaskInput{Title: Some("Design the page"), ProjectID: Some(&p.ID),
			OwnerID: Some(&who.ID), People: Some([]string{who.ID}), Priority: Some("high")})
		if err != nil {
			return err
		}
		_, err = s.Tasks().UpdateIn(b, first.ID, TaskInput{Title: Some("Write the launch brief"), Status: Some(InProgress),
			ProjectID: Some(&p.ID), Labels: Some([]string{"docs", "launch"}), Due: Some[*string](nil), Page: Some("# Launch brief\n")})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if g.Changes != 4 || g.Summary != "Planned the launch" || g.Actor.Kind != ledger.Assistant {
		t.Fatalf("group = %+v, want 4 changes by the assistant", g)
	}
	after := snapshot(t, s)

	u, err := s.Undo(ctx, me)
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != g.ID {
		t.Errorf("undo reversed %s, want %s", u.ID, g.ID)
	}
	if got := snapshot(t, s); !reflect.DeepEqual(got, before) {
		t.Errorf("after undo:\n got %v\nwant %v", got, before)
	}
	if _, err := s.Redo(ctx, me); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, s); !reflect.DeepEqual(got, after) {
		t.Errorf("after redo:\n got %v\nwant %v", got, after)
	}
	if _, err := s.Redo(ctx, me); !errors.Is(err, ledger.ErrNothing) {
		t.Errorf("second redo: err = %v, want ErrNothing", err)
	}
	// Undo twice walks back both groups; a new write then clears Redo.
	s.Undo(ctx, me)
	s.Undo(ctx, me)
	if tasks, _ := s.ListTasks(ctx, TaskFilter{}); len(tasks) != 0 {
		t.Errorf("after undoing everything, %d tasks remain", len(tasks))
	}
	if _, err := s.Undo(ctx, me); !errors.Is(err, ledger.ErrNothing) {
		t.Errorf("undo with nothing left: err = %v, want ErrNothing", err)
	}
	s.Tasks().Create(ctx, me, TaskInput{Title: Some("New work")})
	if _, err := s.Redo(ctx, me); !errors.Is(err, ledger.ErrNothing) {
		t.Errorf("redo after a new write: err = %v, want ErrNothing", err)
	}
	_ = created
}

func TestUndoRefusesWhenChangedSince(t *testing.T) {
	ctx := context.Background()
	s, _, st := newService(t)
	task, _ := s.Tasks().Create(ctx, me, TaskInput{Title: Some("A")})
	if _, err := s.Tasks().Update(ctx, me, task.ID, TaskInput{Title: Some("B")}); err != nil {
		t.Fatal(err)
	}
	// A change behind the ledger's back: the rename's undo must not overwrite it.
	if _, err := st.Writer().ExecContext(ctx, "UPDATE tasks SET title = 'tampered' WHERE id = ?", task.ID); err != nil {
		t.Fatal(err)
	}
	_, err := s.Undo(ctx, me)
	var ce *ledger.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("undo over a changed row: err = %v, want a ConflictError", err)
	}
	if want := "Cannot undo ‘Updated task “B”’: a record it touched has changed since."; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if got, _ := s.Tasks().Get(ctx, task.ID); got.Title != "tampered" {
		t.Errorf("refused undo changed the title to %q", got.Title)
	}
}

func TestTaskInputValidation(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newService(t)
	long := make([]byte, 301)
	for i := range long {
		long[i] = 'x'
	}
	for _, tc := range []struct {
		name string
		in   TaskInput
		want string
	}{
		{"no title", TaskInput{}, "A task needs a title."},
		{"blank title", TaskInput{Title: Some("   ")}, "The title cannot be empty."},
		{"long title", TaskInput{Title: Some(string(long))}, "The title is 301 characters long; the most is 300."},
		{"bad status", TaskInput{Title: Some("x"), Status: Some(Status("started"))}, `Status "started" is not one of proposed, todo, in_progress, waiting_approval, blocked, done or dropped.`},
		{"bad priority", TaskInput{Title: Some("x"), Priority: Some("asap")}, `Priority "asap" is not one of none, low, medium, high or urgent.`},
		{"bad due", TaskInput{Title: Some("x"), Due: Some(ptr("tomorrow"))}, `Due date "tomorrow" is not a date like 2026-12-31.`},
		{"unknown project", TaskInput{Title: Some("x"), ProjectID: Some(ptr("prj_nope"))}, `There is no project with id "prj_nope".`},
		{"unknown person", TaskInput{Title: Some("x"), People: Some([]string{"per_nope"})}, `There is no person with id "per_nope".`},
		{"empty label", TaskInput{Title: Some("x"), Labels: Some([]string{""})}, "The label cannot be empty."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Tasks().Create(ctx, me, tc.in)
			if !problem.Is(err, problem.KindInvalid) || err.Error() != tc.want {
				t.Fatalf("got %v, want an invalid problem %q", err, tc.want)
			}
		})
	}
	if tasks, _ := s.ListTasks(ctx, TaskFilter{}); len(tasks) != 0 {
		t.Errorf("refused input wrote %d tasks", len(tasks))
	}
	if gs, _ := ledger.List(ctx, s.db, 0, 10); len(gs) != 0 {
		t.Errorf("refused input left %d ledger groups", len(gs))
	}
}

func TestTaskMoves(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newService(t)
	task, _ := s.Tasks().Create(ctx, me, TaskInput{Title: Some("Ship it"), Status: Some(Done)})
	_, err := s.Tasks().Update(ctx, me, task.ID, TaskInput{Status: Some(Blocked)})
	var me2 *MoveError
	if !errors.As(err, &me2) || !reflect.DeepEqual(me2.Allowed, []Status{Todo, InProgress}) {
		t.Fatalf("done → blocked: err = %v, want a MoveError allowing todo and in_progress", err)
	}
	moved, err := s.Tasks().Update(ctx, me, task.ID, TaskInput{Status: Some(Todo)})
	if err != nil || moved.Status != Todo {
		t.Fatalf("done → todo: %v %v", moved.Status, err)
	}
	gs, _ := ledger.List(ctx, s.db, 0, 1)
	if want := "Moved task “Ship it” to To do"; len(gs) != 1 || gs[0].Summary != want {
		t.Errorf("ledger summary = %v, want %q", gs, want)
	}
}

func TestOptDistinguishesAbsentNullAndValue(t *testing.T) {
	for _, tc := range []struct {
		body    string
		set     bool
		nilDue  bool
		wantDue string
	}{
		{`{}`, false, true, ""},
		{`{"due": null}`, true, true, ""},
		{`{"due": "2026-01-02"}`, true, false, "2026-01-02"},
	} {
		var in TaskInput
		if err := json.Unmarshal([]byte(tc.body), &in); err != nil {
			t.Fatal(err)
		}
		if in.Due.Set != tc.set || (in.Due.V == nil) != tc.nilDue || (in.Due.V != nil && *in.Due.V != tc.wantDue) {
			t.Errorf("%s: got set=%v due=%v", tc.body, in.Due.Set, in.Due.V)
		}
		out, _ := json.Marshal(in)
		if tc.body == `{}` && string(out) != `{}` {
			t.Errorf("marshal of an empty input = %s, want {}", out)
		}
	}
}

func TestTrashRestorePurge(t *testing.T) {
	ctx := context.Background()
	s, bus, _ := newService(t)
	sub := bus.Subscribe(100)
	defer sub.Close()
	p, _ := s.Projects().Create(ctx, me, ProjectInput{Name: Some("Garden")})
	task, _ := s.Tasks().Create(ctx, me, TaskInput{Title: Some("Plant"), ProjectID: Some(&p.ID)})
	if _, err := s.Projects().Trash(ctx, me, p.ID); err != nil {
		t.Fatal(err)
	}
	items, _ := s.Trash(ctx)
	if len(items) != 1 || items[0].Kind != "project" || items[0].Title != "Garden" {
		t.Fatalf("trash = %+v", items)
	}
	if _, err := s.Projects().Update(ctx, me, p.ID, ProjectInput{Summary: Some("x")}); !IsNotFound(err) {
		t.Errorf("update of a trashed project: err = %v, want not found", err)
	}
	if err := s.Purge(ctx, me, "project", p.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Tasks().Get(ctx, task.ID); got.ProjectID != nil {
		t.Errorf("purged project still linked from task: %v", *got.ProjectID)
	}
	// Undo of the purge brings back the project and the task's link.
	if _, err := s.Undo(ctx, me); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Tasks().Get(ctx, task.ID); got.ProjectID == nil || *got.ProjectID != p.ID {
		t.Errorf("undo of purge: task project = %v, want %s", got.ProjectID, p.ID)
	}
	if _, err := s.Restore(ctx, me, "project", p.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Projects().Get(ctx, p.ID); got.DeletedAt != nil {
		t.Error("restored project still has deletedAt")
	}
	if _, err := s.Restore(ctx, me, "project", p.ID); !IsNotFound(err) {
		t.Errorf("restore of a project not in Trash: err = %v", err)
	}
	if _, err := s.Restore(ctx, me, "widget", "x"); err == nil {
		t.Error("restore of an unknown kind succeeded")
	}
	var kinds []string
	for len(sub.C) > 0 {
		kinds = append(kinds, string((<-sub.C).Kind))
	}
	want := []string{"project.created", "ledger.write", "task.created", "ledger.write", "project.trashed", "ledger.write",
		"task.updated", "project.purged", "ledger.write", "project.trashed", "task.updated", "ledger.undo",
		"project.restored", "ledger.write"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("events:\n got %v\nwant %v", kinds, want)
	}
}

func TestPageCannotNestInItself(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newService(t)
	a, _ := s.Pages().Create(ctx, me, PageInput{Title: Some("A")})
	b, _ := s.Pages().Create(ctx, me, PageInput{Title: Some("B"), ParentID: Some(&a.ID)})
	if _, err := s.Pages().Update(ctx, me, a.ID, PageInput{ParentID: Some(&b.ID)}); err == nil || err.Error() != "A page cannot be inside itself." {
		t.Errorf("cycle: err = %v", err)
	}
}

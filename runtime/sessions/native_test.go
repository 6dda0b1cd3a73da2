package sessions

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
)

// deleter is the stand-in agent's way to delete its sessions: it fails as often as told, then
// deletes.
type deleter struct {
	*agent
	mu    sync.Mutex
	fails int
	got   []string // id@folder
}

func (d *deleter) DeleteSession(_ context.Context, id, folder string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fails > 0 {
		d.fails--
		return errors.New("the agent is busy")
	}
	d.got = append(d.got, id+"@"+folder)
	return nil
}

func (e *env) native(id string) string {
	e.t.Helper()
	var n string
	if err := e.st.Reader().QueryRow(`SELECT native FROM session_deletions WHERE session_id = ?`, id).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestDeleteOwed: a session deleted in Ensemble is deleted at its agent too, in its folder; an
// error leaves it owed, tried again; an agent with no way to delete settles it as failed.
func TestDeleteOwed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.run(jobs.AssignRequest{Title: "Build the ranking API", Folder: e.folder, NewSession: true})
	if _, err := e.ss.Delete(ctx, a.ID, ledger.Actor{Kind: ledger.Person}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.ss.DeleteOwed(ctx); n != 0 || err != nil || e.native(a.ID) != "owed" {
		t.Fatalf("without drivers: %d %v %s", n, err, e.native(a.ID))
	}
	d := &deleter{agent: e.agent, fails: 1}
	e.ss.opts.Drivers = map[string]engines.Driver{"fake": d}
	if n, err := e.ss.DeleteOwed(ctx); n != 0 || err != nil || e.native(a.ID) != "owed" {
		t.Fatalf("the agent failed: %d %v %s", n, err, e.native(a.ID))
	}
	if n, err := e.ss.DeleteOwed(ctx); n != 1 || err != nil || e.native(a.ID) != "done" {
		t.Fatalf("tried again: %d %v %s", n, err, e.native(a.ID))
	}
	want := fmt.Sprintf("%s@%s", a.SessionID, a.WorkDir)
	if len(d.got) != 1 || d.got[0] != want || a.SessionID == "" {
		t.Errorf("deleted %v, want %s", d.got, want)
	}
	if ev := e.events(a.ID, KindNativeDeleted); len(ev) != 1 {
		t.Errorf("events %v", ev)
	}
	if n, _ := e.ss.DeleteOwed(ctx); n != 0 {
		t.Errorf("a settled deletion was done again")
	}

	// An agent with no way to delete its sessions.
	b := e.run(jobs.AssignRequest{Title: "Page the results", Folder: e.folder, NewSession: true})
	e.ss.Delete(ctx, b.ID, ledger.Actor{Kind: ledger.Person})
	e.ss.opts.Drivers = map[string]engines.Driver{"fake": e.agent}
	if n, err := e.ss.DeleteOwed(ctx); n != 1 || err != nil || e.native(b.ID) != "failed" {
		t.Errorf("no way to delete: %d %v %s", n, err, e.native(b.ID))
	}
}

// TestDeleteOwedAtStart: Start carries out what is owed, and a deletion right away.
func TestDeleteOwedAtStart(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.run(jobs.AssignRequest{Title: "Build the ranking API", Folder: e.folder, NewSession: true})
	e.ss.Delete(ctx, a.ID, ledger.Actor{Kind: ledger.Person})
	e.ss.opts.Drivers = map[string]engines.Driver{"fake": &deleter{agent: e.agent}}
	e.ss.Start()
	defer e.ss.Close()
	waitFor(t, func() bool { return e.native(a.ID) == "done" })
	b := e.run(jobs.AssignRequest{Title: "Page the results", Folder: e.folder, NewSession: true})
	e.ss.Delete(ctx, b.ID, ledger.Actor{Kind: ledger.Person})
	waitFor(t, func() bool { return e.native(b.ID) == "done" })
}

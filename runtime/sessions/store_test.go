package sessions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

// agent is a stand-in coding agent: it keeps the session it is asked to resume (or makes a new
// one), says it did the work, and for the prompt "wait" waits until it is stopped.
type agent struct {
	mu    sync.Mutex
	n     int
	specs []engines.Spec
}

func (a *agent) Name() string { return "fake" }

func (a *agent) Start(ctx context.Context, spec engines.Spec, h engines.Host) (engines.Run, error) {
	a.mu.Lock()
	a.n++
	sess := spec.Resume
	if sess == "" {
		sess = "agent-session-" + string(rune('0'+a.n))
	}
	a.specs = append(a.specs, spec)
	a.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	r := &agentRun{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		h.Event(engines.Event{Kind: engines.EventStarted, Session: sess})
		if spec.Prompt == "wait" {
			<-ctx.Done()
			r.err = engines.ErrStopped
			return
		}
		r.res = engines.Result{SessionID: sess, Summary: "Did it: " + firstLine(spec.Prompt), Turns: 1}
	}()
	return r, nil
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

func (a *agent) last() engines.Spec {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.specs[len(a.specs)-1]
}

type agentRun struct {
	cancel context.CancelFunc
	done   chan struct{}
	res    engines.Result
	err    error
}

func (r *agentRun) Wait() (engines.Result, error)  { <-r.done; return r.res, r.err }
func (r *agentRun) Stop(ctx context.Context) error { r.cancel(); return nil }

type env struct {
	t      *testing.T
	st     *store.Store
	rec    *records.Service
	ss     *Service
	js     *jobs.Service
	agent  *agent
	folder string
	data   string
	now    time.Time
	mu     sync.Mutex // guards now
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	w := ledger.New(st, bus)
	e := &env{t: t, st: st, rec: records.New(st, w), agent: &agent{}, data: filepath.Join(dir, "data"), now: time.Now()}
	os.MkdirAll(e.data, 0o700)
	e.folder, _ = filepath.EvalSymlinks(t.TempDir())
	e.ss = New(Options{Store: st, Writer: w, DataDir: e.data, Now: e.clock})
	e.js = jobs.New(jobs.Options{Store: st, Writer: w, Records: e.rec, DataDir: e.data, Sessions: e.ss,
		Drivers: map[string]engines.Driver{"fake": e.agent}})
	if err := e.js.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.js.Close()
		bus.Close()
		st.Close()
	})
	return e
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) later(d time.Duration) {
	e.mu.Lock()
	e.now = e.now.Add(d)
	e.mu.Unlock()
}

// run assigns and waits for the run to end (unless it waits).
func (e *env) run(req jobs.AssignRequest) jobs.Job {
	e.t.Helper()
	req.Agent = "fake"
	j, err := e.js.Assign(context.Background(), req)
	if err != nil {
		e.t.Fatal(err)
	}
	if req.Brief == "wait" {
		return j
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if j, _ = e.js.Get(context.Background(), j.ID); j.Status.Ended() {
			return j
		}
	}
	e.t.Fatalf("run %s did not end: %s", j.ID, j.Status)
	return j
}

func (e *env) list(f Filter) []Session {
	e.t.Helper()
	l, err := e.ss.List(context.Background(), f)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

func (e *env) events(runID string, kind events.Kind) []string {
	e.t.Helper()
	rows, err := e.st.Reader().Query(`SELECT data FROM events WHERE subject = ? AND kind = ? ORDER BY seq`, runID, kind)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var d string
		rows.Scan(&d)
		out = append(out, d)
	}
	return out
}

func TestSessionsDerivedFromRuns(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.run(jobs.AssignRequest{Title: "Build the ranking API", Folder: e.folder, NewSession: true})
	b := e.run(jobs.AssignRequest{Title: "Page the ranking results", Continue: a.ID})
	c := e.run(jobs.AssignRequest{Title: "Write the billing export", Folder: e.folder, NewSession: true})
	if b.Continues != a.ID || b.SessionID != a.SessionID || c.Continues != "" {
		t.Fatalf("runs: b continues %q (%q vs %q), c continues %q", b.Continues, b.SessionID, a.SessionID, c.Continues)
	}

	l := e.list(Filter{})
	if len(l) != 2 || l[0].ID != c.ID || l[1].ID != a.ID {
		t.Fatalf("sessions newest first: %+v", l)
	}
	s := l[1]
	if s.Agent != "fake" || s.RunCount != 2 || s.TaskCount != 2 || s.FirstTask.Title != "Build the ranking API" ||
		s.LatestTask.Title != "Page the ranking results" || s.Status != Idle || !s.Resumable || s.AgentSession != b.SessionID ||
		s.LastRun != b.ID || s.Folder != e.folder || s.Summary != "Did it: Page the ranking results" {
		t.Errorf("session: %+v", s)
	}
	if l := e.list(Filter{TaskID: b.TaskID}); len(l) != 1 || l[0].ID != a.ID {
		t.Errorf("by task: %+v", l)
	}
	if l := e.list(Filter{Q: "billing"}); len(l) != 1 || l[0].ID != c.ID {
		t.Errorf("by words: %+v", l)
	}
	if l := e.list(Filter{Limit: 1}); len(l) != 1 {
		t.Errorf("limit: %d", len(l))
	}
	d, err := e.ss.Get(ctx, b.ID)
	if err != nil || d.ID != a.ID || len(d.Runs) != 2 || d.Runs[1].Continues != a.ID || d.Runs[0].Title != "Build the ranking API" {
		t.Fatalf("get by a later run: %v %+v", err, d)
	}
	if _, err := e.ss.Get(ctx, "job_nope"); err == nil || err.Error() != `There is no agent session with id "job_nope".` {
		t.Errorf("missing: %v", err)
	}

	// Working, then queued behind it in the same folder.
	w := e.run(jobs.AssignRequest{Title: "Keep going", Brief: "wait", Continue: c.ID})
	q := e.run(jobs.AssignRequest{Title: "Queue behind", Brief: "wait", Folder: e.folder, NewSession: true})
	waitFor(t, func() bool {
		d, _ := e.ss.Get(ctx, c.ID)
		d2, _ := e.ss.Get(ctx, q.ID)
		return d.Status == Working && d2.Status == Queued
	})
	if _, err := e.ss.Delete(ctx, c.ID, ledger.Actor{Kind: ledger.Person}); err == nil || !strings.Contains(err.Error(), "still queued or going") {
		t.Errorf("delete while working: %v", err)
	}
	e.js.Stop(ctx, w.ID)
	e.js.Stop(ctx, q.ID)
	waitFor(t, func() bool { d, _ := e.ss.Get(ctx, c.ID); return d.Status == Idle })
}

func TestDeletedSessionIsNeverReopened(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.run(jobs.AssignRequest{Title: "Build the ranking API", Folder: e.folder, NewSession: true})
	b := e.run(jobs.AssignRequest{Title: "Page the ranking results", Continue: a.ID})
	s, err := e.ss.Delete(ctx, b.ID, ledger.Actor{Kind: ledger.Person})
	if err != nil || s.ID != a.ID {
		t.Fatalf("delete: %v %+v", err, s)
	}
	if _, err := e.ss.Delete(ctx, a.ID, ledger.Actor{Kind: ledger.Person}); err == nil || !strings.Contains(err.Error(), "already deleted") {
		t.Errorf("delete twice: %v", err)
	}
	if del, _ := e.ss.Deleted(ctx, b.ID); !del {
		t.Error("b's session is deleted")
	}
	if n := len(e.events(a.ID, KindDeleted)); n != 1 {
		t.Errorf("%d deletion events", n)
	}

	c := e.run(jobs.AssignRequest{Title: "Sort the ranking results", Continue: b.ID})
	if c.Continues != b.ID || c.WorkDir != e.folder {
		t.Fatalf("c: continues %q in %q", c.Continues, c.WorkDir)
	}
	spec := e.agent.last()
	if spec.Resume != "" || !strings.Contains(spec.Prompt, "This continues an earlier task, “Page the ranking results”") {
		t.Errorf("the agent was asked to resume %q with %q", spec.Resume, spec.Prompt)
	}
	if c.SessionID == b.SessionID {
		t.Error("a new agent session")
	}
	if ev := e.events(c.ID, jobs.KindSession); len(ev) != 1 || !strings.Contains(ev[0], "was deleted in Ensemble") {
		t.Errorf("the run says so: %q", ev)
	}
	l := e.list(Filter{})
	if len(l) != 2 || l[0].ID != c.ID || !l[0].Resumable || l[1].ID != a.ID || l[1].DeletedAt == nil || l[1].Resumable || l[1].RunCount != 2 {
		t.Fatalf("the deleted session keeps its own runs; the new one is its own: %+v", l)
	}
	// The new session is continued like any other.
	d := e.run(jobs.AssignRequest{Title: "And again", Continue: c.ID})
	if got, _ := e.ss.Get(ctx, d.ID); got.ID != c.ID || d.SessionID != c.SessionID {
		t.Errorf("continuing the new session: %+v", got)
	}
}

func TestChoiceContinuesAFittingSession(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.run(jobs.AssignRequest{Title: "Build the ranking API", Folder: e.folder})
	rows, _ := e.ss.Choices(ctx, a.ID)
	if len(rows) != 1 || rows[0].Decision != "new" || rows[0].Band != string(NoBand) || rows[0].ConfigVersion != DefaultConfig().Version {
		t.Fatalf("first run's decision: %+v", rows)
	}

	// A task that links to the session's task continues it, in its folder, without naming either.
	b := e.run(jobs.AssignRequest{Title: "Follow-up: add paging to ensemble://task/" + a.TaskID})
	if b.Continues != a.ID || b.WorkDir != e.folder || e.agent.last().Resume != a.SessionID {
		t.Fatalf("b continues %q in %q, resuming %q", b.Continues, b.WorkDir, e.agent.last().Resume)
	}
	ev := e.events(b.ID, jobs.KindSession)
	if len(ev) != 1 || !strings.Contains(ev[0], "Continued the agent's session: the task mentions “Build the ranking API”") {
		t.Errorf("the run says which and why: %q", ev)
	}
	rows, _ = e.ss.Choices(ctx, b.ID)
	if len(rows) != 1 || rows[0].Decision != "continue" || rows[0].Band != "confident" || rows[0].Session != a.ID ||
		rows[0].ContinuedRun != a.ID || len(rows[0].Candidates) != 1 || !rows[0].Candidates[0].Signals.Link ||
		rows[0].Candidates[0].Parts["link"] != 10 || rows[0].ConfigHash == "" {
		t.Errorf("recorded: %+v", rows)
	}

	// Asked for a new session: recorded, not chosen.
	c := e.run(jobs.AssignRequest{Title: "More on ensemble://task/" + a.TaskID, NewSession: true})
	rows, _ = e.ss.Choices(ctx, c.ID)
	if c.Continues != "" || len(rows) != 1 || rows[0].Note != "new-session" {
		t.Errorf("new session asked for: continues %q, %+v", c.Continues, rows)
	}

	// Nothing in common: a new session, low band, with its candidates.
	d := e.run(jobs.AssignRequest{Title: "Water the plants"})
	rows, _ = e.ss.Choices(ctx, d.ID)
	if d.Continues != "" || len(rows) != 1 || rows[0].Band != "low" || len(rows[0].Candidates) != 2 {
		t.Errorf("unrelated: continues %q, %+v", d.Continues, rows)
	}
	if ev := e.events(d.ID, jobs.KindSession); len(ev) != 0 {
		t.Errorf("a new session by choice needs no note: %q", ev)
	}

	// A deleted session is never a candidate.
	e.ss.Delete(ctx, b.ID, ledger.Actor{Kind: ledger.Person})
	f := e.run(jobs.AssignRequest{Title: "Again ensemble://task/" + a.TaskID})
	if f.Continues != "" {
		t.Errorf("chose a deleted session: %q", f.Continues)
	}

	// Turned off in sessions.json.
	os.WriteFile(filepath.Join(e.data, ConfigFile), []byte(`{"version": "off.1", "enabled": false}`), 0o600)
	e.later(2 * time.Second)
	g := e.run(jobs.AssignRequest{Title: "Also ensemble://task/" + c.TaskID})
	rows, _ = e.ss.Choices(ctx, g.ID)
	if g.Continues != "" || len(rows) != 1 || rows[0].Note != "disabled" || rows[0].ConfigVersion != "off.1" {
		t.Errorf("disabled: continues %q, %+v", g.Continues, rows)
	}
}

func TestChoiceStaysInTheFolderAndProject(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.run(jobs.AssignRequest{Title: "Build the ranking API", Folder: e.folder})
	other, _ := filepath.EvalSymlinks(t.TempDir())
	if b := e.run(jobs.AssignRequest{Title: "More on ensemble://task/" + a.TaskID, Folder: other}); b.Continues != "" {
		t.Errorf("another folder named: continued %q", b.Continues)
	}
	p, err := e.rec.Projects().Create(ctx, ledger.Actor{Kind: ledger.Person}, records.ProjectInput{Name: records.Some("Search")})
	if err != nil {
		t.Fatal(err)
	}
	task, err := e.rec.Tasks().Create(ctx, ledger.Actor{Kind: ledger.Person}, records.TaskInput{
		Title: records.Some("Paging for ensemble://task/" + a.TaskID), ProjectID: records.Some(&p.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if c := e.run(jobs.AssignRequest{TaskID: task.ID}); c.Continues != "" {
		t.Errorf("sessions never cross projects: continued %q", c.Continues)
	}
}

func TestSweepRetiredSessions(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	done := e.run(jobs.AssignRequest{Title: "Finished work", Folder: e.folder, NewSession: true})
	trashed := e.run(jobs.AssignRequest{Title: "Thrown away", Folder: e.folder, NewSession: true})
	open := e.run(jobs.AssignRequest{Title: "Still open", Folder: e.folder, NewSession: true})
	mixed := e.run(jobs.AssignRequest{Title: "Finished too", Folder: e.folder, NewSession: true})
	e.run(jobs.AssignRequest{Title: "But this goes on", Continue: mixed.ID})
	person := ledger.Actor{Kind: ledger.Person}
	for _, id := range []string{done.TaskID, mixed.TaskID} {
		if _, err := e.st.Writer().Exec(`UPDATE tasks SET status = 'done' WHERE id = ?`, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.rec.Tasks().Trash(ctx, person, trashed.TaskID); err != nil {
		t.Fatal(err)
	}

	if n, err := e.ss.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("nothing is retired yet: %d %v", n, err)
	}
	e.later(11 * time.Minute) // the trashed task is retired; the done one is within the completed window
	if n, err := e.ss.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("in use sessions are looked at again after 6 hours, so nothing: %d %v", n, err)
	}
	e.later(6*time.Hour + time.Minute)
	if n, err := e.ss.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("the trashed one: %d %v", n, err)
	}
	if d, _ := e.ss.Get(ctx, trashed.ID); d.DeletedAt == nil || d.DeletedWhy != "retired" {
		t.Errorf("trashed: %+v", d.Session)
	}
	os.WriteFile(filepath.Join(e.data, ConfigFile), []byte(`{"cleanup": {"delete": 1}}`), 0o600)
	e.later(8 * 24 * time.Hour)
	if n, err := e.ss.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("at most cleanup.delete a sweep: %d %v", n, err)
	}
	if d, _ := e.ss.Get(ctx, done.ID); d.DeletedAt == nil {
		t.Errorf("done long ago: %+v", d.Session)
	}
	if n, err := e.ss.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("the rest: %d %v", n, err)
	}
	for _, id := range []string{open.ID, mixed.ID} {
		if d, _ := e.ss.Get(ctx, id); d.DeletedAt != nil {
			t.Errorf("%s has a task in use: deleted", id)
		}
	}
	var owed int
	e.st.Reader().QueryRow(`SELECT count(*) FROM session_deletions WHERE native = 'owed' AND actor_kind = 'system'`).Scan(&owed)
	if owed != 2 {
		t.Errorf("%d deletions of the agent's own session owed", owed)
	}
}

func TestGuardLeavesAChangedSessionAlone(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.run(jobs.AssignRequest{Title: "Finished work", Folder: e.folder, NewSession: true})
	e.st.Writer().Exec(`UPDATE tasks SET status = 'done' WHERE id = ?`, a.TaskID)
	e.later(8 * 24 * time.Hour)
	w, err := e.ss.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := w.byRun[a.ID]
	e.run(jobs.AssignRequest{Title: "One more thing", Continue: a.ID}) // the session changed after it was read
	err = e.ss.markDeleted(ctx, w.describe(c), "retired", ledger.Actor{Kind: ledger.System}, func(t *ledger.Tx) error {
		return guardRetired(t, c, e.ss.Config(), e.clock())
	})
	if err != errSkip {
		t.Fatalf("guard: %v", err)
	}
	if d, _ := e.ss.Get(ctx, a.ID); d.DeletedAt != nil {
		t.Error("deleted a session that changed")
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatal("timed out")
}

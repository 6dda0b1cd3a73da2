package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

// step is one thing the stand-in agent does, in order.
type step struct {
	event  *engines.Event     // sends an event
	call   *engines.ToolCall  // asks permission; the answer is kept in the attempt's permits
	ask    *engines.Question  // asks the person
	wait   bool               // waits until stopped
	hold   chan struct{}      // waits until closed (or stopped)
	fail   error              // ends the attempt with this error
	result *engines.Result    // ends the attempt with this result
	do     func(engines.Spec) // runs code (to record the spec)
}

// fakeDriver is a stand-in agent: each Start replays the next script (the last one again when
// they run out) through the Host.
type fakeDriver struct {
	name    string
	mu      sync.Mutex
	scripts [][]step
	specs   []engines.Spec
	permits []engines.Permission
	answers []engines.Answer
	starts  int
	stopped int
}

func (d *fakeDriver) Name() string { return d.name }

func (d *fakeDriver) Start(ctx context.Context, spec engines.Spec, h engines.Host) (engines.Run, error) {
	d.mu.Lock()
	i := min(d.starts, len(d.scripts)-1)
	d.starts++
	d.specs = append(d.specs, spec)
	script := d.scripts[i]
	d.mu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	r := &fakeRun{d: d, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.res, r.err = d.play(ctx, spec, h, script)
	}()
	return r, nil
}

func (d *fakeDriver) play(ctx context.Context, spec engines.Spec, h engines.Host, script []step) (engines.Result, error) {
	for _, s := range script {
		switch {
		case s.event != nil:
			ev := *s.event
			ev.At = time.Now()
			h.Event(ev)
		case s.call != nil:
			p, err := h.Permit(ctx, *s.call)
			if err != nil {
				return engines.Result{}, stopErr(ctx, err)
			}
			d.mu.Lock()
			d.permits = append(d.permits, p)
			d.mu.Unlock()
		case s.ask != nil:
			a, err := h.Ask(ctx, *s.ask)
			if err != nil {
				return engines.Result{}, stopErr(ctx, err)
			}
			d.mu.Lock()
			d.answers = append(d.answers, a)
			d.mu.Unlock()
		case s.wait:
			<-ctx.Done()
			return engines.Result{}, stopErr(ctx, ctx.Err())
		case s.hold != nil:
			select {
			case <-s.hold:
			case <-ctx.Done():
				return engines.Result{}, stopErr(ctx, ctx.Err())
			}
		case s.fail != nil:
			return engines.Result{}, s.fail
		case s.result != nil:
			return *s.result, nil
		case s.do != nil:
			s.do(spec)
		}
	}
	return engines.Result{Summary: "Finished.", Turns: 1}, nil
}

func stopErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return engines.ErrStopped
	}
	return err
}

type fakeRun struct {
	d      *fakeDriver
	cancel context.CancelCauseFunc
	done   chan struct{}
	res    engines.Result
	err    error
}

func (r *fakeRun) Wait() (engines.Result, error) { <-r.done; return r.res, r.err }

func (r *fakeRun) Stop(ctx context.Context) error {
	r.d.mu.Lock()
	r.d.stopped++
	r.d.mu.Unlock()
	r.cancel(engines.ErrStopped)
	return nil
}

// fakeAsker answers with reply after an optional hold, counting the questions.
type fakeAsker struct {
	mu    sync.Mutex
	asked []Question
	reply Reply
	hold  chan struct{}
}

func (a *fakeAsker) Ask(ctx context.Context, q Question) (Reply, error) {
	a.mu.Lock()
	a.asked = append(a.asked, q)
	hold := a.hold
	a.mu.Unlock()
	if q.Unattended { // as Needs me answers for a run in Run unattended
		if q.Recommended >= 0 && q.Recommended < len(q.Options) {
			return Reply{Option: q.Recommended, Text: q.Options[q.Recommended]}, nil
		}
		return Reply{Option: -1, Text: "No one is watching this run."}, nil
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return Reply{}, ctx.Err()
		}
	}
	return a.reply, nil
}

func (a *fakeAsker) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked)
}

// env is a service on a real SQLite file with the stand-in driver.
type env struct {
	t      *testing.T
	st     *store.Store
	bus    *events.Bus
	w      *ledger.Writer
	rec    *records.Service
	svc    *Service
	driver *fakeDriver
	asker  *fakeAsker
	data   string
	folder string
	timing Timing
}

func fastTiming() Timing {
	return Timing{Quiet: 10 * time.Second, QuietTool: 10 * time.Second,
		Retries: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}, Tick: 5 * time.Millisecond,
		Minute: time.Second}
}

func newEnv(t *testing.T, scripts ...[]step) *env {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	w := ledger.New(st, bus)
	e := &env{t: t, st: st, bus: bus, w: w, rec: records.New(st, w), data: filepath.Join(dir, "data"),
		folder: t.TempDir(), driver: &fakeDriver{name: "fake", scripts: scripts}, asker: &fakeAsker{},
		timing: fastTiming()}
	e.folder, _ = filepath.EvalSymlinks(e.folder)
	t.Cleanup(func() {
		if e.svc != nil {
			e.svc.Close()
		}
		bus.Close()
		st.Close()
	})
	return e
}

// service makes (and starts, unless told not to) the service.
func (e *env) service(start bool) *Service {
	e.t.Helper()
	e.svc = New(Options{Store: e.st, Writer: e.w, Records: e.rec, Drivers: map[string]engines.Driver{"fake": e.driver},
		Asker: e.asker, DataDir: e.data, Home: "/home/nobody", Timing: e.timing})
	if start {
		if err := e.svc.Start(context.Background()); err != nil {
			e.t.Fatal(err)
		}
	}
	return e.svc
}

func (e *env) assign(req AssignRequest) Job {
	e.t.Helper()
	if req.Agent == "" {
		req.Agent = "fake"
	}
	if req.Title == "" && req.TaskID == "" {
		req.Title = "Fix the login retry"
	}
	j, err := e.svc.Assign(context.Background(), req)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// waitStatus waits until the job has one of the statuses.
func (e *env) waitStatus(id string, want ...Status) Job {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		j, err := e.svc.Get(context.Background(), id)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, w := range want {
			if j.Status == w {
				return j
			}
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			e.t.Logf("%s", buf[:n])
			e.t.Fatalf("run %s is %s (%s), want %v", id, j.Status, j.Error, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitEnded waits until the run has left the service (its end recorded).
func (e *env) waitEnded(id string, want Status) Job {
	e.t.Helper()
	j := e.waitStatus(id, want)
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.svc.mu.Lock()
		_, going := e.svc.runs[id]
		e.svc.mu.Unlock()
		if !going {
			break
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("run %s did not leave the service", id)
		}
		time.Sleep(5 * time.Millisecond)
	}
	j, _ = e.svc.Get(context.Background(), id)
	return j
}

// trace is the run's events, decoded.
func (e *env) trace(id string) []struct {
	Kind events.Kind
	Data Trace
} {
	e.t.Helper()
	evs, err := e.svc.Events(context.Background(), id, 0, 10_000)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []struct {
		Kind events.Kind
		Data Trace
	}
	for _, ev := range evs {
		var d Trace
		json.Unmarshal(ev.Data, &d)
		out = append(out, struct {
			Kind events.Kind
			Data Trace
		}{ev.Kind, d})
	}
	return out
}

func (e *env) kinds(id string) []events.Kind {
	var ks []events.Kind
	for _, ev := range e.trace(id) {
		ks = append(ks, ev.Kind)
	}
	return ks
}

func count(t *testing.T, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func ev(kind engines.EventKind, f func(*engines.Event)) step {
	e := engines.Event{Kind: kind}
	if f != nil {
		f(&e)
	}
	return step{event: &e}
}

func shell(id, cmd string) step {
	return step{call: &engines.ToolCall{ID: id, Tool: "Bash", Kind: "shell", Command: cmd,
		Input: json.RawMessage(`{"command":` + quote(cmd) + `}`)}}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

var errNetwork = errors.New("connection reset by peer")

var personActor = ledger.Actor{Kind: ledger.Person}

// driverView is what the stand-in driver saw, copied under its lock.
type driverView struct {
	specs   []engines.Spec
	permits []engines.Permission
	answers []engines.Answer
	starts  int
	stopped int
}

func (d *fakeDriver) view() driverView {
	d.mu.Lock()
	defer d.mu.Unlock()
	return driverView{specs: slices.Clone(d.specs), permits: slices.Clone(d.permits), answers: slices.Clone(d.answers),
		starts: d.starts, stopped: d.stopped}
}

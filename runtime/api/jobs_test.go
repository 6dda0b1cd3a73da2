package api

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/profiles"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

// standIn is an agent that says its prompt back and finishes, or, for the prompt "wait", waits
// until it is stopped.
type standIn struct{}

func (standIn) Name() string { return "standin" }

func (standIn) Start(ctx context.Context, spec engines.Spec, h engines.Host) (engines.Run, error) {
	ctx, cancel := context.WithCancel(ctx)
	r := &standInRun{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		h.Event(engines.Event{Kind: engines.EventStarted, Session: "s1"})
		h.Event(engines.Event{Kind: engines.EventMessage, Text: "Working on: " + spec.Prompt})
		if spec.Prompt == "wait" {
			<-ctx.Done()
			r.err = engines.ErrStopped
			return
		}
		r.res = engines.Result{Summary: "Did it.", Turns: 1}
	}()
	return r, nil
}

type standInRun struct {
	cancel context.CancelFunc
	done   chan struct{}
	res    engines.Result
	err    error
}

func (r *standInRun) Wait() (engines.Result, error)  { <-r.done; return r.res, r.err }
func (r *standInRun) Stop(ctx context.Context) error { r.cancel(); return nil }

func newJobsFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	w := ledger.New(st, bus)
	rec := records.New(st, w)
	js := jobs.New(jobs.Options{Store: st, Writer: w, Records: rec, DataDir: filepath.Join(dir, "data"),
		Drivers: map[string]engines.Driver{"standin": standIn{}}})
	if err := js.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	prof := profiles.New(profiles.Options{Store: st, Writer: w, KnownAgent: js.KnownAgent})
	tok := NewLaunchToken()
	a := New(Options{Version: "test", Token: tok, Keepalive: 50 * time.Millisecond, Jobs: js, Profiles: prof},
		slog.New(slog.NewTextHandler(io.Discard, nil)), st, bus, rec)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		js.Close()
		bus.Close()
		srv.Close()
		st.Close()
	})
	folder, _ := filepath.EvalSymlinks(t.TempDir())
	return &fixture{srv: srv, api: a, store: st, bus: bus, token: tok}, folder
}

func TestAssignAndFollowARun(t *testing.T) {
	f, folder := newJobsFixture(t)
	code, job := f.call(t, "POST", "/api/agent/assign",
		`{"title":"Say hello","agent":"standin","folder":"`+folder+`","settings":{"mode":"review","maxTurns":5}}`)
	if code != http.StatusCreated || job["status"] != "queued" && job["status"] != "running" {
		t.Fatalf("assign = %d %v", code, job)
	}
	id := job["id"].(string)
	if s := job["settings"].(map[string]any); s["mode"] != "review" || s["maxTurns"] != float64(5) {
		t.Errorf("settings = %v", s)
	}

	// The run's stream replays its trace from the start, through to its end.
	req, _ := http.NewRequest("GET", f.srv.URL+"/api/agent/jobs/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+f.token.Reveal())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var kinds []events.Kind
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if k, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			kinds = append(kinds, events.Kind(k))
			if events.Kind(k) == jobs.KindEnded {
				break
			}
		}
	}
	want := []events.Kind{jobs.KindCreated, jobs.KindStatus, jobs.KindStarted, jobs.KindMessage, jobs.KindStatus, jobs.KindEnded}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("events = %v, want %v", kinds, want)
	}

	// A client that saw more than the log holds is told to reset, then sent the trace from its start.
	newest, _ := events.Last(ctx, f.store.Reader())
	req, _ = http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/api/agent/jobs/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+f.token.Reveal())
	req.Header.Set("Last-Event-ID", fmt.Sprint(newest+100))
	again, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Body.Close()
	kinds = nil
	sc = bufio.NewScanner(again.Body)
	for sc.Scan() {
		if k, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			kinds = append(kinds, events.Kind(k))
			if events.Kind(k) == jobs.KindEnded {
				break
			}
		}
	}
	if fmt.Sprint(kinds) != fmt.Sprint(append([]events.Kind{events.KindReset}, want...)) {
		t.Errorf("resumed from ahead of the log: %v, want reset then %v", kinds, want)
	}

	code, got := f.call(t, "GET", "/api/agent/jobs/"+id, "")
	if code != 200 || got["status"] != "done" || got["summary"] != "Did it." {
		t.Errorf("get = %d %v", code, got)
	}
	code, list := f.call(t, "GET", "/api/agent/jobs?taskId="+got["taskId"].(string), "")
	if code != 200 || len(list["jobs"].([]any)) != 1 {
		t.Errorf("list = %d %v", code, list)
	}
	if code, _ := f.call(t, "POST", "/api/agent/jobs/"+id+"/pause", ""); code != http.StatusConflict {
		t.Errorf("pause of an ended run = %d", code)
	}
	// A run with no tab has no live picture; an unknown run is not found.
	for _, c := range []struct {
		id   string
		code int
	}{{id, http.StatusNoContent}, {"job_none", http.StatusNotFound}} {
		req, _ := http.NewRequest("GET", f.srv.URL+"/api/agent/jobs/"+c.id+"/live", nil)
		req.Header.Set("Authorization", "Bearer "+f.token.Reveal())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code || resp.Header.Get("Cache-Control") == "" && c.code == http.StatusNoContent {
			t.Errorf("live picture of %s = %d %v, want %d", c.id, resp.StatusCode, resp.Header, c.code)
		}
	}
}

func TestStopPauseResumeOverHTTP(t *testing.T) {
	f, folder := newJobsFixture(t)
	_, job := f.call(t, "POST", "/api/agent/assign", `{"title":"wait","agent":"standin","folder":"`+folder+`"}`)
	id := job["id"].(string)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, j := f.call(t, "GET", "/api/agent/jobs/"+id, "")
		if j["status"] == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never running: %v", j)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, step := range []struct{ action, want string }{{"pause", "paused"}, {"resume", "running"}, {"stop", "stopped"}} {
		code, j := f.call(t, "POST", "/api/agent/jobs/"+id+"/"+step.action, "")
		if code != 200 || j["status"] != step.want {
			t.Errorf("%s = %d %v", step.action, code, j["status"])
		}
	}
}

func TestAssignBadInput(t *testing.T) {
	f, folder := newJobsFixture(t)
	for _, tc := range []struct {
		body string
		code int
		want string
	}{
		{`{"title":"x","agent":"nope"}`, 400, `There is no agent "nope"; the agents are standin.`},
		{`{"agent":"standin"}`, 400, "Name the task"},
		{`{"title":"x","agent":"standin","folder":"relative"}`, 400, "absolute path"},
		{`{"title":"x","agent":"standin","repoUrl":"file:///etc/passwd"}`, 400, "not a repository URL"},
		{`{"title":"x","agent":"standin","repoUrl":"ssh://git@example.com/a/b"}`, 400, "user name or password"},
		{`{"title":"x","agent":"standin","folder":"` + folder + `","settings":{"mode":"yolo"}}`, 400, "Mode"},
		{`{"taskId":"tsk_none","agent":"standin"}`, 400, "There is no task"},
		{`{"title":"x","agent":"standin","colour":"red"}`, 400, "Unknown field"},
	} {
		code, out := f.call(t, "POST", "/api/agent/assign", tc.body)
		if code != tc.code || !strings.Contains(out["error"].(string), tc.want) {
			t.Errorf("%s → %d %v, want %d %q", tc.body, code, out, tc.code, tc.want)
		}
	}
	if code, out := f.call(t, "GET", "/api/agent/jobs", ""); code != 200 || len(out["jobs"].([]any)) != 0 {
		t.Errorf("jobs written: %v", out)
	}
	if code, _ := f.call(t, "GET", "/api/agent/jobs/job_none", ""); code != 404 {
		t.Errorf("unknown job = %d", code)
	}
	if code, _ := f.call(t, "GET", "/api/agent/jobs/job_none/events", ""); code != 404 {
		t.Errorf("unknown job's events = %d", code)
	}
}

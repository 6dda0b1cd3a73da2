package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/ensemblework/ensemble/runtime/events"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/profiles"
)

func TestTraceLine(t *testing.T) {
	for _, tc := range []struct {
		kind events.Kind
		t    jobs.Trace
		want string
	}{
		{jobs.KindToolStart, jobs.Trace{Step: 3, Tool: "Bash", Input: `{"command":"go test ./..."}`}, `  3 Bash {"command":"go test ./..."}`},
		{jobs.KindToolEnd, jobs.Trace{Step: 3, Output: "ok\n  all", DurationMs: 1500}, "    └ ok (1.5s) ok all"},
		{jobs.KindToolEnd, jobs.Trace{Failed: true, Output: "boom"}, "    └ failed (0s) boom"},
		{jobs.KindMessage, jobs.Trace{Text: "Done  with\nit"}, "» Done with it"},
		{jobs.KindDecision, jobs.Trace{Tool: "Bash", Decision: "refuse", Reason: "`sudo` is never allowed."}, "  ✗ Bash: `sudo` is never allowed."},
		{jobs.KindDecision, jobs.Trace{Tool: "Edit", Decision: "ask", Reason: "Edits wait for you in Ask mode."}, "  ? Edit needs you: Edits wait for you in Ask mode."},
		{jobs.KindUsage, jobs.Trace{}, ""},
		{jobs.KindEnded, jobs.Trace{Status: jobs.Done, Summary: "Fixed it.", Turns: 4,
			Usage: &engines.Usage{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.123}},
			"■ done — 4 turns, 1200 tokens in, 300 out, $0.12\n\nFixed it."},
		{jobs.KindEnded, jobs.Trace{Status: jobs.Failed, Reason: "Agent not installed."}, "■ failed: Agent not installed."},
	} {
		if got := traceLine(tc.kind, tc.t); got != tc.want {
			t.Errorf("traceLine(%s) = %q, want %q", tc.kind, got, tc.want)
		}
	}
}

func TestRunRequest(t *testing.T) {
	f := runFlags{agent: "claude", folder: "/tmp/x", mode: "review", git: "commit", outside: "read", maxTurns: 9, model: "opus"}
	req, err := f.request([]string{"Fix it"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.Title != "Fix it" || req.Folder != "/tmp/x" || *req.Settings.Mode != "review" || *req.Settings.Git != "commit" ||
		*req.Settings.MaxTurns != 9 || *req.Settings.Model != "opus" || !*req.Settings.Sandbox || !*req.Settings.Internet ||
		req.Settings.MaxMinutes != nil {
		t.Errorf("request = %+v", req)
	}
	f.workspace = true
	if req, _ := f.request([]string{"x"}, nil); req.Folder != "" {
		t.Errorf("workspace run has folder %q", req.Folder)
	}
	f.worktree = true
	if _, err := f.request([]string{"x"}, nil); err == nil {
		t.Errorf("--workspace with --worktree accepted")
	}
}

// TestRunRequestUnderProfile: under a run profile only the flags given go in the request, and the
// profile fills the rest.
func TestRunRequestUnderProfile(t *testing.T) {
	str := func(v string) *string { return &v }
	prof := &profiles.Profile{Name: "Careful", Agent: "claude", Folder: "/p",
		Settings: jobs.SettingsInput{Mode: str("review"), Git: str("commit"), Model: str("opus")}}
	defaults := runFlags{folder: ".", mode: "ask", git: "local", outside: "read"}
	for _, c := range []struct {
		name          string
		flags         func(*runFlags) []string // sets flags, returns the names given
		agent, folder string
		mode, git     string
		model         string
		sandbox       *bool
	}{
		{"nothing given", func(*runFlags) []string { return nil }, "claude", "/p", "review", "commit", "opus", nil},
		{"mode and agent given", func(f *runFlags) []string { f.mode, f.agent = "unattended", "codex"; return []string{"mode", "agent"} },
			"codex", "/p", "unattended", "commit", "opus", nil},
		{"folder and sandbox given", func(f *runFlags) []string {
			f.folder, f.folderSet, f.noSandbox = "/mine", true, true
			return []string{"folder", "no-sandbox"}
		}, "claude", "/mine", "review", "commit", "opus", new(bool)},
		{"workspace", func(f *runFlags) []string { f.workspace = true; return []string{"workspace"} }, "claude", "", "review", "commit", "opus", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := defaults
			given := c.flags(&f)
			f.given = func(flag string) bool { return slices.Contains(given, flag) }
			req, err := f.request([]string{"Fix it"}, prof)
			if err != nil {
				t.Fatal(err)
			}
			s := req.Settings
			if req.Agent != c.agent || req.Folder != c.folder || *s.Mode != c.mode || *s.Git != c.git || *s.Model != c.model ||
				s.Outside != nil || s.MaxTurns != nil || (c.sandbox == nil) != (s.Sandbox == nil) {
				t.Errorf("request %+v, settings %+v", req, s)
			}
		})
	}
}

func TestReadSSE(t *testing.T) {
	in := "retry: 2000\n: live\n\nid: 7\nevent: run.message\ndata: {\"text\":\"hi\"}\n\n: keepalive\n\nid: 8\nevent: run.ended\ndata: {}\n\n"
	var got []string
	readSSE(strings.NewReader(in), func(ev sseEvent) bool {
		got = append(got, fmt.Sprintf("%d %s %s", ev.seq, ev.kind, ev.data))
		return true
	})
	if want := []string{`7 run.message {"text":"hi"}`, "8 run.ended {}"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events = %q", got)
	}
}

// stubRuntime serves a run's events and one Needs me decision for it, and records the answer.
type stubRuntime struct {
	mu      sync.Mutex
	answers []string
	stopped bool
	hold    bool // keep the run going until stopped
	// elsewhere answers the decision from the window a moment after it is asked; the run goes on
	// once release is closed.
	elsewhere bool
	release   chan struct{}
}

func (s *stubRuntime) handler(t *testing.T) http.Handler {
	mux := http.NewServeMux()
	sse := func(w http.ResponseWriter, evs ...string) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range evs {
			io.WriteString(w, e)
		}
		w.(http.Flusher).Flush()
	}
	ev := func(seq int, kind events.Kind, v any) string {
		b, _ := json.Marshal(v)
		return fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", seq, kind, b)
	}
	answered := make(chan struct{})
	var once sync.Once
	answer := func() { once.Do(func() { close(answered) }) }
	mux.HandleFunc("GET /api/agent/jobs/job_1/events", func(w http.ResponseWriter, r *http.Request) {
		sse(w, ev(1, jobs.KindCreated, jobs.Trace{RunID: "job_1"}),
			ev(2, jobs.KindStatus, jobs.Trace{Status: jobs.Running, Reason: "Started in /tmp/x."}),
			ev(4, jobs.KindDecision, jobs.Trace{Tool: "Edit", Decision: "ask", Reason: "Edits wait for you."}))
		if s.hold {
			<-r.Context().Done()
			return
		}
		goOn := answered
		if s.release != nil {
			goOn = s.release
		}
		select {
		case <-goOn:
		case <-r.Context().Done():
			return
		}
		sse(w, ev(6, jobs.KindToolStart, jobs.Trace{Step: 1, Tool: "Edit", Input: "a.go"}),
			ev(7, jobs.KindEnded, jobs.Trace{Status: jobs.Done, Summary: "All done.", Usage: &engines.Usage{InputTokens: 5}}))
	})
	mux.HandleFunc("GET /api/events", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("since") != "1" {
			t.Errorf("needs followed since %q", r.URL.Query().Get("since"))
		}
		other := needs.NewQuestion(needs.Source{RunID: "job_2", Title: "Other"}, "Not ours?", []string{"a"}, 0, false)
		other.ID, other.Status = "dec_other", needs.Open
		d := needs.NewPermission(needs.Source{RunID: "job_1", Title: "Fix it"}, "Edit a.go", jobsTouches(), "Edits wait for you.")
		d.ID, d.Status = "dec_1", needs.Open
		sse(w, ev(3, "needs.created", other), ev(5, "needs.created", d))
		if s.elsewhere {
			time.Sleep(100 * time.Millisecond) // the person reads it, then answers in the window
			d.Status, d.AnsweredBy, d.Answer = needs.Answered, "window", &needs.Answer{Option: 1, Text: "Allow for this run"}
			sse(w, ev(6, "needs.answered", d))
			answer()
		}
		<-r.Context().Done()
	})
	mux.HandleFunc("POST /api/needs/{id}/answer", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.answers = append(s.answers, r.PathValue("id")+" "+strings.TrimSpace(string(b)))
		s.mu.Unlock()
		d := needs.NewPermission(needs.Source{RunID: "job_1"}, "Edit a.go", jobsTouches(), "")
		d.Answer = &needs.Answer{Option: 1, Text: "Allow for this run"}
		json.NewEncoder(w).Encode(d)
		answer()
	})
	mux.HandleFunc("POST /api/agent/jobs/job_1/stop", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
		json.NewEncoder(w).Encode(jobs.Job{ID: "job_1", Status: jobs.Stopped})
	})
	return mux
}

func TestFollowRunAnswersInline(t *testing.T) {
	stub := &stubRuntime{}
	srv := httptest.NewServer(stub.handler(t))
	defer srv.Close()
	c := &client{f: apiFile{URL: srv.URL, Token: "t"}, http: httpClient()}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	status, err := followRun(ctx, c, "job_1", strings.NewReader("2\n"), &out)
	if err != nil || status != jobs.Done {
		t.Fatalf("followRun = %s, %v\n%s", status, err, out.String())
	}
	if len(stub.answers) != 1 || stub.answers[0] != `dec_1 {"option":1}` {
		t.Errorf("answers = %q", stub.answers)
	}
	for _, want := range []string{"▶ Started in /tmp/x.", "? Edit needs you", "Answered “Allow for this run”", "1 Edit a.go", "■ done", "All done."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "Not ours?") {
		t.Errorf("asked another run's decision:\n%s", out.String())
	}
}

// TestFollowRunQuestionSettledElsewhere: a question answered in the window while its prompt waits
// here takes the prompt away, says how it was answered, and the trace goes on; nothing is
// answered from here.
func TestFollowRunQuestionSettledElsewhere(t *testing.T) {
	stub := &stubRuntime{elsewhere: true, release: make(chan struct{})}
	srv := httptest.NewServer(stub.handler(t))
	defer srv.Close()
	c := &client{f: apiFile{URL: srv.URL, Token: "t"}, http: httpClient()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	in, typing := io.Pipe() // the person types nothing
	defer typing.Close()
	out := &lockedBuffer{}
	// The run goes on once the terminal has said the question was answered in the window.
	go func() {
		defer close(stub.release)
		for ctx.Err() == nil && !strings.Contains(out.String(), "(window).") {
			time.Sleep(10 * time.Millisecond)
		}
	}()
	status, err := followRun(ctx, c, "job_1", in, out)
	if err != nil || status != jobs.Done {
		t.Fatalf("followRun = %s, %v\n%s", status, err, out.String())
	}
	if len(stub.answers) != 0 {
		t.Errorf("answered from here: %q", stub.answers)
	}
	got := out.String()
	want := "Choose (1-3, s to skip, q to quit; 3 is recommended): \n  Answered “Allow for this run” (window).\n  1 Edit a.go"
	if !strings.Contains(got, want) {
		t.Errorf("output lacks %q:\n%s", want, got)
	}
	if !strings.Contains(got, "■ done") {
		t.Errorf("the trace did not go on:\n%s", got)
	}
}

// TestFollowRunEnterChoosesNothing: Enter alone at the prompt answers nothing (the recommended
// option here is Refuse); the question waits for a choice typed.
func TestFollowRunEnterChoosesNothing(t *testing.T) {
	stub := &stubRuntime{}
	srv := httptest.NewServer(stub.handler(t))
	defer srv.Close()
	c := &client{f: apiFile{URL: srv.URL, Token: "t"}, http: httpClient()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out bytes.Buffer
	status, err := followRun(ctx, c, "job_1", strings.NewReader("\n\n1\n"), &out)
	if err != nil || status != jobs.Done {
		t.Fatalf("followRun = %s, %v\n%s", status, err, out.String())
	}
	if len(stub.answers) != 1 || stub.answers[0] != `dec_1 {"option":0}` {
		t.Errorf("answers = %q, want only the 1 typed", stub.answers)
	}
	if n := strings.Count(out.String(), "Nothing is chosen for you: type 1 to 3, s to skip, q to quit (3 is recommended)."); n != 2 {
		t.Errorf("%d sentences for Enter alone, want 2:\n%s", n, out.String())
	}
}

func TestFollowRunStopsOnInterrupt(t *testing.T) {
	stub := &stubRuntime{hold: true}
	srv := httptest.NewServer(stub.handler(t))
	defer srv.Close()
	c := &client{f: apiFile{URL: srv.URL, Token: "t"}, http: httpClient()}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel) // Ctrl-C
	var out bytes.Buffer
	// No input: the inline question is left for later, and the run goes on until interrupted.
	status, err := followRun(ctx, c, "job_1", strings.NewReader(""), &out)
	if err != nil || status != jobs.Stopped || !stub.stopped {
		t.Errorf("followRun = %s, %v, stopped %v\n%s", status, err, stub.stopped, out.String())
	}
}

func jobsTouches() judge.Touches { return judge.Touches{Writes: []string{"a.go"}} }

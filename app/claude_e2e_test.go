package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/claude"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/needs"
)

// TestClaudeRunsUnderTheJudge gives tasks to the real Claude Code from npm, through the runtime's
// API as the window or `ensemble run` would, against the scripted model in a loopback-only network
// namespace: every tool call goes through the judge, what needs the person waits on Needs me and is
// answered through the API, and a second task continues the first one's session.
func TestClaudeRunsUnderTheJudge(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Claude Code; not in -short")
	}
	bin := enginetest.InstallNPM(t, "@anthropic-ai/claude-code", "2.1.197", "claude")
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	model := enginetest.NewServer(t)
	t.Setenv("HOME", enginetest.ClaudeHome(t, model.URL))
	t.Setenv("TMPDIR", t.TempDir())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0", Log: log,
		Drivers: map[string]engines.Driver{"claude": claude.New(claude.WithBinary(bin), claude.WithLogger(log))}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	folder := t.TempDir()
	if err := os.WriteFile(filepath.Join(folder, "notes.txt"), []byte("plant tomatoes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	assign := func(t *testing.T, title string, extra map[string]any) jobs.Job {
		t.Helper()
		req := map[string]any{"title": title, "agent": "claude", "folder": folder,
			"settings": map[string]any{"mode": "ask", "model": "claude-sonnet-4-5", "maxTurns": 10}}
		for k, v := range extra {
			req[k] = v
		}
		var j jobs.Job
		if err := c.do(context.Background(), "POST", "/api/agent/assign", req, &j); err != nil {
			t.Fatal(err)
		}
		return j
	}

	var first jobs.Job
	t.Run("AllowedReadRunsWithoutAsking", func(t *testing.T) {
		model.Script(enginetest.Shell("ls"), enginetest.Say("The folder holds notes.txt."))
		first = waitRun(t, c, assign(t, "List the folder", nil).ID, jobs.Done)
		if n := needsOf(t, c, first.ID); len(n) != 0 {
			t.Errorf("an allowed read asked the person: %+v", n)
		}
		if tr, _ := model.LastToolResult(); !strings.Contains(tr.Content, "notes.txt") || tr.IsError {
			t.Errorf("the model got %+v, want the listing", tr)
		}
		if first.Summary != "The folder holds notes.txt." || first.SessionID == "" {
			t.Errorf("summary %q, session %q", first.Summary, first.SessionID)
		}
		// What Claude Code itself says it ran with (spec 003 §3.4): its model and its window.
		if o := first.Observed; o.Model != "claude-sonnet-4-5" || o.ContextTokens == 0 || o.Effort != "" {
			t.Errorf("observed settings %+v", o)
		}
	})

	t.Run("EditWaitsOnNeedsMe", func(t *testing.T) {
		// Claude Code's own Write tool (an edit), then a command that changes the folder: each
		// waits on Needs me in Ask mode and goes on once answered through the API.
		made := filepath.Join(folder, "plan.md")
		model.Script(
			enginetest.ToolCall("Write", map[string]any{"file_path": made, "content": "water daily\n"}),
			enginetest.Shell("touch made_by_agent.txt").WhenLastUser("plan.md"),
			enginetest.Say("Made the files."),
		)
		j := assign(t, "Make a file", nil)
		d := waitNeed(t, c, j.ID)
		if d.Kind != needs.Permission || !strings.Contains(d.Call, "plan.md") {
			t.Fatalf("decision = %+v", d)
		}
		if _, err := os.Stat(made); err == nil {
			t.Fatal("the edit was made before the person answered")
		}
		if err := c.do(context.Background(), "POST", "/api/needs/"+d.ID+"/answer", map[string]any{"option": 0}, nil); err != nil {
			t.Fatal(err)
		}
		d = waitNeed(t, c, j.ID)
		if d.Kind != needs.Permission || !strings.Contains(d.Call, "touch made_by_agent.txt") {
			t.Fatalf("decision = %+v", d)
		}
		if _, err := os.Stat(filepath.Join(folder, "made_by_agent.txt")); err == nil {
			t.Fatal("the command ran before the person answered")
		}
		if err := c.do(context.Background(), "POST", "/api/needs/"+d.ID+"/answer", map[string]any{"option": 0}, nil); err != nil {
			t.Fatal(err)
		}
		waitRun(t, c, j.ID, jobs.Done)
		if b, err := os.ReadFile(made); err != nil || string(b) != "water daily\n" {
			t.Errorf("the allowed edit was not made: %q, %v", b, err)
		}
		if _, err := os.Stat(filepath.Join(folder, "made_by_agent.txt")); err != nil {
			t.Errorf("the allowed command did not run: %v", err)
		}
	})

	t.Run("DangerousCommandRefusedWithReason", func(t *testing.T) {
		model.Script(enginetest.Shell("rm -rf ~"), enginetest.Say("I will not do that."))
		j := waitRun(t, c, assign(t, "Clean up", nil).ID, jobs.Done)
		tr, _ := model.LastToolResult()
		if !tr.IsError || !strings.Contains(tr.Content, "Refused") || !strings.Contains(tr.Content, "beyond recovery") {
			t.Errorf("the model got %+v, want the refusal and its reason", tr)
		}
		t.Logf("the agent was told: %s", tr.Content)
		if n := needsOf(t, c, j.ID); len(n) != 0 {
			t.Errorf("a floor refusal asked the person: %+v", n)
		}
	})

	t.Run("QuestionReachesNeedsMe", func(t *testing.T) {
		model.Script(
			enginetest.ToolCall("AskUserQuestion", map[string]any{"questions": []any{map[string]any{
				"question": "Which colour should the button be?", "header": "Colour", "multiSelect": false,
				"options": []any{
					map[string]any{"label": "Red", "description": "Warm"},
					map[string]any{"label": "Blue", "description": "Calm"},
				},
			}}}),
			enginetest.Say("Blue it is.").WhenLastUser("Blue"),
		)
		j := assign(t, "Style the button", nil)
		d := waitNeed(t, c, j.ID)
		if d.Kind != needs.Question || d.Question != "Which colour should the button be?" || len(d.Options) != 2 {
			t.Fatalf("decision = %+v", d)
		}
		if err := c.do(context.Background(), "POST", "/api/needs/"+d.ID+"/answer", map[string]any{"option": 1}, nil); err != nil {
			t.Fatal(err)
		}
		if j = waitRun(t, c, j.ID, jobs.Done); j.Summary != "Blue it is." {
			t.Errorf("summary %q: the answer did not reach the agent", j.Summary)
		}
	})

	t.Run("RunsOwnMCPServer", func(t *testing.T) {
		model.Script(
			enginetest.ToolCall("mcp__ensemble_run__ask_person", map[string]any{
				"question": "Ship it today?", "options": []string{"Yes", "Wait"}, "recommended": 1}),
			enginetest.ToolCall("mcp__ensemble_run__attach_evidence", map[string]any{"path": "notes.txt", "kind": "log", "caption": "the notes"}).WhenLastUser("Yes"),
			enginetest.ToolCall("mcp__ensemble_run__report_result", map[string]any{
				"outcome": "done", "summary": "Shipped after the person said yes.",
				"checks": []any{map[string]any{"name": "asked first", "verdict": "pass"}}}).WhenLastUser("evd_"),
			enginetest.Say("Reported.").WhenLastUser("Report kept"),
		)
		j := assign(t, "Ship it", nil)
		d := waitNeed(t, c, j.ID)
		if d.Kind != needs.Question || d.Question != "Ship it today?" || d.Recommended != 1 {
			t.Fatalf("decision = %+v", d)
		}
		if err := c.do(context.Background(), "POST", "/api/needs/"+d.ID+"/answer", map[string]any{"option": 0}, nil); err != nil {
			t.Fatal(err)
		}
		j = waitRun(t, c, j.ID, jobs.Done)
		if j.Report == nil || j.Report.Outcome != "done" || j.Report.Summary != "Shipped after the person said yes." {
			t.Errorf("report = %+v", j.Report)
		}
		ev, _ := filepath.Glob(filepath.Join(rt.cfg.DataDir, "evidence", j.ID, "evd_*-notes.txt"))
		if len(ev) != 1 {
			t.Fatalf("evidence files: %v", ev)
		}
		id, _, _ := strings.Cut(filepath.Base(ev[0]), "-")
		req, _ := http.NewRequest("GET", rt.URL+"/api/agent/jobs/"+j.ID+"/evidence/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+c.f.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "plant tomatoes\n" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("evidence download: %d %q %v", resp.StatusCode, body, resp.Header)
		}
	})

	t.Run("RunReadsItsContext", func(t *testing.T) {
		// The run's own server answers ensemble_context and ensemble_search with the person's
		// records (the context bridge's code), without asking: the task's own context first, then
		// a search that finds the task by its words.
		model.Script(
			enginetest.ToolCall("mcp__ensemble_run__ensemble_context", map[string]any{}),
			enginetest.ToolCall("mcp__ensemble_run__ensemble_search", map[string]any{"query": "compost heap"}).WhenLastUser("contextRef"),
			enginetest.Say("Read the context.").WhenLastUser(`"hits"`),
		)
		j := waitRun(t, c, assign(t, "Turn the compost heap", nil).ID, jobs.Done)
		if n := needsOf(t, c, j.ID); len(n) != 0 {
			t.Errorf("a read of the person's records asked the person: %+v", n)
		}
		results := map[string]enginetest.ToolResult{}
		for _, r := range model.Requests() {
			for _, tr := range r.ToolResults() {
				results[tr.Name] = tr
			}
		}
		task := "ensemble://task/" + j.TaskID
		if tr := results["mcp__ensemble_run__ensemble_context"]; tr.IsError || !strings.Contains(tr.Content, task) ||
			!strings.Contains(tr.Content, "Turn the compost heap") {
			t.Errorf("ensemble_context gave the model %+v, want the run's task %s", tr, task)
		}
		if tr := results["mcp__ensemble_run__ensemble_search"]; tr.IsError || !strings.Contains(tr.Content, task) {
			t.Errorf("ensemble_search gave the model %+v, want a hit on %s", tr, task)
		}
		if j.Summary != "Read the context." {
			t.Errorf("summary %q", j.Summary)
		}
	})

	t.Run("SecondTaskContinuesTheSession", func(t *testing.T) {
		model.Script(enginetest.Say("Earlier I listed notes.txt."))
		j := waitRun(t, c, assign(t, "What did you find earlier?", map[string]any{"continue": first.ID, "agent": ""}).ID, jobs.Done)
		if j.Continues != first.ID || j.SessionID != first.SessionID {
			t.Errorf("continues %q in session %q, want %q in %q", j.Continues, j.SessionID, first.ID, first.SessionID)
		}
		reqs := model.Requests()
		last := reqs[len(reqs)-1]
		seen := false
		for _, m := range last.Messages {
			if strings.Contains(fmt.Sprint(m), "notes.txt") {
				seen = true
			}
		}
		if !seen {
			t.Error("the continued session's request does not carry the earlier conversation")
		}
	})

	t.Run("DeletedSessionIsDeletedAtClaude", func(t *testing.T) {
		home, _ := os.UserHomeDir()
		transcripts := func() []string {
			found, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", first.SessionID+".jsonl"))
			return found
		}
		if len(transcripts()) == 0 {
			t.Fatalf("no transcript of session %s under %s", first.SessionID, home)
		}
		if err := c.do(context.Background(), "DELETE", "/api/agent/sessions/"+first.ID, nil, nil); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for len(transcripts()) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if left := transcripts(); len(left) > 0 {
			t.Errorf("Claude Code's transcript is still there after the session was deleted: %v", left)
		}
	})
}

// waitRun polls a run until it ends and checks how.
func waitRun(t *testing.T, c *client, id string, want jobs.Status) jobs.Job {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var j jobs.Job
		if err := c.do(context.Background(), "GET", "/api/agent/jobs/"+id, nil, &j); err != nil {
			t.Fatal(err)
		}
		switch j.Status {
		case jobs.Queued, jobs.Running, jobs.Paused:
		default:
			if j.Status != want {
				t.Fatalf("run ended %s (%s), want %s", j.Status, j.Error, want)
			}
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s still %s after 2 minutes", id, j.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func needsOf(t *testing.T, c *client, runID string) []needs.Decision {
	t.Helper()
	var list struct {
		Needs []needs.Decision `json:"needs"`
	}
	if err := c.do(context.Background(), "GET", "/api/needs?all=1&run="+url.QueryEscape(runID), nil, &list); err != nil {
		t.Fatal(err)
	}
	return list.Needs
}

// waitNeed waits for the run's first open decision on Needs me.
func waitNeed(t *testing.T, c *client, runID string) needs.Decision {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for _, d := range needsOf(t, c, runID) {
			if d.Status == needs.Open {
				return d
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no decision reached Needs me for run %s", runID)
	return needs.Decision{}
}

// TestKillRuntimeMidRun kills `ensemble serve` with SIGKILL while the real Claude Code is in the
// middle of a tool call, then starts it again: the run is marked interrupted, its events up to the
// kill are there, and nothing runs twice.
func TestKillRuntimeMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Claude Code; not in -short")
	}
	bin := enginetest.InstallNPM(t, "@anthropic-ai/claude-code", "2.1.197", "claude")
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	if _, err := buildBinary(); err != nil { // before HOME changes: go build finds its caches there
		t.Fatal(err)
	}
	model := enginetest.NewServer(t)
	model.Script(enginetest.Shell("sleep 30"), enginetest.Say("Slept."))
	t.Setenv("HOME", enginetest.ClaudeHome(t, model.URL))
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	data := t.TempDir()
	s := startServe(t, data)
	c := &client{f: s.f, http: httpClient()}
	var j jobs.Job
	err := c.do(context.Background(), "POST", "/api/agent/assign", map[string]any{
		"title": "Take a nap", "agent": "claude", "folder": t.TempDir(),
		"settings": map[string]any{"mode": "unattended", "model": "claude-sonnet-4-5"}}, &j)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the agent is inside its tool call.
	deadline := time.Now().Add(time.Minute)
	for {
		var got jobs.Job
		if err := c.do(context.Background(), "GET", "/api/agent/jobs/"+j.ID, nil, &got); err != nil {
			t.Fatal(err)
		}
		if got.Steps > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never reached its tool call: %+v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	requests := turns(model)
	s.cmd.Process.Kill()
	<-s.done

	s2 := startServe(t, data)
	c = &client{f: s2.f, http: httpClient()}
	got := waitRun(t, c, j.ID, jobs.Interrupted)
	if got.StartedAt == nil || got.Attempts != 1 {
		t.Errorf("after the restart: started %v, attempts %d, want one start", got.StartedAt, got.Attempts)
	}
	kinds := runEvents(t, c, j.ID)
	for _, want := range []string{"run.created", "run.started", "run.tool_start"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("event %s from before the kill is missing: %v", want, kinds)
		}
	}
	time.Sleep(2 * time.Second)
	if n := turns(model); n != requests {
		t.Errorf("the model got %d more turns after the restart: the run ran again", n-requests)
	}
}

// runEvents reads a run's events (their kinds) from its stream, up to the end of the replay.
func runEvents(t *testing.T, c *client, id string) []string {
	t.Helper()
	var kinds []string
	for _, ev := range runTrace(t, c, id) {
		kinds = append(kinds, string(ev.kind))
	}
	return kinds
}

// traceEvent is one event of a run's trace.
type traceEvent struct {
	kind events.Kind
	data string // as it came
	jobs.Trace
}

// runTrace reads a run's events from its stream, up to its end.
func runTrace(t *testing.T, c *client, id string) []traceEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", c.f.URL+"/api/agent/jobs/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+c.f.Token)
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []traceEvent
	var kind events.Kind
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if k, ok := strings.CutPrefix(line, "event: "); ok {
			kind = events.Kind(k)
			continue
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			ev := traceEvent{kind: kind, data: d}
			if err := json.Unmarshal([]byte(d), &ev.Trace); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			out = append(out, ev)
			if kind == jobs.KindEnded {
				return out
			}
		}
	}
	return out
}

// turns counts the model requests that carry a conversation (not the probes an agent's other
// commands make, such as `claude auth status` when the runtime detects agents).
func turns(model *enginetest.Server) int {
	n := 0
	for _, r := range model.Requests() {
		if len(r.Messages) > 0 {
			n++
		}
	}
	return n
}

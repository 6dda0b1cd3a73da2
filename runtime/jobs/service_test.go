package jobs

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

func mode(m string) SettingsInput { return SettingsInput{Mode: &m} }

func TestAllowedCallProceeds(t *testing.T) {
	e := newEnv(t, []step{
		ev(engines.EventStarted, func(v *engines.Event) { v.Session = "ses-1"; v.Model = "m1"; v.Effort = "high" }),
		ev(engines.EventThinking, func(v *engines.Event) { v.Text = "Let me look. key sk-ant-abcdefghijklmnopqrstuvwx" }),
		shell("t1", "ls -la"),
		ev(engines.EventToolStart, func(v *engines.Event) { v.ToolID = "t1"; v.Tool = "Bash"; v.Input = []byte(`{"command":"ls -la"}`) }),
		ev(engines.EventToolEnd, func(v *engines.Event) { v.ToolID = "t1"; v.Tool = "Bash"; v.Output = strings.Repeat("x", 5000) }),
		ev(engines.EventUsage, func(v *engines.Event) {
			v.Usage = &engines.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.01}
			v.ContextTokens = 200_000
		}),
		{result: &engines.Result{SessionID: "ses-1", Summary: "Fixed the retry.", Turns: 3}},
	})
	e.service(true)
	j := e.assign(AssignRequest{Folder: e.folder, Settings: mode("review")})
	j = e.waitEnded(j.ID, Done)
	if j.Summary != "Fixed the retry." || j.Turns != 3 || j.SessionID != "ses-1" || j.Model != "m1" || j.Steps != 1 {
		t.Errorf("job = %+v", j)
	}
	if j.Usage.InputTokens != 10 || j.Usage.CostUSD != 0.01 {
		t.Errorf("usage = %+v", j.Usage)
	}
	if want := (Observed{Model: "m1", Effort: "high", ContextTokens: 200_000}); j.Observed != want {
		t.Errorf("observed = %+v, want %+v", j.Observed, want)
	}
	if len(e.driver.view().permits) != 1 || !e.driver.view().permits[0].Allow {
		t.Errorf("permits = %+v", e.driver.view().permits)
	}
	spec := e.driver.view().specs[0]
	if spec.Folder != e.folder || spec.Prompt != "Fix the login retry" || spec.Env["ENSEMBLE_RUN"] != j.ID {
		t.Errorf("spec = %+v", spec)
	}
	tr := e.trace(j.ID)
	var kinds []events.Kind
	for _, x := range tr {
		kinds = append(kinds, x.Kind)
		if strings.Contains(x.Data.Text, "sk-ant-") {
			t.Errorf("secret kept in %s: %q", x.Kind, x.Data.Text)
		}
		if x.Kind == KindToolEnd && len([]rune(x.Data.Output)) != previewOutput {
			t.Errorf("output kept %d characters, want %d", len([]rune(x.Data.Output)), previewOutput)
		}
	}
	want := []events.Kind{KindCreated, KindStatus, KindStarted, KindThinking, KindToolStart, KindToolEnd, KindUsage, KindStatus, KindEnded}
	if !slices.Equal(kinds, want) {
		t.Errorf("events = %v\nwant     %v", kinds, want)
	}
	task, err := e.rec.Tasks().Get(context.Background(), j.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if task.Status != records.WaitingApproval || !strings.Contains(task.Page, "Fixed the retry.") {
		t.Errorf("task = %s %q", task.Status, task.Page)
	}
}

func TestRefusedCallTellsTheAgentWhy(t *testing.T) {
	e := newEnv(t, []step{shell("t1", "sudo rm -rf /tmp/x")})
	e.service(true)
	j := e.assign(AssignRequest{Folder: e.folder, Settings: mode("unattended")})
	e.waitEnded(j.ID, Done)
	p := e.driver.view().permits[0]
	if p.Allow || !strings.Contains(p.Reason, "sudo") || !strings.HasPrefix(p.Reason, "Refused: ") {
		t.Errorf("permission = %+v", p)
	}
	if e.asker.count() != 0 {
		t.Errorf("asked %d times", e.asker.count())
	}
	if !slices.Contains(e.kinds(j.ID), KindDecision) {
		t.Errorf("no decision event")
	}
}

func TestAskedCallWaitsForTheAnswer(t *testing.T) {
	edit := func(id string) step {
		return step{call: &engines.ToolCall{ID: id, Tool: "Edit", Kind: "edit", Input: []byte(`{}`)}}
	}
	e := newEnv(t, nil)
	e.driver.scripts = [][]step{{edit("t1"), edit("t2")}}
	e.asker.hold = make(chan struct{})
	e.asker.reply = Reply{Option: AllowForRun, Text: ApprovalOptions[AllowForRun]}
	e.service(true)
	e.driver.scripts[0][0].call.Paths = []string{filepath.Join(e.folder, "a.go")}
	e.driver.scripts[0][1].call.Paths = []string{filepath.Join(e.folder, "b.go")}
	j := e.assign(AssignRequest{Folder: e.folder, Settings: mode("ask")})
	deadline := time.Now().Add(5 * time.Second)
	for e.asker.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got, _ := e.svc.Get(context.Background(), j.ID); got.Status != Running {
		t.Fatalf("status while asking = %s", got.Status)
	}
	e.asker.mu.Lock()
	q := e.asker.asked[0]
	e.asker.mu.Unlock()
	if q.Kind != Approval || q.RunID != j.ID || q.TaskID != j.TaskID || q.Title != "Fix the login retry" || q.Verdict == nil {
		t.Errorf("question = %+v", q)
	}
	close(e.asker.hold)
	j = e.waitEnded(j.ID, Done)
	if len(e.driver.view().permits) != 2 || !e.driver.view().permits[0].Allow || !e.driver.view().permits[1].Allow {
		t.Errorf("permits = %+v", e.driver.view().permits)
	}
	if e.asker.count() != 1 {
		t.Errorf("asked %d times; the answer for this run should cover the second edit", e.asker.count())
	}
	if !j.Kept.Edits {
		t.Errorf("kept = %+v", j.Kept)
	}
}

func TestDeniedCallAndAgentQuestions(t *testing.T) {
	e := newEnv(t, []step{
		{call: &engines.ToolCall{ID: "t1", Tool: "Edit", Kind: "edit"}},
		{ask: &engines.Question{Text: "Which one?", Options: []string{"a", "b"}, Recommended: 1}},
	})
	e.asker.reply = Reply{Option: Deny, Text: "not that file"}
	e.service(true)
	e.driver.scripts[0][0].call.Paths = []string{filepath.Join(e.folder, "a.go")}
	j := e.assign(AssignRequest{Folder: e.folder, Settings: mode("ask")})
	e.waitEnded(j.ID, Done)
	if p := e.driver.view().permits[0]; p.Allow || !strings.Contains(p.Reason, "not that file") {
		t.Errorf("permission = %+v", p)
	}
	e.asker.mu.Lock()
	defer e.asker.mu.Unlock()
	if len(e.asker.asked) != 2 || e.asker.asked[1].Kind != AgentQuestion {
		t.Errorf("asked = %+v", e.asker.asked)
	}

	// Run unattended takes the recommended answer without waiting, and keeps the decision on
	// Needs me, answered by the run; a question without one is answered that no one is there.
	e2 := newEnv(t, []step{
		{ask: &engines.Question{Text: "Which one?", Options: []string{"a", "b"}, Recommended: 1}},
		{ask: &engines.Question{Text: "What name?", Recommended: -1, FreeText: true}},
	})
	e2.asker.hold = make(chan struct{}) // a question that waited would never be answered
	e2.service(true)
	j2 := e2.assign(AssignRequest{Folder: e2.folder, Settings: mode("unattended")})
	e2.waitEnded(j2.ID, Done)
	if a := e2.driver.view().answers; len(a) != 2 || a[0].Option != 1 || a[1].Option != -1 {
		t.Errorf("answers %+v", a)
	}
	e2.asker.mu.Lock()
	defer e2.asker.mu.Unlock()
	if len(e2.asker.asked) != 2 || !e2.asker.asked[0].Unattended || !e2.asker.asked[1].Unattended {
		t.Errorf("asked = %+v, want both kept on Needs me as unattended", e2.asker.asked)
	}
}

func TestQueueOneRunPerFolder(t *testing.T) {
	hold := make(chan struct{})
	e := newEnv(t, []step{{hold: hold}}, []step{})
	e.service(true)
	a := e.assign(AssignRequest{Folder: e.folder})
	e.waitStatus(a.ID, Running)
	b := e.assign(AssignRequest{Folder: e.folder})
	other := e.assign(AssignRequest{}) // a workspace folder of its own: not in line behind a
	e.waitEnded(other.ID, Done)
	if got, _ := e.svc.Get(context.Background(), b.ID); got.Status != Queued {
		t.Fatalf("second run on the folder is %s, want queued", got.Status)
	}
	close(hold)
	e.waitEnded(a.ID, Done)
	e.waitEnded(b.ID, Done)
	if e.driver.view().starts != 3 {
		t.Errorf("starts = %d", e.driver.view().starts)
	}
	if other.FolderKind != FolderWorkspace || other.WorkDir != filepath.Join(e.data, "workspace", other.ID) {
		t.Errorf("workspace run = %+v", other)
	}
}

func TestStop(t *testing.T) {
	e := newEnv(t, []step{{wait: true}})
	e.service(true)
	a := e.assign(AssignRequest{Folder: e.folder})
	b := e.assign(AssignRequest{Folder: e.folder})
	e.waitStatus(a.ID, Running)
	if j, err := e.svc.Stop(context.Background(), b.ID); err != nil || j.Status != Stopped {
		t.Fatalf("stop queued = %v, %v", j.Status, err)
	}
	j, err := e.svc.Stop(context.Background(), a.ID)
	if err != nil || j.Status != Stopped {
		t.Fatalf("stop running = %v, %v", j.Status, err)
	}
	e.waitEnded(a.ID, Stopped)
	if e.driver.view().starts != 1 {
		t.Errorf("starts = %d; the stopped queued run must not start", e.driver.view().starts)
	}
	if _, err := e.svc.Stop(context.Background(), a.ID); !problem.Is(err, problem.KindConflict) {
		t.Errorf("stopping an ended run: %v", err)
	}
}

func TestPauseHoldsToolCalls(t *testing.T) {
	hold := make(chan struct{})
	e := newEnv(t, []step{{hold: hold}, shell("t1", "ls")})
	e.service(true)
	j := e.assign(AssignRequest{Folder: e.folder})
	e.waitStatus(j.ID, Running)
	if p, err := e.svc.Pause(context.Background(), j.ID); err != nil || p.Status != Paused {
		t.Fatalf("pause = %v, %v", p.Status, err)
	}
	close(hold)
	time.Sleep(50 * time.Millisecond)
	if n := len(e.driver.view().permits); n != 0 {
		t.Fatalf("a call was permitted while paused")
	}
	if r, err := e.svc.Resume(context.Background(), j.ID); err != nil || r.Status != Running && r.Status != Done {
		t.Fatalf("resume = %v, %v", r.Status, err)
	}
	e.waitEnded(j.ID, Done)
	if len(e.driver.view().permits) != 1 {
		t.Errorf("permits = %d", len(e.driver.view().permits))
	}
}

func TestLimits(t *testing.T) {
	e := newEnv(t, []step{{wait: true}})
	e.timing.Minute = 30 * time.Millisecond
	e.service(true)
	one, turns := 1, 7
	j := e.assign(AssignRequest{Folder: e.folder, Settings: SettingsInput{MaxMinutes: &one, MaxTurns: &turns}})
	j = e.waitEnded(j.ID, Limit)
	if !strings.Contains(j.Error, "minutes limit") || e.driver.view().specs[0].MaxTurns != 7 {
		t.Errorf("job = %+v, spec = %+v", j, e.driver.view().specs[0])
	}

	e2 := newEnv(t, []step{{result: &engines.Result{Summary: "partly", Turns: 2}}})
	e2.service(true)
	two := 2
	j2 := e2.assign(AssignRequest{Folder: e2.folder, Settings: SettingsInput{MaxTurns: &two}})
	if j2 = e2.waitEnded(j2.ID, Limit); j2.Summary != "partly" {
		t.Errorf("job = %+v", j2)
	}
}

func TestStuck(t *testing.T) {
	// Quiet too long: the agent is stopped and its session carried on (spec 003 §3.1); the call
	// left open ends as skipped. Stuck every time, the run ends stuck after the retries.
	started := ev(engines.EventStarted, func(v *engines.Event) { v.Session = "ses-q" })
	toolStart := ev(engines.EventToolStart, func(v *engines.Event) { v.Tool, v.ToolID = "Bash", "tu1" })
	e := newEnv(t, []step{started, toolStart, {wait: true}}, []step{{result: &engines.Result{Summary: "carried on"}}})
	e.timing.Quiet, e.timing.QuietTool = 40*time.Millisecond, 40*time.Millisecond
	e.service(true)
	j := e.assign(AssignRequest{Folder: e.folder})
	j = e.waitEnded(j.ID, Done)
	s := e.driver.view().specs
	if len(s) != 2 || s[1].Resume != "ses-q" || s[1].Prompt != carryOnStuck || e.driver.view().stopped == 0 {
		t.Fatalf("specs = %+v, stopped %d", s, e.driver.view().stopped)
	}
	kinds := e.kinds(j.ID)
	if !slices.Contains(kinds, KindRetry) || !slices.Contains(kinds, KindToolEnd) {
		t.Errorf("events = %v, want the retry and the open call ended", kinds)
	}

	e2 := newEnv(t, []step{{wait: true}})
	e2.timing.Quiet = 40 * time.Millisecond
	e2.service(true)
	j2 := e2.assign(AssignRequest{Folder: e2.folder})
	e2.waitEnded(j2.ID, Stuck)
	if n, want := e2.driver.view().starts, 1+len(e2.timing.Retries); n != want {
		t.Errorf("starts = %d, want %d", n, want)
	}
}

func TestRetriesCarryTheSessionOn(t *testing.T) {
	started := ev(engines.EventStarted, func(v *engines.Event) { v.Session = "ses-9" })
	e := newEnv(t,
		[]step{started, {fail: errNetwork}},
		[]step{{fail: errNetwork}},
		[]step{{result: &engines.Result{Summary: "ok"}}},
	)
	e.service(true)
	j := e.assign(AssignRequest{Folder: e.folder})
	j = e.waitEnded(j.ID, Done)
	if j.Attempts != 3 || len(e.driver.view().specs) != 3 {
		t.Fatalf("attempts = %d, specs = %d", j.Attempts, len(e.driver.view().specs))
	}
	if s := e.driver.view().specs; s[0].Resume != "" || s[1].Resume != "ses-9" || s[2].Resume != "ses-9" || s[1].Prompt != carryOn {
		t.Errorf("specs = %+v", s)
	}
	var retries int
	for _, k := range e.kinds(j.ID) {
		if k == KindRetry {
			retries++
		}
	}
	if retries != 2 {
		t.Errorf("retry events = %d", retries)
	}

	// Failing every time: three retries, then the run ends with the agent's own error.
	e2 := newEnv(t, []step{{fail: errNetwork}})
	e2.service(true)
	j2 := e2.assign(AssignRequest{Folder: e2.folder})
	j2 = e2.waitEnded(j2.ID, Failed)
	if e2.driver.view().starts != 4 || j2.Error != "Connection reset by peer." {
		t.Errorf("starts = %d, error = %q", e2.driver.view().starts, j2.Error)
	}

	// Not installed: not retried.
	e3 := newEnv(t, []step{{fail: engines.ErrNotInstalled}})
	e3.service(true)
	j3 := e3.assign(AssignRequest{Folder: e3.folder})
	e3.waitEnded(j3.ID, Failed)
	if e3.driver.view().starts != 1 {
		t.Errorf("starts = %d", e3.driver.view().starts)
	}
}

func TestGoneSessionStartsANewOne(t *testing.T) {
	e := newEnv(t,
		[]step{ev(engines.EventStarted, func(v *engines.Event) { v.Session = "old" }), {fail: errNetwork}},
		[]step{{result: &engines.Result{Gone: true}}},
		[]step{{result: &engines.Result{SessionID: "new", Summary: "done"}}},
	)
	e.service(true)
	j := e.assign(AssignRequest{Folder: e.folder, Brief: "the full brief"})
	j = e.waitEnded(j.ID, Done)
	s := e.driver.view().specs
	if len(s) != 3 || s[1].Resume != "old" || s[2].Resume != "" || s[2].Prompt != "the full brief" || j.SessionID != "new" {
		t.Errorf("specs = %+v, job session %q", s, j.SessionID)
	}
	if !slices.Contains(e.kinds(j.ID), KindSessionGone) {
		t.Errorf("no session_gone event")
	}
}

func TestContinueAnEarlierSession(t *testing.T) {
	e := newEnv(t,
		[]step{ev(engines.EventStarted, func(v *engines.Event) { v.Session = "s1" }), {result: &engines.Result{SessionID: "s1", Summary: "built the parser"}}},
		[]step{{result: &engines.Result{SessionID: "s1", Summary: "added tests"}}},
		[]step{{result: &engines.Result{Gone: true}}},
		[]step{{result: &engines.Result{SessionID: "s2", Summary: "added docs"}}},
	)
	e.service(true)
	first := e.waitEnded(e.assign(AssignRequest{Folder: e.folder, Brief: "build the parser"}).ID, Done)
	second := e.waitEnded(e.assign(AssignRequest{Continue: first.ID, Brief: "add tests"}).ID, Done)
	specs := e.driver.view().specs
	if second.Continues != first.ID || specs[1].Resume != "s1" || specs[1].Prompt != "add tests" || specs[1].Folder != first.WorkDir {
		t.Fatalf("second run: continues %q, spec %+v", second.Continues, specs[1])
	}
	// The agent no longer has the session: a new one starts with what the earlier run reported.
	third := e.waitEnded(e.assign(AssignRequest{Continue: second.ID, Brief: "add docs"}).ID, Done)
	specs = e.driver.view().specs
	if len(specs) != 4 || specs[3].Resume != "" || !strings.Contains(specs[3].Prompt, "This continues an earlier task") ||
		!strings.Contains(specs[3].Prompt, "added tests") || !strings.HasSuffix(specs[3].Prompt, "add docs") || third.SessionID != "s2" {
		t.Errorf("after the session was gone: specs %+v, session %q", specs[2:], third.SessionID)
	}
	for _, tc := range []struct {
		req  AssignRequest
		want string
	}{
		{AssignRequest{Continue: "job_nope", Brief: "x"}, `There is no run "job_nope" to continue.`},
		{AssignRequest{Continue: first.ID, Agent: "other", Brief: "x"}, "cannot continue it"},
	} {
		if _, err := e.svc.Assign(context.Background(), tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Assign(%+v): %v, want %q", tc.req, err, tc.want)
		}
	}
}

func TestRestartMarksRunsInterrupted(t *testing.T) {
	e := newEnv(t, []step{})
	e.service(false) // not started: runs stay queued
	running := e.assign(AssignRequest{Folder: e.folder})
	started := e.assign(AssignRequest{})
	waiting := e.assign(AssignRequest{})
	db := e.st.Writer()
	if _, err := db.Exec("UPDATE jobs SET status = 'running', started_at = created_at WHERE id = ?", running.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE jobs SET started_at = created_at WHERE id = ?", started.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(running.ID, Interrupted)
	e.waitStatus(started.ID, Interrupted)
	e.waitEnded(waiting.ID, Done)
	if e.driver.view().starts != 1 || e.driver.view().specs[0].Env["ENSEMBLE_RUN"] != waiting.ID {
		t.Errorf("starts = %d", e.driver.view().starts)
	}
	// A second start (another restart) runs nothing again.
	e.svc.Close()
	e.service(true)
	time.Sleep(30 * time.Millisecond)
	if e.driver.view().starts != 1 {
		t.Errorf("starts after restart = %d", e.driver.view().starts)
	}
}

func TestShutdownInterruptsRunningRuns(t *testing.T) {
	e := newEnv(t, []step{{wait: true}})
	e.service(true)
	j := e.assign(AssignRequest{Folder: e.folder})
	e.waitStatus(j.ID, Running)
	e.svc.Close()
	got, _ := e.svc.Get(context.Background(), j.ID)
	if got.Status != Interrupted {
		t.Errorf("status = %s", got.Status)
	}
}

func TestAssignRefusesBadInput(t *testing.T) {
	e := newEnv(t, []step{})
	e.service(true)
	bad := "sometimes"
	for _, tc := range []struct {
		name string
		req  AssignRequest
		want string
	}{
		{"unknown agent", AssignRequest{Agent: "nope", Title: "x"}, `There is no agent "nope"; the agents are fake.`},
		{"no task", AssignRequest{Agent: "fake"}, "Name the task"},
		{"both", AssignRequest{Agent: "fake", Title: "x", TaskID: "tsk_1"}, "not both"},
		{"unknown task", AssignRequest{Agent: "fake", TaskID: "tsk_1"}, `There is no task with id "tsk_1".`},
		{"relative folder", AssignRequest{Agent: "fake", Title: "x", Folder: "src"}, "absolute path"},
		{"missing folder", AssignRequest{Agent: "fake", Title: "x", Folder: "/no/such/folder"}, "does not exist"},
		{"file repo url", AssignRequest{Agent: "fake", Title: "x", RepoURL: "file:///etc"}, "not a repository URL"},
		{"ssh repo url", AssignRequest{Agent: "fake", Title: "x", RepoURL: "ssh://git@github.com/a/b"}, "user name or password"},
		{"repo url with a password", AssignRequest{Agent: "fake", Title: "x", RepoURL: "https://me:pw@github.com/a/b"}, "user name or password"},
		{"repo url with a port", AssignRequest{Agent: "fake", Title: "x", RepoURL: "https://github.com:8443/a/b"}, "only https repository URLs"},
		{"plain http elsewhere", AssignRequest{Agent: "fake", Title: "x", RepoURL: "http://github.com/a/b"}, "only https repository URLs"},
		{"worktree without git", AssignRequest{Agent: "fake", Title: "x", Folder: e.folder, Worktree: true}, "not in a git repository"},
		{"bad mode", AssignRequest{Agent: "fake", Title: "x", Settings: SettingsInput{Mode: &bad}}, "not one of ask, review or unattended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.Assign(context.Background(), tc.req)
			if !problem.Is(err, problem.KindInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
	if n := count(t, e.st.Reader(), "SELECT count(*) FROM jobs"); n != 0 {
		t.Errorf("%d jobs written", n)
	}
	if n := count(t, e.st.Reader(), "SELECT count(*) FROM tasks"); n != 0 {
		t.Errorf("%d tasks written", n)
	}
}

func TestAssignExistingTaskAndList(t *testing.T) {
	e := newEnv(t, []step{})
	e.service(true)
	task, err := e.rec.Tasks().Create(context.Background(), personActor, records.TaskInput{
		Title: records.Some("Write docs"), Page: records.Some("For the API.")})
	if err != nil {
		t.Fatal(err)
	}
	j := e.assign(AssignRequest{TaskID: task.ID, Folder: e.folder})
	if j.Brief != "Write docs\n\nFor the API." || j.TaskID != task.ID {
		t.Errorf("job = %+v", j)
	}
	e.waitEnded(j.ID, Done)
	list, err := e.svc.List(context.Background(), task.ID)
	if err != nil || len(list) != 1 || list[0].ID != j.ID {
		t.Errorf("list = %v, %v", list, err)
	}
	if n := count(t, e.st.Reader(), "SELECT count(*) FROM tasks"); n != 1 {
		t.Errorf("%d tasks", n)
	}
	if j.Settings.Mode != judge.ModeAsk || !j.Settings.Sandbox || j.Settings.Git != judge.GitLocal {
		t.Errorf("default settings = %+v", j.Settings)
	}
}

// TestRestartStartsQueuedRunsInOrder queues two runs within one second, the later one first by
// its id, and checks a restart starts them in the order they were queued: every table keeps
// times in one fixed-width layout, so text order is time order (RFC 3339 with trimmed
// nanoseconds put "…:05.5Z" before "…:05Z").
func TestRestartStartsQueuedRunsInOrder(t *testing.T) {
	e := newEnv(t, []step{})
	e.service(false) // not started: runs stay queued
	later := e.assign(AssignRequest{Folder: e.folder})
	earlier := e.assign(AssignRequest{Folder: e.folder})
	db := e.st.Writer()
	second := time.Date(2026, 12, 2, 10, 0, 5, 0, time.UTC)
	for id, at := range map[string]time.Time{earlier.ID: second, later.ID: second.Add(500 * time.Millisecond)} {
		if _, err := db.Exec("UPDATE jobs SET created_at = ? WHERE id = ?", store.Stamp(at), id); err != nil {
			t.Fatal(err)
		}
	}
	var stamp string
	if err := db.QueryRow("SELECT updated_at FROM jobs WHERE id = ?", later.ID).Scan(&stamp); err != nil || len(stamp) != len(store.TimeLayout) {
		t.Errorf("a run's time is kept as %q, not in store.TimeLayout (%v)", stamp, err)
	}
	if err := e.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.waitEnded(earlier.ID, Done)
	e.waitEnded(later.ID, Done)
	specs := e.driver.view().specs
	if len(specs) != 2 || specs[0].Env["ENSEMBLE_RUN"] != earlier.ID || specs[1].Env["ENSEMBLE_RUN"] != later.ID {
		var order []string
		for _, s := range specs {
			order = append(order, s.Env["ENSEMBLE_RUN"])
		}
		t.Errorf("started %v, want %s then %s", order, earlier.ID, later.ID)
	}
}

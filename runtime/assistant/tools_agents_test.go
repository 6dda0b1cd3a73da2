package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/profiles"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/tools"
	"github.com/ensemblework/ensemble/runtime/tools/toolstest"
)

// agentFixture is a fixture whose assistant reaches real runs (jobs and sessions) of a stand-in
// agent; "codex" is set up but not signed in.
type agentFixture struct {
	*fixture
	agent *toolstest.StandIn
	runs  tools.Runs
	js    *jobs.Service
	prof  *profiles.Service
}

func newAgentFixture(t *testing.T) *agentFixture {
	t.Helper()
	st, w, rec := toolstest.Records(t)
	a := toolstest.NewAgents(t, st, w, rec)
	runs := tools.NewRuns(a.Jobs, a.Sessions, a.Profiles)
	srv := enginetest.NewServer(t)
	svc := New(Config{Records: rec, Store: st, Writer: w, Runs: runs, Timeout: time.Minute,
		Providers: func(p, base string) (models.Provider, error) {
			return models.NewAnthropic("test", srv.URL, time.Minute), nil
		}})
	t.Cleanup(func() { svc.Close(context.Background()) })
	return &agentFixture{fixture: &fixture{st: st, rec: rec, svc: svc, srv: srv}, agent: a.Agent, runs: runs, js: a.Jobs, prof: a.Profiles}
}

func (f *agentFixture) task(t *testing.T, title string) string {
	t.Helper()
	task, err := f.rec.Tasks().Create(context.Background(), byPerson, records.TaskInput{Title: records.Some(title)})
	if err != nil {
		t.Fatal(err)
	}
	return task.ID
}

// TestAssignWaitsForApplyAndStartsOneRun: under the immediate policy an assignment still waits
// for Apply; two Applies at once start exactly one run, and its session is then listed.
func TestAssignWaitsForApplyAndStartsOneRun(t *testing.T) {
	ctx := context.Background()
	f := newAgentFixture(t)
	f.policy(t, Immediate)
	taskID := f.task(t, "Fix login")
	folder := t.TempDir()
	f.srv.Script(
		enginetest.ToolCall("hub_assign_to_agent", map[string]any{"taskId": taskID, "agent": "stand-in", "folder": folder, "model": "m1",
			"effort": "high", "contextTier": "long", "fast": true}),
		enginetest.Say("I proposed the assignment; apply it to start the run."),
	)
	r, _, err := f.turn(t, "anthropic", "have the agent fix login")
	if err != nil {
		t.Fatal(err)
	}
	row := r.Tools[0]
	want := "Assign “Fix login” to Stand-in in " + tools.HomeShort(folder) + " (model m1, thinking high, long context, fast mode)."
	if row.Status != "proposed" || row.ProposalID == "" || row.Preview != want {
		t.Fatalf("row %+v, want preview %q", row, want)
	}
	if row.Area != "agents" || row.Risk != tools.RiskHigh || !row.NoUndo {
		t.Errorf("card %+v, want a high-risk agents write without Undo", row)
	}
	if n := f.count(t, "SELECT count(*) FROM jobs"); n != 0 {
		t.Fatalf("%d runs before Apply", n)
	}

	got := f.applyTwice(t, r.ConversationID, row.ProposalID)[0]
	if got.Status != "done" || len(got.Refs) != 2 || got.Refs[0].ID != taskID || got.Refs[1].Kind != "run" {
		t.Errorf("receipt %+v", got)
	}
	if !got.NoUndo || got.Group != "" {
		t.Errorf("receipt %+v offers Undo for a started run", got)
	}
	if n := f.count(t, "SELECT count(*) FROM jobs"); n != 1 {
		t.Fatalf("%d runs saved, want 1", n)
	}
	if n := f.count(t, "SELECT count(*) FROM job_settings WHERE model = 'm1' AND effort = 'high' AND context_tier = 'long' AND fast = 1"); n != 1 {
		t.Errorf("the run's settings do not keep the model's four choices")
	}
	var job jobs.Job
	for deadline := time.Now().Add(20 * time.Second); ; {
		list, err := f.js.List(ctx, taskID)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 1 && list[0].Status.Ended() {
			job = list[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end: %+v", list)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := f.agent.Starts(); n != 1 || job.Settings.Model != "m1" {
		t.Fatalf("the agent started %d times with model %q; want once with m1", n, job.Settings.Model)
	}

	// The session is listed, and hub_assign_to_agent can continue it.
	tc := &tools.ToolContext{Records: f.rec, Actor: ledger.Actor{Kind: ledger.Assistant, ID: "conv_test"}, Runs: f.runs}
	res, err := tools.HubTools().Get("hub_list_agent_sessions").Call(ctx, tc, json.RawMessage(`{"agent":"stand-in"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Data)
	var data struct {
		Sessions []struct {
			ID      string `json:"id"`
			Task    string `json:"task"`
			LastRun string `json:"lastRun"`
		}
	}
	json.Unmarshal(b, &data)
	if len(data.Sessions) != 1 || data.Sessions[0].Task != "Fix login" || data.Sessions[0].LastRun != job.ID {
		t.Fatalf("sessions %s (%s)", b, res.Summary)
	}
	if res, _ := tools.HubTools().Get("hub_list_agent_sessions").Call(ctx, tc, json.RawMessage(`{"agent":"codex"}`)); res.Summary != "No agent sessions found." {
		t.Errorf("codex sessions: %s", res.Summary)
	}
	p, err := tools.HubTools().Get("hub_assign_to_agent").Preview(ctx, tc, raw(t, map[string]any{"taskId": taskID, "sessionId": data.Sessions[0].ID}))
	if err != nil || !strings.Contains(p, "continuing its earlier session") {
		t.Errorf("continue preview %q, %v", p, err)
	}
}

// TestAssignRefusals: what cannot run is refused at preview with a sentence, so nothing is held.
func TestAssignRefusals(t *testing.T) {
	ctx := context.Background()
	f := newAgentFixture(t)
	taskID := f.task(t, "Fix login")
	tc := &tools.ToolContext{Records: f.rec, Actor: ledger.Actor{Kind: ledger.Assistant, ID: "conv_test"}, Runs: f.runs}
	tool := tools.HubTools().Get("hub_assign_to_agent")
	for _, c := range []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"unknown agent", map[string]any{"taskId": taskID, "agent": "nobody"}, `There is no agent "nobody"; the agents are codex, stand-in.`},
		{"no agent", map[string]any{"taskId": taskID}, "Name the agent to run: codex, stand-in."},
		{"signed out", map[string]any{"taskId": taskID, "agent": "codex"}, "run `codex login`"},
		{"no task", map[string]any{"taskId": "tsk_nothing", "agent": "stand-in"}, "There is no task with that id"},
		{"no folder", map[string]any{"taskId": taskID, "agent": "stand-in", "folder": "/nowhere/at/all"}, "The folder /nowhere/at/all does not exist"},
		{"relative folder", map[string]any{"taskId": taskID, "agent": "stand-in", "folder": "src/app"}, "must be an absolute path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := tool.Preview(ctx, tc, raw(t, c.input))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("preview error %v, want %q", err, c.want)
			}
		})
	}
	if _, err := tool.Preview(ctx, &tools.ToolContext{Records: f.rec}, raw(t, map[string]any{"taskId": taskID})); !errors.Is(err, tools.ErrNoRuns) {
		t.Errorf("without runs: %v", err)
	}

	// A refusal at preview holds nothing: the model is told the sentence.
	f.srv.Script(
		enginetest.ToolCall("hub_assign_to_agent", map[string]any{"taskId": taskID, "agent": "codex"}),
		enginetest.Say("Codex needs you to sign in first."),
	)
	r, _, err := f.turn(t, "anthropic", "have codex fix login")
	if err != nil {
		t.Fatal(err)
	}
	if row := r.Tools[0]; row.Status != "error" || !strings.Contains(row.Summary, "codex login") || row.ProposalID != "" {
		t.Fatalf("row %+v", row)
	}
}

// TestAssignPrepareFixesProfile: Prepare fixes an assignment's task (named by title) and its
// default profile when it is proposed, so starring another profile before Apply does not change
// the run the person saw previewed.
func TestAssignPrepareFixesProfile(t *testing.T) {
	ctx := context.Background()
	f := newAgentFixture(t)
	taskID := f.task(t, "Fix login")
	str := func(v string) *string { return &v }
	careDir := t.TempDir()
	care, err := f.prof.Create(ctx, profiles.Input{Name: str("Careful"), Agent: str("stand-in"), Folder: str(careDir)})
	if err != nil {
		t.Fatal(err)
	}
	star, err := f.prof.Create(ctx, profiles.Input{Name: str("Starred"), Agent: str("stand-in"), Folder: str(t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Script(enginetest.ToolCall("hub_assign_to_agent", map[string]any{"taskId": "fix login"}), enginetest.Say("Proposed."))
	r, _, err := f.turn(t, "anthropic", "have the agent fix login")
	if err != nil {
		t.Fatal(err)
	}
	row := r.Tools[0]
	if row.Status != "proposed" || !strings.Contains(row.Preview, "“Careful”") {
		t.Fatalf("row %+v", row)
	}
	var saved string
	if err := f.st.Reader().QueryRow("SELECT input FROM assistant_proposals WHERE id = ?", row.ProposalID).Scan(&saved); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{taskID, care.ID, `"agent":"stand-in"`} {
		if !strings.Contains(saved, want) {
			t.Errorf("held input %s lacks %s", saved, want)
		}
	}
	if _, err := f.prof.Star(ctx, star.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Apply(ctx, r.ConversationID, []string{row.ProposalID}); err != nil {
		t.Fatal(err)
	}
	list, err := f.js.List(ctx, taskID)
	if err != nil || len(list) != 1 || list[0].Folder != careDir {
		t.Fatalf("runs %+v, %v; want one in the Careful profile's folder", list, err)
	}
}

package node

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/sessions"
)

// reportingAgent is a stand-in coding agent that reports through its run's report_result: a build
// commits in the folder and reports the commit; a check reports fail the first time and pass after.
type reportingAgent struct {
	t      *testing.T
	mu     sync.Mutex
	specs  []engines.Spec
	checks int
}

func (*reportingAgent) Name() string { return "stand-in" }

func (a *reportingAgent) Start(ctx context.Context, spec engines.Spec, h engines.Host) (engines.Run, error) {
	a.mu.Lock()
	a.specs = append(a.specs, spec)
	n := len(a.specs)
	a.mu.Unlock()
	session := fmt.Sprintf("sess-%d", n)
	if spec.Resume != "" {
		session = spec.Resume
	}
	h.Event(engines.Event{At: time.Now(), Kind: engines.EventStarted, Session: session, Model: "stand-in-1"})
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", spec.Folder, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).Output()
		if err != nil {
			a.t.Errorf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	rep := map[string]any{"outcome": "done", "summary": "Wrote hello."}
	if strings.Contains(spec.Prompt, "(step check, verify)") {
		a.mu.Lock()
		a.checks++
		first := a.checks == 1
		a.mu.Unlock()
		head := git("rev-parse", "HEAD")
		if first {
			rep = map[string]any{"outcome": "fail", "summary": "It says hullo.", "subject": map[string]any{"commit": head},
				"checks": []map[string]any{{"name": "a1: prints hello", "verdict": "fail", "note": "printed hullo at line 3"}}}
		} else {
			rep = map[string]any{"outcome": "pass", "summary": "It says hello.", "subject": map[string]any{"commit": head},
				"checks": []map[string]any{{"name": "a1: prints hello", "verdict": "pass"}}}
		}
	} else {
		git("commit", "-q", "--allow-empty", "-m", fmt.Sprintf("hello %d", n))
		rep["subject"] = map[string]any{"commit": git("rev-parse", "HEAD")}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	sess, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: spec.MCP.URL,
		HTTPClient: enginetest.MCPClient(spec.MCP.Headers)}, nil)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "report_result", Arguments: rep})
	if err != nil || res.IsError {
		a.t.Errorf("report_result: %v %+v", err, res)
	}
	return agentRun{session}, nil
}

type agentRun struct{ session string }

func (r agentRun) Wait() (engines.Result, error) {
	return engines.Result{SessionID: r.session, Summary: "Reported."}, nil
}
func (agentRun) Stop(context.Context) error { return nil }

// A crew's lead plans a build and its check in a git folder; both go to the coding agent. The
// check fails once: the build is repaired in the same session (its run continues the build's
// run) with the failing check and the tested commit in its packet, the retest continues the
// checker's run and passes, and the mission ends succeeded with its checks, with no step turn.
func TestMissionAgentRepairsInItsSession(t *testing.T) {
	agent := &reportingAgent{t: t}
	var js *jobs.Service
	f := newFixture(t, func(c *Config) {
		var h http.Handler
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
		t.Cleanup(srv.Close)
		ss := sessions.New(sessions.Options{Store: c.Store, Writer: c.Writer})
		js = jobs.New(jobs.Options{Store: c.Store, Writer: c.Writer, Records: c.Records, DataDir: t.TempDir(), Sessions: ss,
			Drivers: map[string]engines.Driver{"stand-in": agent}, MCPURL: srv.URL})
		h = js.MCPHandler()
		if err := js.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { js.Close() })
		c.Jobs, c.Sessions = js, ss
	})
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "start"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	lead, dev, qa := f.node("Lead"), f.node("Dev"), f.node("QA")
	r := f.crew("Hello", lead.ID, lead, dev, qa)
	yes := true
	plan := PlanInput{
		Goal:         "Add a hello command",
		Requirements: []PlanRequirement{{ID: "r1", Text: "hello prints hello", Acceptance: []PlanAcceptance{{ID: "a1", Text: "prints hello"}}}},
		Constraints:  PlanConstraints{Folder: dir, Agent: "stand-in"},
		Steps: []PlanStep{
			{ID: "build", To: dev.Slug, Kind: KindBuild, RequirementIDs: []string{"r1"}, Brief: "Write hello."},
			{ID: "check", To: qa.Slug, Kind: KindVerify, RequirementIDs: []string{"r1"}, Brief: "Run hello.", After: []string{"build"}},
		},
	}
	f.model.Script(
		enginetest.ToolCall(ToolPlan, plan).When(enginetest.Match{SystemContains: "You are Lead", LastUserContains: "hello command"}),
		enginetest.Say("Report: hello works.").When(enginetest.Match{SystemContains: "You are Lead", LastUserContains: "has ended"}),
		enginetest.Say("Planned.").When(enginetest.Match{ToolResult: &yes}).Forever(),
	)
	f.post(r.ID, "Please add a hello command.")
	m := f.endedMission()
	if m.State != MissionSucceeded {
		t.Fatalf("the mission ended %s; want succeeded: %+v", m.State, m.Steps)
	}
	b, c := m.step("build"), m.step("check")
	if len(b.Attempts) != 2 || len(c.Attempts) != 2 {
		t.Fatalf("%d build and %d check attempts; want 2 each", len(b.Attempts), len(c.Attempts))
	}
	get := func(id string) jobs.Job {
		j, err := js.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	b1, b2, c1, c2 := get(b.Attempts[0].JobID), get(b.Attempts[1].JobID), get(c.Attempts[0].JobID), get(c.Attempts[1].JobID)
	if b2.Continues != b1.ID || c2.Continues != c1.ID || c1.Continues != "" {
		t.Fatalf("continues: repair %q (build %s), retest %q (check %s), first check %q; want the repair to continue the build, the retest the check, the check its own session",
			b2.Continues, b1.ID, c2.Continues, c1.ID, c1.Continues)
	}
	if b.Attempts[1].Tested != b.Attempts[0].Candidate || c.Attempts[1].Tested != b.Attempts[1].Candidate || b.Attempts[1].Candidate == b.Attempts[0].Candidate {
		t.Fatalf("candidates: build %+v, check %+v", b.Attempts, c.Attempts)
	}
	agent.mu.Lock()
	repairPrompt := agent.specs[2].Prompt
	agent.mu.Unlock()
	if !strings.Contains(repairPrompt, "printed hullo") || !strings.Contains(repairPrompt, b.Attempts[0].Candidate) {
		t.Fatalf("the repair's packet lacks the failing check or the tested commit:\n%s", repairPrompt)
	}
	if c.Outcome != OutcomePass || c.Attempts[1].Report == nil || len(c.Attempts[1].Report.Checks) != 1 || m.Ledger["r1"] != ReqAccepted {
		t.Fatalf("the check: %s %+v; r1 %s", c.Outcome, c.Attempts[1].Report, m.Ledger["r1"])
	}
	var stepTurns int
	f.st.Reader().QueryRow("SELECT count(*) FROM node_turns WHERE lane LIKE 'work:%'").Scan(&stepTurns)
	if stepTurns != 0 {
		t.Fatalf("%d node turns for dispatched steps; want none", stepTurns)
	}
}

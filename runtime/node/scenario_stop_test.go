package node

import (
	"context"
	"errors"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/sessions"
)

// failingAgent is a coding agent whose every run fails.
type failingAgent struct{ starts atomic.Int32 }

func (*failingAgent) Name() string { return "stand-in" }
func (a *failingAgent) Start(ctx context.Context, spec engines.Spec, h engines.Host) (engines.Run, error) {
	a.starts.Add(1)
	h.Event(engines.Event{At: time.Now(), Kind: engines.EventStarted, Session: "s1", Model: "stand-in-1"})
	return failedRun{}, nil
}

type failedRun struct{}

func (failedRun) Wait() (engines.Result, error) {
	return engines.Result{SessionID: "s1"}, errors.New("the agent crashed")
}
func (failedRun) Stop(context.Context) error { return nil }

// A dispatched step whose runs fail is tried again in its session until the attempt has had 4
// failed runs; then it is unverified and the plan ends partially completed.
func TestMissionAttemptStopsAfterFourFailedRuns(t *testing.T) {
	agent := &failingAgent{}
	f := newFixture(t, func(c *Config) {
		ss := sessions.New(sessions.Options{Store: c.Store, Writer: c.Writer})
		js := jobs.New(jobs.Options{Store: c.Store, Writer: c.Writer, Records: c.Records, DataDir: t.TempDir(), Sessions: ss,
			Drivers: map[string]engines.Driver{"stand-in": agent},
			Timing:  jobs.Timing{Retries: []time.Duration{}}}) // the runs' own retries are off: each fails at once
		if err := js.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { js.Close() })
		c.Jobs, c.Sessions = js, ss
	})
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	lead, dev := f.node("Lead"), f.node("Dev")
	r := f.crew("Hello", lead.ID, lead, dev)
	yes := true
	plan := PlanInput{Goal: "Add a hello command", Constraints: PlanConstraints{Folder: dir, Agent: "stand-in"},
		Steps: []PlanStep{{ID: "build", To: dev.Slug, Kind: KindBuild, Brief: "Write hello."}}}
	f.model.Script(
		enginetest.ToolCall(ToolPlan, plan).When(enginetest.Match{SystemContains: "You are Lead", LastUserContains: "hello command"}),
		enginetest.Say("Planned.").When(enginetest.Match{ToolResult: &yes}).Forever(),
		enginetest.Say("Report.").When(enginetest.Match{LastUserContains: "has ended"}).Forever(),
	)
	f.post(r.ID, "Please add a hello command.")
	m := f.endedMission()
	if got := agent.starts.Load(); got != maxFailedRuns {
		t.Fatalf("the agent was started %d times; want %d", got, maxFailedRuns)
	}
	if b := m.step("build"); m.State != MissionPartial || b.Outcome != OutcomeUnverified || len(b.Attempts) != 1 {
		t.Fatalf("mission %s, build %s with %d attempts; want partially_completed, unverified, one attempt", m.State, b.Outcome, len(b.Attempts))
	}
}

// Stopping a plan stops its steps and its turns; nobody reports, and a late report changes nothing.
func TestStopMission(t *testing.T) {
	f := newFixture(t)
	lead, dev, qa := f.node("Lead"), f.node("Dev"), f.node("QA")
	r := f.crew("Hello", lead.ID, lead, dev, qa)
	yes := true
	plan := PlanInput{Goal: "Add a hello command", Steps: []PlanStep{
		{ID: "build", To: dev.Slug, Kind: KindBuild, Brief: "Write hello."},
		{ID: "check", To: qa.Slug, Kind: KindVerify, Brief: "Run hello.", After: []string{"build"}},
	}}
	f.model.Script(
		enginetest.ToolCall(ToolPlan, plan).When(enginetest.Match{SystemContains: "You are Lead", LastUserContains: "hello command"}),
		enginetest.Hang().When(enginetest.Match{SystemContains: "You are Dev"}),
		enginetest.Say("Planned.").When(enginetest.Match{ToolResult: &yes}).Forever(),
	)
	f.post(r.ID, "Please add a hello command.")
	var id string
	f.waitFor("the build's turn to run", func() bool {
		var n int
		f.st.Reader().QueryRow("SELECT count(*) FROM node_turns WHERE lane LIKE 'work:%' AND status = 'running'").Scan(&n)
		f.st.Reader().QueryRow("SELECT id FROM node_missions").Scan(&id)
		return n == 1
	})
	m, err := f.svc.StopMission(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	f.settle()
	if m.State != MissionStopped || m.step("build").Status != StepStopped || m.step("check").Status != StepStopped {
		t.Fatalf("after the stop: %s, build %s, check %s", m.State, m.step("build").Status, m.step("check").Status)
	}
	var running, reports int
	f.st.Reader().QueryRow("SELECT count(*) FROM node_turns WHERE status IN ('queued', 'running')").Scan(&running)
	f.st.Reader().QueryRow("SELECT count(*) FROM node_turns WHERE operation_id LIKE 'report:%'").Scan(&reports)
	if running != 0 || reports != 0 {
		t.Fatalf("%d turns still going and %d reports after the stop; want none", running, reports)
	}
	if _, err := f.svc.ReportStep(context.Background(), id, "build", 1, StepReport{Outcome: "done", Summary: "late"}); err == nil {
		t.Fatal("a report after the stop was taken")
	}
	if _, err := f.svc.StopMission(context.Background(), "msn_nope"); err == nil {
		t.Fatal("stopping an unknown plan succeeded")
	}
}

// A step's turn that ends in prose is asked once to report; a second ending in prose leaves the
// attempt unverified, and the step after it is skipped.
func TestStepTurnNudgedOnceThenUnverified(t *testing.T) {
	f := newFixture(t)
	lead, dev, qa := f.node("Lead"), f.node("Dev"), f.node("QA")
	r := f.crew("Hello", lead.ID, lead, dev, qa)
	yes := true
	plan := PlanInput{Goal: "Add a hello command", Steps: []PlanStep{
		{ID: "build", To: dev.Slug, Kind: KindBuild, Brief: "Write hello."},
		{ID: "check", To: qa.Slug, Kind: KindVerify, Brief: "Run hello.", After: []string{"build"}},
	}}
	f.model.Script(
		enginetest.ToolCall(ToolPlan, plan).When(enginetest.Match{SystemContains: "You are Lead", LastUserContains: "hello command"}),
		enginetest.Say("Planned.").When(enginetest.Match{ToolResult: &yes}).Forever(),
		enginetest.Say("I think it is fine.").Forever(),
	)
	f.post(r.ID, "Please add a hello command.")
	m := f.endedMission()
	var nudges int
	f.st.Reader().QueryRow("SELECT count(*) FROM node_turns WHERE operation_id LIKE 'nudge:%'").Scan(&nudges)
	if b := m.step("build"); nudges != 1 || b.Outcome != OutcomeUnverified || m.step("check").Status != StepSkipped || m.State != MissionPartial {
		t.Fatalf("%d nudges, build %s, check %s, mission %s; want 1, unverified, skipped, partially_completed",
			nudges, b.Outcome, m.step("check").Status, m.State)
	}
}

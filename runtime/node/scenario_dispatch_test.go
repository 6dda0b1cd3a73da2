package node

import (
	"context"
	"os/exec"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/tools/toolstest"
)

// A build in the mission's folder goes straight to the coding agent with no node turn; a run that
// ends without report_result is asked once to report, in the same session; after that the build
// is unverified, its check is held and then skipped with what held it, and the plan ends
// partially completed.
func TestMissionDispatchAsksOnceThenUnverified(t *testing.T) {
	var agents *toolstest.Agents
	f := newFixture(t, func(c *Config) {
		agents = toolstest.NewAgents(t, c.Store, c.Writer, c.Records)
		c.Jobs, c.Sessions = agents.Jobs, agents.Sessions
	})
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	lead, dev, qa := f.node("Lead"), f.node("Dev"), f.node("QA")
	r := f.crew("Hello", lead.ID, lead, dev, qa)
	yes := true
	plan := PlanInput{
		Goal:        "Add a hello command",
		Constraints: PlanConstraints{Folder: dir, Agent: "stand-in"},
		Steps: []PlanStep{
			{ID: "build", To: dev.Slug, Kind: KindBuild, Brief: "Write hello."},
			{ID: "check", To: qa.Slug, Kind: KindVerify, Brief: "Run hello.", After: []string{"build"}},
		},
	}
	f.model.Script(
		enginetest.ToolCall(ToolPlan, plan).When(enginetest.Match{SystemContains: "You are Lead", LastUserContains: "hello command"}),
		enginetest.Say("Report: the build did not report.").When(enginetest.Match{SystemContains: "You are Lead", LastUserContains: "has ended"}),
		enginetest.Say("Planned.").When(enginetest.Match{ToolResult: &yes}).Forever(),
	)
	f.post(r.ID, "Please add a hello command.")
	m := f.endedMission()
	b, c := m.step("build"), m.step("check")
	if m.State != MissionPartial || b.Outcome != OutcomeUnverified || c.Status != StepSkipped || len(c.HeldBy) != 1 || c.HeldBy[0] != "build" {
		t.Fatalf("mission %s, build %s/%s, check %s held by %v; want partially_completed, unverified, skipped behind build",
			m.State, b.Status, b.Outcome, c.Status, c.HeldBy)
	}
	if got := agents.Agent.Starts(); got != 2 {
		t.Fatalf("the agent was started %d times; want 2: the build and the one ask to report", got)
	}
	asked, err := agents.Jobs.Get(context.Background(), b.Attempts[0].JobID)
	if err != nil {
		t.Fatal(err)
	}
	if asked.Continues == "" {
		t.Fatalf("the ask to report started a new session; want it to continue the build's run")
	}
	var stepTurns int
	f.st.Reader().QueryRow("SELECT count(*) FROM node_turns WHERE lane LIKE 'work:%'").Scan(&stepTurns)
	if stepTurns != 0 {
		t.Fatalf("%d node turns for a dispatched step; want none", stepTurns)
	}
}

package node

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/ledger"
)

// A crew's lead makes a plan with a build and its check; the check fails once, which reopens the
// build as a repair with the failing check in its note; the retest of the repaired commit passes
// and the mission ends succeeded, with the lead's one report.
func TestMissionRepairsAndSucceeds(t *testing.T) {
	f := newFixture(t)
	lead, dev, qa := f.node("Lead"), f.node("Dev"), f.node("QA")
	r := f.crew("Hello", lead.ID, lead, dev, qa)
	yes := true
	plan := PlanInput{
		Goal:         "Add a hello command",
		Requirements: []PlanRequirement{{ID: "r1", Text: "hello prints hello", Acceptance: []PlanAcceptance{{ID: "a1", Text: "prints hello"}}}},
		Steps: []PlanStep{
			{ID: "build", To: dev.Slug, Kind: KindBuild, RequirementIDs: []string{"r1"}, Brief: "Write hello."},
			{ID: "check", To: qa.Slug, Kind: KindVerify, RequirementIDs: []string{"r1"}, Brief: "Run hello.", After: []string{"build"}},
		},
	}
	report := func(outcome, commit string, checks ...ReportCheck) StepReport {
		return StepReport{Outcome: outcome, Summary: outcome + " at " + commit, Commit: commit, Checks: checks}
	}
	done := enginetest.Match{ToolResult: &yes}
	f.model.Script(
		enginetest.ToolCall(ToolPlan, plan).When(enginetest.Match{SystemContains: "You are Lead", LastUserContains: "hello command"}),
		enginetest.Say("Planned.").When(enginetest.Match{SystemContains: "You are Lead", ToolResult: &yes}),
		enginetest.ToolCall(ToolStepReport, report("done", "c1")).When(enginetest.Match{LastUserContains: "step build, build, attempt 1"}),
		enginetest.ToolCall(ToolStepReport, report("fail", "c1", ReportCheck{Name: "a1: prints hello", Verdict: "fail", Note: "printed hullo at line 3"})).
			When(enginetest.Match{LastUserContains: "step check, verify, attempt 1"}),
		enginetest.ToolCall(ToolStepReport, report("done", "c2")).When(enginetest.Match{LastUserContains: "step build, build, attempt 2"}),
		enginetest.ToolCall(ToolStepReport, report("pass", "c2", ReportCheck{Name: "a1: prints hello", Verdict: "pass"})).
			When(enginetest.Match{LastUserContains: "step check, verify, attempt 2"}),
		enginetest.Say("Report: hello works, checked.").When(enginetest.Match{SystemContains: "You are Lead", LastUserContains: "has ended"}),
		enginetest.Say("Done.").When(done).Forever(),
	)
	f.post(r.ID, "Please add a hello command.")
	var m Mission
	f.waitFor("the mission to end", func() bool {
		var id string
		f.st.Reader().QueryRow("SELECT id FROM node_missions").Scan(&id)
		if id == "" {
			return false
		}
		var err error
		m, err = f.svc.Mission(context.Background(), id)
		return err == nil && m.ended()
	})
	f.settle()
	if m.State != MissionSucceeded {
		t.Fatalf("the mission ended %s; want succeeded: %+v", m.State, m.Steps)
	}
	b, c := m.step("build"), m.step("check")
	if len(b.Attempts) != 2 || b.Attempts[1].Reason != "repair" || b.Attempts[1].Tested != "c1" || !strings.Contains(b.Attempts[1].Note, "printed hullo") {
		t.Fatalf("the build's attempts: %+v; want a repair of c1 with the failing check in its note", b.Attempts)
	}
	if len(c.Attempts) != 2 || c.Attempts[0].Outcome != OutcomeFail || c.Attempts[1].Reason != "retest" || c.Attempts[1].Tested != "c2" || c.Outcome != OutcomePass {
		t.Fatalf("the check's attempts: %+v; want a failure then a passing retest of c2", c.Attempts)
	}
	if m.Ledger["r1"] != ReqAccepted {
		t.Fatalf("requirement r1 is %s; want accepted", m.Ledger["r1"])
	}
	// Each attempt started one turn, whatever the outbox delivered.
	var turns, ops int
	f.st.Reader().QueryRow("SELECT count(*), count(DISTINCT operation_id) FROM node_turns WHERE reason = 'plan' AND lane LIKE 'work:%'").Scan(&turns, &ops)
	if turns != 4 || ops != 4 {
		t.Fatalf("%d step turns (%d operations); want 4, one per attempt", turns, ops)
	}
	// Delivering the outbox again starts nothing new.
	f.st.Reader().QueryRow("SELECT count(*) FROM node_turns").Scan(&turns)
	err := f.svc.cfg.Writer.Exec(context.Background(), func(tx *ledger.Tx) error {
		_, err := tx.ExecContext(tx.Context(), "UPDATE node_outbox SET delivered_at = NULL")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.deliverOutbox(context.Background()); err != nil {
		t.Fatal(err)
	}
	var after int
	f.st.Reader().QueryRow("SELECT count(*) FROM node_turns").Scan(&after)
	if after != turns {
		t.Fatalf("redelivering the outbox queued %d turns more", after-turns)
	}
	// The card is the mission, rebuilt from the tables.
	card, err := f.svc.Message(context.Background(), m.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	var data planCardData
	if err := json.Unmarshal(card.Data, &data); err != nil {
		t.Fatal(err)
	}
	if card.Kind != KindPlan || data.State != MissionSucceeded || len(data.Steps) != 2 || len(data.Steps[0].Attempts) != 2 {
		t.Fatalf("the plan card: %s %s", card.Kind, card.Data)
	}
	if texts := f.nodeTexts(r.ID); len(texts) == 0 || !strings.Contains(texts[len(texts)-1], "Report:") {
		t.Fatalf("the crew's node messages %q; want the lead's report last", texts)
	}
}

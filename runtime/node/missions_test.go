package node

import (
	"context"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/ledger"
)

// missionFixture is a crew with a mission of a build and its check, made directly; its steps'
// turns hang (they never end, so never nudge), and the test reports for them.
func missionFixture(t *testing.T) (*fixture, Mission) {
	f := newFixture(t)
	lead, dev, qa := f.node("Lead"), f.node("Dev"), f.node("QA")
	r := f.crew("Hello", lead.ID, lead, dev, qa)
	f.model.Script(
		enginetest.Hang().When(enginetest.Match{SystemContains: "You are Dev"}).Forever(),
		enginetest.Hang().When(enginetest.Match{SystemContains: "You are QA"}).Forever(),
		enginetest.Say("ok").Forever(),
	)
	p, err := validatePlan(PlanInput{Goal: "Add hello", Steps: []PlanStep{
		{ID: "build", To: dev.Slug, Kind: KindBuild, Brief: "Write hello."},
		{ID: "check", To: qa.Slug, Kind: KindVerify, Brief: "Run hello.", After: []string{"build"}},
	}}, map[string]string{dev.Slug: dev.Role, qa.Slug: qa.Role})
	if err != nil {
		t.Fatal(err)
	}
	r, _ = f.svc.Room(context.Background(), r.ID)
	var m Mission
	err = f.svc.cfg.Writer.Exec(context.Background(), func(tx *ledger.Tx) error {
		m, err = f.svc.createMissionTx(tx, r, lead, p, true, "")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return f, m
}

func report(t *testing.T, f *fixture, m Mission, step string, n int, r StepReport) string {
	t.Helper()
	out, err := f.svc.ReportStep(context.Background(), m.ID, step, n, r)
	if err != nil {
		t.Fatalf("report %s #%d: %v", step, n, err)
	}
	return out
}

func failing(commit, note string) StepReport {
	return StepReport{Outcome: "fail", Summary: "no", Commit: commit, Checks: []ReportCheck{{Name: "hello", Verdict: "fail", Note: note}}}
}

func effects(f *fixture, kind string) int {
	var n int
	f.st.Reader().QueryRow("SELECT count(*) FROM node_outbox WHERE kind = ?", kind).Scan(&n)
	return n
}

// The same failure twice stops repairing for the lead's one judgement turn.
func TestRepairSameFailureTwiceAsksTheLead(t *testing.T) {
	f, m := missionFixture(t)
	report(t, f, m, "build", 1, StepReport{Outcome: "done", Summary: "ok", Commit: "aaaaaaa1"})
	if got := report(t, f, m, "check", 1, failing("aaaaaaa1", "got 3 at /a/b.go:12")); got != OutcomeFail {
		t.Fatalf("the check's outcome %s", got)
	}
	report(t, f, m, "build", 2, StepReport{Outcome: "done", Summary: "fixed", Commit: "bbbbbbb2"})
	report(t, f, m, "check", 2, failing("bbbbbbb2", "got 4 at /c/d.go:19"))
	m, _ = f.svc.Mission(context.Background(), m.ID)
	if b := m.step("build"); b.Attempt != 2 || b.Status != StepDone {
		t.Fatalf("the build was reopened again after the same failure: attempt %d %s", b.Attempt, b.Status)
	}
	if effects(f, EffectJudge) != 1 || effects(f, EffectReport) != 0 || m.State != MissionFailed {
		t.Fatalf("%d judgement and %d report effects, mission %s; want one judgement only, and the plan failed",
			effects(f, EffectJudge), effects(f, EffectReport), m.State)
	}
	f.waitFor("the lead's judgement turn", func() bool {
		var judged int
		f.st.Reader().QueryRow("SELECT count(*) FROM node_turns WHERE operation_id LIKE 'judge:%' AND lane LIKE 'conv:%' AND node_id = ?", m.LeadID).Scan(&judged)
		return judged == 1
	})
}

// A repair that reports the commit it was given changed nothing: the check is not run again on it.
func TestRepairWithoutChangeAsksTheLead(t *testing.T) {
	f, m := missionFixture(t)
	report(t, f, m, "build", 1, StepReport{Outcome: "done", Summary: "ok", Commit: "aaaaaaa1"})
	report(t, f, m, "check", 1, failing("aaaaaaa1", "boom"))
	report(t, f, m, "build", 2, StepReport{Outcome: "done", Summary: "looked", Commit: "aaaaaaa1"})
	m, _ = f.svc.Mission(context.Background(), m.ID)
	if c := m.step("check"); c.Attempt != 1 || c.Outcome != OutcomeFail {
		t.Fatalf("the check after a repair that changed nothing: attempt %d %s; want attempt 1 still failed", c.Attempt, c.Outcome)
	}
	if effects(f, EffectJudge) != 1 {
		t.Fatalf("%d judgement effects; want 1", effects(f, EffectJudge))
	}
}

// A report for an earlier attempt, or contradicting its own checks, changes nothing.
func TestReportStepRefuses(t *testing.T) {
	f, m := missionFixture(t)
	if _, err := f.svc.ReportStep(context.Background(), m.ID, "check", 1, StepReport{Outcome: "pass", Summary: "early"}); err == nil {
		t.Fatal("a report for a step that has not started was taken")
	}
	_, err := f.svc.ReportStep(context.Background(), m.ID, "build", 1, StepReport{Outcome: "done", Summary: "x",
		Checks: []ReportCheck{{Name: "tests", Verdict: "fail"}}})
	if err == nil || !strings.Contains(err.Error(), `check "tests" failed`) {
		t.Fatalf("a report contradicting its checks: %v", err)
	}
	m2, _ := f.svc.Mission(context.Background(), m.ID)
	if b := m2.step("build"); b.Status != StepWorking || b.Outcome != OutcomeUnknown {
		t.Fatalf("a refused report changed the build: %s %s", b.Status, b.Outcome)
	}
	report(t, f, m, "build", 1, StepReport{Outcome: "done", Summary: "ok"})
	if _, err := f.svc.ReportStep(context.Background(), m.ID, "build", 1, StepReport{Outcome: "done", Summary: "again"}); err == nil {
		t.Fatal("a second report for an ended attempt was taken")
	}
}

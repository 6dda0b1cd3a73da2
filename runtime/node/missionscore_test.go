package node

import (
	"reflect"
	"strings"
	"testing"
)

func TestVerdictOf(t *testing.T) {
	crit := []Criterion{{Requirement: "r1", ID: "a1", Mandatory: true}, {Requirement: "r1", ID: "a2"}}
	pass := func(name string, k ...string) ReportCheck {
		return ReportCheck{Name: name, Verdict: "pass", Criteria: k}
	}
	fail := func(name string) ReportCheck { return ReportCheck{Name: name, Verdict: "fail"} }
	cases := []struct {
		name    string
		kind    string
		r       StepReport
		want    string
		refused string
	}{
		{"verify passes", KindVerify, StepReport{Outcome: "pass", Checks: []ReportCheck{pass("hello", "a1")}}, OutcomePass, ""},
		{"criterion by full name", KindVerify, StepReport{Outcome: "pass", Checks: []ReportCheck{pass("x", "r1/a1")}}, OutcomePass, ""},
		{"criterion by check name", KindVerify, StepReport{Outcome: "pass", Checks: []ReportCheck{pass("a1: prints hello")}}, OutcomePass, ""},
		{"no checks", KindVerify, StepReport{Outcome: "pass"}, OutcomeUnverified, ""},
		{"mandatory criterion uncovered", KindVerify, StepReport{Outcome: "pass", Checks: []ReportCheck{pass("x", "a2")}}, OutcomeUnverified, ""},
		{"a skipped check", KindVerify, StepReport{Outcome: "pass", Checks: []ReportCheck{pass("x", "a1"), {Name: "y", Verdict: "skip"}}}, OutcomeUnverified, ""},
		{"done for a verify counts as its checks", KindVerify, StepReport{Outcome: "done", Checks: []ReportCheck{pass("x", "a1")}}, OutcomePass, ""},
		{"verify fails", KindVerify, StepReport{Outcome: "fail", Checks: []ReportCheck{pass("x", "a1"), fail("y")}}, OutcomeFail, ""},
		{"pass contradicting a failed check", KindVerify, StepReport{Outcome: "pass", Checks: []ReportCheck{pass("x", "a1"), fail("y")}}, "", `check "y" failed`},
		{"fail contradicting passing checks", KindVerify, StepReport{Outcome: "fail", Checks: []ReportCheck{pass("x", "a1")}}, "", "none of its checks failed"},
		{"bad verdict", KindVerify, StepReport{Outcome: "pass", Checks: []ReportCheck{{Name: "x", Verdict: "ok"}}}, "", `verdict "ok"`},
		{"bad outcome", KindBuild, StepReport{Outcome: "great"}, "", `not "great"`},
		{"blocked needs a reason", KindBuild, StepReport{Outcome: "blocked"}, "", "blockedBy"},
		{"blocked", KindBuild, StepReport{Outcome: "blocked", BlockedBy: "no key"}, OutcomeBlocked, ""},
		{"build done without checks", KindBuild, StepReport{Outcome: "done"}, OutcomeDone, ""},
		{"build done contradicting a check", KindBuild, StepReport{Outcome: "done", Checks: []ReportCheck{fail("tests")}}, "", `check "tests" failed`},
		{"build fails", KindBuild, StepReport{Outcome: "fail"}, OutcomeFail, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := verdictOf(c.kind, c.r, crit)
			if c.refused != "" {
				if err == nil || !strings.Contains(err.Error(), c.refused) {
					t.Fatalf("verdictOf = %q, %v; want it refused with %q", got, err, c.refused)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("verdictOf = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestStartableAndHeld(t *testing.T) {
	w := func(id string, after ...string) coreStep {
		return coreStep{ID: id, Kind: KindOther, After: after, Status: StepWaiting, Outcome: OutcomeUnknown}
	}
	ended := func(id, status, outcome string) coreStep {
		return coreStep{ID: id, Kind: KindOther, Status: status, Outcome: outcome}
	}
	cases := []struct {
		name  string
		steps []coreStep
		start []string
		held  map[string][]string
		quiet bool
	}{
		{"roots start", []coreStep{w("a"), w("b"), w("c", "a", "b")}, []string{"a", "b"}, map[string][]string{}, false},
		{"after done and pass", []coreStep{ended("a", StepDone, OutcomeDone), ended("b", StepDone, OutcomePass), w("c", "a", "b")},
			[]string{"c"}, map[string][]string{}, false},
		{"one after still working", []coreStep{ended("a", StepDone, OutcomeDone), ended("b", StepWorking, OutcomeUnknown), w("c", "a", "b")},
			nil, map[string][]string{}, false},
		{"held behind fail", []coreStep{ended("a", StepDone, OutcomeFail), w("c", "a")}, nil, map[string][]string{"c": {"a"}}, true},
		{"held behind blocked", []coreStep{ended("a", StepBlocked, OutcomeBlocked), w("c", "a")}, nil, map[string][]string{"c": {"a"}}, true},
		{"held behind unverified", []coreStep{ended("a", StepDone, OutcomeUnverified), w("c", "a")}, nil, map[string][]string{"c": {"a"}}, true},
		{"a failed check in repair holds nobody yet", []coreStep{ended("a", StepWorking, OutcomeFail), w("c", "a")}, nil, map[string][]string{}, false},
		{"held through a chain", []coreStep{ended("a", StepDone, OutcomeFail), w("b", "a"), w("c", "b")}, nil, map[string][]string{"b": {"a"}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := startable(c.steps); !reflect.DeepEqual(got, c.start) {
				t.Errorf("startable = %v; want %v", got, c.start)
			}
			if got := held(c.steps); !reflect.DeepEqual(got, c.held) {
				t.Errorf("held = %v; want %v", got, c.held)
			}
			if got := quiet(c.steps); got != c.quiet {
				t.Errorf("quiet = %v; want %v", got, c.quiet)
			}
		})
	}
}

func TestSkipHeld(t *testing.T) {
	steps := []coreStep{
		{ID: "a", Status: StepDone, Outcome: OutcomeFail},
		{ID: "ok", Status: StepDone, Outcome: OutcomeDone},
		{ID: "b", After: []string{"a", "ok"}, Status: StepWaiting},
		{ID: "c", After: []string{"b"}, Status: StepWaiting},
	}
	got := skipHeld(steps)
	want := map[string][]string{"b": {"a"}, "c": {"b"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("skipHeld = %v; want %v", got, want)
	}
	if steps[2].Status != StepSkipped || steps[3].Status != StepSkipped || steps[0].Status != StepDone {
		t.Fatalf("statuses after skipping: %+v", steps)
	}
}

func TestFailureSignature(t *testing.T) {
	a := failureSignature([]ReportCheck{{Name: "go test", Verdict: "fail", Note: "hello_test.go:12: got 3 want 4 at /tmp/x/a.go (commit 1a2b3c4d)"}})
	b := failureSignature([]ReportCheck{{Name: "go test", Verdict: "fail", Note: "hello_test.go:19: got 7 want 8 at /home/y/a.go (commit 9f8e7d6c5b)"},
		{Name: "lint", Verdict: "pass"}})
	c := failureSignature([]ReportCheck{{Name: "go test", Verdict: "fail", Note: "panic: nil map"}})
	if a != b {
		t.Errorf("the same failure on another commit, path and line has signatures %s and %s", a, b)
	}
	if a == c {
		t.Errorf("different failures share signature %s", a)
	}
}

func TestRepairDecision(t *testing.T) {
	f := func(sig, cand string) checkFailure { return checkFailure{Signature: sig, Candidate: cand} }
	cases := []struct {
		name     string
		verifies string
		earlier  []checkFailure
		now      checkFailure
		want     string
	}{
		{"first failure repairs", "b", nil, f("s1", "c1"), RepairAgain},
		{"a new failure repairs again", "b", []checkFailure{f("s1", "c1")}, f("s2", "c2"), RepairAgain},
		{"the same failure twice: the lead judges", "b", []checkFailure{f("s1", "c1")}, f("s1", "c2"), RepairJudge},
		{"no change: the lead judges", "b", []checkFailure{f("s1", "c1")}, f("s2", "c1"), RepairJudge},
		{"third identical failure asks the owner", "b", []checkFailure{f("s1", "c1"), f("s2", "c2"), f("s1", "c3")}, f("s1", "c4"), RepairAsk},
		{"no build to repair", "", nil, f("s1", "c1"), RepairNoBuild},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := repairDecision(c.verifies, c.earlier, c.now); got != c.want {
				t.Fatalf("repairDecision = %q; want %q", got, c.want)
			}
		})
	}
}

func TestLedgerAndMissionEnd(t *testing.T) {
	reqs := []coreRequirement{{ID: "r1", HasCrit: true}, {ID: "r2"}, {ID: "r3", Deferred: true}}
	covers := map[string][]string{"r1": {"b", "v"}, "r2": {"d"}}
	cases := []struct {
		name   string
		steps  []coreStep
		ledger map[string]string
		end    string
	}{
		{"all passed", []coreStep{
			{ID: "b", Kind: KindBuild, Status: StepDone, Outcome: OutcomeDone},
			{ID: "v", Kind: KindVerify, Status: StepDone, Outcome: OutcomePass},
			{ID: "d", Kind: KindWrite, Status: StepDone, Outcome: OutcomeDone},
		}, map[string]string{"r1": ReqAccepted, "r2": ReqAccepted, "r3": ReqDeferred}, MissionSucceeded},
		{"a check failed", []coreStep{
			{ID: "b", Kind: KindBuild, Status: StepDone, Outcome: OutcomeDone},
			{ID: "v", Kind: KindVerify, Status: StepDone, Outcome: OutcomeFail},
			{ID: "d", Kind: KindWrite, Status: StepDone, Outcome: OutcomeDone},
		}, map[string]string{"r1": ReqFailed, "r2": ReqAccepted, "r3": ReqDeferred}, MissionFailed},
		{"unverified", []coreStep{
			{ID: "b", Kind: KindBuild, Status: StepDone, Outcome: OutcomeDone},
			{ID: "v", Kind: KindVerify, Status: StepDone, Outcome: OutcomeUnverified},
			{ID: "d", Kind: KindWrite, Status: StepSkipped, Outcome: OutcomeUnknown},
		}, map[string]string{"r1": ReqInProgress, "r2": ReqCancelled, "r3": ReqDeferred}, MissionPartial},
		{"stopped", []coreStep{
			{ID: "b", Kind: KindBuild, Status: StepStopped, Outcome: OutcomeUnknown},
			{ID: "v", Kind: KindVerify, Status: StepStopped},
			{ID: "d", Kind: KindWrite, Status: StepWaiting},
		}, map[string]string{"r1": ReqCancelled, "r2": ReqOpen, "r3": ReqDeferred}, MissionStopped},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := ledgerOf(reqs, covers, c.steps)
			if !reflect.DeepEqual(l, c.ledger) {
				t.Errorf("ledgerOf = %v; want %v", l, c.ledger)
			}
			if got := missionEnd(c.steps, l); got != c.end {
				t.Errorf("missionEnd = %q; want %q", got, c.end)
			}
		})
	}
}

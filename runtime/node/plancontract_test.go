package node

import (
	"strings"
	"testing"
)

var testCrew = map[string]string{"lead": "manager", "dev": "developer", "dev2": "developer", "qa": "tester", "pen": "writer"}

// basePlan is a valid plan: a build of r1 and its check.
func basePlan() PlanInput {
	return PlanInput{
		Goal: "Add a greeting",
		Requirements: []PlanRequirement{{ID: "r1", Text: "say hello",
			Acceptance: []PlanAcceptance{{ID: "a1", Text: "prints hello"}}}},
		Steps: []PlanStep{
			{ID: "build", To: "dev", RequirementIDs: []string{"r1"}, Brief: "Write hello.go."},
			{ID: "check", To: "@qa", RequirementIDs: []string{"r1"}, Brief: "Run it.", After: []string{"build"}},
		},
	}
}

// parallelPlan builds r1 and r2 in worktrees, checks each, and integrates them.
func parallelPlan() PlanInput {
	return PlanInput{
		Goal: "Two features",
		Requirements: []PlanRequirement{
			{ID: "r1", Text: "one", Acceptance: []PlanAcceptance{{ID: "a", Text: "works"}}},
			{ID: "r2", Text: "two", Acceptance: []PlanAcceptance{{ID: "a", Text: "works"}}},
		},
		Constraints: PlanConstraints{Folder: "/src/app", Parallel: "worktrees", Integrate: "merge"},
		Steps: []PlanStep{
			{ID: "b1", To: "dev", RequirementIDs: []string{"r1"}, Brief: "one"},
			{ID: "b2", To: "dev2", RequirementIDs: []string{"r2"}, Brief: "two"},
			{ID: "c1", To: "qa", RequirementIDs: []string{"r1"}, Brief: "check one", After: []string{"b1"}},
			{ID: "c2", To: "qa", RequirementIDs: []string{"r2"}, Brief: "check two", After: []string{"b2"}},
			{ID: "int", To: "dev", Kind: KindBuild, Brief: "bring them in", After: []string{"c1", "c2"}, Integrates: []string{"b1", "b2"}},
			{ID: "cint", To: "qa", RequirementIDs: []string{"r1", "r2"}, Brief: "check all", After: []string{"int"}, Verifies: "int"},
		},
	}
}

func TestValidatePlanAccepts(t *testing.T) {
	p, err := validatePlan(basePlan(), testCrew)
	if err != nil {
		t.Fatal(err)
	}
	if p.Steps[0].Kind != KindBuild || p.Steps[1].Kind != KindVerify || p.Steps[1].Verifies != "build" || p.Steps[1].To != "qa" {
		t.Fatalf("the plan was not completed: %+v", p.Steps)
	}
	if _, err := validatePlan(parallelPlan(), testCrew); err != nil {
		t.Fatalf("the parallel plan: %v", err)
	}
	serial := basePlan()
	serial.Constraints.Order = "serial"
	serial.Requirements = append(serial.Requirements, PlanRequirement{ID: "r2", Text: "bye"})
	serial.Steps = append(serial.Steps, PlanStep{ID: "b2", To: "dev", RequirementIDs: []string{"r2"}, Brief: "bye", After: []string{"check"}})
	if _, err := validatePlan(serial, testCrew); err != nil {
		t.Fatalf("the serial plan: %v", err)
	}
	deferred := basePlan()
	deferred.Requirements = append(deferred.Requirements, PlanRequirement{ID: "r2", Text: "later", Acceptance: []PlanAcceptance{{ID: "x", Text: "y"}}})
	deferred.Deferred = []PlanDeferral{{RequirementID: "r2", Reason: "out of scope today"}}
	if _, err := validatePlan(deferred, testCrew); err != nil {
		t.Fatalf("the deferred plan: %v", err)
	}
}

func TestValidatePlanRefuses(t *testing.T) {
	cases := []struct {
		name   string
		base   func() PlanInput
		change func(p *PlanInput)
		want   string
	}{
		{"no goal", basePlan, func(p *PlanInput) { p.Goal = " " }, "needs a goal"},
		{"two-line goal", basePlan, func(p *PlanInput) { p.Goal = "a\nb" }, "one line"},
		{"no steps", basePlan, func(p *PlanInput) { p.Steps = nil }, "at least one step"},
		{"31 steps", basePlan, func(p *PlanInput) {
			for i := 0; len(p.Steps) < 31; i++ {
				p.Steps = append(p.Steps, PlanStep{ID: "x" + strings.Repeat("x", i), To: "pen", Brief: "b"})
			}
		}, "at most 30"},
		{"duplicate step id", basePlan, func(p *PlanInput) { p.Steps[1].ID = "build" }, `"build" is used twice`},
		{"duplicate requirement id", basePlan, func(p *PlanInput) {
			p.Requirements = append(p.Requirements, PlanRequirement{ID: "r1", Text: "again"})
		}, `"r1" is used twice`},
		{"duplicate criterion", basePlan, func(p *PlanInput) {
			p.Requirements[0].Acceptance = append(p.Requirements[0].Acceptance, PlanAcceptance{ID: "a1", Text: "x"})
		}, `"a1" is used twice`},
		{"unknown after", basePlan, func(p *PlanInput) { p.Steps[1].After = []string{"nope"} }, `after "nope"`},
		{"unknown requirement", basePlan, func(p *PlanInput) { p.Steps[0].RequirementIDs = []string{"r9"} }, `"r9"`},
		{"unknown verifies", basePlan, func(p *PlanInput) { p.Steps[1].Verifies = "nope" }, `verifies "nope"`},
		{"unknown deferral", basePlan, func(p *PlanInput) { p.Deferred = []PlanDeferral{{RequirementID: "r9", Reason: "x"}} }, `"r9"`},
		{"cycle", basePlan, func(p *PlanInput) { p.Steps[0].After = []string{"check"} }, "circle"},
		{"self after", basePlan, func(p *PlanInput) { p.Steps[0].After = []string{"build"} }, "after itself"},
		{"not in crew", basePlan, func(p *PlanInput) { p.Steps[0].To = "stranger" }, "not in this crew"},
		{"bad kind", basePlan, func(p *PlanInput) { p.Steps[0].Kind = "dance" }, "dance"},
		{"no brief", basePlan, func(p *PlanInput) { p.Steps[0].Brief = "" }, "needs a brief"},
		{"long brief", basePlan, func(p *PlanInput) { p.Steps[0].Brief = strings.Repeat("é", 1501) }, "1501 characters"},
		{"uncovered requirement", basePlan, func(p *PlanInput) {
			p.Requirements = append(p.Requirements, PlanRequirement{ID: "r2", Text: "bye"})
		}, `No step covers requirement "r2"`},
		{"acceptance without verify", basePlan, func(p *PlanInput) { p.Steps[1].RequirementIDs = nil }, "no verify step covers"},
		{"verify without build", basePlan, func(p *PlanInput) { p.Steps[1].After = nil }, "no build before it"},
		{"verify before its build", basePlan, func(p *PlanInput) {
			p.Steps = append(p.Steps, PlanStep{ID: "b2", To: "dev", Brief: "x"})
			p.Steps[1].Verifies = "b2"
		}, "must come after the build"},
		{"verifies a non-build", basePlan, func(p *PlanInput) {
			p.Steps = append(p.Steps, PlanStep{ID: "doc", To: "pen", Brief: "x", After: []string{"build"}})
			p.Steps[1].After = []string{"doc"}
			p.Steps[1].Verifies = "doc"
		}, "not a build step"},
		{"verifies on a build", basePlan, func(p *PlanInput) { p.Steps[0].Verifies = "check" }, "not a verify step"},
		{"bad publish", basePlan, func(p *PlanInput) { p.Constraints.Publish = "yes" }, "publish"},
		{"bad parallel", basePlan, func(p *PlanInput) { p.Constraints.Parallel = "many" }, "parallel"},
		{"serial: two features in one build", basePlan, func(p *PlanInput) {
			p.Constraints.Order = "serial"
			p.Requirements = append(p.Requirements, PlanRequirement{ID: "r2", Text: "bye"})
			p.Steps[0].RequirementIDs = []string{"r1", "r2"}
		}, "covers 2 features"},
		{"serial: feature not after the previous check", basePlan, func(p *PlanInput) {
			p.Constraints.Order = "serial"
			p.Requirements = append(p.Requirements, PlanRequirement{ID: "r2", Text: "bye"})
			p.Steps = append(p.Steps, PlanStep{ID: "b2", To: "dev", RequirementIDs: []string{"r2"}, Brief: "bye", After: []string{"build"}})
		}, `the check of the feature before it`},
		{"integrates in serial work", basePlan, func(p *PlanInput) { p.Steps[0].Integrates = []string{"build"} }, "only worktrees or snapshots"},
		{"worktrees without folder", parallelPlan, func(p *PlanInput) { p.Constraints.Folder = "" }, "needs the mission's folder"},
		{"snapshots merge", parallelPlan, func(p *PlanInput) { p.Constraints.Parallel = "snapshots" }, "no branches to merge"},
		{"snapshots rebase", parallelPlan, func(p *PlanInput) {
			p.Constraints.Parallel, p.Constraints.Integrate = "snapshots", "rebase"
		}, "no branches to rebase"},
		{"builds not brought in", parallelPlan, func(p *PlanInput) { p.Steps[4].Integrates = []string{"b1"} }, `build "b2" must be brought in`},
		{"brought in twice", parallelPlan, func(p *PlanInput) {
			p.Steps = append(p.Steps, PlanStep{ID: "int2", To: "dev2", Kind: KindBuild, Brief: "x", After: []string{"c1"}, Integrates: []string{"b1"}})
		}, "brought in twice"},
		{"integration not a build", parallelPlan, func(p *PlanInput) {
			p.Steps[4].Kind = KindWrite
			p.Steps[5].Verifies = ""
			p.Steps[5].After = []string{"int", "b1"}
		}, "must be a build step"},
		{"integration before a check", parallelPlan, func(p *PlanInput) { p.Steps[4].After = []string{"c1", "b2"} }, `the check of "b2"`},
		{"integration before a build", parallelPlan, func(p *PlanInput) {
			p.Steps[4].After = []string{"c1"}
			p.Steps[3].After = nil
			p.Steps[3].Verifies = ""
			p.Steps[3].Kind = KindOther
		}, `after the build "b2"`},
		{"integration without a check", parallelPlan, func(p *PlanInput) { p.Steps = p.Steps[:5] }, "needs a verify step after it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.base()
			c.change(&p)
			_, err := validatePlan(p, testCrew)
			if err == nil {
				t.Fatalf("validatePlan accepted the plan; want an error with %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q; want it to contain %q", err, c.want)
			}
		})
	}
}

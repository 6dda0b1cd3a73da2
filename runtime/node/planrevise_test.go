package node

import (
	"context"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/ledger"
)

// A revision of a running plan cancels a step that has not started, adds a step, merges the
// constraints and bumps the revision; a revision that does not hold together changes nothing.
func TestPlanRevise(t *testing.T) {
	f := newFixture(t)
	lead, dev, qa, writer := f.node("Lead"), f.node("Dev"), f.node("QA"), f.node("Writer")
	r := f.crew("Site", lead.ID, lead, dev, qa, writer)
	f.model.Script(enginetest.Hang().When(enginetest.Match{LastUserContains: "step build"}).Forever())
	ctx := context.Background()
	room, err := f.svc.Room(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	plan := PlanInput{Goal: "Ship the page", Constraints: PlanConstraints{Notes: "keep it short"}, Steps: []PlanStep{
		{ID: "build", To: dev.Slug, Kind: KindBuild, Brief: "Build the page."},
		{ID: "docs", To: writer.Slug, Kind: KindWrite, Brief: "Document it.", After: []string{"build"}},
	}}
	p, err := validatePlan(plan, map[string]string{dev.Slug: dev.Role, qa.Slug: qa.Role, writer.Slug: writer.Role})
	if err != nil {
		t.Fatal(err)
	}
	var m Mission
	if err := f.svc.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		var err error
		m, err = f.svc.createMissionTx(tx, room, lead, p, true, "trn_x")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []PlanRevision{
		{Plan: m.ID, Cancel: []string{"build"}},
		{Plan: m.ID, Add: []PlanStep{{ID: "check", To: qa.Slug, Kind: KindVerify, Brief: "Check it.", After: []string{"nope"}, Verifies: "build"}}},
		{Plan: m.ID, Constraints: map[string]string{"colour": "blue"}},
		{Plan: "msn_nope", Cancel: []string{"docs"}},
	} {
		if _, err := f.svc.revisePlan(ctx, lead.ID, bad); err == nil {
			t.Fatalf("revision %+v was taken", bad)
		}
	}
	if _, err := f.svc.revisePlan(ctx, dev.ID, PlanRevision{Plan: m.ID, Cancel: []string{"docs"}}); err == nil {
		t.Fatal("a node that does not lead the plan revised it")
	}
	got, err := f.svc.revisePlan(ctx, lead.ID, PlanRevision{Plan: m.ID, Cancel: []string{"docs"},
		Add:         []PlanStep{{ID: "check", To: qa.Slug, Kind: KindVerify, Brief: "Check the page loads.", After: []string{"build"}, Verifies: "build"}},
		Constraints: map[string]string{"notes": "", "branch": "page"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 2 || got.step("docs").Status != StepStopped || got.step("check") == nil || got.step("check").Status != StepWaiting ||
		got.Contract.Constraints.Notes != "" || got.Contract.Constraints.Branch != "page" {
		t.Fatalf("after the revision: revision %d, docs %+v, check %+v, constraints %+v", got.Revision, got.step("docs"), got.step("check"), got.Contract.Constraints)
	}
	if _, err := f.svc.StopMission(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
}

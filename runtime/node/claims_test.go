package node

import (
	"context"
	"testing"

	"github.com/ensemblework/ensemble/runtime/ledger"
)

// Two missions' builds in one checkout take turns: the second waits for the first, and holds the
// place once the first step has ended. In parallel work each build has its own worktree and port.
func TestPlaceStepClaims(t *testing.T) {
	f, m1 := missionFixture(t)
	ctx := context.Background()
	var m2 Mission
	err := f.svc.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		r, err := f.svc.roomIn(ctx, tx, m1.RoomID)
		if err != nil {
			return err
		}
		lead, err := f.svc.nodeIn(ctx, tx, m1.LeadID)
		if err != nil {
			return err
		}
		m2, err = f.svc.createMissionTx(tx, r, lead, m1.Contract, true, "")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	placeOf := func(m Mission) place {
		t.Helper()
		var p place
		err := f.svc.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
			var err error
			p, err = placeStepTx(tx, m, m.step("build"))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := placeOf(m1); p.WaitingFor != "" || p.Worktree || p.Port != 0 {
		t.Fatalf("the first build's place: %+v; want the checkout, free", p)
	}
	if p := placeOf(m1); p.WaitingFor != "" {
		t.Fatalf("the holder asking again waits for %q", p.WaitingFor)
	}
	if p := placeOf(m2); p.WaitingFor != "build" {
		t.Fatalf("the second build's place: %+v; want it waiting for the first's build", p)
	}
	report(t, f, m1, "build", 1, StepReport{Outcome: "done", Summary: "ok"})
	if p := placeOf(m2); p.WaitingFor != "" {
		t.Fatalf("after the first build ended the second still waits for %q", p.WaitingFor)
	}

	for _, m := range []*Mission{&m1, &m2} {
		m.Contract.Constraints.Parallel, m.Contract.Constraints.Folder = "worktrees", "/src/app"
	}
	p := placeOf(m2)
	if !p.Worktree || p.WaitingFor != "" || p.Port < firstPort || p.Port > lastPort {
		t.Fatalf("a parallel build's place: %+v; want its own worktree and a port in 4300–4399", p)
	}
	if again := placeOf(m2); again.Port != p.Port {
		t.Fatalf("asking again changed the port from %d to %d", p.Port, again.Port)
	}
	var claims int
	f.st.Reader().QueryRow("SELECT count(*) FROM node_claims WHERE mission_id = ?", m1.ID).Scan(&claims)
	if claims != 0 {
		t.Fatalf("%d claims left for the first mission's ended build", claims)
	}
}

package node

import (
	"context"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// A node asked in its DM for long research starts it in the background and answers at once;
// the work runs as a one-step plan in its work lane, and its end brings one report to the DM.
func TestWorkStartRunsInTheBackgroundAndReportsOnce(t *testing.T) {
	f := newFixture(t)
	n := f.node("Scout")
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolWorkStart, map[string]any{"title": "Compare the three queue libraries", "brief": "Read their docs and compare throughput and upkeep."}).
			When(enginetest.Match{LastUserContains: "compare the queue libraries"}),
		enginetest.Say("On it: I will tell you when it is done.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "Started"}),
		enginetest.ToolCall(ToolStepReport, map[string]any{"outcome": "done", "summary": "River is the best kept."}).
			When(enginetest.Match{LastUserContains: "step work, research, attempt 1"}),
		enginetest.Say("Done.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "Step work ended"}),
		enginetest.Say("Report: River is the best kept of the three.").When(enginetest.Match{LastUserContains: "has ended"}),
	)
	f.post(n.DMRoomID, "Please compare the queue libraries for me, no rush.")
	var m Mission
	f.waitFor("the work to end", func() bool {
		var id string
		f.st.Reader().QueryRow("SELECT id FROM node_missions").Scan(&id)
		var err error
		m, err = f.svc.Mission(context.Background(), id)
		return err == nil && m.ended()
	})
	f.settle()
	if m.State != MissionSucceeded || m.LeadID != n.ID || len(m.Steps) != 1 || m.Steps[0].NodeID != n.ID {
		t.Fatalf("the work ended %s, led by %s, steps %+v; want succeeded, one step of the node's own", m.State, m.LeadID, m.Steps)
	}
	texts := f.nodeTexts(n.DMRoomID)
	if len(texts) != 2 || !strings.HasPrefix(texts[0], "On it") || !strings.HasPrefix(texts[1], "Report:") {
		t.Fatalf("the DM has %q; want the answer at once and one report", texts)
	}
}

// Steering reaches a working step of work the node leads as a turn in the step's lane; stopping
// it ends it stopped, and nobody reports. Another node's work is not found.
func TestWorkSteerAndStop(t *testing.T) {
	f := newFixture(t)
	n, other := f.node("Scout"), f.node("Other")
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolWorkStart, map[string]any{"title": "Survey the logs", "brief": "Find the slowest requests."}).
			When(enginetest.Match{LastUserContains: "survey"}),
		enginetest.Say("Started.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "Started"}),
		enginetest.Hang().When(enginetest.Match{LastUserContains: "step work, research, attempt 1"}),
	)
	f.post(n.DMRoomID, "Please survey the logs.")
	var id string
	f.waitFor("the work's turn", func() bool {
		return len(f.model.Requests()) == 3 && f.st.Reader().QueryRow("SELECT id FROM node_missions").Scan(&id) == nil
	})
	ctx := context.Background()
	c := &turnCtx{s: f.svc, rt: &runningTurn{turn: Turn{ByOwner: true, Lane: convLane(n.DMRoomID, false)}}, node: n}
	if _, err := f.svc.steerWork(ctx, &turnCtx{s: f.svc, rt: c.rt, node: other}, workSteerIn{Work: id, Note: "x"}); err == nil {
		t.Fatal("another node steered the work")
	}
	if _, err := f.svc.steerWork(ctx, c, workSteerIn{Work: id, Note: "Only the last day."}); err != nil {
		t.Fatal(err)
	}
	var got int
	f.st.Reader().QueryRow("SELECT count(*) FROM node_turns WHERE operation_id LIKE 'steer:%' AND lane LIKE 'work:' || ? || ':%'", id).Scan(&got)
	if got != 1 {
		t.Fatalf("%d steer turns in the work's lane; want 1", got)
	}
	m, err := f.svc.StopMission(ctx, id)
	if err != nil || m.State != MissionStopped {
		t.Fatalf("stop: %s, %v", m.State, err)
	}
	f.settle()
	f.st.Reader().QueryRow("SELECT count(*) FROM node_turns WHERE operation_id LIKE 'report:%'").Scan(&got)
	if got != 0 {
		t.Fatalf("%d report turns after a stop; want none", got)
	}
}

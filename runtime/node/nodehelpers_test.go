package node

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// Two helpers brought in by one turn each work in their own task room, read only, and the parent
// hears once with both results and tells its owner in one message. The owner reads a task room but
// cannot write in it; helpers are not listed among the nodes, and one can be kept as a lasting node.
func TestHelpersReportTogetherOnce(t *testing.T) {
	f := newFixture(t)
	n := f.node("Scout")
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolHelper, map[string]any{"task": "Review the plan for risks", "name": "Risk"}).
			When(enginetest.Match{SystemContains: "You are Scout", LastUserContains: "second opinion"}),
		enginetest.ToolCall(ToolHelper, map[string]any{"task": "Review the plan for cost", "name": "Cost"}).
			When(enginetest.Match{SystemContains: "You are Scout", ToolResult: &yes, LastUserContains: "for risks"}),
		enginetest.Say("Two helpers are on it.").When(enginetest.Match{SystemContains: "You are Scout", ToolResult: &yes, LastUserContains: "for cost"}),
		enginetest.Say("Risk: none found.").When(enginetest.Match{SystemContains: "temporary helper", LastUserContains: "plan for risks"}),
		enginetest.Say("Cost: low.").When(enginetest.Match{SystemContains: "temporary helper", LastUserContains: "plan for cost"}),
		enginetest.Say("Report: no risks, low cost.").When(enginetest.Match{SystemContains: "You are Scout", LastUserContains: "Your helpers reported"}),
	)
	f.post(n.DMRoomID, "Get me a second opinion on the plan, on risks and on cost.")
	f.waitFor("the report", func() bool {
		texts := f.nodeTexts(n.DMRoomID)
		return len(texts) > 0 && strings.HasPrefix(texts[len(texts)-1], "Report:")
	})
	f.settle()
	if texts := f.nodeTexts(n.DMRoomID); len(texts) != 2 || texts[0] != "Two helpers are on it." {
		t.Fatalf("the DM has %q; want the answer and one report", texts)
	}
	var report string
	for _, r := range f.model.Requests() {
		if strings.Contains(r.LastUserText(), "Your helpers reported") {
			report = r.LastUserText()
		}
		if strings.Contains(r.System, "temporary helper") {
			names := r.ToolNames()
			if slices.Contains(names, ToolHelper) || slices.Contains(names, "hub_create_tasks") || slices.Contains(names, ToolSessionStart) {
				t.Fatalf("a read-only helper was offered %v", names)
			}
		}
	}
	if !strings.Contains(report, "Risk: none found.") || !strings.Contains(report, "Cost: low.") {
		t.Fatalf("the parent's report turn read %q; want both results", report)
	}
	rooms, err := f.svc.Rooms(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var tasks []Room
	for _, r := range rooms {
		if r.Kind == RoomTask {
			tasks = append(tasks, r)
		}
	}
	if len(tasks) != 2 {
		t.Fatalf("%d task rooms; want one per helper", len(tasks))
	}
	if msgs := f.messages(tasks[0].ID); len(msgs) != 2 || msgs[0].NodeID != n.ID {
		t.Fatalf("a task room holds %d messages; want the brief from its parent and the result", len(msgs))
	}
	if _, err := f.svc.PostMessage(context.Background(), tasks[0].ID, Post{Body: "hi"}); problem.KindOf(err) != problem.KindForbidden {
		t.Fatalf("the owner wrote in a task room: %v", err)
	}
	nodes, _ := f.svc.Nodes(context.Background())
	if len(nodes) != 1 {
		t.Fatalf("%d nodes listed; helpers are not", len(nodes))
	}
	var helper string
	for _, m := range tasks[0].Members {
		if m.NodeID != n.ID {
			helper = m.NodeID
		}
	}
	kept, err := f.svc.PromoteHelper(context.Background(), helper)
	if err != nil || kept.ParentID != "" || kept.DMRoomID == "" {
		t.Fatalf("promote: %+v, %v; want a lasting node with a DM", kept, err)
	}
	if _, err := f.svc.PromoteHelper(context.Background(), helper); err == nil {
		t.Fatal("a lasting node was promoted again")
	}
}

// A node has at most its number of helpers working at once, a helper brings in none, and pausing
// the node stops its helpers' turns.
func TestHelperLimits(t *testing.T) {
	f := newFixture(t)
	n := f.node("Scout")
	f.model.Script(enginetest.Hang().When(enginetest.Match{SystemContains: "temporary helper"}).Forever())
	ctx := context.Background()
	c := &turnCtx{s: f.svc, rt: &runningTurn{turn: Turn{ID: "trn_a", ByOwner: true, Lane: convLane(n.DMRoomID, false)}}, node: n, room: Room{ID: n.DMRoomID}}
	var helper Node
	for i := 0; i < HelpersWorking; i++ {
		h, _, err := f.svc.bringHelper(ctx, c, helperIn{Task: "Look something up"})
		if err != nil {
			t.Fatal(err)
		}
		helper = h
	}
	if _, _, err := f.svc.bringHelper(ctx, c, helperIn{Task: "One too many"}); problem.KindOf(err) != problem.KindConflict {
		t.Fatalf("a fifth helper: %v; want a conflict", err)
	}
	hc := &turnCtx{s: f.svc, rt: c.rt, node: helper, room: c.room}
	if _, _, err := f.svc.bringHelper(ctx, hc, helperIn{Task: "A helper's helper"}); err == nil {
		t.Fatal("a helper brought in a helper")
	}
	paused := StatusPaused
	if _, err := f.svc.Update(ctx, n.ID, NodeChange{Status: &paused}); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the helpers' turns to stop", func() bool {
		var live int
		f.st.Reader().QueryRow(`SELECT count(*) FROM node_turns WHERE status IN ('queued', 'running')
			AND node_id IN (SELECT id FROM node_agents WHERE parent_node_id = ?)`, n.ID).Scan(&live)
		return live == 0
	})
}

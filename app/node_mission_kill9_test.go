package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestNodeMissionKill9 kills `ensemble serve` with SIGKILL just after a plan step's report moved
// the mission on (the build done, its check's start written to the outbox), and starts it again
// (spec 002 §6.2 Durability): the outbox delivers the check's start once, no step starts twice,
// and the mission ends succeeded with one report from its lead. The check's turn may already have
// asked the model before the kill; a turn cut off before it acted runs again from the start, so the
// check's report answers every first request of that step, not only the first one.
func TestNodeMissionKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	k := newKilledNode(t)
	ctx := context.Background()
	nodeID := func(name string) string {
		var raw json.RawMessage
		if err := k.c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": name}, &raw); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		var n struct {
			ID   string `json:"id"`
			Node *struct {
				ID string `json:"id"`
			} `json:"node"`
		}
		json.Unmarshal(raw, &n)
		if n.Node != nil {
			n.ID = n.Node.ID
		}
		return n.ID
	}
	var scout struct{ Nodes []struct{ ID, Slug string } }
	if err := k.c.do(ctx, "GET", "/api/node/nodes", nil, &scout); err != nil || len(scout.Nodes) != 1 {
		t.Fatalf("list the nodes: %v %+v", err, scout)
	}
	dev, qa := nodeID("Dev"), nodeID("QA")
	var crew struct{ ID string }
	err := k.c.do(ctx, "POST", "/api/node/crews", map[string]any{"title": "Hello", "nodeIds": []string{scout.Nodes[0].ID, dev, qa},
		"leadNodeId": scout.Nodes[0].ID}, &crew)
	if err != nil || crew.ID == "" {
		t.Fatalf("create the crew: %v", err)
	}
	k.room = crew.ID

	yes := true
	noNote := func(r *enginetest.Request) bool { return !strings.Contains(r.LastUserText(), resumeNoteText) }
	plan := map[string]any{"goal": "Add a hello command", "steps": []map[string]any{
		{"id": "build", "to": "dev", "kind": "build", "brief": "Write hello."},
		{"id": "check", "to": "qa", "kind": "verify", "brief": "Run hello.", "after": []string{"build"}},
	}}
	k.model.Script(
		enginetest.ToolCall("node_plan", plan).When(enginetest.Match{SystemContains: "You are Scout", LastUserContains: "hello command"}).Named("plan"),
		enginetest.Say("Planned.").When(enginetest.Match{SystemContains: "You are Scout", ToolResult: &yes}).Named("planned"),
		enginetest.ToolCall("node_step_report", map[string]any{"outcome": "done", "summary": "Wrote hello."}).
			When(enginetest.Match{LastUserContains: "step build, build, attempt 1", Func: noNote}).Named("build"),
		enginetest.Hang().When(enginetest.Match{SystemContains: "You are Dev", ToolResult: &yes, Func: noNote}).Named("hang"),
		enginetest.Say("Done.").When(enginetest.Match{SystemContains: "You are Dev"}).Forever().Named("dev done"),
		enginetest.ToolCall("node_step_report", map[string]any{"outcome": "pass", "summary": "It says hello.",
			"checks": []map[string]any{{"name": "hello runs", "verdict": "pass"}}}).
			When(enginetest.Match{LastUserContains: "step check, verify, attempt 1", Func: noNote}).Forever().Named("check"),
		enginetest.Say("Checked.").When(enginetest.Match{SystemContains: "You are QA"}).Forever().Named("qa done"),
		enginetest.Say("Report: hello is written and checked.").When(enginetest.Match{SystemContains: "You are Scout", LastUserContains: "has ended"}).Named("report"),
	)
	k.post("Please add a hello command.")
	k.waitStep(3) // the build reported; its turn hangs on its next request
	k.waitDB("the build's report committed", `SELECT count(*) FROM node_steps WHERE id = 'build' AND status = 'done'`)
	k.kill()
	k.restart()
	k.waitDB("the mission to end", `SELECT count(*) FROM node_missions WHERE state NOT IN ('running', 'reporting')`)
	k.settle()

	var state string
	k.db.QueryRow(`SELECT state FROM node_missions`).Scan(&state)
	if state != "succeeded" {
		t.Fatalf("the mission ended %q; want succeeded; turns: %s; requests: %s", state, k.turns(), k.summary())
	}
	var attempts, stepTurns, ops, undelivered int
	k.db.QueryRow(`SELECT count(*) FROM node_attempts`).Scan(&attempts)
	k.db.QueryRow(`SELECT count(*), count(DISTINCT operation_id) FROM node_turns WHERE operation_id LIKE 'step:%'`).Scan(&stepTurns, &ops)
	k.db.QueryRow(`SELECT count(*) FROM node_outbox WHERE delivered_at IS NULL`).Scan(&undelivered)
	if attempts != 2 || stepTurns != 2 || ops != 2 || undelivered != 0 {
		t.Fatalf("%d attempts, %d step turns (%d operations), %d effects undelivered; want 2, 2, 2, 0; turns: %s",
			attempts, stepTurns, ops, undelivered, k.turns())
	}
	reports := 0
	for _, m := range k.replies() {
		if strings.HasPrefix(m, "Report:") {
			reports++
		}
	}
	if reports != 1 {
		t.Fatalf("the lead reported %d times; want once: %q", reports, k.replies())
	}
}

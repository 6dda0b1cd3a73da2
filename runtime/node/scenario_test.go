package node

import (
	"context"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// A DM: the node creates a task and remembers a preference, and a later turn is given it.
func TestDMCreatesTaskAndRemembers(t *testing.T) {
	f := newFixture(t)
	n := f.node("Scout")
	f.model.Script(
		enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Buy milk"}}}),
		enginetest.ToolCall("node_remember", map[string]any{"content": "Always add tasks with high priority."}),
		enginetest.Say("Added Buy milk."),
		enginetest.Say("Noted."),
	)
	f.post(n.DMRoomID, "Add a task to buy milk. From now on, always give my tasks high priority.")
	f.settle()
	if got := f.nodeTexts(n.DMRoomID); len(got) != 1 || got[0] != "Added Buy milk." {
		t.Fatalf("the node's replies = %q", got)
	}
	if ts := f.tasks(); len(ts) != 1 || ts[0].Title != "Buy milk" {
		t.Fatalf("tasks = %+v", ts)
	}
	mem, _ := f.svc.Memories(context.Background(), n.ID)
	if len(mem) != 1 || !strings.Contains(mem[0].Content, "high priority") {
		t.Fatalf("memory = %+v", mem)
	}
	f.post(n.DMRoomID, "Thanks")
	f.settle()
	reqs := f.model.Requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(last.System, "Always add tasks with high priority.") {
		t.Fatalf("the later turn's instructions lack the memory:\n%s", last.System)
	}
	if !strings.Contains(last.System, "You are Scout (@scout)") {
		t.Fatalf("the turn is not the node's persona:\n%s", last.System)
	}
	// The ledger records the task as the node's.
	var actor string
	f.st.Reader().QueryRow("SELECT actor_kind || ':' || actor_id FROM ledger_groups ORDER BY seq LIMIT 1").Scan(&actor)
	if actor != "node:"+n.ID {
		t.Fatalf("the write's actor = %q, want node:%s", actor, n.ID)
	}
}

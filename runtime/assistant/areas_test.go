package assistant

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestWriteAreasOff: with the person's tasks turned off (spec 000 §7's allowed write areas), the
// model is not shown the tasks writes, a call of one is refused with a sentence and dispatches
// nothing, and a write held before the change is refused at Apply.
func TestWriteAreasOff(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "anthropic", time.Minute)
	f.policy(t, Preview)
	f.srv.Script(
		enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Held before"}}}),
		enginetest.Say("Proposed."),
	)
	held, _, err := f.turn(t, "anthropic", "add a task: held before")
	if err != nil || len(held.Tools) != 1 || held.Tools[0].ProposalID == "" {
		t.Fatalf("held: %+v %v", held, err)
	}

	off := []string{"pages", "projects"}
	if _, err := f.svc.SetSettings(ctx, SettingsChange{AllowedWriteAreas: &off}); err != nil {
		t.Fatal(err)
	}
	f.srv.Script(
		enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Water the plants"}}}),
		enginetest.Say("Tasks are turned off."),
	)
	r, _, err := f.turn(t, "anthropic", "add a task: water the plants")
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.Requests()
	shown := reqs[len(reqs)-2].ToolNames()
	if slices.Contains(shown, "hub_create_tasks") || slices.Contains(shown, "hub_update_task") || !slices.Contains(shown, "hub_list_tasks") {
		t.Errorf("with tasks off the model was shown %v", shown)
	}
	if row := r.Tools[0]; row.Status != "error" || !strings.Contains(row.Summary, "turned off the assistant's changes to tasks") {
		t.Errorf("the call was answered %+v", row)
	}
	if n := f.count(t, "SELECT count(*) FROM tasks"); n != 0 {
		t.Fatalf("%d tasks made with tasks off", n)
	}
	if _, err := f.svc.Apply(ctx, held.ConversationID, []string{held.Tools[0].ProposalID}); err == nil || !strings.Contains(err.Error(), "can no longer be applied: The person has turned off the assistant's changes to tasks") {
		t.Errorf("Apply of a write held before tasks were turned off: %v", err)
	}
	if n := f.count(t, "SELECT count(*) FROM tasks"); n != 0 {
		t.Fatalf("%d tasks made by Apply with tasks off", n)
	}
}

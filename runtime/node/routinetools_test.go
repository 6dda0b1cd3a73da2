package node

import (
	"context"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// The owner asks in the DM for a routine: the node makes it with node_routines, and a room
// turn another node started is not offered the tool.
func TestNodeMakesRoutine(t *testing.T) {
	f, _, _ := routineFixture(t, "2030-01-01T09:00:00Z")
	n := f.node("Scout")
	f.model.Script(
		enginetest.ToolCall(ToolRoutines, map[string]any{"action": "create", "instruction": "Summarise my open tasks.", "cron": "0 9 * * 1-5", "timezone": "UTC", "notify": "needed"}),
		enginetest.Say("Every weekday at 9 I will summarise your open tasks."),
	)
	f.post(n.DMRoomID, "Every weekday morning at 9, summarise my open tasks.")
	f.settle()
	rs, err := f.svc.Routines(context.Background(), n.ID)
	if err != nil || len(rs) != 1 {
		t.Fatalf("routines = %+v, %v", rs, err)
	}
	r := rs[0]
	if r.Instruction != "Summarise my open tasks." || r.Trigger.Cron != "0 9 * * 1-5" || r.Notify != NotifyNeeded || r.RoomID != n.DMRoomID {
		t.Fatalf("routine = %+v", r)
	}
	if r.NextAt == nil || r.NextAt.Format("2006-01-02T15:04") != "2030-01-02T09:00" {
		t.Fatalf("next = %v, want 09:00 on Wednesday 2 January 2030, the next weekday after now", r.NextAt)
	}
	if got := toolsFor(Turn{Lane: "conv:x:s", Reason: ReasonMessage, ByOwner: true}, Room{Kind: RoomCrew}, n, "make a daily routine", false); strings.Contains(strings.Join(got, ","), ToolRoutines) {
		t.Fatalf("a crew's shared thread is offered %s: %v", ToolRoutines, got)
	}
	if got := toolsFor(Turn{Lane: "conv:x:s", Reason: ReasonMessage, ByOwner: true}, Room{Kind: RoomDM}, n, "hello", false); strings.Contains(strings.Join(got, ","), ToolRoutines) {
		t.Fatalf("a plain DM turn is offered %s: %v", ToolRoutines, got)
	}
}

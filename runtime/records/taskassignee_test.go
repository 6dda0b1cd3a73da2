package records

import (
	"context"
	"testing"

	"github.com/ensemblework/ensemble/runtime/problem"
)

// A task is with a person, a node or a crew, never two; naming a person or nobody takes it back.
func TestTaskAssignee(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newService(t)
	p, err := s.People().Create(ctx, me, PersonInput{Name: Some("Ana")})
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ node, room, owner string }
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	for _, tc := range []struct {
		name    string
		start   TaskInput
		change  TaskInput
		want    want
		invalid bool
	}{
		{name: "to a node", change: TaskInput{AssigneeNodeID: Some(ptr("nod_a"))}, want: want{node: "nod_a"}},
		{name: "to a crew", change: TaskInput{AssigneeRoomID: Some(ptr("room_c"))}, want: want{room: "room_c"}},
		{name: "from a person to a node", start: TaskInput{OwnerID: Some(&p.ID)}, change: TaskInput{AssigneeNodeID: Some(ptr("nod_a"))}, want: want{node: "nod_a"}},
		{name: "from a node to a crew", start: TaskInput{AssigneeNodeID: Some(ptr("nod_a"))}, change: TaskInput{AssigneeRoomID: Some(ptr("room_c"))}, want: want{room: "room_c"}},
		{name: "a person takes it back", start: TaskInput{AssigneeNodeID: Some(ptr("nod_a"))}, change: TaskInput{OwnerID: Some(&p.ID)}, want: want{owner: p.ID}},
		{name: "clearing the owner takes it back", start: TaskInput{AssigneeRoomID: Some(ptr("room_c"))}, change: TaskInput{OwnerID: Some[*string](nil)}, want: want{}},
		{name: "clearing the node", start: TaskInput{AssigneeNodeID: Some(ptr("nod_a"))}, change: TaskInput{AssigneeNodeID: Some[*string](nil)}, want: want{}},
		{name: "another field keeps it", start: TaskInput{AssigneeNodeID: Some(ptr("nod_a"))}, change: TaskInput{Priority: Some("high")}, want: want{node: "nod_a"}},
		{name: "both ids", start: TaskInput{AssigneeNodeID: Some(ptr("nod_a"))}, change: TaskInput{AssigneeNodeID: Some(ptr("nod_b")), AssigneeRoomID: Some(ptr("room_c"))}, want: want{node: "nod_a"}, invalid: true},
		{name: "a person and a node", change: TaskInput{OwnerID: Some(&p.ID), AssigneeNodeID: Some(ptr("nod_a"))}, want: want{}, invalid: true},
		{name: "an empty id", change: TaskInput{AssigneeNodeID: Some(ptr(""))}, want: want{}, invalid: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.start
			in.Title = Some("Ship it")
			task, err := s.Tasks().Create(ctx, me, in)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Tasks().Update(ctx, me, task.ID, tc.change)
			if tc.invalid != (err != nil) || (err != nil && !problem.Is(err, problem.KindInvalid)) {
				t.Fatalf("update: err = %v, want invalid %v", err, tc.invalid)
			}
			got, err := s.Tasks().Get(ctx, task.ID)
			if err != nil {
				t.Fatal(err)
			}
			if g := (want{str(got.AssigneeNodeID), str(got.AssigneeRoomID), str(got.OwnerID)}); g != tc.want {
				t.Fatalf("after the change: %+v, want %+v", g, tc.want)
			}
		})
	}
}

// Deleting a node or a crew leaves its tasks unassigned, and Undo gives them back.
func TestUnassignTasks(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newService(t)
	a, _ := s.Tasks().Create(ctx, me, TaskInput{Title: Some("A"), AssigneeNodeID: Some(ptr("nod_a"))})
	b, _ := s.Tasks().Create(ctx, me, TaskInput{Title: Some("B"), AssigneeRoomID: Some(ptr("room_c"))})
	if n, err := s.UnassignTasks(ctx, me, "nod_a", ""); err != nil || n != 1 {
		t.Fatalf("unassign the node: %d, %v", n, err)
	}
	if got, _ := s.Tasks().Get(ctx, a.ID); got.AssigneeNodeID != nil {
		t.Fatalf("task A is still with %v", *got.AssigneeNodeID)
	}
	if got, _ := s.Tasks().Get(ctx, b.ID); got.AssigneeRoomID == nil {
		t.Fatal("task B lost its crew")
	}
	if _, err := s.Undo(ctx, me); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Tasks().Get(ctx, a.ID); got.AssigneeNodeID == nil || *got.AssigneeNodeID != "nod_a" {
		t.Fatalf("Undo did not give task A back: %+v", got.AssigneeNodeID)
	}
	if _, err := s.UnassignTasks(ctx, me, "", ""); !problem.Is(err, problem.KindInvalid) {
		t.Fatalf("no id: err = %v", err)
	}
}

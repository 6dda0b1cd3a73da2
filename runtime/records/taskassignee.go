package records

import (
	"context"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// NodeAssignee is the node or crew a task is with, as a task response names it (spec 002 §6.6).
type NodeAssignee struct {
	Kind   string `json:"kind"` // node or crew
	ID     string `json:"id"`
	Name   string `json:"name"`
	Handle string `json:"handle,omitempty"`
}

// taskAssignee checks who a task is with: a person, a node or a crew, never two. Giving it to a
// node or a crew clears the person and the other; naming a person (or nobody) takes it back.
func taskAssignee(in TaskInput, row ledger.Row) error {
	node := in.AssigneeNodeID.Set && in.AssigneeNodeID.V != nil
	crew := in.AssigneeRoomID.Set && in.AssigneeRoomID.V != nil
	person := in.OwnerID.Set && in.OwnerID.V != nil
	switch {
	case node && crew:
		return problem.Invalid("A task is with a node or a crew, not both: name assigneeNodeId or assigneeRoomId.")
	case person && (node || crew):
		return problem.Invalid("A task is with a person or a node, not both: name ownerId or the node.")
	case node:
		if *in.AssigneeNodeID.V == "" {
			return problem.Invalid("assigneeNodeId is empty; name a node or leave it out.")
		}
		row["assignee_node_id"], row["assignee_room_id"], row["owner_id"] = *in.AssigneeNodeID.V, nil, nil
	case crew:
		if *in.AssigneeRoomID.V == "" {
			return problem.Invalid("assigneeRoomId is empty; name a crew or leave it out.")
		}
		row["assignee_room_id"], row["assignee_node_id"], row["owner_id"] = *in.AssigneeRoomID.V, nil, nil
	case in.OwnerID.Set:
		row["assignee_node_id"], row["assignee_room_id"] = nil, nil
	default:
		if in.AssigneeNodeID.Set {
			row["assignee_node_id"] = nil
		}
		if in.AssigneeRoomID.Set {
			row["assignee_room_id"] = nil
		}
	}
	return nil
}

// UnassignTasks leaves unassigned every task with the node nodeID, or with the crew roomID (one
// of the two), as one write by actor: the node or crew was deleted (spec 002 §6.6).
func (s *Service) UnassignTasks(ctx context.Context, actor ledger.Actor, nodeID, roomID string) (int, error) {
	column, id := "assignee_node_id", nodeID
	if nodeID == "" {
		column, id = "assignee_room_id", roomID
	}
	if id == "" {
		return 0, problem.Invalid("Name the node or the crew whose tasks to leave unassigned.")
	}
	var ids []string
	rows, err := s.db.QueryContext(ctx, "SELECT id FROM tasks WHERE space_id = ? AND "+column+" = ?", s.space, id)
	if err != nil {
		return 0, fmt.Errorf("records: find the tasks with %s: %w", id, err)
	}
	for rows.Next() {
		var tid string
		rows.Scan(&tid)
		ids = append(ids, tid)
	}
	rows.Close()
	if len(ids) == 0 {
		return 0, nil
	}
	_, err = s.Batch(ctx, actor, fmt.Sprintf("Left %d tasks unassigned", len(ids)), func(b *Batch) error {
		for _, tid := range ids {
			if _, err := b.t.Update("tasks", tid, ledger.Row{column: nil}); err != nil {
				return err
			}
			if err := taskKind.announce(b.t, tid); err != nil {
				return err
			}
		}
		return nil
	})
	return len(ids), err
}

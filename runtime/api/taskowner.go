package api

import (
	"context"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/records"
)

// taskBody is a new task or a change to one as the API takes it: the records' fields, and owner
// (spec 002 §6.6): "node" with assigneeNodeId or assigneeRoomId gives the task to one of the
// person's nodes or crews; naming one alone means owner node; any other owner (me, person,
// agent, unassigned) takes it back.
type taskBody struct {
	records.TaskInput
	Owner records.Opt[string] `json:"owner,omitzero"`
}

// taskCollection is the tasks' routes: the records' tasks, the owner field checked against the
// person's nodes and crews, and each task answered with its nodeAssignee.
type taskCollection struct{ s *Server }

func (c taskCollection) Get(ctx context.Context, id string) (records.Task, error) {
	t, err := c.s.records.Tasks().Get(ctx, id)
	return c.named(ctx, t), err
}

func (c taskCollection) Create(ctx context.Context, actor ledger.Actor, b taskBody) (records.Task, error) {
	in, err := c.input(ctx, b)
	if err != nil {
		return records.Task{}, err
	}
	t, err := c.s.records.Tasks().Create(ctx, actor, in)
	return c.named(ctx, t), err
}

func (c taskCollection) Update(ctx context.Context, actor ledger.Actor, id string, b taskBody) (records.Task, error) {
	in, err := c.input(ctx, b)
	if err != nil {
		return records.Task{}, err
	}
	t, err := c.s.records.Tasks().Update(ctx, actor, id, in)
	return c.named(ctx, t), err
}

func (c taskCollection) Trash(ctx context.Context, actor ledger.Actor, id string) (records.Task, error) {
	t, err := c.s.records.Tasks().Trash(ctx, actor, id)
	return c.named(ctx, t), err
}

// input checks the owner field and the node or crew it names; a request that names none is
// passed on as it is.
func (c taskCollection) input(ctx context.Context, b taskBody) (records.TaskInput, error) {
	in := b.TaskInput
	nodeID, roomID := "", ""
	if in.AssigneeNodeID.Set && in.AssigneeNodeID.V != nil {
		nodeID = *in.AssigneeNodeID.V
	}
	if in.AssigneeRoomID.Set && in.AssigneeRoomID.V != nil {
		roomID = *in.AssigneeRoomID.V
	}
	named := nodeID != "" || roomID != ""
	switch {
	case nodeID != "" && roomID != "":
		return in, problem.Invalid("Give the task to a node or a crew, not both: name assigneeNodeId or assigneeRoomId.")
	case named && in.OwnerID.Set && in.OwnerID.V != nil:
		return in, problem.Invalid("A task is with a person or a node, not both: name ownerId or the node.")
	}
	if b.Owner.Set {
		switch b.Owner.V {
		case "node":
			if !named {
				return in, problem.Invalid(`Owner node needs the node or the crew: {"owner": "node", "assigneeNodeId": "…"} or "assigneeRoomId".`)
			}
		case "me", "person", "agent", "unassigned":
			if named {
				return in, problem.Invalid("Owner %q names no node; say owner node to give the task to a node or a crew.", b.Owner.V)
			}
			// Any other owner takes the task back from a node or a crew.
			in.AssigneeNodeID, in.AssigneeRoomID = records.Some[*string](nil), records.Some[*string](nil)
			if b.Owner.V == "unassigned" && !in.OwnerID.Set {
				in.OwnerID = records.Some[*string](nil)
			}
		default:
			return in, problem.Invalid("Owner %q is not one of me, person, agent, unassigned or node.", b.Owner.V)
		}
	}
	if !named {
		return in, nil
	}
	if c.s.opts.Nodes == nil {
		return in, problem.NotFound("There is no node or crew to give the task to: Ensemble Node is off.")
	}
	return in, c.s.opts.Nodes.CheckAssignee(ctx, nodeID, roomID)
}

// named fills the task's nodeAssignee, when it is with a node or a crew.
func (c taskCollection) named(ctx context.Context, t records.Task) records.Task {
	if c.s.opts.Nodes != nil && (t.AssigneeNodeID != nil || t.AssigneeRoomID != nil) {
		ts := []records.Task{t}
		c.s.opts.Nodes.NameAssignees(ctx, ts)
		return ts[0]
	}
	return t
}

package node

import (
	"context"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/records"
)

// What the rest of Ensemble reads of tasks given to nodes (spec 002 §6.6): the work board's
// tasks, what a task's Owner field offers and checks, the names a task response carries, and
// what changing a task's owner would stop.

// taskBoard is the work board's part for tasks: up to six open tasks with the node, or with a
// crew it leads, as links with their status and due date. Empty when there are none.
func (s *Service) taskBoard(ctx context.Context, n Node) string {
	if s.cfg.Records == nil {
		return ""
	}
	ts, err := s.cfg.Records.ListTasks(ctx, records.TaskFilter{})
	if err != nil {
		return ""
	}
	leads := map[string]string{}
	if rooms, err := s.Rooms(ctx); err == nil {
		for _, r := range rooms {
			if r.Kind == RoomCrew && r.Lead == n.ID {
				leads[r.ID] = r.Title
			}
		}
	}
	var lines []string
	for _, t := range ts {
		if t.Status == records.Done || t.Status == records.Dropped {
			continue
		}
		with := ""
		switch {
		case t.AssigneeNodeID != nil && *t.AssigneeNodeID == n.ID:
			with = "yours"
		case t.AssigneeRoomID != nil && leads[*t.AssigneeRoomID] != "":
			with = "your crew “" + leads[*t.AssigneeRoomID] + "”"
		default:
			continue
		}
		line := fmt.Sprintf("- %s: %s, %s", taskLink(t), t.Status.Label(), with)
		if t.Due != nil {
			line += ", due " + *t.Due
		}
		lines = append(lines, line+", in your owner's space")
		if len(lines) == MaxBoardTasks {
			break
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "Work board: open tasks given to you (information):\n" + strings.Join(lines, "\n")
}

// Assignable is what a task's Owner field offers: the person's lasting nodes and their crews.
type Assignable struct {
	Nodes []AssignableNode `json:"nodes"`
	Crews []AssignableCrew `json:"crews"`
}

// AssignableNode is a node a task may be given to.
type AssignableNode struct {
	ID     string `json:"id"`
	Slug   string `json:"slug"`
	Name   string `json:"name"`
	Role   string `json:"role"`
	Avatar Avatar `json:"avatar"`
}

// AssignableCrew is a crew a task may be given to, with its lead and how many nodes it has.
type AssignableCrew struct {
	RoomID  string      `json:"roomId"`
	Title   string      `json:"title"`
	Lead    *CrewLeadOf `json:"lead"`
	Members int         `json:"members"`
}

// CrewLeadOf names a crew's lead.
type CrewLeadOf struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	Name string `json:"name"`
}

// Assignable lists the nodes and crews a task may be given to; empty without nodes.
func (s *Service) Assignable(ctx context.Context) (Assignable, error) {
	out := Assignable{Nodes: []AssignableNode{}, Crews: []AssignableCrew{}}
	ns, err := s.Nodes(ctx)
	if err != nil {
		return out, err
	}
	for _, n := range ns {
		out.Nodes = append(out.Nodes, AssignableNode{ID: n.ID, Slug: n.Slug, Name: n.Name, Role: n.Role, Avatar: n.Avatar})
	}
	rooms, err := s.Rooms(ctx)
	if err != nil {
		return out, err
	}
	for _, r := range rooms {
		if r.Kind != RoomCrew {
			continue
		}
		c := AssignableCrew{RoomID: r.ID, Title: r.Title, Members: len(r.Members)}
		for _, m := range r.Members {
			if m.NodeID == r.Lead {
				c.Lead = &CrewLeadOf{ID: m.NodeID, Slug: m.Slug, Name: m.Name}
			}
		}
		out.Crews = append(out.Crews, c)
	}
	return out, nil
}

// CheckAssignee says whether a task may be given to nodeID or roomID: one of the person's
// lasting nodes, or one of their crews. Anything else is a not-found problem.
func (s *Service) CheckAssignee(ctx context.Context, nodeID, roomID string) error {
	if nodeID != "" {
		n, err := s.Node(ctx, nodeID)
		if err != nil || n.ID != nodeID || n.ParentID != "" {
			return problem.NotFound("There is no node %q to give the task to.", nodeID)
		}
	}
	if roomID != "" {
		r, err := s.Room(ctx, roomID)
		if err != nil || r.Kind != RoomCrew {
			return problem.NotFound("There is no crew %q to give the task to.", roomID)
		}
	}
	return nil
}

// NameAssignees fills each task's NodeAssignee: the node by its name and handle, the crew by
// its title.
func (s *Service) NameAssignees(ctx context.Context, ts []records.Task) {
	var nodes map[string]Node
	var crews map[string]Room
	for i := range ts {
		t := &ts[i]
		switch {
		case t.AssigneeNodeID != nil:
			if nodes == nil {
				nodes = map[string]Node{}
				all, _ := s.queryNodes(ctx, s.cfg.Store.Reader(), "")
				for _, n := range all {
					nodes[n.ID] = n
				}
			}
			if n, ok := nodes[*t.AssigneeNodeID]; ok {
				t.NodeAssignee = &records.NodeAssignee{Kind: "node", ID: n.ID, Name: n.Name, Handle: n.Slug}
			}
		case t.AssigneeRoomID != nil:
			if crews == nil {
				crews = map[string]Room{}
				all, _ := s.Rooms(ctx)
				for _, r := range all {
					crews[r.ID] = r
				}
			}
			if r, ok := crews[*t.AssigneeRoomID]; ok {
				t.NodeAssignee = &records.NodeAssignee{Kind: "crew", ID: r.ID, Name: r.Title}
			}
		}
	}
}

// TaskWork is what changing a task's owner would stop.
type TaskWork struct {
	Node  CrewLeadOf `json:"node"`
	Doing string     `json:"doing"` // thinking, plan, session
}

// WorkOnTask says what a node is doing on task id now, or nil. A turn queued or running for it
// is thinking. Plans and agent sessions for the task count once their tables name the task
// (node_missions, node_runs): they come with the missions and sessions of spec 002 §6.2, §8.
func (s *Service) WorkOnTask(ctx context.Context, id string) (*TaskWork, error) {
	ts, err := s.queryTurns(ctx, s.cfg.Store.Reader(), "WHERE reason = 'task' AND status IN ('queued', 'running') AND operation_id LIKE ? ORDER BY created_at DESC LIMIT 1",
		"task:"+id+":%")
	if err != nil || len(ts) == 0 {
		return nil, err
	}
	n, err := s.Node(ctx, ts[0].NodeID)
	if err != nil {
		return nil, nil
	}
	return &TaskWork{Node: CrewLeadOf{ID: n.ID, Slug: n.Slug, Name: n.Name}, Doing: "thinking"}, nil
}

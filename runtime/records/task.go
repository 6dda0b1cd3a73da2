package records

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Task is a piece of work: what it is, where it stands, whose it is, and its Markdown page.
type Task struct {
	ID        string   `json:"id"`
	SpaceID   string   `json:"spaceId"`
	ProjectID *string  `json:"projectId"`
	Title     string   `json:"title"`
	Status    Status   `json:"status"`
	Priority  string   `json:"priority"`
	Due       *string  `json:"due"`
	Labels    []string `json:"labels"`
	OwnerID   *string  `json:"ownerId"`
	// AssigneeNodeID and AssigneeRoomID say the task is with one of the person's nodes or crews
	// (spec 002 §6.6): at most one is set, and then OwnerID is not.
	AssigneeNodeID *string `json:"assigneeNodeId"`
	AssigneeRoomID *string `json:"assigneeRoomId"`
	// NodeAssignee names that node or crew. Records never fill it: they do not know nodes; the
	// API fills it from the node package.
	NodeAssignee *NodeAssignee `json:"nodeAssignee,omitempty"`
	People       []string      `json:"people"`
	RepoID       *string       `json:"repoId"`
	Page         string        `json:"page"`
	Position     float64       `json:"position"`
	CreatedAt    time.Time     `json:"createdAt"`
	UpdatedAt    time.Time     `json:"updatedAt"`
	DeletedAt    *time.Time    `json:"deletedAt"`
}

// TaskInput is a new task or a change to one; unset fields are left alone.
type TaskInput struct {
	Title     Opt[string]   `json:"title,omitzero"`
	Status    Opt[Status]   `json:"status,omitzero"`
	Priority  Opt[string]   `json:"priority,omitzero"`
	Due       Opt[*string]  `json:"due,omitzero"`
	Labels    Opt[[]string] `json:"labels,omitzero"`
	ProjectID Opt[*string]  `json:"projectId,omitzero"`
	OwnerID   Opt[*string]  `json:"ownerId,omitzero"`
	// AssigneeNodeID or AssigneeRoomID gives the task to a node or a crew; setting OwnerID (to a
	// person or to nobody) takes it back. The caller checks that the node or crew exists.
	AssigneeNodeID Opt[*string]  `json:"assigneeNodeId,omitzero"`
	AssigneeRoomID Opt[*string]  `json:"assigneeRoomId,omitzero"`
	People         Opt[[]string] `json:"people,omitzero"`
	RepoID         Opt[*string]  `json:"repoId,omitzero"`
	Page           Opt[string]   `json:"page,omitzero"`
	Position       Opt[float64]  `json:"position,omitzero"`
}

// Priorities lists the task priorities, lowest first.
var Priorities = []string{"none", "low", "medium", "high", "urgent"}

var taskKind = &kind[Task, TaskInput]{
	name: "task", changes: taskChanges, table: "tasks", prefix: "tsk_", order: "position, created_at",
	decode: decodeTask,
	title:  func(t Task) string { return t.Title },
	row:    (*Batch).taskRow,
	updated: func(before, after Task) string {
		if before.Status != after.Status {
			return fmt.Sprintf("Moved task “%s” to %s", after.Title, after.Status.Label())
		}
		return ""
	},
}

func decodeTask(r ledger.Row) Task {
	return Task{
		ID: r.Str("id"), SpaceID: r.Str("space_id"), ProjectID: r.NullStr("project_id"),
		Title: r.Str("title"), Status: Status(r.Str("status")), Priority: r.Str("priority"),
		Due: r.NullStr("due"), Labels: stringList(r.Str("labels")), OwnerID: r.NullStr("owner_id"),
		AssigneeNodeID: r.NullStr("assignee_node_id"), AssigneeRoomID: r.NullStr("assignee_room_id"),
		People: stringList(r.Str("people")), RepoID: r.NullStr("repo_id"), Page: r.Str("page"),
		Position: r.Float("position"), CreatedAt: store.ReadTime(r.Str("created_at")),
		UpdatedAt: store.ReadTime(r.Str("updated_at")), DeletedAt: parseNullStamp(r, "deleted_at"),
	}
}

func stringList(s string) []string {
	out := []string{}
	json.Unmarshal([]byte(s), &out)
	return out
}

func listJSON(l []string) string {
	if l == nil {
		l = []string{}
	}
	b, _ := json.Marshal(l)
	return string(b)
}

// TaskFilter narrows ListTasks; empty fields match everything.
type TaskFilter struct {
	Status    Status
	ProjectID string
	OwnerID   string
	Label     string
}

// ListTasks returns the tasks not in Trash, in board order.
func (s *Service) ListTasks(ctx context.Context, f TaskFilter) ([]Task, error) {
	return s.listTasks(ctx, s.db, f)
}

func (s *Service) listTasks(ctx context.Context, q querier, f TaskFilter) ([]Task, error) {
	where, args := "space_id = ? AND deleted_at IS NULL", []any{s.space}
	if f.Status != "" {
		where, args = where+" AND status = ?", append(args, string(f.Status))
	}
	if f.ProjectID != "" {
		where, args = where+" AND project_id = ?", append(args, f.ProjectID)
	}
	if f.OwnerID != "" {
		where, args = where+" AND owner_id = ?", append(args, f.OwnerID)
	}
	if f.Label != "" {
		where, args = where+" AND EXISTS (SELECT 1 FROM json_each(tasks.labels) WHERE value = ?)", append(args, f.Label)
	}
	return taskKind.query(ctx, q, where+" ORDER BY position, created_at", args...)
}

// taskRow checks in and returns the columns to write. cur is the task being changed, nil for a new one.
func (b *Batch) taskRow(in TaskInput, cur *Task) (ledger.Row, error) {
	if cur == nil {
		if !in.Title.Set {
			return nil, problem.Invalid("A task needs a title.")
		}
		if !in.Status.Set {
			in.Status = Some(Todo)
		}
	}
	row := ledger.Row{}
	if in.Title.Set {
		t, err := text("title", in.Title.V, 300, true)
		if err != nil {
			return nil, err
		}
		row["title"] = t
	}
	if in.Status.Set {
		st := in.Status.V
		if !st.Valid() {
			return nil, problem.Invalid("Status %q is not one of proposed, todo, in_progress, waiting_approval, blocked, done or dropped.", st)
		}
		if cur != nil {
			if err := CheckMove(cur.Status, st); err != nil {
				return nil, err
			}
		}
		row["status"] = string(st)
		if (cur == nil || cur.Status != st) && !in.Position.Set {
			pos, err := b.nextPosition(st)
			if err != nil {
				return nil, err
			}
			row["position"] = pos
		}
	}
	if in.Priority.Set {
		if !oneOf(in.Priority.V, Priorities) {
			return nil, problem.Invalid("Priority %q is not one of none, low, medium, high or urgent.", in.Priority.V)
		}
		row["priority"] = in.Priority.V
	}
	if in.Due.Set {
		if in.Due.V != nil {
			if _, err := time.Parse(time.DateOnly, *in.Due.V); err != nil {
				return nil, problem.Invalid("Due date %q is not a date like 2026-12-31.", *in.Due.V)
			}
		}
		row["due"] = nullable(in.Due.V)
	}
	if in.Labels.Set {
		l, err := labels(in.Labels.V)
		if err != nil {
			return nil, err
		}
		row["labels"] = listJSON(l)
	}
	if in.Page.Set {
		p, err := text("page", in.Page.V, 500_000, false)
		if err != nil {
			return nil, err
		}
		row["page"] = p
	}
	if in.Position.Set {
		row["position"] = in.Position.V
	}
	if err := b.taskLinks(in, row); err != nil {
		return nil, err
	}
	if err := taskAssignee(in, row); err != nil {
		return nil, err
	}
	return row, nil
}

// taskLinks checks the records a task points at.
func (b *Batch) taskLinks(in TaskInput, row ledger.Row) error {
	for _, l := range []struct {
		opt                 Opt[*string]
		column, table, name string
	}{
		{in.ProjectID, "project_id", "projects", "project"},
		{in.OwnerID, "owner_id", "people", "person"},
		{in.RepoID, "repo_id", "repos", "repository"},
	} {
		if !l.opt.Set {
			continue
		}
		if l.opt.V != nil {
			if err := b.exists(l.table, l.name, *l.opt.V); err != nil {
				return err
			}
		}
		row[l.column] = nullable(l.opt.V)
	}
	if in.People.Set {
		if len(in.People.V) > 50 {
			return problem.Invalid("A task can name at most 50 people.")
		}
		for _, id := range in.People.V {
			if err := b.exists("people", "person", id); err != nil {
				return err
			}
		}
		row["people"] = listJSON(dedupe(in.People.V))
	}
	return nil
}

func (b *Batch) nextPosition(st Status) (float64, error) {
	var p float64
	err := b.t.QueryRowContext(b.t.Context(),
		"SELECT coalesce(max(position), 0) + 1 FROM tasks WHERE space_id = ? AND status = ? AND deleted_at IS NULL",
		b.s.space, string(st)).Scan(&p)
	return p, err
}

package tools

import (
	"context"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/records"
)

// This file holds the task tools beside hubtools.go's list, create and update: reading one task
// whole, and moving tasks to Trash.

// taskDetail is one task as hub_get_task returns it: its row, the titles of what it points at, and
// its page.
type taskDetail struct {
	taskRow
	Project *Ref   `json:"project,omitempty"`
	Owner   *Ref   `json:"owner,omitempty"`
	People  []Ref  `json:"people,omitempty"`
	Repo    *Ref   `json:"repo,omitempty"`
	InTrash bool   `json:"inTrash,omitempty"`
	Page    string `json:"page"`
	Note    string `json:"note,omitempty"`
}

// getTaskIn is hub_get_task's input.
type getTaskIn struct {
	ID     string `json:"id" check:"minLength=1" jsonschema:"the task's id or ensemble:// link"`
	Offset *int   `json:"offset,omitempty" check:"minimum=0" jsonschema:"read the page from this character on"`
}

func getTaskTool() Tool {
	return typedTool(Tool{
		Name:        "hub_get_task",
		Area:        "tasks",
		Risk:        RiskLow,
		Description: "Read one task: its status, priority, due date, labels, project, owner, people, repository and its Markdown page. A long page comes as its start and end; pass offset to read a part in full.",
	}, Typed[getTaskIn]{
		Run: func(ctx context.Context, tc *ToolContext, in getTaskIn) (Result, error) {
			t, err := tc.Records.Tasks().Get(ctx, bareID(in.ID, "task"))
			if err != nil {
				return Result{}, missing(err, "task", "hub_list_tasks")
			}
			d := taskDetail{taskRow: rowOf(t), InTrash: t.DeletedAt != nil}
			d.Page, d.Note = textPart(t.Page, in.Offset, "hub_get_task")
			link := func(kind string, id *string) *Ref {
				if id == nil {
					return nil
				}
				title, err := tc.Records.Title(ctx, kind, *id)
				if err != nil { // in Trash or gone: the task's link no longer leads anywhere
					return nil
				}
				return &Ref{Kind: kind, ID: *id, Title: title}
			}
			d.Project, d.Owner, d.Repo = link("project", t.ProjectID), link("person", t.OwnerID), link("repo", t.RepoID)
			for _, p := range t.People {
				if r := link("person", &p); r != nil {
					d.People = append(d.People, *r)
				}
			}
			summary := fmt.Sprintf("Read task %s.", quoted(t.Title))
			if d.InTrash {
				summary = fmt.Sprintf("Read task %s, which is in Trash.", quoted(t.Title))
			}
			return Result{Summary: summary, Data: map[string]any{"task": d},
				Refs: []Ref{{Kind: "task", ID: t.ID, Title: t.Title}}}, nil
		},
	})
}

// deleteTasksIn is hub_delete_tasks' input.
type deleteTasksIn struct {
	IDs []string `json:"ids" check:"minItems=1,maxItems=100,items.minLength=1" jsonschema:"task ids, ensemble:// links or exact titles"`
}

func deleteTasksTool() Tool {
	return typedTool(Tool{
		Name:        "hub_delete_tasks",
		Area:        "tasks",
		Risk:        RiskHigh, // removes up to 100 tasks at once
		Undoable:    Undoable,
		Description: "Move one or more tasks to Trash in one step (one Undo); they can be restored from Trash.",
	}, Typed[deleteTasksIn]{
		Prepare: prepareTrash,
		Preview: func(ctx context.Context, tc *ToolContext, in deleteTasksIn) (string, error) {
			tasks, err := liveTasks(ctx, tc, in.IDs)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Move %s to Trash: %s.", Plural(len(tasks), "task"), titleList(taskTitles(tasks))), nil
		},
		Write: func(ctx context.Context, tc *ToolContext, b *records.Batch, in deleteTasksIn) (Result, error) {
			tasks, err := liveTasks(ctx, tc, in.IDs)
			if err != nil {
				return Result{}, err
			}
			refs := make([]Ref, 0, len(tasks))
			for _, t := range tasks {
				if _, err := tc.Records.Tasks().TrashIn(b, t.ID); err != nil {
					return Result{}, missing(err, "task", "hub_list_tasks")
				}
				refs = append(refs, Ref{Kind: "task", ID: t.ID, Title: t.Title})
			}
			summary := fmt.Sprintf("Moved %s to Trash: %s.", Plural(len(tasks), "task"), titleList(taskTitles(tasks)))
			return Result{Summary: summary, Data: map[string]any{"trashed": refs}, Refs: refs}, nil
		},
	})
}

// taskKind is tasks to the shared record helpers, for finding a task by id, link or title.
var taskKind = recordKind[records.Task, records.TaskInput]{
	kind: "task", noun: "task", listName: "hub_list_tasks",
	area:    "tasks",
	coll:    (*records.Service).Tasks,
	id:      func(t records.Task) string { return t.ID },
	title:   func(t records.Task) string { return t.Title },
	deleted: func(t records.Task) bool { return t.DeletedAt != nil },
}

// prepareTrash fixes the tasks hub_delete_tasks moves: each id, link or title becomes the id of
// the task it names, each once, so the proposal lists and Apply moves exactly those.
func prepareTrash(ctx context.Context, tc *ToolContext, in deleteTasksIn) (map[string]any, error) {
	tasks, err := liveTasks(ctx, tc, in.IDs)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	return map[string]any{"ids": ids}, nil
}

// liveTasks reads the tasks hub_delete_tasks names, each once, refusing the whole call if one is
// missing or already in Trash, so that nothing is half done.
func liveTasks(ctx context.Context, tc *ToolContext, refs []string) ([]records.Task, error) {
	seen := map[string]bool{}
	var out []records.Task
	for i, ref := range refs {
		t, err := taskKind.find(ctx, tc, ref)
		if err != nil {
			return nil, fmt.Errorf("Item %d of the list: %s Nothing was moved.", i+1, err)
		}
		if t.DeletedAt != nil {
			return nil, fmt.Errorf("Task %s (item %d of the list) is already in Trash. Nothing was moved.", quoted(t.Title), i+1)
		}
		if !seen[t.ID] {
			seen[t.ID] = true
			out = append(out, t)
		}
	}
	return out, nil
}

func taskTitles(ts []records.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Title
	}
	return out
}

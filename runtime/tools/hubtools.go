package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/webfetch"
)

// HubTools returns a registry with the Hub's tools over the person's records: tasks, pages,
// projects, people, repositories, ranked search, reading a public web page, and assigning tasks to
// coding agents (through ToolContext.Runs).
func HubTools() *Registry {
	r := NewRegistry()
	for _, t := range []Tool{listTasksTool(), createTasksTool(), updateTaskTool(), getTaskTool(), deleteTasksTool(),
		listPagesTool(), readPageTool(), createPageTool(), updatePageTool(), editPageTool(),
		listProjectsTool(), createProjectTool(), updateProjectTool(), listPeopleTool(), createPersonTool(),
		listReposTool(), linkRepoTool(), searchWorkTool(), webPageTool(webfetch.New()),
		assignToAgentTool(), listAgentSessionsTool()} {
		if err := r.Register(t); err != nil {
			panic(err)
		}
	}
	// Playbooks and personal skills (tools_playbooks.go, tools_skills.go), and ordered workflows
	// over the writes above (workflow.go).
	for _, t := range []Tool{howToTool(), readSkillTool(), workflowTool(r)} {
		if err := r.Register(t); err != nil {
			panic(err)
		}
	}
	return r
}

type taskRow struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Status   string   `json:"status"`
	Priority string   `json:"priority,omitempty"`
	Due      *string  `json:"due,omitempty"`
	Labels   []string `json:"labels,omitempty"`
}

func rowOf(t records.Task) taskRow {
	r := taskRow{ID: t.ID, Title: t.Title, Status: string(t.Status), Due: t.Due}
	if t.Priority != "none" {
		r.Priority = t.Priority
	}
	if len(t.Labels) > 0 {
		r.Labels = t.Labels
	}
	return r
}

// listBudget is what a list result may take, leaving room for the summary and a note.
const listBudget = MaxToolResultChars - 600

// listTasksIn is hub_list_tasks' input.
type listTasksIn struct {
	Status string `json:"status,omitempty" check:"enum=@taskStatus"`
	Label  string `json:"label,omitempty"`
	Query  string `json:"query,omitempty" jsonschema:"words the title contains"`
	Offset int    `json:"offset,omitempty" check:"minimum=0"`
}

func listTasksTool() Tool {
	return typedTool(Tool{
		Name:        "hub_list_tasks",
		Area:        "tasks",
		Risk:        RiskLow,
		Description: "List the person's tasks (not in Trash), in board order. Filter by status or label, or by words in the title. Long lists come in parts: call again with the offset the note names.",
	}, Typed[listTasksIn]{
		Run: func(ctx context.Context, tc *ToolContext, in listTasksIn) (Result, error) {
			tasks, err := tc.Records.ListTasks(ctx, records.TaskFilter{Status: records.Status(in.Status), Label: in.Label})
			if err != nil {
				return Result{}, err
			}
			all := make([]taskRow, 0, len(tasks))
			for _, t := range tasks {
				if titleHas(t.Title, in.Query) {
					all = append(all, rowOf(t))
				}
			}
			rows, note := fitList(all, in.Offset, "hub_list_tasks", "tasks")
			data := listData("tasks", rows, len(all), note)
			var titles []string
			for _, r := range rows {
				titles = append(titles, r.Title)
			}
			summary := "No tasks found."
			if len(all) > 0 {
				summary = fmt.Sprintf("Found %s: %s.", Plural(len(all), "task"), titleList(titles))
			}
			return Result{Summary: summary, Data: data}, nil
		},
	})
}

// createTasksIn is hub_create_tasks' input.
type createTasksIn struct {
	Tasks []newTask `json:"tasks" check:"minItems=1,maxItems=50"`
}

func createTasksTool() Tool {
	return typedTool(Tool{
		Name:        "hub_create_tasks",
		Area:        "tasks",
		Risk:        RiskMedium, // up to 50 at once
		Undoable:    Undoable,
		Description: "Create one or more tasks in one step (one Undo). Give each a short title; status defaults to todo.",
	}, Typed[createTasksIn]{
		Preview: func(ctx context.Context, tc *ToolContext, in createTasksIn) (string, error) {
			return fmt.Sprintf("Add %s: %s.", Plural(len(in.Tasks), "task"), titleList(newTitles(in.Tasks))), nil
		},
		Write: func(ctx context.Context, tc *ToolContext, b *records.Batch, in createTasksIn) (Result, error) {
			rows := make([]taskRow, 0, len(in.Tasks))
			refs := make([]Ref, 0, len(in.Tasks))
			for _, t := range in.Tasks {
				task, err := tc.Records.Tasks().CreateIn(b, t.input())
				if err != nil {
					return Result{}, err
				}
				rows = append(rows, rowOf(task))
				refs = append(refs, Ref{Kind: "task", ID: task.ID, Title: task.Title})
			}
			summary := fmt.Sprintf("Added %s: %s.", Plural(len(in.Tasks), "task"), titleList(newTitles(in.Tasks)))
			return Result{Summary: summary, Data: map[string]any{"created": rows}, Refs: refs}, nil
		},
	})
}

// newTask is one task of hub_create_tasks.
type newTask struct {
	Title    string   `json:"title" check:"minLength=1,maxLength=300"`
	Status   string   `json:"status,omitempty" check:"enum=@taskStatus"`
	Priority string   `json:"priority,omitempty" check:"enum=@priority"`
	Due      string   `json:"due,omitempty" jsonschema:"YYYY-MM-DD"`
	Labels   []string `json:"labels,omitempty"`
	Page     string   `json:"page,omitempty" jsonschema:"Markdown notes"`
}

func newTitles(in []newTask) []string {
	titles := make([]string, len(in))
	for i, t := range in {
		titles[i] = strings.TrimSpace(t.Title)
	}
	return titles
}

func (t newTask) input() records.TaskInput {
	ti := records.TaskInput{Title: records.Some(t.Title)}
	if t.Status != "" {
		ti.Status = records.Some(records.Status(t.Status))
	}
	if t.Priority != "" {
		ti.Priority = records.Some(t.Priority)
	}
	if t.Due != "" {
		due := t.Due
		ti.Due = records.Some(&due)
	}
	if t.Labels != nil {
		ti.Labels = records.Some(t.Labels)
	}
	if t.Page != "" {
		ti.Page = records.Some(t.Page)
	}
	return ti
}

// updateTaskIn is hub_update_task's input: only the fields given change.
type updateTaskIn struct {
	ID       string  `json:"id" check:"minLength=1" jsonschema:"the task's id, ensemble:// link or exact title"`
	Title    *string `json:"title,omitempty" check:"minLength=1,maxLength=300"`
	Status   *string `json:"status,omitempty" check:"enum=@taskStatus"`
	Priority *string `json:"priority,omitempty" check:"enum=@priority"`
	// Due is given as null to clear it.
	Due    records.Opt[*string] `json:"due,omitzero" check:"null" jsonschema:"YYYY-MM-DD, or null to clear"`
	Labels []string             `json:"labels,omitempty"`
}

func updateTaskTool() Tool {
	return typedTool(Tool{
		Name:        "hub_update_task",
		Area:        "tasks",
		Risk:        RiskMedium,
		Undoable:    Undoable,
		Prepare:     taskKind.prepareID,
		Description: "Change one task: its title, status (moves follow the task state machine), priority, due date or labels. Only the fields given change.",
	}, Typed[updateTaskIn]{
		Preview: func(ctx context.Context, tc *ToolContext, in updateTaskIn) (string, error) {
			u, err := readTaskUpdate(ctx, tc, in)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Update task %s: %s.", quoted(u.cur.Title), strings.Join(u.plans, ", ")), nil
		},
		Write: func(ctx context.Context, tc *ToolContext, b *records.Batch, in updateTaskIn) (Result, error) {
			u, err := readTaskUpdate(ctx, tc, in)
			if err != nil {
				return Result{}, err
			}
			after, err := tc.Records.Tasks().UpdateIn(b, u.cur.ID, u.in)
			if err != nil {
				return Result{}, err
			}
			summary := fmt.Sprintf("Updated task %s: %s.", quoted(u.cur.Title), strings.Join(u.done, ", "))
			return Result{Summary: summary, Data: map[string]any{"task": rowOf(after)},
				Refs: []Ref{{Kind: "task", ID: after.ID, Title: after.Title}}}, nil
		},
	})
}

// taskUpdate is a checked hub_update_task call: the task as it is, the change, and the change in
// words, as a plan ("move it to Done") and as done ("moved it to Done").
type taskUpdate struct {
	cur         records.Task
	in          records.TaskInput
	plans, done []string
}

func readTaskUpdate(ctx context.Context, tc *ToolContext, in updateTaskIn) (taskUpdate, error) {
	cur, err := tc.Records.Tasks().Get(ctx, in.ID)
	if err != nil {
		if records.IsNotFound(err) {
			return taskUpdate{}, fmt.Errorf("There is no task with that id; list the tasks to find it.")
		}
		return taskUpdate{}, err
	}
	u := taskUpdate{cur: cur}
	change := func(plan, done string) {
		u.plans = append(u.plans, plan)
		u.done = append(u.done, done)
	}
	if in.Title != nil {
		u.in.Title = records.Some(*in.Title)
		change("rename it to "+quoted(*in.Title), "renamed it to "+quoted(*in.Title))
	}
	if in.Status != nil {
		st := records.Status(*in.Status)
		if err := records.CheckMove(cur.Status, st); err != nil {
			return taskUpdate{}, err
		}
		u.in.Status = records.Some(st)
		change("move it to "+st.Label(), "moved it to "+st.Label())
	}
	if in.Priority != nil {
		u.in.Priority = records.Some(*in.Priority)
		change("set its priority to "+*in.Priority, "set its priority to "+*in.Priority)
	}
	if in.Due.Set {
		due := in.Due.V
		u.in.Due = records.Some(due)
		if due == nil {
			change("clear its due date", "cleared its due date")
		} else {
			change("make it due "+*due, "set it due "+*due)
		}
	}
	if in.Labels != nil {
		u.in.Labels = records.Some(in.Labels)
		change("set its labels", "set its labels")
	}
	if len(u.plans) == 0 {
		return taskUpdate{}, fmt.Errorf("Nothing to change: give a title, status, priority, due date or labels.")
	}
	return u, nil
}

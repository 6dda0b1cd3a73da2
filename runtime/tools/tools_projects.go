package tools

import "github.com/ensemblework/ensemble/runtime/records"

// The project tools: list, create and update, over the fields records keeps (name, summary,
// status, notes).

type projectRow struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Status  string `json:"status"`
	Summary string `json:"summary,omitempty"`
}

var projectKind = recordKind[records.Project, records.ProjectInput]{
	kind: "project", noun: "project", listName: "hub_list_projects",
	area:    "projects",
	coll:    (*records.Service).Projects,
	id:      func(p records.Project) string { return p.ID },
	title:   func(p records.Project) string { return p.Name },
	deleted: func(p records.Project) bool { return p.DeletedAt != nil },
	row: func(p records.Project) any {
		return projectRow{ID: p.ID, Name: p.Name, Status: p.Status, Summary: clip(p.Summary, 200)}
	},
	name: func(in records.ProjectInput) (string, bool) { return in.Name.V, in.Name.Set },
	changes: func(in records.ProjectInput) (plans, done []string) {
		return fieldChanges(fieldChange{"name", in.Name, false}, fieldChange{"status", in.Status, false},
			fieldChange{"summary", in.Summary, true}, fieldChange{"notes", in.Notes, true})
	},
}

// listProjectsIn is hub_list_projects' input.
type listProjectsIn struct {
	Status string `json:"status,omitempty" check:"enum=@projectStatus"`
	Query  string `json:"query,omitempty" jsonschema:"words the name contains"`
	Offset int    `json:"offset,omitempty" check:"minimum=0"`
}

func (in listProjectsIn) words() string { return in.Query }
func (in listProjectsIn) from() int     { return in.Offset }

func listProjectsTool() Tool {
	return listTool(projectKind, "List the person's projects (not in Trash) with their status and summary. Filter by status or by words in the name. Long lists come in parts: call again with the offset the note names.",
		func(p records.Project, in listProjectsIn) bool { return in.Status == "" || p.Status == in.Status })
}

// createProjectShape is hub_create_project's input as its schema says it; it decodes into
// records.ProjectInput.
type createProjectShape struct {
	Name    string `json:"name" check:"minLength=1,maxLength=200"`
	Summary string `json:"summary,omitempty" check:"maxLength=2000"`
	Status  string `json:"status,omitempty" check:"enum=@projectStatus"`
	Notes   string `json:"notes,omitempty" jsonschema:"Markdown"`
}

func createProjectTool() Tool {
	return createTool[createProjectShape](projectKind, "hub_create_project",
		"Create a project: a name, and optionally a one-line summary, a status (active by default) and Markdown notes.")
}

// updateProjectShape is hub_update_project's input as its schema says it; it decodes into the
// project's id and records.ProjectInput.
type updateProjectShape struct {
	ID      string `json:"id" check:"minLength=1" jsonschema:"the project's id, ensemble:// link or exact name"`
	Name    string `json:"name,omitempty" check:"minLength=1,maxLength=200"`
	Summary string `json:"summary,omitempty" check:"maxLength=2000"`
	Status  string `json:"status,omitempty" check:"enum=@projectStatus"`
	Notes   string `json:"notes,omitempty" jsonschema:"Markdown, replacing the old notes"`
}

func updateProjectTool() Tool {
	return updateTool[updateProjectShape](projectKind, "hub_update_project",
		"Change one project: its name, summary, status or notes (notes are replaced whole). Only the fields given change.")
}

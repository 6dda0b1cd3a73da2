package records

import (
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Project groups tasks toward one outcome.
type Project struct {
	ID        string     `json:"id"`
	SpaceID   string     `json:"spaceId"`
	Name      string     `json:"name"`
	Summary   string     `json:"summary"`
	Status    string     `json:"status"`
	Notes     string     `json:"notes"`
	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
	DeletedAt *time.Time `json:"deletedAt"`
}

// ProjectInput is a new project or a change to one.
type ProjectInput struct {
	Name    Opt[string] `json:"name,omitzero"`
	Summary Opt[string] `json:"summary,omitzero"`
	Status  Opt[string] `json:"status,omitzero"`
	Notes   Opt[string] `json:"notes,omitzero"`
}

// ProjectStatuses are the states a project can be in.
var ProjectStatuses = []string{"active", "paused", "done", "archived"}

var projectKind = &kind[Project, ProjectInput]{
	name: "project", changes: projectChanges, table: "projects", prefix: "prj_", order: "name COLLATE NOCASE",
	decode: func(r ledger.Row) Project {
		return Project{ID: r.Str("id"), SpaceID: r.Str("space_id"), Name: r.Str("name"),
			Summary: r.Str("summary"), Status: r.Str("status"), Notes: r.Str("notes"),
			CreatedAt: store.ReadTime(r.Str("created_at")), UpdatedAt: store.ReadTime(r.Str("updated_at")),
			DeletedAt: parseNullStamp(r, "deleted_at")}
	},
	title: func(p Project) string { return p.Name },
	row: func(b *Batch, in ProjectInput, cur *Project) (ledger.Row, error) {
		if cur == nil && !in.Name.Set {
			return nil, problem.Invalid("A project needs a name.")
		}
		if in.Status.Set && !oneOf(in.Status.V, ProjectStatuses) {
			return nil, problem.Invalid("Project status %q is not one of active, paused, done or archived.", in.Status.V)
		}
		return fieldRow(
			textField{"name", "name", in.Name, 200, true},
			textField{"summary", "summary", in.Summary, 2000, false},
			textField{"status", "status", in.Status, 20, false},
			textField{"notes", "notes", in.Notes, 500_000, false},
		)
	},
}

package tools

import (
	"context"
	"testing"

	"github.com/ensemblework/ensemble/runtime/records"
)

func TestProjectPeopleRepoWrites(t *testing.T) {
	e := newToolEnv(t)
	ctx := context.Background()
	e.runWrites(t, "hub_create_project", []writeCase{
		{name: "with fields", input: map[string]any{"name": "Launch", "summary": "Ship v1", "status": "paused"},
			preview: "Add project “Launch”.", summary: "Added project “Launch”.", check: func(t *testing.T) {
				ps := mustList(e.rec.Projects().List(ctx))
				if len(ps) != 1 || ps[0].Summary != "Ship v1" || ps[0].Status != "paused" {
					t.Errorf("projects %+v", ps)
				}
			}},
		{name: "bad status", input: map[string]any{"name": "X", "status": "someday"}, schema: true},
		{name: "no name", input: map[string]any{"summary": "x"}, schema: true},
		{name: "blank name", input: map[string]any{"name": "   "}, err: true, summary: "The name cannot be empty."},
	})
	prj := mustList(e.rec.Projects().List(ctx))[0]
	e.runWrites(t, "hub_update_project", []writeCase{
		{name: "status and notes", input: map[string]any{"id": prj.ID, "status": "active", "notes": "Long notes"},
			preview: "Update project “Launch”: set its status to “active”, replace its notes.",
			summary: "Updated project “Launch”: set its status to “active”, replaced its notes.", check: func(t *testing.T) {
				p, _ := e.rec.Projects().Get(ctx, prj.ID)
				if p.Status != "active" || p.Notes != "Long notes" || p.Summary != "Ship v1" {
					t.Errorf("project %+v", p)
				}
			}},
		{name: "rename by handle, clear summary", input: map[string]any{"id": records.Handle("project", prj.ID), "name": "Launch v1", "summary": ""},
			summary: "Updated project “Launch”: renamed it to “Launch v1”, cleared its summary."},
		{name: "nothing", input: map[string]any{"id": prj.ID}, err: true, summary: "Nothing to change"},
		{name: "missing", input: map[string]any{"id": "prj_nope", "name": "x"}, err: true, summary: "There is no project with that id or title (or it is in Trash); call hub_list_projects"},
		{name: "unknown field", input: map[string]any{"id": prj.ID, "people": []string{}}, schema: true},
	})
	e.runWrites(t, "hub_create_person", []writeCase{
		{name: "with role", input: map[string]any{"name": "Mira Lind", "email": "mira@example.com", "role": "Counsel", "relationship": "client"},
			preview: "Add person “Mira Lind”.", summary: "Added person “Mira Lind”.", check: func(t *testing.T) {
				ps := mustList(e.rec.People().List(ctx))
				if len(ps) != 1 || ps[0].Role != "Counsel" || ps[0].Relationship != "client" || ps[0].Email != "mira@example.com" {
					t.Errorf("people %+v", ps)
				}
			}},
		{name: "unknown field", input: map[string]any{"name": "X", "phone": "1"}, schema: true},
	})
	e.runWrites(t, "hub_link_repo", []writeCase{
		{name: "url and path", input: map[string]any{"name": "ensemble", "url": "https://github.com/ensemblework/ensemble", "path": "/src/ensemble", "defaultBranch": "main"},
			preview: "Add repository “ensemble”.", summary: "Added repository “ensemble”.", check: func(t *testing.T) {
				rs := mustList(e.rec.Repos().List(ctx))
				if len(rs) != 1 || rs[0].Path != "/src/ensemble" || rs[0].DefaultBranch != "main" {
					t.Errorf("repos %+v", rs)
				}
			}},
		{name: "no name", input: map[string]any{"url": "https://x"}, schema: true},
	})
	e.rec.Projects().Trash(ctx, byPerson, prj.ID)
	if _, err := e.call(t, "hub_update_project", map[string]any{"id": prj.ID, "name": "y"}); err == nil || err.Error() != "The project “Launch v1” is in Trash; restore it first to change it." {
		t.Errorf("update in Trash: %v", err)
	}
}

func TestRecordLists(t *testing.T) {
	e := newToolEnv(t)
	ctx := context.Background()
	for _, n := range []string{"Launch", "Hiring"} {
		e.rec.Projects().Create(ctx, byPerson, records.ProjectInput{Name: records.Some(n)})
	}
	e.rec.Projects().Create(ctx, byPerson, records.ProjectInput{Name: records.Some("Archive"), Status: records.Some("done")})
	e.rec.People().Create(ctx, byPerson, records.PersonInput{Name: records.Some("Mira"), Role: records.Some("Counsel")})
	gone, _ := e.rec.People().Create(ctx, byPerson, records.PersonInput{Name: records.Some("Gone")})
	e.rec.People().Trash(ctx, byPerson, gone.ID)
	e.rec.Repos().Create(ctx, byPerson, records.RepoInput{Name: records.Some("ensemble")})
	for _, tc := range []struct {
		tool    string
		input   any
		summary string
		total   int
	}{
		{"hub_list_projects", map[string]any{}, "Found 3 projects: “Archive”, “Hiring” and “Launch”.", 3},
		{"hub_list_projects", map[string]any{"status": "done"}, "Found 1 project: “Archive”.", 1},
		{"hub_list_projects", map[string]any{"query": "hir"}, "Found 1 project: “Hiring”.", 1},
		{"hub_list_people", map[string]any{}, "Found 1 person: “Mira”.", 1},
		{"hub_list_people", map[string]any{"query": "x"}, "No people found.", 0},
		{"hub_list_repos", map[string]any{}, "Found 1 repository: “ensemble”.", 1},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			r := e.must(t, tc.tool, tc.input)
			if r.Summary != tc.summary {
				t.Errorf("summary %q, want %q", r.Summary, tc.summary)
			}
			if got := r.Data.(map[string]any)["total"]; got != tc.total {
				t.Errorf("total %v, want %d", got, tc.total)
			}
		})
	}
	if _, err := e.call(t, "hub_list_people", map[string]any{"status": "active"}); err == nil {
		t.Error("people took a status filter")
	}
}

func TestHubToolsHasTheFirstSet(t *testing.T) {
	reg := HubTools()
	for _, n := range []string{"hub_get_task", "hub_delete_tasks", "hub_list_pages", "hub_read_page", "hub_create_page",
		"hub_update_page", "hub_edit_page", "hub_list_projects", "hub_create_project", "hub_update_project",
		"hub_list_people", "hub_create_person", "hub_list_repos", "hub_link_repo", "hub_search_work", "hub_read_web_page"} {
		if reg.Get(n) == nil {
			t.Errorf("HubTools lacks %s", n)
		}
	}
}

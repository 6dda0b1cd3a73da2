package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/records"
)

func TestGetTask(t *testing.T) {
	e := newToolEnv(t)
	ctx := context.Background()
	prj, _ := e.rec.Projects().Create(ctx, byPerson, records.ProjectInput{Name: records.Some("Launch")})
	mira, _ := e.rec.People().Create(ctx, byPerson, records.PersonInput{Name: records.Some("Mira")})
	long := strings.Repeat("a", 4000) + strings.Repeat("z", 4000)
	short, _ := e.rec.Tasks().Create(ctx, byPerson, records.TaskInput{Title: records.Some("Draft brief"), Page: records.Some("Two paragraphs."),
		ProjectID: records.Some(&prj.ID), OwnerID: records.Some(&mira.ID)})
	big, _ := e.rec.Tasks().Create(ctx, byPerson, records.TaskInput{Title: records.Some("Long notes"), Page: records.Some(long)})
	gone, _ := e.rec.Tasks().Create(ctx, byPerson, records.TaskInput{Title: records.Some("Old")})
	e.rec.Tasks().Trash(ctx, byPerson, gone.ID)

	for _, tc := range []struct {
		name    string
		input   any
		summary string
		err     string
		check   func(t *testing.T, d taskDetail)
	}{
		{"with links", map[string]any{"id": short.ID}, "Read task “Draft brief”.", "", func(t *testing.T, d taskDetail) {
			if d.Page != "Two paragraphs." || d.Note != "" || d.Project == nil || d.Project.Title != "Launch" || d.Owner == nil || d.Owner.Title != "Mira" {
				t.Errorf("detail %+v", d)
			}
		}},
		{"by handle", map[string]any{"id": records.Handle("task", short.ID)}, "Read task “Draft brief”.", "", nil},
		{"long page is trimmed head and tail", map[string]any{"id": big.ID}, "Read task “Long notes”.", "", func(t *testing.T, d taskDetail) {
			if len([]rune(d.Page)) > textBudget || !strings.HasPrefix(d.Page, "aaa") || !strings.HasSuffix(d.Page, "zzz") || !strings.Contains(d.Note, "8000 characters") {
				t.Errorf("page %d chars, note %q", len(d.Page), d.Note)
			}
		}},
		{"a part by offset", map[string]any{"id": big.ID, "offset": 7000}, "Read task “Long notes”.", "", func(t *testing.T, d taskDetail) {
			if d.Page != strings.Repeat("z", 1000) || !strings.Contains(d.Note, "7001–8000 of 8000") {
				t.Errorf("page %d chars, note %q", len(d.Page), d.Note)
			}
		}},
		{"in Trash", map[string]any{"id": gone.ID}, "Read task “Old”, which is in Trash.", "", nil},
		{"missing", map[string]any{"id": "tsk_nope"}, "", "There is no task with that id", nil},
		{"schema", map[string]any{"id": short.ID, "extra": 1}, "", "schema", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := e.call(t, "hub_get_task", tc.input)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "tsk_") {
					t.Errorf("error names an id: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Summary != tc.summary {
				t.Errorf("summary %q, want %q", r.Summary, tc.summary)
			}
			if tc.check != nil {
				tc.check(t, r.Data.(map[string]any)["task"].(taskDetail))
			}
		})
	}
}

func TestDeleteTasks(t *testing.T) {
	e := newToolEnv(t)
	ctx := context.Background()
	mk := func(title string) string {
		task, err := e.rec.Tasks().Create(ctx, byPerson, records.TaskInput{Title: records.Some(title)})
		if err != nil {
			t.Fatal(err)
		}
		return task.ID
	}
	a, b, c := mk("Draft brief"), mk("Call Mira"), mk("Book room")
	live := func(want ...string) func(t *testing.T) {
		return func(t *testing.T) {
			tasks, _ := e.rec.ListTasks(ctx, records.TaskFilter{})
			var got []string
			for _, tk := range tasks {
				got = append(got, tk.Title)
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("live tasks %v, want %v", got, want)
			}
		}
	}
	e.runWrites(t, "hub_delete_tasks", []writeCase{
		{name: "two, one repeated", input: map[string]any{"ids": []string{a, b, records.Handle("task", a)}},
			preview: "Move 2 tasks to Trash: “Draft brief” and “Call Mira”.",
			summary: "Moved 2 tasks to Trash: “Draft brief” and “Call Mira”.", check: live("Book room")},
		{name: "already in Trash refuses all", input: map[string]any{"ids": []string{c, a}},
			err: true, summary: "Task “Draft brief” (item 2 of the list) is already in Trash. Nothing was moved.", check: live("Book room")},
		{name: "missing refuses all", input: map[string]any{"ids": []string{c, "tsk_nope"}},
			err: true, summary: "Item 2 of the list: There is no task with that id or title"},
		{name: "empty list", input: map[string]any{"ids": []string{}}, schema: true},
		{name: "unknown field", input: map[string]any{"ids": []string{c}, "all": true}, schema: true},
	})
	live("Book room")(t)
	// One Undo brings both back.
	if _, err := e.rec.Undo(ctx, byPerson); err != nil {
		t.Fatal(err)
	}
	live("Draft brief", "Call Mira", "Book room")(t)
}

package tools

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/records"
)

func TestPageWrites(t *testing.T) {
	e := newToolEnv(t)
	ctx := context.Background()
	page := func(title string) records.Page {
		t.Helper()
		for _, p := range mustList(e.rec.Pages().List(ctx)) {
			if p.Title == title {
				return p
			}
		}
		t.Fatalf("no page %q", title)
		return records.Page{}
	}
	e.runWrites(t, "hub_create_page", []writeCase{
		{name: "plain", input: map[string]any{"title": "Plan", "body": "# Plan\n\nShip in May.\n\nThen rest."},
			preview: "Add page “Plan”.", summary: "Added page “Plan”.", check: func(t *testing.T) {
				if p := page("Plan"); p.Body != "# Plan\n\nShip in May.\n\nThen rest." {
					t.Errorf("body %q", p.Body)
				}
			}},
		{name: "no title", input: map[string]any{"body": "x"}, schema: true},
		{name: "unknown parent", input: map[string]any{"title": "Child", "parentId": "pag_nope"}, err: true, summary: "The parent page does not exist"},
	})
	plan := page("Plan")
	e.runWrites(t, "hub_create_page", []writeCase{
		{name: "inside another", input: map[string]any{"title": "Notes", "parentId": records.Handle("page", plan.ID)},
			preview: "Add page “Notes” inside “Plan”.", summary: "Added page “Notes”.", check: func(t *testing.T) {
				if p := page("Notes"); p.ParentID == nil || *p.ParentID != plan.ID {
					t.Errorf("parent %v", p.ParentID)
				}
			}},
	})
	e.runWrites(t, "hub_update_page", []writeCase{
		{name: "rename and replace", input: map[string]any{"id": plan.ID, "title": "Launch plan", "body": "New body."},
			preview: "Update page “Plan”: rename it to “Launch plan” and replace its body (9 characters).",
			summary: "Updated page “Plan”: renamed it to “Launch plan” and replaced its body (9 characters).", check: func(t *testing.T) {
				if p := page("Launch plan"); p.Body != "New body." {
					t.Errorf("body %q", p.Body)
				}
			}},
		{name: "nothing", input: map[string]any{"id": plan.ID}, err: true, summary: "Nothing to change"},
		{name: "missing", input: map[string]any{"id": "pag_nope", "title": "X"}, err: true, summary: "There is no page with that id"},
		{name: "empty title", input: map[string]any{"id": plan.ID, "title": ""}, schema: true},
		{name: "parent is not offered", input: map[string]any{"id": plan.ID, "parentId": "x"}, schema: true},
	})
	e.must(t, "hub_update_page", map[string]any{"id": plan.ID, "body": "Alpha beta.\n\nGamma beta.\n\nDelta."})
	e.runWrites(t, "hub_edit_page", []writeCase{
		{name: "two edits in order", input: map[string]any{"id": plan.ID, "edits": []map[string]string{
			{"old": "Alpha beta.", "new": "Alpha one."}, {"old": "beta", "new": "two"}}},
			preview: "Edit page “Launch plan”: make 2 changes.", summary: "Edited page “Launch plan”: made 2 changes.",
			check: func(t *testing.T) {
				if p := page("Launch plan"); p.Body != "Alpha one.\n\nGamma two.\n\nDelta." {
					t.Errorf("body %q", p.Body)
				}
			}},
		{name: "not there, none applied", input: map[string]any{"id": plan.ID, "edits": []map[string]string{
			{"old": "Delta.", "new": "Epsilon."}, {"old": "Zeta", "new": "x"}}},
			err: true, summary: "Page “Launch plan” was not changed: edit 2 of 2: the old text “Zeta” is not in the page"},
		{name: "twice", input: map[string]any{"id": plan.ID, "edits": []map[string]string{{"old": "a", "new": "b"}}},
			err: true, summary: "edit 1 of 1: the old text “a” occurs 4 times"},
		{name: "empty old", input: map[string]any{"id": plan.ID, "edits": []map[string]string{{"old": "", "new": "b"}}}, schema: true},
		{name: "no edits", input: map[string]any{"id": plan.ID, "edits": []map[string]string{}}, schema: true},
	})
	if p := page("Launch plan"); p.Body != "Alpha one.\n\nGamma two.\n\nDelta." {
		t.Errorf("a refused edit changed the body: %q", p.Body)
	}
	e.rec.Pages().Trash(ctx, byPerson, plan.ID)
	if _, err := e.call(t, "hub_edit_page", map[string]any{"id": plan.ID, "edits": []map[string]string{{"old": "Delta", "new": "D"}}}); err == nil || !strings.Contains(err.Error(), "is in Trash") {
		t.Errorf("edit in Trash: %v", err)
	}
}

func mustList[T any](v []T, err error) []T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestApplyEdits(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		edits      []pageEdit
		want, err  string
	}{
		{"one", "a b c", []pageEdit{{"b", "B"}}, "a B c", ""},
		{"delete", "a b c", []pageEdit{{" b", ""}}, "a c", ""},
		{"later sees earlier", "x", []pageEdit{{"x", "yy"}, {"yy", "z"}}, "z", ""},
		{"made ambiguous by an earlier edit", "x y", []pageEdit{{"x", "y"}, {"y", "z"}}, "", "edit 2 of 2: the old text “y” occurs 2 times"},
		{"missing", "abc", []pageEdit{{"d", ""}}, "", "edit 1 of 1: the old text “d” is not in the page"},
		{"long old is clipped", "abc", []pageEdit{{strings.Repeat("q", 200), ""}}, "", "“" + strings.Repeat("q", 79) + "…”"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := applyEdits(tc.body, tc.edits)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestReadAndListPages(t *testing.T) {
	e := newToolEnv(t)
	ctx := context.Background()
	root, _ := e.rec.Pages().Create(ctx, byPerson, records.PageInput{Title: records.Some("Handbook"), Body: records.Some(strings.Repeat("h", 3000) + strings.Repeat("t", 3000))})
	e.rec.Pages().Create(ctx, byPerson, records.PageInput{Title: records.Some("Hiring"), ParentID: records.Some(&root.ID)})
	e.rec.Pages().Create(ctx, byPerson, records.PageInput{Title: records.Some("Recipes")})

	r := e.must(t, "hub_read_page", map[string]any{"id": root.ID})
	d := r.Data.(map[string]any)
	body := d["body"].(string)
	if r.Summary != "Read part of page “Handbook”." || len([]rune(body)) > textBudget || !strings.HasPrefix(body, "hhh") || !strings.HasSuffix(body, "ttt") {
		t.Errorf("read %q, body %d chars", r.Summary, len(body))
	}
	if note, _ := d["note"].(string); !strings.Contains(note, "6000 characters") || !strings.Contains(note, "offset") {
		t.Errorf("note %q", note)
	}
	r = e.must(t, "hub_read_page", map[string]any{"id": root.ID, "offset": 4500})
	if d := r.Data.(map[string]any); d["body"] != strings.Repeat("t", 1500) || d["note"] != "Characters 4501–6000 of 6000, to the end." {
		t.Errorf("offset read %v", d["note"])
	}

	for _, tc := range []struct {
		name    string
		input   any
		summary string
	}{
		{"all", map[string]any{}, "Found 3 pages: “Handbook”, “Hiring” and “Recipes”."},
		{"query", map[string]any{"query": "HI"}, "Found 1 page: “Hiring”."},
		{"parent", map[string]any{"parentId": root.ID}, "Found 1 page: “Hiring”."},
		{"none", map[string]any{"query": "zebra"}, "No pages found."},
		{"offset", map[string]any{"offset": 2}, "Found 3 pages: “Recipes”."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.must(t, "hub_list_pages", tc.input)
			if r.Summary != tc.summary {
				t.Errorf("summary %q, want %q", r.Summary, tc.summary)
			}
		})
	}
	if _, err := e.call(t, "hub_list_pages", map[string]any{"offset": -1}); err == nil {
		t.Error("a negative offset passed the schema")
	}
}

func TestFitListCutsAtWholeRows(t *testing.T) {
	rows := make([]pageRow, 300)
	for i := range rows {
		rows[i] = pageRow{ID: "pag_0123456789", Title: strings.Repeat("t", 40)}
	}
	kept, note := fitList(rows, 10, "hub_list_pages", "pages")
	if len(kept) == 0 || len(kept) >= 290 {
		t.Fatalf("kept %d", len(kept))
	}
	end := 10 + len(kept)
	if want := "call hub_list_pages again with offset " + strconv.Itoa(end); !strings.Contains(note, want) {
		t.Errorf("note %q, want %q", note, want)
	}
	if kept, note := fitList(rows[:3], 0, "x", "pages"); len(kept) != 3 || note != "" {
		t.Errorf("short list: %d, %q", len(kept), note)
	}
}

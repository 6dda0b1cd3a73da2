package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/records"
)

func TestSearchWork(t *testing.T) {
	e := newToolEnv(t)
	ctx := context.Background()
	prj, _ := e.rec.Projects().Create(ctx, byPerson, records.ProjectInput{Name: records.Some("Login revamp")})
	e.rec.Tasks().Create(ctx, byPerson, records.TaskInput{Title: records.Some("Fix the login retry"), Page: records.Some("The backoff is wrong.")})
	linked, _ := e.rec.Tasks().Create(ctx, byPerson, records.TaskInput{Title: records.Some("Write docs"), Page: records.Some("Mention login once."), ProjectID: records.Some(&prj.ID)})
	e.rec.Pages().Create(ctx, byPerson, records.PageInput{Title: records.Some("Login notes")})
	for _, tc := range []struct {
		name    string
		input   any
		summary string
		first   string
		err     string
	}{
		{"counts by kind", map[string]any{"query": "login"}, "", "", ""},
		{"kinds", map[string]any{"query": "login", "kinds": []string{"page"}}, "Found 1 page for “login”: “Login notes”.", "Login notes", ""},
		{"near ranks what links first", map[string]any{"query": "login", "near": records.Handle("project", prj.ID), "kinds": []string{"task"}}, "", "Write docs", ""},
		{"nothing", map[string]any{"query": "zebra"}, "Found nothing for “zebra”.", "", ""},
		{"no words", map[string]any{"query": "!!"}, "", "", "Search needs at least one word."},
		{"bad kind", map[string]any{"query": "x", "kinds": []string{"meeting"}}, "", "", "schema"},
		{"limit too big", map[string]any{"query": "x", "limit": 400}, "", "", "schema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := e.call(t, "hub_search_work", tc.input)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.summary != "" && r.Summary != tc.summary {
				t.Errorf("summary %q, want %q", r.Summary, tc.summary)
			}
			rows := r.Data.(map[string]any)["results"].([]searchRow)
			if tc.first != "" && (len(rows) == 0 || rows[0].Title != tc.first) {
				t.Errorf("results %+v, want %q first", rows, tc.first)
			}
			if strings.Contains(r.Summary, linked.ID) || strings.Contains(r.Summary, prj.ID) {
				t.Error("the summary names an id")
			}
		})
	}
	r := e.must(t, "hub_search_work", map[string]any{"query": "login"})
	if !strings.HasPrefix(r.Summary, "Found ") || !strings.Contains(r.Summary, "2 tasks") || !strings.Contains(r.Summary, "1 project") || !strings.Contains(r.Summary, "1 page") {
		t.Errorf("summary %q", r.Summary)
	}
}

func TestKindCounts(t *testing.T) {
	rows := []searchRow{{Kind: "task"}, {Kind: "person"}, {Kind: "task"}, {Kind: "repo"}}
	if got := kindCounts(rows); got != "2 tasks, 1 person and 1 repository" {
		t.Fatal(got)
	}
	if got := kindCounts(rows[1:2]); got != "1 person" {
		t.Fatal(got)
	}
}

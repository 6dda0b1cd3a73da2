package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/records"
)

// searchWorkIn is hub_search_work's input.
type searchWorkIn struct {
	Query string   `json:"query" check:"minLength=1,maxLength=500"`
	Kinds []string `json:"kinds,omitempty" check:"items.enum=@searchKind"`
	Near  string   `json:"near,omitempty" jsonschema:"a record's ensemble://kind/id link"`
	Limit int      `json:"limit,omitempty" check:"minimum=1,maximum=40"`
}

// searchRow is one hit as the model reads it.
type searchRow struct {
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	Title   string `json:"title"`
	Snippet string `json:"snippet,omitempty"`
	Why     string `json:"why"`
}

func searchWorkTool() Tool {
	return typedTool(Tool{
		Name: "hub_search_work",
		Area: "search",
		Risk: RiskLow,
		Description: "Ranked word search across the person's records: tasks, projects, people, repositories, pages and files (titles weigh more than text; words match as prefixes). " +
			"Give near (a record's ensemble:// link) to rank what links to that record first. It matches words, not meaning: try other words if nothing is found.",
	}, Typed[searchWorkIn]{
		Run: func(ctx context.Context, tc *ToolContext, in searchWorkIn) (Result, error) {
			if in.Limit == 0 {
				in.Limit = 20
			}
			hits, err := tc.Records.Search(ctx, records.SearchQuery{Text: in.Query, Kinds: in.Kinds, Near: in.Near, Limit: in.Limit})
			if err != nil {
				return Result{}, err
			}
			rows := make([]searchRow, len(hits))
			for i, h := range hits {
				rows[i] = searchRow{Kind: h.Kind, ID: h.ID, Title: h.Title, Snippet: h.Snippet, Why: h.Why}
			}
			kept, note := fitList(rows, 0, "hub_search_work", "results")
			if note != "" {
				note = fmt.Sprintf("Showing the best %d of %d results; give kinds or more exact words to see others.", len(kept), len(rows))
			}
			titles := make([]string, len(kept))
			refs := make([]Ref, len(kept))
			for i, r := range kept {
				titles[i], refs[i] = r.Title, Ref{Kind: r.Kind, ID: r.ID, Title: r.Title}
			}
			summary := fmt.Sprintf("Found nothing for %s.", quoted(strings.TrimSpace(in.Query)))
			if len(rows) > 0 {
				summary = fmt.Sprintf("Found %s for %s: %s.", kindCounts(rows), quoted(strings.TrimSpace(in.Query)), titleList(titles))
			}
			return Result{Summary: summary, Data: listData("results", kept, len(rows), note), Refs: refs}, nil
		},
	})
}

// kindNouns are the kinds of record as a person counts them: one and many.
var kindNouns = map[string][2]string{
	"task": {"task", "tasks"}, "project": {"project", "projects"}, "person": {"person", "people"},
	"repo": {"repository", "repositories"}, "page": {"page", "pages"}, "file": {"file", "files"},
}

// kindCounts counts hits by kind, in the order each kind first ranks: "3 tasks, 1 page and 1 person".
func kindCounts(rows []searchRow) string {
	n := map[string]int{}
	var order []string
	for _, r := range rows {
		if n[r.Kind] == 0 {
			order = append(order, r.Kind)
		}
		n[r.Kind]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		noun := kindNouns[k]
		if n[k] == 1 {
			parts[i] = "1 " + noun[0]
		} else {
			parts[i] = fmt.Sprintf("%d %s", n[k], noun[1])
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/ensemblework/ensemble/runtime/playbooks"
	"github.com/ensemblework/ensemble/runtime/tools"
)

func TestRoutePlaybooks(t *testing.T) {
	pb := func(src string) *playbooks.Playbook {
		t.Helper()
		p, err := playbooks.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pbs := []*playbooks.Playbook{
		pb("---\nname: week\ntitle: Week\nwhen: planning\nmatch: \\b(plan|week|due)\\b\npaths: /tasks\nmentions: task\n---\nbody"),
		pb("---\nname: triage\ntitle: Triage\nwhen: triage\nmatch: \\b(triage|backlog)\\b\npaths: /tasks\nmentions: task\n---\nbody"),
		pb("---\nname: write\ntitle: Write\nwhen: pages\nmatch: \\b(write|page)\\b\npaths: /pages\nmentions: page\n---\nbody"),
		pb("---\nname: web\ntitle: Web\nwhen: web\nmatch: https?://\n---\nbody"),
	}
	tests := []struct {
		name string
		in   routeInput
		want []string
	}{
		{"nothing matches", routeInput{Text: "hello there"}, nil},
		{"one word", routeInput{Text: "Plan my Monday"}, []string{"week"}},
		{"two words beat one", routeInput{Text: "triage the backlog and plan"}, []string{"triage", "week"}},
		{"the same word twice counts once", routeInput{Text: "plan plan plan, then write"}, []string{"week", "write"}},
		{"a mention kind", routeInput{Text: "look at this", Mentions: []string{"page"}}, []string{"write"}},
		{"words and a mention add up", routeInput{Text: "triage", Mentions: []string{"task"}}, []string{"triage", "week"}},
		{"an open path alone loads nothing", routeInput{Text: "hello", Path: "/tasks"}, nil},
		{"the open path breaks a tie", routeInput{Text: "plan and write", Path: "/pages/pag_1"}, []string{"write", "week"}},
		{"a tie without a path goes by name", routeInput{Text: "plan and write"}, []string{"week", "write"}},
		{"a path prefix must end at a slash", routeInput{Text: "plan and write", Path: "/pagesx"}, []string{"week", "write"}},
		{"at most two", routeInput{Text: "plan the backlog, write it up: https://example.com/plan"}, []string{"triage", "web"}},
		{"words in a URL do not count", routeInput{Text: "see https://x.test/plan/week"}, []string{"web"}},
		{"case does not matter", routeInput{Text: "TRIAGE"}, []string{"triage"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range routePlaybooks(pbs, tt.in) {
				got = append(got, p.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("routePlaybooks(%+v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestPlaybookScore(t *testing.T) {
	p, err := playbooks.Parse("---\nname: w\ntitle: W\nwhen: w\nmatch: \\b(plan|week)\\b\npaths: /tasks\nmentions: task, project\n---\n")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in          routeInput
		base, total int
	}{
		{routeInput{Text: "plan"}, 2, 2},
		{routeInput{Text: "plan the week"}, 3, 3},
		{routeInput{Text: "x", Mentions: []string{"project", "task"}}, 2, 2},
		{routeInput{Text: "plan", Mentions: []string{"task"}, Path: "/tasks"}, 4, 5},
		{routeInput{Text: "x", Path: "/tasks/tsk_1"}, 0, 1},
	}
	for _, tt := range tests {
		if base, total := score(p, tt.in); base != tt.base || total != tt.total {
			t.Errorf("score(%+v) = %d, %d, want %d, %d", tt.in, base, total, tt.base, tt.total)
		}
	}
}

// The embedded playbooks parse, name only tools the Hub has (hub_web_search may come later), and
// route the requests they are for.
func TestBuiltinPlaybooks(t *testing.T) {
	reg := tools.HubTools()
	if len(builtinPlaybooks) < 4 {
		t.Fatalf("%d playbooks", len(builtinPlaybooks))
	}
	for _, p := range builtinPlaybooks {
		if p.Body == "" || p.Match == nil || len(p.Tools) == 0 {
			t.Errorf("playbook %s: empty body, match or tools", p.Name)
		}
		for _, n := range p.Tools {
			if reg.Get(n) == nil && n != "hub_web_search" {
				t.Errorf("playbook %s names %s, which is not a tool", p.Name, n)
			}
		}
	}
	for _, n := range coreTools {
		if reg.Get(n) == nil && n != "hub_web_search" {
			t.Errorf("core tool %s is not a tool", n)
		}
	}
	tests := []struct{ text, want string }{
		{"plan my week", "week"},
		{"triage my backlog", "triage"},
		{"write a status update page from the done tasks", "write-page"},
		{"read https://go.dev/doc/devel/release and save notes", "web-research"},
		{"add Mira as a person on the Launch project", "records"},
	}
	for _, tt := range tests {
		got := routePlaybooks(builtinPlaybooks, routeInput{Text: tt.text})
		if len(got) == 0 || got[0].Name != tt.want {
			var names []string
			for _, p := range got {
				names = append(names, p.Name)
			}
			t.Errorf("%q routes to %v, want %s first", tt.text, names, tt.want)
		}
	}
}

func TestShownTools(t *testing.T) {
	reg := tools.HubTools()
	week := playbooks.Find(builtinPlaybooks, "week")
	shown := shownTools(reg, nil, builtinPlaybooks, false)
	for _, n := range []string{"hub_how_to", "hub_read_skill", "hub_list_tasks"} {
		if !slices.Contains(shown, n) {
			t.Errorf("core tool %s not shown: %v", n, shown)
		}
	}
	if slices.Contains(shown, "hub_delete_tasks") || slices.Contains(shown, "hub_create_project") {
		t.Errorf("a playbook's tool is shown without it: %v", shown)
	}
	if with := shownTools(reg, []*playbooks.Playbook{week}, builtinPlaybooks, false); !slices.Contains(with, "hub_list_people") {
		t.Errorf("week's tools not shown: %v", with)
	}
	if all := shownTools(reg, nil, builtinPlaybooks, true); len(all) != len(reg.Names()) {
		t.Errorf("toolsets off shows %d of %d", len(all), len(reg.Names()))
	}

	// However many tools there are, a request carries at most MaxToolSchemas.
	big := tools.NewRegistry()
	for i := range 200 {
		if err := big.Register(tools.Tool{Name: fmt.Sprintf("t%03d", i), Area: "skills", Risk: tools.RiskLow, Schema: []byte(`{"type":"object"}`), Run: func(context.Context, *tools.ToolContext, json.RawMessage) (tools.Result, error) {
			return tools.Result{}, nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(shownTools(big, nil, builtinPlaybooks, true)); n != MaxToolSchemas {
		t.Errorf("%d tools shown, want %d", n, MaxToolSchemas)
	}
}

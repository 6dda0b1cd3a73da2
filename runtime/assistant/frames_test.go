package assistant

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/tools"
)

var testActor = ledger.Actor{Kind: ledger.Person}

func TestTitled(t *testing.T) {
	known := newRefSet()
	known.add(tools.Ref{Kind: "task", ID: "tsk_1a", Title: "Draft brief"}, tools.Ref{Kind: "page", ID: "pag_2b", Title: "Notes [v2]"})
	tests := []struct{ name, message, in, want string }{
		{"a bare id", "what is due?", "Next: tsk_1a.", "Next: [Draft brief](ensemble://task/tsk_1a)."},
		{"asked for ids", "give me the ids", "Next: tsk_1a.", "Next: tsk_1a."},
		{"asked for an id", "what is its id?", "It is tsk_1a.", "It is tsk_1a."},
		{"an unknown id stays", "what?", "See tsk_zz.", "See tsk_zz."},
		{"a quoted title and its id", "what?", "“Draft brief” (tsk_1a) is next.", "[Draft brief](ensemble://task/tsk_1a) is next."},
		{"a title and its id", "what?", "Draft brief (tsk_1a) is next.", "[Draft brief](ensemble://task/tsk_1a) is next."},
		{"inside a link", "what?", "[Draft brief](ensemble://task/tsk_1a)", "[Draft brief](ensemble://task/tsk_1a)"},
		{"a link's label", "what?", "[tsk_1a](https://x.test/)", "[tsk_1a](https://x.test/)"},
		{"code", "what?", "Run `open tsk_1a` or\n```\ntsk_1a\n```", "Run `open tsk_1a` or\n```\ntsk_1a\n```"},
		{"a URL", "what?", "https://x.test/tsk_1a", "https://x.test/tsk_1a"},
		{"brackets in a title", "what?", "pag_2b", "[Notes (v2)](ensemble://page/pag_2b)"},
		{"a word that is not an id", "what?", "mytsk_1a", "mytsk_1a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := titled(tt.in, known, tt.message); got != tt.want {
				t.Errorf("titled(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRefsFromData(t *testing.T) {
	type taskRow struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	data := map[string]any{"tasks": []taskRow{{ID: "tsk_1", Title: "A"}, {ID: "tsk_2", Title: "B"}},
		"project": map[string]string{"id": "prj_1", "name": "Launch"}, "other": map[string]string{"id": "x_1", "title": "no kind"}}
	got := refsFromData(data)
	want := map[string]string{"tsk_1": "task/A", "tsk_2": "task/B", "prj_1": "project/Launch"}
	if len(got) != len(want) {
		t.Fatalf("refs %+v", got)
	}
	for _, r := range got {
		if want[r.ID] != r.Kind+"/"+r.Title {
			t.Errorf("ref %+v", r)
		}
	}
	many := make([]taskRow, 80)
	for i := range many {
		many[i] = taskRow{ID: "tsk_" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Title: "t"}
	}
	if n := len(refsFromData(many)); n != maxCallRefs {
		t.Errorf("%d refs from one result, want %d", n, maxCallRefs)
	}
}

// A turn sends the records it knows before any text, its message goes with a <context> block that
// the saved conversation leaves out, and its reply names known records by title unless ids were
// asked for.
func TestTurnRefsContextAndTitles(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			f := newFixture(t, wire, time.Minute)
			ctx := context.Background()
			task, err := f.rec.Tasks().Create(ctx, testActor, records.TaskInput{Title: records.Some("Draft brief")})
			if err != nil {
				t.Fatal(err)
			}
			f.srv.Script(
				enginetest.ToolCall("hub_list_tasks", map[string]any{}),
				enginetest.Say("Your next task is "+task.ID+"."),
			)
			r, evs, err := f.turn(t, wire, "what is next? plan my week")
			if err != nil {
				t.Fatal(err)
			}
			if want := "Your next task is [Draft brief](ensemble://task/" + task.ID + ")."; r.Text != want {
				t.Fatalf("reply %q, want %q", r.Text, want)
			}
			if evs[1].Type != "refs" || len(evs[1].Refs) != 0 {
				t.Fatalf("second event %+v", evs[1])
			}
			if refs := r.Tools[0].Refs; len(refs) != 1 || refs[0].ID != task.ID || refs[0].Title != "Draft brief" {
				t.Fatalf("the list's refs %+v", refs)
			}
			req := f.srv.Requests()[0]
			msg := req.LastUserText()
			if !strings.HasPrefix(msg, "<context>\nToday is ") || !strings.Contains(msg, "time zone") ||
				!strings.Contains(msg, `<guide name="week">`) || !strings.HasSuffix(msg, "</context>\n\nwhat is next? plan my week") {
				t.Fatalf("message sent %q", msg)
			}
			var shown []string
			for _, tl := range req.Tools {
				shown = append(shown, tl.Name)
			}
			if !strings.Contains(strings.Join(shown, ","), "hub_list_people") || strings.Contains(strings.Join(shown, ","), "hub_delete_tasks") {
				t.Fatalf("tools shown %v", shown)
			}
			if !strings.Contains(req.System, "hub_how_to") || !strings.Contains(req.System, "- triage: ") {
				t.Fatalf("system names no playbooks: %q", req.System)
			}
			c, _ := f.svc.Conversation(ctx, r.ConversationID)
			if c.Messages[0].Text != "what is next? plan my week" {
				t.Fatalf("saved %q", c.Messages[0].Text)
			}

			// The next turn knows the record from the earlier call, and keeps an id asked for.
			f.srv.Script(enginetest.Say("Its id is " + task.ID + "."))
			var refs []tools.Ref
			r2, err := f.svc.Turn(ctx, TurnRequest{ConversationID: r.ConversationID, Text: "what is its id?", Provider: wire, Model: "m"}, func(e Event) {
				if e.Type == "refs" {
					refs = e.Refs
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(refs) != 1 || refs[0].ID != task.ID || refs[0].Title != "Draft brief" {
				t.Fatalf("refs %+v", refs)
			}
			if r2.Text != "Its id is "+task.ID+"." {
				t.Fatalf("reply %q", r2.Text)
			}
		})
	}
}

// A record the message links is known by its current title.
func TestTurnRefsFromMessageLinks(t *testing.T) {
	f := newFixture(t, "anthropic", time.Minute)
	ctx := context.Background()
	page, err := f.rec.Pages().Create(ctx, testActor, records.PageInput{Title: records.Some("Launch notes")})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Script(enginetest.Say("Read it."))
	_, evs, err := f.turn(t, "anthropic", "summarise [this](ensemble://page/"+page.ID+")")
	if err != nil {
		t.Fatal(err)
	}
	if evs[1].Type != "refs" || len(evs[1].Refs) != 1 || evs[1].Refs[0] != (tools.Ref{Kind: "page", ID: page.ID, Title: "Launch notes"}) {
		t.Fatalf("refs event %+v", evs[1])
	}
	if msg := f.srv.Requests()[0].LastUserText(); !strings.Contains(msg, `<guide name="write-page">`) {
		t.Fatalf("a linked page did not load write-page: %q", msg)
	}
}

// hub_how_to loads a playbook: its guide for the model and its tools for the rest of the turn.
func TestHowToLoadsAPlaybook(t *testing.T) {
	f := newFixture(t, "openai", time.Minute)
	f.srv.Script(
		enginetest.ToolCall("hub_how_to", map[string]any{"name": "triage"}),
		enginetest.Say("Done."),
	)
	if _, _, err := f.turn(t, "openai", "hello"); err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.Requests()
	has := func(r enginetest.Request, name string) bool {
		for _, tl := range r.Tools {
			if tl.Name == name {
				return true
			}
		}
		return false
	}
	if has(reqs[0], "hub_delete_tasks") || !has(reqs[1], "hub_delete_tasks") {
		t.Fatal("hub_how_to triage did not add hub_delete_tasks for the next request")
	}
	if tr, _ := reqs[1].LastToolResult(); !strings.Contains(tr.Content, "Triaging a list") || tr.IsError {
		t.Fatalf("tool result %+v", tr)
	}
}

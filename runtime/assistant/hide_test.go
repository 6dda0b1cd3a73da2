package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/skills"
)

// kept are the values of secrets kept on this computer, by name, each from a source a model
// request is built from: the person's message, a record's title (in a write's receipt), a skill's
// title (in the instructions) and a page's body (in a tool's result).
var kept = map[string]string{
	"TYPED": "Zq8-typed-canary-1a2b",
	"TITLE": "Zq8-title-canary-3c4d",
	"SKILL": "Zq8-skill-canary-5e6f",
	"TOOL":  "Zq8-tool-canary-7a8b",
}

// hideKept hides kept as the runtime's Redactor would.
func hideKept(s string) string {
	for name, v := range kept {
		s = strings.ReplaceAll(s, v, "[secret "+name+"]")
	}
	return s
}

// leaks names the kept values text holds.
func leaks(text string) []string {
	var out []string
	for name, v := range kept {
		if strings.Contains(text, v) {
			out = append(out, name)
		}
	}
	return out
}

// keptScene saves a task titled with a secret, a skill titled with one and a page whose body holds
// one, and returns the ids of the task and the page.
func keptScene(t *testing.T, f *fixture) (taskID, pageID string) {
	t.Helper()
	ctx := context.Background()
	task, err := f.rec.Tasks().Create(ctx, byPerson, records.TaskInput{Title: records.Some("Rotate " + kept["TITLE"])})
	if err != nil {
		t.Fatal(err)
	}
	page, err := f.rec.Pages().Create(ctx, byPerson, records.PageInput{Title: records.Some("Deploy notes"),
		Body: records.Some("The token is " + kept["TOOL"] + ".")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.PutSkill(ctx, "deploys", skills.Input{Title: "Deploy with " + kept["SKILL"], Body: "Read the notes first."}); err != nil {
		t.Fatal(err)
	}
	return task.ID, page.ID
}

// firstMessage is turn 1's message, holding the typed secret.
var firstMessage = "my token is " + kept["TYPED"] + "; read the deploy notes and mark the rotate task done"

// TestKeptSecretsNeverReachTheModel: a secret typed in a message, a record titled with one, a skill
// titled with one and a tool result holding one are hidden in every request the model is sent, in
// that turn and the next; what each source says still reaches the model, hidden.
func TestKeptSecretsNeverReachTheModel(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			f := newFixture(t, wire, time.Minute)
			f.svc.cfg.Hide = hideKept
			taskID, pageID := keptScene(t, f)
			f.srv.Script(
				enginetest.ToolCall("hub_read_page", map[string]any{"id": pageID}),
				enginetest.ToolCall("hub_update_task", map[string]any{"id": taskID, "status": "done"}),
				enginetest.Say("Done."),
				enginetest.Say("Still done."),
			)
			r, _, err := f.turn(t, wire, firstMessage)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.svc.Turn(context.Background(), TurnRequest{ConversationID: r.ConversationID, Text: "and now?", Provider: wire, Model: "Test Model"}, nil); err != nil {
				t.Fatal(err)
			}
			reqs := f.srv.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d model requests, want 4", len(reqs))
			}
			for i, req := range reqs {
				b, _ := json.Marshal(req)
				if l := leaks(string(b)); len(l) > 0 {
					t.Errorf("model request %d holds %v", i+1, l)
				}
			}
			if tr, _ := reqs[1].LastToolResult(); !strings.Contains(tr.Content, "[secret TOOL]") {
				t.Errorf("the page's text did not reach the model, hidden: %q", tr.Content)
			}
			later, _ := json.Marshal(reqs[3].Messages)
			for _, want := range []string{"my token is [secret TYPED]", "Rotate [secret TITLE]"} {
				if !strings.Contains(string(later), want) {
					t.Errorf("the next turn's history does not say %q: %s", want, later)
				}
			}
			if !strings.Contains(reqs[3].System, "Deploy with [secret SKILL]") {
				t.Errorf("the instructions do not name the skill, hidden: %q", reqs[3].System)
			}
			for _, row := range r.Tools {
				if l := leaks(row.Summary); len(l) > 0 {
					t.Errorf("tool row %s shows %v: %q", row.Name, l, row.Summary)
				}
			}
		})
	}
}

// TestKeptSecretsNeverReachThePlansAgent: on a plan, the agent's instructions, its prompt (the
// conversation so far, for a new session), the turn's tool list and every tool result hide the kept
// values.
func TestKeptSecretsNeverReachThePlansAgent(t *testing.T) {
	var mu sync.Mutex
	var seen []string // what the agent got over MCP
	var ids struct{ task, page string }
	agent := &standInAgent{act: func(ctx context.Context, spec engines.Spec, host engines.Host, cs *mcp.ClientSession) (engines.Result, error) {
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			return engines.Result{}, err
		}
		b, _ := json.Marshal(tools)
		got := []string{string(b)}
		if !strings.Contains(spec.Prompt, "Earlier in this conversation") {
			for _, c := range []struct {
				name string
				args map[string]any
			}{{"hub_read_page", map[string]any{"id": ids.page}}, {"hub_update_task", map[string]any{"id": ids.task, "status": "done"}}} {
				out, isErr, err := callTool(ctx, cs, c.name, c.args)
				if err != nil || isErr {
					return engines.Result{}, fmt.Errorf("%s: %s %v", c.name, out, err)
				}
				got = append(got, out)
			}
		}
		mu.Lock()
		seen = append(seen, got...)
		mu.Unlock()
		say(host, "Done.")
		return engines.Result{Turns: 1}, nil // no session kept: the next message gets the transcript
	}}
	f := planFixture(t, agent, time.Minute)
	f.svc.cfg.Hide = hideKept
	ids.task, ids.page = keptScene(t, f)
	r, err := f.planTurn(t, "", firstMessage, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.planTurn(t, r.ConversationID, "and now?", ""); err != nil {
		t.Fatal(err)
	}
	specs := agent.started()
	if len(specs) != 2 {
		t.Fatalf("the agent started %d times, want 2", len(specs))
	}
	for i, spec := range specs {
		if l := leaks(spec.System + spec.Prompt); len(l) > 0 {
			t.Errorf("start %d: the agent's instructions or prompt hold %v", i+1, l)
		}
	}
	for i, s := range seen {
		if l := leaks(s); len(l) > 0 {
			t.Errorf("MCP answer %d holds %v: %.300s", i+1, l, s)
		}
	}
	if len(seen) < 3 || !strings.Contains(seen[1], "[secret TOOL]") {
		t.Errorf("the page's text did not reach the agent, hidden: %q", seen)
	}
	if !strings.Contains(specs[1].Prompt, "my token is [secret TYPED]") || !strings.Contains(specs[1].Prompt, "Rotate [secret TITLE]") {
		t.Errorf("the second start's transcript: %q", specs[1].Prompt)
	}
	if !strings.Contains(specs[1].System, "Deploy with [secret SKILL]") {
		t.Errorf("the instructions do not name the skill, hidden: %q", specs[1].System)
	}
}

package assistant

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/models"
)

// lastMessage is the conversation's newest message.
func (f *fixture) lastMessage(t *testing.T, conv string) Message {
	t.Helper()
	c, err := f.svc.Conversation(context.Background(), conv)
	if err != nil || len(c.Messages) == 0 {
		t.Fatalf("conversation %s: %+v, %v", conv, c, err)
	}
	return c.Messages[len(c.Messages)-1]
}

// TestCutOffReplyIsKeptAndSaid: a model stream that breaks off after a write landed keeps the write
// and the text that came, says it was cut off (to the person, in the saved conversation), and the
// next turn's history tells the model its answer there did not finish.
func TestCutOffReplyIsKeptAndSaid(t *testing.T) {
	for _, wire := range wires {
		for _, brk := range []string{enginetest.BreakDrop, enginetest.BreakEnd} {
			t.Run(wire+"/"+brk, func(t *testing.T) {
				f := newFixture(t, wire, time.Minute)
				cut := enginetest.Say("Added it. Next, the second half of")
				cut.BreakOff = brk
				f.srv.Script(enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Book flights"}}}), cut)
				r, evs, err := f.turn(t, wire, "add a task and tell me about it")
				var ce *models.CutOffError
				if !errors.As(err, &ce) || !ce.Partial || ce.Model != "Test Model" {
					t.Fatalf("err = %v, want a cut-off reply", err)
				}
				var streamed strings.Builder
				for _, e := range evs {
					if e.Type == "done" {
						t.Error("a cut-off turn ended with done")
					}
					streamed.WriteString(e.Text)
				}
				if !strings.Contains(streamed.String(), "Added it. Next, the second half of") || r.Text != streamed.String() {
					t.Errorf("streamed %q, reply %q", streamed.String(), r.Text)
				}
				if n := f.count(t, "SELECT count(*) FROM tasks WHERE title = 'Book flights'"); n != 1 {
					t.Fatalf("%d tasks: the write before the break must stand", n)
				}
				m := f.lastMessage(t, r.ConversationID)
				want := "Added it. Next, the second half of\n\nThe connection to Test Model broke off before the answer was finished, so it is cut short: the part above is all that arrived. Ask again for the whole answer."
				if !m.Error || !m.CutOff || m.Text != want || len(m.Tools) != 1 || m.Tools[0].Status != "done" {
					t.Fatalf("saved %+v, want text %q", m, want)
				}

				f.srv.Script(enginetest.Say("Here is the rest."))
				if _, err := f.svc.Turn(context.Background(), TurnRequest{ConversationID: r.ConversationID, Text: "go on", Provider: wire, Model: "Test Model"}, nil); err != nil {
					t.Fatal(err)
				}
				reqs := f.srv.Requests()
				last := reqs[len(reqs)-1]
				var hist string
				for _, msg := range last.Messages {
					for _, b := range msg.Blocks {
						if msg.Role == "assistant" && b.Type == "text" {
							hist += b.Text
						}
					}
				}
				if !strings.Contains(hist, "Added it. Next, the second half of") || !strings.Contains(hist, cutOffNote) || !strings.Contains(hist, "Added 1 task: “Book flights”.") {
					t.Errorf("the next turn's history of the cut reply: %q", hist)
				}
			})
		}
	}
}

// TestCutOffCallsAreNotRun: a tool call in a reply that broke off is not made, and a break before
// any text says so.
func TestCutOffCallsAreNotRun(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			f := newFixture(t, wire, time.Minute)
			f.srv.Script(enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Never"}}}).EndEarly())
			r, _, err := f.turn(t, wire, "add a task")
			if !models.IsCutOff(err) || err.Error() != "The connection to Test Model broke off before any answer arrived. Ask again." {
				t.Fatalf("err = %v", err)
			}
			if n := f.count(t, "SELECT count(*) FROM tasks"); n != 0 || len(r.Tools) != 0 {
				t.Fatalf("%d tasks, rows %+v: a call of a reply that broke off ran", n, r.Tools)
			}
			if m := f.lastMessage(t, r.ConversationID); !m.CutOff || m.Text != err.Error() {
				t.Errorf("saved %+v", m)
			}
		})
	}
}

// TestPlanTurnCutOff: an agent whose connection to its model broke off (it says so in its result,
// whether it failed the run or took the part as whole) ends the turn cut off, keeps what came,
// and the resumed session is told at the next message.
func TestPlanTurnCutOff(t *testing.T) {
	agent := &standInAgent{act: func(ctx context.Context, spec engines.Spec, host engines.Host, cs *mcp.ClientSession) (engines.Result, error) {
		if spec.Resume != "" {
			say(host, "Here is all of it.")
			return engines.Result{SessionID: spec.Resume}, nil
		}
		host.Event(engines.Event{Kind: engines.EventDelta, Text: "The first half"})
		return engines.Result{SessionID: "sess-cut", Summary: "The first half", CutOff: true}, nil
	}}
	f := planFixture(t, agent, time.Minute)
	r, err := f.planTurn(t, "", "tell me everything", "")
	want := "The connection between Claude Code and its model broke off before the answer was finished, so it is cut short: the part above is all that arrived. Ask again for the whole answer."
	if !models.IsCutOff(err) || err.Error() != want || r.Text != "The first half" {
		t.Fatalf("reply %q, err %v", r.Text, err)
	}
	if m := f.lastMessage(t, r.ConversationID); !m.CutOff || m.Text != "The first half\n\n"+want {
		t.Fatalf("saved %+v", m)
	}
	if _, err := f.planTurn(t, r.ConversationID, "go on", ""); err != nil {
		t.Fatal(err)
	}
	second := agent.started()[1]
	if second.Resume != "sess-cut" || !strings.HasPrefix(second.Prompt, "Your last answer in this conversation was cut off before it finished") ||
		!strings.Contains(second.Prompt, "The first half") || !strings.HasSuffix(second.Prompt, "go on") {
		t.Errorf("the resumed session was prompted %q", second.Prompt)
	}
}

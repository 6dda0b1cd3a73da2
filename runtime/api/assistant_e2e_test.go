package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

// e2e is the runtime's API with its assistant and Needs me, over a scripted model reached the way
// each provider is: Anthropic's Messages API, OpenAI's own API (Responses), an OpenAI-compatible
// server at a base URL (Chat Completions) and Ollama (its OpenAI-compatible API).
type e2e struct {
	srv   *httptest.Server
	tok   LaunchToken
	model *enginetest.Server
	rec   *records.Service
	st    *store.Store
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	w := ledger.New(st, bus)
	rec := records.New(st, w)
	nd := needs.New(st, w)
	model := enginetest.NewServer(t)
	svc := assistant.New(assistant.Config{Records: rec, Store: st, Writer: w, Needs: nd, Timeout: time.Minute,
		Providers: func(p, base string) (models.Provider, error) {
			switch {
			case p == "openai" && base == "":
				return models.NewResponses("test", model.URL, time.Minute), nil // as OpenAI's own
			case p == "ollama":
				return models.Source{}.Provider("ollama", base)
			}
			return models.Source{Getenv: func(k string) string { return "test-key" }}.Provider(p, base)
		}})
	tok := NewLaunchToken()
	a := New(Options{Version: "test", Token: tok, Keepalive: time.Minute, Assistant: svc, Needs: nd},
		slog.New(slog.NewTextHandler(io.Discard, nil)), st, bus, rec)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); svc.Close(context.Background()); bus.Close(); st.Close() })
	return &e2e{srv: srv, tok: tok, model: model, rec: rec, st: st}
}

// call sends one JSON request and decodes the answer into out (when not nil).
func (e *e2e) call(t *testing.T, method, path, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.tok.Reveal())
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil && err != io.EOF {
			t.Fatalf("%s %s: decode: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

// providerTurns are the fields of a turn request that reach each provider's wire at the scripted
// model.
func providerTurns(modelURL string) map[string]string {
	return map[string]string{
		"anthropic":         `"provider":"anthropic","baseUrl":"` + modelURL + `"`,
		"openai":            `"provider":"openai"`,
		"openai-compatible": `"provider":"openai","baseUrl":"` + modelURL + `/v1"`,
		"ollama":            `"provider":"ollama","baseUrl":"` + modelURL + `/v1"`,
	}
}

// TestAssistantTurnCutOffOverHTTP: for each provider, a model stream that breaks off (the
// connection dropped, or the body ended early) after a write landed ends the turn's stream with an
// error event of kind cutoff, keeps the text that came in the stream and the saved conversation,
// and the next turn's model request says the answer was cut off.
func TestAssistantTurnCutOffOverHTTP(t *testing.T) {
	for _, brk := range []string{enginetest.BreakDrop, enginetest.BreakEnd} {
		for name := range providerTurns("") {
			t.Run(name+"/"+brk, func(t *testing.T) {
				e := newE2E(t)
				fields := providerTurns(e.model.URL)[name]
				cut := enginetest.Say("Added it. The rest of the answer")
				cut.BreakOff = brk
				e.model.Script(enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Book flights"}}}), cut)
				_, frames := postTurn(t, e.srv, e.tok, `{"text":"add a task and say more","model":"Test Model",`+fields+`}`)
				if len(frames) == 0 {
					t.Fatal("no stream")
				}
				var text strings.Builder
				var kinds []string
				for _, f := range frames {
					kinds = append(kinds, f.Event)
					if f.Event == "text" {
						text.WriteString(f.Data["text"].(string))
					}
				}
				last := frames[len(frames)-1]
				sentence := "The connection to Test Model broke off before the answer was finished, so it is cut short: the part above is all that arrived. Ask again for the whole answer."
				if last.Event != "error" || last.Data["kind"] != "cutoff" || last.Data["error"] != sentence {
					t.Fatalf("events %v, last %+v", kinds, last)
				}
				if !strings.Contains(text.String(), "Added it. The rest of the answer") {
					t.Errorf("streamed %q", text.String())
				}
				conv := frames[0].Data["conversationId"].(string)
				var c assistant.Conversation
				if code := e.call(t, "GET", "/api/assistant/conversations/"+conv, "", &c); code != 200 || len(c.Messages) != 2 {
					t.Fatalf("conversation: %d %+v", code, c)
				}
				m := c.Messages[1]
				if !m.CutOff || !m.Error || m.Text != "Added it. The rest of the answer\n\n"+sentence || len(m.Tools) != 1 || m.Tools[0].Status != "done" {
					t.Fatalf("saved %+v", m)
				}
				if tasks, _ := e.rec.ListTasks(context.Background(), records.TaskFilter{}); len(tasks) != 1 {
					t.Errorf("%d tasks: the write before the break must stand", len(tasks))
				}

				e.model.Script(enginetest.Say("Here is the rest."))
				_, frames = postTurn(t, e.srv, e.tok, `{"conversationId":"`+conv+`","text":"go on","model":"Test Model",`+fields+`}`)
				if last := frames[len(frames)-1]; last.Event != "done" {
					t.Fatalf("the next turn ended %+v", last)
				}
				reqs := e.model.Requests()
				var hist string
				for _, msg := range reqs[len(reqs)-1].Messages {
					for _, b := range msg.Blocks {
						if msg.Role == "assistant" && b.Type == "text" {
							hist += b.Text
						}
					}
				}
				if !strings.Contains(hist, "Added it. The rest of the answer") || !strings.Contains(hist, "This answer was cut off") {
					t.Errorf("the next turn's history of the cut reply: %q", hist)
				}
			})
		}
	}
}

// TestAssistantNeedsMeOverHTTP: under the needs-me policy a held write (a plain one, and a
// workflow, which always waits) is on Needs me; answered there, Apply in the chat is refused as
// settled; applied in the chat, the answer on Needs me is refused as settled; either way it
// lands once and the card leaves Needs me.
func TestAssistantNeedsMeOverHTTP(t *testing.T) {
	calls := map[string]enginetest.Step{
		"a write": enginetest.ToolCall("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Book flights"}}}),
		"a workflow": enginetest.ToolCall("hub_run_workflow", map[string]any{"title": "Trip", "steps": []map[string]any{
			{"id": "proj", "tool": "hub_create_project", "input": map[string]any{"name": "Trip"}},
			{"id": "task", "tool": "hub_create_tasks", "input": map[string]any{"tasks": []any{map[string]any{"title": "Book flights"}}}}}}),
	}
	for what, call := range calls {
		for _, first := range []string{"Needs me", "the chat"} {
			t.Run(what+", answered first in "+first, func(t *testing.T) {
				e := newE2E(t)
				if code := e.call(t, "PUT", "/api/assistant/settings", `{"writePolicy":"needs-me"}`, nil); code != 200 {
					t.Fatalf("settings: %d", code)
				}
				e.model.Script(call, enginetest.Say("It waits for you."))
				_, frames := postTurn(t, e.srv, e.tok, `{"text":"book the trip","model":"Test Model","provider":"anthropic","baseUrl":"`+e.model.URL+`"}`)
				reply := frames[len(frames)-1].Data["reply"].(map[string]any)
				row := reply["tools"].([]any)[0].(map[string]any)
				proposal, _ := row["proposalId"].(string)
				if row["status"] != "waiting" || proposal == "" {
					t.Fatalf("row %+v", row)
				}
				var list struct{ Needs []needs.Decision }
				if code := e.call(t, "GET", "/api/needs", "", &list); code != 200 || len(list.Needs) != 1 || !strings.Contains(list.Needs[0].Question, "Book flights") {
					t.Fatalf("Needs me: %d %+v", code, list)
				}
				decision := list.Needs[0].ID
				tasks := func() int {
					ts, _ := e.rec.ListTasks(context.Background(), records.TaskFilter{})
					return len(ts)
				}
				var refused struct{ Error string }
				switch first {
				case "Needs me":
					var d needs.Decision
					if code := e.call(t, "POST", "/api/needs/"+decision+"/answer", `{"option":0}`, &d); code != 200 || d.Status != needs.Answered {
						t.Fatalf("answer: %d %+v", code, d)
					}
					if code := e.call(t, "POST", "/api/assistant/proposals/"+proposal+"/apply", `{}`, &refused); code != http.StatusConflict ||
						!strings.Contains(refused.Error, "was already answered on Needs me by you at the command line at ") {
						t.Fatalf("Apply after the answer on Needs me: %d %q", code, refused.Error)
					}
					waitForCond(t, "the answer on Needs me applied", func() bool { return tasks() == 1 })
				case "the chat":
					if code := e.call(t, "POST", "/api/assistant/proposals/"+proposal+"/apply", `{}`, nil); code != 200 || tasks() != 1 {
						t.Fatalf("Apply: %d, %d tasks", code, tasks())
					}
					if code := e.call(t, "POST", "/api/needs/"+decision+"/answer", `{"option":1}`, &refused); code != http.StatusConflict ||
						!strings.HasPrefix(refused.Error, "Already answered by you in the assistant's chat at ") || !strings.HasSuffix(refused.Error, ": “Apply”.") {
						t.Fatalf("the answer on Needs me after Apply: %d %q", code, refused.Error)
					}
				}
				list.Needs = nil
				if code := e.call(t, "GET", "/api/needs", "", &list); code != 200 || len(list.Needs) != 0 {
					t.Errorf("still on Needs me: %+v", list.Needs)
				}
				var c assistant.Conversation
				e.call(t, "GET", "/api/assistant/conversations/"+reply["conversationId"].(string), "", &c)
				if got := c.Messages[1].Tools[0]; got.Status != "done" || tasks() != 1 {
					t.Errorf("the held write stands as %+v with %d tasks", got, tasks())
				}
			})
		}
	}
}

// waitForCond waits until cond holds, failing past a generous bound; it asserts nothing about how
// long it took.
func waitForCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting: %s", what)
		}
	}
}

package models

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

func providers(url string, timeout time.Duration) map[string]Provider {
	return map[string]Provider{
		"anthropic": NewAnthropic("test-key", url, timeout),
		"openai":    NewOpenAI("test-key", url, timeout),
		"responses": NewResponses("test-key", url, timeout),
	}
}

var tool = Tool{Name: "hub_list_tasks", Description: "List tasks.",
	Schema: json.RawMessage(`{"type":"object","properties":{"status":{"type":"string"}},"required":["status"]}`)}

func TestStreamTextAndToolCalls(t *testing.T) {
	for name := range providers("", 0) {
		t.Run(name, func(t *testing.T) {
			s := enginetest.NewServer(t)
			p := providers(s.URL, time.Minute)[name]
			s.Script(
				enginetest.Say("Let me look.").Call("hub_list_tasks", map[string]any{"status": "todo"}),
				enginetest.Say("You have no tasks."),
			)
			req := Request{Model: "test-model", System: "Be brief.", Tools: []Tool{tool},
				Messages: []Message{{Role: "user", Text: "What is on my list?"}}}
			var deltas strings.Builder
			r, err := p.Stream(context.Background(), req, func(s string) { deltas.WriteString(s) })
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != "Let me look." || deltas.String() != r.Text {
				t.Fatalf("text %q, deltas %q", r.Text, deltas.String())
			}
			if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "hub_list_tasks" || r.ToolCalls[0].ID == "" {
				t.Fatalf("calls %+v", r.ToolCalls)
			}
			var in map[string]any
			if err := json.Unmarshal(r.ToolCalls[0].Input, &in); err != nil || in["status"] != "todo" {
				t.Fatalf("input %s", r.ToolCalls[0].Input)
			}
			req.Messages = append(req.Messages,
				Message{Role: "assistant", Text: r.Text, ToolCalls: r.ToolCalls},
				Message{Role: "user", ToolResults: []ToolResult{{CallID: r.ToolCalls[0].ID, Name: "hub_list_tasks", Content: "No tasks."}}})
			req.ToolsOff = true
			r, err = p.Stream(context.Background(), req, nil)
			if err != nil || r.Text != "You have no tasks." {
				t.Fatalf("second: %q %v", r.Text, err)
			}
			reqs := s.Requests()
			last := reqs[len(reqs)-1]
			if last.System != "Be brief." || len(last.Tools) != 1 || last.Tools[0].Name != "hub_list_tasks" {
				t.Fatalf("request system %q tools %+v", last.System, last.Tools)
			}
			tr, ok := s.LastToolResult()
			if !ok || !strings.Contains(tr.Content, "No tasks.") {
				t.Fatalf("tool result %+v %v", tr, ok)
			}
		})
	}
}

func TestTimeoutNamesModelAndLimit(t *testing.T) {
	for name := range providers("", 0) {
		t.Run(name, func(t *testing.T) {
			s := enginetest.NewServer(t)
			s.Script(enginetest.Hang())
			p := providers(s.URL, 300*time.Millisecond)[name]
			start := time.Now()
			_, err := p.Stream(context.Background(), Request{Model: "Slow Model", Messages: []Message{{Role: "user", Text: "hi"}}}, nil)
			if !IsTimeout(err) {
				t.Fatalf("err %v", err)
			}
			if time.Since(start) > 10*time.Second {
				t.Fatal("waited too long")
			}
			want := "Slow Model did not answer within 300 milliseconds, so I stopped waiting. Ask again, or try a narrower question."
			if err.Error() != want {
				t.Fatalf("got %q", err.Error())
			}
		})
	}
}

func TestSpan(t *testing.T) {
	for d, want := range map[time.Duration]string{15 * time.Minute: "15 minutes", time.Minute: "1 minute", 20 * time.Second: "20 seconds", 90 * time.Second: "90 seconds"} {
		if got := Span(d); got != want {
			t.Errorf("Span(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestStreamCutOff checks every provider against a reply that breaks off before its wire format's
// end marker, by a dropped connection or a body that ends early: the text that arrived is kept and
// was streamed, no tool call of the unfinished reply is returned, and the error says it was cut off.
func TestStreamCutOff(t *testing.T) {
	all := func(url string) map[string]Provider {
		ps := providers(url, time.Minute)
		ollama, err := Source{Getenv: func(string) string { return "" }}.Provider("ollama", url+"/v1")
		if err != nil {
			t.Fatal(err)
		}
		ps["ollama"] = ollama
		return ps
	}
	cases := []struct {
		name    string
		step    enginetest.Step
		text    string // what arrived
		partial bool
	}{
		{"text, connection dropped", enginetest.Say("The first half of the answer").DropConnection(), "The first half of the answer", true},
		{"text, body ended early", enginetest.Say("The first half of the answer").EndEarly(), "The first half of the answer", true},
		{"text and a call, dropped", enginetest.Say("Let me look.").Call("hub_list_tasks", map[string]any{"status": "todo"}).DropConnection(), "Let me look.", true},
		{"a call alone, ended early", enginetest.ToolCall("hub_list_tasks", map[string]any{"status": "todo"}).EndEarly(), "", false},
		{"nothing, dropped", enginetest.Step{}.DropConnection(), "", false},
	}
	for name := range all("") {
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				s := enginetest.NewServer(t)
				s.Script(c.step)
				p := all(s.URL)[name]
				var deltas strings.Builder
				r, err := p.Stream(context.Background(), Request{Model: "test-model", Tools: []Tool{tool},
					Messages: []Message{{Role: "user", Text: "What is on my list?"}}}, func(s string) { deltas.WriteString(s) })
				var ce *CutOffError
				if !errors.As(err, &ce) {
					t.Fatalf("err = %v, want a cut-off reply", err)
				}
				if ce.Model != "test-model" || ce.Partial != c.partial {
					t.Errorf("cut-off error %+v, want model test-model, partial %v", ce, c.partial)
				}
				if r.Text != c.text || deltas.String() != c.text {
					t.Errorf("text %q, streamed %q, want %q", r.Text, deltas.String(), c.text)
				}
				if len(r.ToolCalls) != 0 {
					t.Errorf("a reply that broke off returned calls %+v", r.ToolCalls)
				}
				if !strings.Contains(err.Error(), "test-model broke off before") {
					t.Errorf("sentence %q", err.Error())
				}
			})
		}
	}
}

// TestStreamFailureIsNotCutOff checks that what is not a broken-off stream is not called one: a
// failure the provider reports, and a provider no one answers at.
func TestStreamFailureIsNotCutOff(t *testing.T) {
	for name := range providers("", 0) {
		t.Run(name, func(t *testing.T) {
			s := enginetest.NewServer(t)
			s.Script(enginetest.Fail(400, "model not found (scripted)"))
			_, err := providers(s.URL, time.Minute)[name].Stream(context.Background(), Request{Model: "m", Messages: []Message{{Role: "user", Text: "hi"}}}, nil)
			if err == nil || IsCutOff(err) {
				t.Errorf("a reported failure: %v", err)
			}
			s.Close()
			_, err = providers(s.URL, time.Minute)[name].Stream(context.Background(), Request{Model: "m", Messages: []Message{{Role: "user", Text: "hi"}}}, nil)
			if err == nil || IsCutOff(err) {
				t.Errorf("no server: %v", err)
			}
		})
	}
}

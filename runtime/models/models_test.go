package models

import (
	"context"
	"encoding/json"
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

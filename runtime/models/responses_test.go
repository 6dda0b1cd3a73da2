package models

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// body decodes a recorded request's body.
func body(t *testing.T, r enginetest.Request) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
	return m
}

func TestResponsesRequest(t *testing.T) {
	s := enginetest.NewServer(t)
	s.Script(enginetest.Say("Done."))
	closed := Tool{Name: "hub_get_task", Schema: json.RawMessage(
		`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`)}
	open := Tool{Name: "hub_list_tasks", Schema: json.RawMessage(
		`{"type":"object","properties":{"status":{"type":"string"},"limit":{"type":"integer"}},"required":["status"],"additionalProperties":false}`)}
	var deltas strings.Builder
	r, err := NewResponses("test-key", s.URL, time.Minute).Stream(context.Background(), Request{
		Model: "gpt-5", System: "Be brief.", Effort: "high", Tools: []Tool{closed, open},
		Messages: []Message{{Role: "user", Text: "hi"}},
	}, func(d string) { deltas.WriteString(d) })
	if err != nil || r.Text != "Done." || deltas.String() != "Done." {
		t.Fatalf("got %q (deltas %q), %v", r.Text, deltas.String(), err)
	}
	if r.Usage.InputTokens == 0 || r.Usage.OutputTokens == 0 {
		t.Fatalf("usage %+v", r.Usage)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].API != enginetest.Responses || reqs[0].System != "Be brief." || !reqs[0].Stream {
		t.Fatalf("requests %+v", reqs)
	}
	b := body(t, reqs[0])
	if got := b["reasoning"].(map[string]any)["effort"]; got != "high" {
		t.Errorf("reasoning.effort %v, want high", got)
	}
	if b["store"] != false {
		t.Errorf("store %v, want false", b["store"])
	}
	// Tools go non-strict (spec 000 §4), so optional properties stay optional.
	tools := b["tools"].([]any)
	for i := range tools {
		if got := tools[i].(map[string]any)["strict"]; got != false {
			t.Errorf("tool %d strict %v, want false", i, got)
		}
	}
}

func TestResponsesNoEffortSendsNoReasoning(t *testing.T) {
	s := enginetest.NewServer(t)
	s.Script(enginetest.Say("Hi."))
	if _, err := NewResponses("k", s.URL, time.Minute).Stream(context.Background(),
		Request{Model: "gpt-4.1", Messages: []Message{{Role: "user", Text: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := body(t, s.Requests()[0])["reasoning"]; ok {
		t.Fatal("reasoning sent without an effort")
	}
}

// A failure inside the stream (response.failed, or an error event) is the call's error, with
// OpenAI's words.
func TestResponsesFailureInStream(t *testing.T) {
	for name, events := range map[string]string{
		"failed": `event: response.failed
data: {"type":"response.failed","sequence_number":1,"response":{"id":"resp_1","status":"failed","output":[],"error":{"code":"server_error","message":"The model broke."},"usage":{"input_tokens":3,"output_tokens":1,"total_tokens":4}}}

`,
		"error": `event: error
data: {"type":"error","sequence_number":1,"code":"server_error","message":"The model broke.","param":null}

`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":0,\"delta\":\"Half\"}\n\n")
				io.WriteString(w, events)
			}))
			t.Cleanup(srv.Close)
			r, err := NewResponses("k", srv.URL, time.Minute).Stream(context.Background(),
				Request{Model: "gpt-5", Messages: []Message{{Role: "user", Text: "hi"}}}, nil)
			if err == nil || !strings.Contains(err.Error(), "The model broke.") || r.Text != "Half" {
				t.Fatalf("got %q, %v", r.Text, err)
			}
		})
	}
}

func TestAnthropicEffort(t *testing.T) {
	for _, tc := range []struct {
		model, effort string
		budget        float64 // thinking budget_tokens, 0 for none
		outputEffort  string
	}{
		{"claude-sonnet-4-5-20250929", "medium", 4096, ""},
		{"claude-3-7-sonnet-latest", "high", 16384, ""},
		{"claude-opus-4-6", "max", 0, "max"},
		{"claude-opus-4-5", "low", 0, "low"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			s := enginetest.NewServer(t)
			s.Script(enginetest.Say("ok"))
			if _, err := NewAnthropic("k", s.URL, time.Minute).Stream(context.Background(),
				Request{Model: tc.model, Effort: tc.effort, Messages: []Message{{Role: "user", Text: "hi"}}}, nil); err != nil {
				t.Fatal(err)
			}
			b := body(t, s.Requests()[0])
			th, _ := b["thinking"].(map[string]any)
			oc, _ := b["output_config"].(map[string]any)
			switch {
			case tc.budget > 0:
				if th["type"] != "enabled" || th["budget_tokens"] != tc.budget || b["max_tokens"] != 8192+tc.budget || oc != nil {
					t.Fatalf("thinking %v max_tokens %v output_config %v", th, b["max_tokens"], oc)
				}
			default:
				if th != nil || oc["effort"] != tc.outputEffort {
					t.Fatalf("thinking %v output_config %v", th, oc)
				}
			}
		})
	}
}

// With thinking on, Anthropic wants a tool call's signed thinking back with it.
func TestAnthropicThinkingGoesBackWithItsCall(t *testing.T) {
	s := enginetest.NewServer(t)
	s.Script(enginetest.Think("The list tool.", "Looking.").Call("hub_list_tasks", map[string]any{"status": "todo"}),
		enginetest.Say("None."))
	p := NewAnthropic("k", s.URL, time.Minute)
	req := Request{Model: "claude-sonnet-4-5", Effort: "low", Tools: []Tool{tool}, Messages: []Message{{Role: "user", Text: "list"}}}
	r, err := p.Stream(context.Background(), req, nil)
	if err != nil || len(r.ToolCalls) != 1 || len(r.ToolCalls[0].Thoughts) != 1 || r.ToolCalls[0].Thoughts[0].Signature == "" {
		t.Fatalf("calls %+v %v", r.ToolCalls, err)
	}
	if r.Text != "Looking." {
		t.Fatalf("text %q: thinking is not the reply", r.Text)
	}
	req.Messages = append(req.Messages, Message{Role: "assistant", Text: r.Text, ToolCalls: r.ToolCalls},
		Message{Role: "user", ToolResults: []ToolResult{{CallID: r.ToolCalls[0].ID, Name: "hub_list_tasks", Content: "[]"}}})
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	msgs := reqs[len(reqs)-1].Messages
	asst := msgs[1]
	if asst.Role != "assistant" || len(asst.Blocks) != 3 || asst.Blocks[0].Type != "thinking" || asst.Blocks[0].Text != "The list tool." {
		t.Fatalf("assistant message sent back %+v", asst)
	}
	sent := body(t, reqs[len(reqs)-1])["messages"].([]any)[1].(map[string]any)["content"].([]any)[0].(map[string]any)
	if sent["signature"] != r.ToolCalls[0].Thoughts[0].Signature {
		t.Fatalf("thinking sent back %v", sent)
	}
}

package models

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestRequestHidden(t *testing.T) {
	const v = `Zq8-"canary"`
	hide := func(s string) string {
		q, _ := json.Marshal(v)
		s = strings.ReplaceAll(s, string(q[1:len(q)-1]), "[secret V]")
		return strings.ReplaceAll(s, v, "[secret V]")
	}
	in, _ := json.Marshal(map[string]string{"title": "Rotate " + v})
	req := Request{
		Model:  "m",
		System: "Skills: " + v,
		Messages: []Message{
			{Role: "user", Text: "my token is " + v},
			{Role: "assistant", Text: "Reading.", ToolCalls: []ToolCall{{ID: "c1", Name: "hub_x", Input: in,
				Thoughts: []Thought{{Text: "the token " + v, Signature: "sig"}}}}},
			{Role: "user", ToolResults: []ToolResult{{CallID: "c1", Name: "hub_x", Content: "Read " + v}}},
		},
		Tools: []Tool{{Name: "hub_x", Description: "About " + v, Schema: json.RawMessage(`{"type":"object","description":"` + strings.ReplaceAll(v, `"`, `\"`) + `"}`)}},
	}
	before, _ := json.Marshal(req)
	got := req.Hidden(hide)
	if after, _ := json.Marshal(req); string(after) != string(before) {
		t.Fatalf("Hidden changed the request it was given")
	}
	for name, s := range map[string]string{
		"system":      got.System,
		"text":        got.Messages[0].Text,
		"call input":  string(got.Messages[1].ToolCalls[0].Input),
		"tool result": got.Messages[2].ToolResults[0].Content,
		"description": got.Tools[0].Description,
		"schema":      string(got.Tools[0].Schema),
	} {
		if strings.Contains(s, "canary") || !strings.Contains(s, "[secret V]") {
			t.Errorf("%s: %q", name, s)
		}
	}
	for _, raw := range []json.RawMessage{got.Messages[1].ToolCalls[0].Input, got.Tools[0].Schema} {
		if !json.Valid(raw) {
			t.Errorf("not JSON once hidden: %s", raw)
		}
	}
	if !reflect.DeepEqual(got.Messages[1].ToolCalls[0].Thoughts, req.Messages[1].ToolCalls[0].Thoughts) {
		t.Errorf("the signed thoughts were changed: %+v", got.Messages[1].ToolCalls[0].Thoughts)
	}
	if got.Model != "m" || got.Messages[1].ToolCalls[0].ID != "c1" {
		t.Errorf("fields that are not text changed: %+v", got)
	}
	if n := req.Hidden(nil); !reflect.DeepEqual(n, req) {
		t.Errorf("a nil hide changed the request")
	}
}

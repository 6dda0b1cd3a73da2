package enginetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// OpenAI Responses API: POST /v1/responses.
//
// Stream: response.created, response.in_progress, then per output item
// response.output_item.added, its deltas (reasoning summary, content part
// and output_text, function_call_arguments, custom_tool_call_input),
// response.output_item.done, and last response.completed with usage. Every
// event carries a sequence_number.

type responsesRequest struct {
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	Tools        []responsesTool `json:"tools"`
	Text         struct {
		Format struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"text"`
}

// responsesTool is a tool of a request; a "namespace" tool holds tools of
// its own (Codex puts each MCP server's tools in one, named mcp__<server>).
type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Tools       []responsesTool `json:"tools"`
}

type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
	Summary   json.RawMessage `json:"summary"`
}

func parseResponses(r *Request, body []byte) error {
	var in responsesRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return fmt.Errorf("parse responses request: %w", err)
	}
	r.Model, r.Stream, r.System = in.Model, in.Stream, in.Instructions
	if in.Text.Format.Type == "json_schema" {
		r.JSONSchema = in.Text.Format.Schema
	}
	for _, t := range in.Tools {
		if t.Type == "namespace" {
			// Flattened as <namespace>__<tool>, the name a script calls it by
			// (mcp__ensemble_run__hub_create_tasks), as Codex names the call.
			for _, sub := range t.Tools {
				r.Tools = append(r.Tools, Tool{Name: t.Name + "__" + sub.Name, Description: sub.Description, Schema: sub.Parameters, Namespace: t.Name})
			}
			continue
		}
		typ := t.Type
		if typ == "function" {
			typ = ""
		}
		name := t.Name
		if name == "" {
			name = t.Type // web_search, local_shell …
		}
		r.Tools = append(r.Tools, Tool{Name: name, Description: t.Description, Schema: t.Parameters, Type: typ})
	}
	var s string
	if json.Unmarshal(in.Input, &s) == nil {
		r.Messages = []Message{{Role: "user", Blocks: []Block{{Type: "text", Text: s}}}}
		return nil
	}
	var items []responsesItem
	if len(in.Input) > 0 {
		if err := json.Unmarshal(in.Input, &items); err != nil {
			return fmt.Errorf("parse responses input: %w", err)
		}
	}
	add := func(role string, b Block) {
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role && role == "assistant" {
			r.Messages[n-1].Blocks = append(r.Messages[n-1].Blocks, b)
			return
		}
		r.Messages = append(r.Messages, Message{Role: role, Blocks: []Block{b}})
	}
	for _, it := range items {
		switch it.Type {
		case "message", "":
			role := it.Role
			if role == "developer" {
				role = "system"
			}
			add(role, Block{Type: "text", Text: contentText(it.Content)})
		case "function_call":
			name := it.Name
			if it.Namespace != "" {
				name = it.Namespace + "__" + name
			}
			add("assistant", Block{Type: "tool_use", ID: it.CallID, Name: name, Input: json.RawMessage(validJSON(it.Arguments))})
		case "custom_tool_call":
			in, _ := json.Marshal(map[string]string{"input": it.Input})
			add("assistant", Block{Type: "tool_use", ID: it.CallID, Name: it.Name, Input: in})
		case "function_call_output", "custom_tool_call_output":
			add("tool", Block{Type: "tool_result", ID: it.CallID, Text: contentText(it.Output)})
		case "reasoning":
			add("assistant", Block{Type: "thinking", Text: contentText(it.Summary)})
		default:
			add("assistant", Block{Type: "other", Name: it.Type})
		}
	}
	return nil
}

func validJSON(s string) string {
	if json.Valid([]byte(s)) {
		return s
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func (s *Server) writeResponses(o *output, r *Request, rep reply) {
	id := s.nextID("resp")
	created := time.Now().Unix()
	resp := func(status string, output []any, withUsage bool) map[string]any {
		m := map[string]any{
			"id": id, "object": "response", "created_at": created, "status": status, "model": r.Model,
			"output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
			"error": nil, "incomplete_details": nil,
		}
		if withUsage {
			m["usage"] = map[string]any{
				"input_tokens": rep.usage.input, "input_tokens_details": map[string]any{"cached_tokens": 0},
				"output_tokens": rep.usage.output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
				"total_tokens": rep.usage.input + rep.usage.output,
			}
		}
		return m
	}

	// The finished items, as response.output_item.done and response.completed carry them.
	type item struct {
		done  map[string]any
		added map[string]any
		id    string
	}
	var items []item
	if rep.thinking != "" {
		rid := s.nextID("rs")
		items = append(items, item{id: rid,
			added: map[string]any{"id": rid, "type": "reasoning", "summary": []any{}},
			done:  map[string]any{"id": rid, "type": "reasoning", "summary": []any{map[string]any{"type": "summary_text", "text": rep.thinking}}},
		})
	}
	if rep.text != "" {
		mid := s.nextID("msg")
		items = append(items, item{id: mid,
			added: map[string]any{"id": mid, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}},
			done: map[string]any{"id": mid, "type": "message", "status": "completed", "role": "assistant",
				"content": []any{map[string]any{"type": "output_text", "text": rep.text, "annotations": []any{}}}},
		})
	}
	for _, c := range rep.calls {
		if c.custom {
			cid := s.nextID("ctc")
			items = append(items, item{id: cid,
				added: map[string]any{"id": cid, "type": "custom_tool_call", "status": "in_progress", "call_id": c.id, "name": c.name, "input": ""},
				done:  map[string]any{"id": cid, "type": "custom_tool_call", "status": "completed", "call_id": c.id, "name": c.name, "input": c.args},
			})
			continue
		}
		fid := s.nextID("fc")
		added := map[string]any{"id": fid, "type": "function_call", "status": "in_progress", "call_id": c.id, "name": c.name, "arguments": ""}
		done := map[string]any{"id": fid, "type": "function_call", "status": "completed", "call_id": c.id, "name": c.name, "arguments": c.args}
		if t := r.Tool(c.name); t != nil && t.Namespace != "" {
			name := strings.TrimPrefix(c.name, t.Namespace+"__")
			added["name"], added["namespace"] = name, t.Namespace
			done["name"], done["namespace"] = name, t.Namespace
		}
		items = append(items, item{id: fid, added: added, done: done})
	}
	var final []any
	for _, it := range items {
		final = append(final, it.done)
	}
	if final == nil {
		final = []any{}
	}
	if !o.stream {
		o.json(resp("completed", final, true))
		return
	}

	seq := 0
	ev := func(name string, fields map[string]any) {
		fields["type"] = name
		fields["sequence_number"] = seq
		seq++
		o.event(name, fields)
	}
	ev("response.created", map[string]any{"response": resp("in_progress", []any{}, false)})
	ev("response.in_progress", map[string]any{"response": resp("in_progress", []any{}, false)})
	for i, it := range items {
		ev("response.output_item.added", map[string]any{"output_index": i, "item": it.added})
		switch it.added["type"] {
		case "reasoning":
			part := map[string]any{"type": "summary_text", "text": ""}
			ev("response.reasoning_summary_part.added", map[string]any{"item_id": it.id, "output_index": i, "summary_index": 0, "part": part})
			for _, c := range chunks(rep.thinking, chunkSize) {
				ev("response.reasoning_summary_text.delta", map[string]any{"item_id": it.id, "output_index": i, "summary_index": 0, "delta": c})
			}
			ev("response.reasoning_summary_text.done", map[string]any{"item_id": it.id, "output_index": i, "summary_index": 0, "text": rep.thinking})
			ev("response.reasoning_summary_part.done", map[string]any{"item_id": it.id, "output_index": i, "summary_index": 0,
				"part": map[string]any{"type": "summary_text", "text": rep.thinking}})
		case "message":
			ev("response.content_part.added", map[string]any{"item_id": it.id, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			for _, c := range chunks(rep.text, chunkSize) {
				ev("response.output_text.delta", map[string]any{"item_id": it.id, "output_index": i, "content_index": 0, "delta": c, "logprobs": []any{}})
			}
			ev("response.output_text.done", map[string]any{"item_id": it.id, "output_index": i, "content_index": 0, "text": rep.text, "logprobs": []any{}})
			ev("response.content_part.done", map[string]any{"item_id": it.id, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": rep.text, "annotations": []any{}}})
		case "function_call":
			args := it.done["arguments"].(string)
			for _, c := range chunks(args, chunkSize) {
				ev("response.function_call_arguments.delta", map[string]any{"item_id": it.id, "output_index": i, "delta": c})
			}
			ev("response.function_call_arguments.done", map[string]any{"item_id": it.id, "output_index": i, "arguments": args})
		case "custom_tool_call":
			input := it.done["input"].(string)
			for _, c := range chunks(input, chunkSize) {
				ev("response.custom_tool_call_input.delta", map[string]any{"item_id": it.id, "output_index": i, "delta": c})
			}
			ev("response.custom_tool_call_input.done", map[string]any{"item_id": it.id, "output_index": i, "input": input})
		}
		ev("response.output_item.done", map[string]any{"output_index": i, "item": it.done})
	}
	if rep.open {
		return
	}
	ev("response.completed", map[string]any{"response": resp("completed", final, true)})
}

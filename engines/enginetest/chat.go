package enginetest

import (
	"encoding/json"
	"fmt"
	"time"
)

// OpenAI Chat Completions: POST /v1/chat/completions.
//
// Stream: data-only chunks. The first carries delta.role; then
// delta.reasoning_content, delta.content and delta.tool_calls (the first
// chunk of a call has its index, id, type and name, later ones only
// argument pieces); then a chunk with an empty delta and finish_reason; a
// usage chunk with no choices when stream_options.include_usage; then
// "data: [DONE]".

type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		Name       string          `json:"name"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		ReasoningContent string `json:"reasoning_content"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

func parseChat(r *Request, body []byte) error {
	var in chatRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return fmt.Errorf("parse chat request: %w", err)
	}
	r.Model, r.Stream, r.includeUsage = in.Model, in.Stream, in.StreamOptions.IncludeUsage
	if in.ResponseFormat.Type == "json_schema" {
		r.JSONSchema = in.ResponseFormat.JSONSchema.Schema
	}
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Schema: t.Function.Parameters})
	}
	var system []string
	for _, m := range in.Messages {
		role := m.Role
		if role == "developer" {
			role = "system"
		}
		msg := Message{Role: role}
		text := contentText(m.Content)
		switch {
		case role == "tool":
			msg.Blocks = append(msg.Blocks, Block{Type: "tool_result", ID: m.ToolCallID, Name: m.Name, Text: text})
		default:
			if m.ReasoningContent != "" {
				msg.Blocks = append(msg.Blocks, Block{Type: "thinking", Text: m.ReasoningContent})
			}
			if text != "" || len(m.ToolCalls) == 0 {
				msg.Blocks = append(msg.Blocks, Block{Type: "text", Text: text})
			}
		}
		for _, tc := range m.ToolCalls {
			msg.Blocks = append(msg.Blocks, Block{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: json.RawMessage(validJSON(tc.Function.Arguments))})
		}
		if role == "system" && len(r.Messages) == 0 {
			system = append(system, text)
			continue
		}
		r.Messages = append(r.Messages, msg)
	}
	r.System = joinNonEmpty(system)
	return nil
}

func (s *Server) writeChat(o *output, r *Request, rep reply, includeUsage bool) {
	id := "chatcmpl-" + s.nextID("et")
	created := time.Now().Unix()
	finish := "stop"
	if len(rep.calls) > 0 {
		finish = "tool_calls"
	}
	u := map[string]any{
		"prompt_tokens": rep.usage.input, "completion_tokens": rep.usage.output,
		"total_tokens": rep.usage.input + rep.usage.output,
	}
	if !o.stream {
		msg := map[string]any{"role": "assistant", "content": nil}
		if rep.text != "" {
			msg["content"] = rep.text
		}
		if rep.thinking != "" {
			msg["reasoning_content"] = rep.thinking
		}
		if len(rep.calls) > 0 {
			var tcs []any
			for _, c := range rep.calls {
				tcs = append(tcs, map[string]any{"id": c.id, "type": "function",
					"function": map[string]any{"name": c.name, "arguments": anthropicInput(c)}})
			}
			msg["tool_calls"] = tcs
		}
		o.json(map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": r.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
			"usage":   u,
		})
		return
	}
	chunk := func(delta map[string]any, finishReason any) {
		o.event("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": r.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finishReason, "logprobs": nil}},
		})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, c := range chunks(rep.thinking, chunkSize) {
		chunk(map[string]any{"reasoning_content": c}, nil)
	}
	for _, c := range chunks(rep.text, chunkSize) {
		chunk(map[string]any{"content": c}, nil)
	}
	for i, c := range rep.calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": ""},
		}}}, nil)
		for _, p := range chunks(anthropicInput(c), chunkSize) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil)
		}
	}
	if rep.open {
		return
	}
	chunk(map[string]any{}, finish)
	if includeUsage {
		o.event("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": r.Model,
			"choices": []any{}, "usage": u,
		})
	}
	o.event("", "[DONE]")
}

func joinNonEmpty(parts []string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += "\n"
		}
		out += p
	}
	return out
}

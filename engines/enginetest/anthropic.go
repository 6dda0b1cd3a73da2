package enginetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Anthropic Messages API: POST /v1/messages.
//
// Stream: message_start, ping, then per content block (thinking, text,
// tool_use) content_block_start, content_block_delta…, content_block_stop,
// then message_delta (stop_reason, usage) and message_stop.

type anthropicRequest struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	// Structured outputs: output_config.format, or the older output_format.
	OutputConfig struct {
		Format struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
	OutputFormat struct {
		Schema json.RawMessage `json:"schema"`
	} `json:"output_format"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func parseAnthropic(r *Request, body []byte) error {
	var in anthropicRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return fmt.Errorf("parse messages request: %w", err)
	}
	r.Model, r.Stream, r.System = in.Model, in.Stream, contentText(in.System)
	r.JSONSchema = in.OutputConfig.Format.Schema
	if len(r.JSONSchema) == 0 {
		r.JSONSchema = in.OutputFormat.Schema
	}
	for _, t := range in.Tools {
		typ := t.Type
		if typ == "custom" {
			typ = ""
		}
		r.Tools = append(r.Tools, Tool{Name: t.Name, Description: t.Description, Schema: t.InputSchema, Type: typ})
	}
	for _, m := range in.Messages {
		msg := Message{Role: m.Role}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			msg.Blocks = []Block{{Type: "text", Text: s}}
			r.Messages = append(r.Messages, msg)
			continue
		}
		var blocks []anthropicBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return fmt.Errorf("parse %s message content: %w", m.Role, err)
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				msg.Blocks = append(msg.Blocks, Block{Type: "text", Text: b.Text})
			case "thinking":
				msg.Blocks = append(msg.Blocks, Block{Type: "thinking", Text: b.Thinking})
			case "tool_use", "server_tool_use":
				msg.Blocks = append(msg.Blocks, Block{Type: "tool_use", ID: b.ID, Name: b.Name, Input: b.Input})
			case "tool_result":
				msg.Blocks = append(msg.Blocks, Block{Type: "tool_result", ID: b.ToolUseID, Text: contentText(b.Content), IsError: b.IsError})
			default:
				msg.Blocks = append(msg.Blocks, Block{Type: "other", Name: b.Type})
			}
		}
		r.Messages = append(r.Messages, msg)
	}
	return nil
}

func (s *Server) writeAnthropic(o *output, r *Request, rep reply) {
	id := s.nextID("msg")
	stop := "end_turn"
	if len(rep.calls) > 0 {
		stop = "tool_use"
	}
	u := map[string]any{
		"input_tokens": rep.usage.input, "output_tokens": rep.usage.output,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
	}
	signature := "scripted-signature-" + id
	if !o.stream {
		var content []any
		if rep.thinking != "" {
			content = append(content, map[string]any{"type": "thinking", "thinking": rep.thinking, "signature": signature})
		}
		if rep.text != "" {
			content = append(content, map[string]any{"type": "text", "text": rep.text})
		}
		for _, c := range rep.calls {
			content = append(content, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": json.RawMessage(anthropicInput(c))})
		}
		if content == nil {
			content = []any{}
		}
		o.json(map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": r.Model, "content": content,
			"stop_reason": stop, "stop_sequence": nil, "usage": u,
		})
		return
	}
	o.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": r.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": rep.usage.input, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}})
	o.event("ping", map[string]any{"type": "ping"})
	index := 0
	block := func(start map[string]any, deltas []map[string]any) {
		o.event("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": start})
		for _, d := range deltas {
			o.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d})
		}
		o.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if rep.thinking != "" {
		var ds []map[string]any
		for _, c := range chunks(rep.thinking, chunkSize) {
			ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": c})
		}
		ds = append(ds, map[string]any{"type": "signature_delta", "signature": signature})
		block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, ds)
	}
	if rep.text != "" {
		var ds []map[string]any
		for _, c := range chunks(rep.text, chunkSize) {
			ds = append(ds, map[string]any{"type": "text_delta", "text": c})
		}
		block(map[string]any{"type": "text", "text": ""}, ds)
	}
	for _, c := range rep.calls {
		// Like the real API: an empty partial_json first, then pieces.
		ds := []map[string]any{{"type": "input_json_delta", "partial_json": ""}}
		for _, p := range chunks(anthropicInput(c), chunkSize) {
			ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": p})
		}
		block(map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": map[string]any{}}, ds)
	}
	if rep.open {
		return
	}
	o.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": rep.usage.output}})
	o.event("message_stop", map[string]any{"type": "message_stop"})
}

// anthropicInput is a call's input object; a freeform call's text goes
// under "input".
func anthropicInput(c resolvedCall) string {
	if !c.custom {
		return c.args
	}
	b, _ := json.Marshal(map[string]string{"input": c.args})
	return string(b)
}

// serveCountTokens answers POST /v1/messages/count_tokens with an estimate.
func (s *Server) serveCountTokens(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	s.recordOther(req, body)
	writeJSON(w, http.StatusOK, map[string]any{"input_tokens": estimateTokens(len(body))})
}

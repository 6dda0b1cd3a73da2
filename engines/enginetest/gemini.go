package enginetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Gemini API: POST /v1beta/models/M:streamGenerateContent?alt=sse and
// …:generateContent.
//
// Stream: data-only events, each a GenerateContentResponse; parts arrive
// in order (thought parts, text pieces, whole functionCall parts) and the
// last event carries finishReason STOP and usageMetadata.

type geminiPart struct {
	Text         string `json:"text,omitempty"`
	Thought      bool   `json:"thought,omitempty"`
	FunctionCall *struct {
		ID   string          `json:"id,omitempty"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args,omitempty"`
	} `json:"functionCall,omitempty"`
	FunctionResponse *struct {
		ID       string          `json:"id,omitempty"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response,omitempty"`
	} `json:"functionResponse,omitempty"`
}

type geminiRequest struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Parts []geminiPart `json:"parts"`
	} `json:"systemInstruction"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Description          string          `json:"description"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

// geminiModel takes the model from ".../models/M:method".
func geminiModel(path string) string {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return ""
	}
	m := path[i+len("/models/"):]
	if j := strings.LastIndexByte(m, ':'); j >= 0 {
		m = m[:j]
	}
	return m
}

func parseGemini(r *Request, req *http.Request, body []byte) error {
	var in geminiRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return fmt.Errorf("parse generateContent request: %w", err)
	}
	r.Model = geminiModel(req.URL.Path)
	r.Stream = strings.HasSuffix(req.URL.Path, ":streamGenerateContent")
	if in.SystemInstruction != nil {
		var parts []string
		for _, p := range in.SystemInstruction.Parts {
			parts = append(parts, p.Text)
		}
		r.System = joinNonEmpty(parts)
	}
	for _, t := range in.Tools {
		for _, fd := range t.FunctionDeclarations {
			sch := fd.ParametersJSONSchema
			if len(sch) == 0 {
				sch = fd.Parameters
			}
			r.Tools = append(r.Tools, Tool{Name: fd.Name, Description: fd.Description, Schema: sch})
		}
	}
	if gc := in.GenerationConfig; strings.Contains(gc.ResponseMimeType, "json") {
		r.JSONSchema = gc.ResponseJSONSchema
		if len(r.JSONSchema) == 0 {
			r.JSONSchema = gc.ResponseSchema
		}
		if len(r.JSONSchema) == 0 {
			r.JSONSchema = json.RawMessage(`{"type":"object"}`)
		}
	}
	for _, c := range in.Contents {
		role := c.Role
		if role == "model" {
			role = "assistant"
		}
		if role == "" {
			role = "user"
		}
		msg := Message{Role: role}
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				msg.Blocks = append(msg.Blocks, Block{Type: "tool_use", ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Input: p.FunctionCall.Args})
			case p.FunctionResponse != nil:
				msg.Blocks = append(msg.Blocks, Block{Type: "tool_result", ID: p.FunctionResponse.ID, Name: p.FunctionResponse.Name,
					Text: geminiResponseText(p.FunctionResponse.Response), IsError: geminiResponseIsError(p.FunctionResponse.Response)})
			case p.Thought:
				msg.Blocks = append(msg.Blocks, Block{Type: "thinking", Text: p.Text})
			default:
				msg.Blocks = append(msg.Blocks, Block{Type: "text", Text: p.Text})
			}
		}
		r.Messages = append(r.Messages, msg)
	}
	return nil
}

// geminiResponseText flattens a functionResponse.response: Gemini CLI sends
// {"output": "…"} or {"error": "…"}; anything else stays JSON.
func geminiResponseText(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		for _, k := range []string{"output", "error", "content", "result"} {
			if v, ok := m[k]; ok {
				if t := contentText(v); t != "" {
					return t
				}
			}
		}
	}
	return string(raw)
}

func geminiResponseIsError(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	_, ok := m["error"]
	return ok
}

func (s *Server) writeGemini(o *output, r *Request, rep reply) {
	id := s.nextID("resp")
	u := map[string]any{
		"promptTokenCount": rep.usage.input, "candidatesTokenCount": rep.usage.output,
		"totalTokenCount": rep.usage.input + rep.usage.output,
	}
	var parts []map[string]any
	if rep.thinking != "" {
		parts = append(parts, map[string]any{"text": rep.thinking, "thought": true})
	}
	if rep.text != "" {
		parts = append(parts, map[string]any{"text": rep.text})
	}
	for _, c := range rep.calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": c.id, "name": c.name, "args": json.RawMessage(anthropicInput(c))}})
	}
	resp := func(parts []map[string]any, last bool) map[string]any {
		if parts == nil {
			parts = []map[string]any{}
		}
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		m := map[string]any{"candidates": []any{cand}, "modelVersion": r.Model, "responseId": id}
		if last {
			cand["finishReason"] = "STOP"
			m["usageMetadata"] = u
		}
		return m
	}
	if !o.stream {
		o.json(resp(parts, true))
		return
	}
	// Stream text in pieces, other parts whole, as the API does.
	var pieces [][]map[string]any
	if rep.thinking != "" {
		for _, c := range chunks(rep.thinking, chunkSize) {
			pieces = append(pieces, []map[string]any{{"text": c, "thought": true}})
		}
	}
	for _, c := range chunks(rep.text, chunkSize) {
		pieces = append(pieces, []map[string]any{{"text": c}})
	}
	for _, p := range parts {
		if _, ok := p["functionCall"]; ok {
			pieces = append(pieces, []map[string]any{p})
		}
	}
	if len(pieces) == 0 {
		pieces = [][]map[string]any{nil}
	}
	for i, p := range pieces {
		last := i == len(pieces)-1 && !rep.open
		o.event("", resp(p, last))
	}
}

// serveGeminiCountTokens answers …:countTokens with an estimate.
func (s *Server) serveGeminiCountTokens(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	s.recordOther(req, body)
	writeJSON(w, http.StatusOK, map[string]any{"totalTokens": estimateTokens(len(body))})
}

package enginetest

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// API names a wire format.
type API string

// The wire formats a server speaks.
const (
	Anthropic API = "anthropic"
	Responses API = "responses"
	Chat      API = "chat"
	Gemini    API = "gemini"
	Other     API = "other" // probes, model lists, unknown paths
)

// Request is one recorded request, its body parsed into a shape common to
// the wire formats.
type Request struct {
	Seq    int         `json:"seq"`
	Time   time.Time   `json:"time"`
	API    API         `json:"api"`
	Method string      `json:"method"`
	Path   string      `json:"path"` // with the query
	Header http.Header `json:"header,omitempty"`
	Model  string      `json:"model,omitempty"`
	Stream bool        `json:"stream,omitempty"`
	System string      `json:"system,omitempty"`

	Messages []Message `json:"messages,omitempty"`
	Tools    []Tool    `json:"tools,omitempty"`
	// JSONSchema is the response schema a JSON-mode request asks for.
	JSONSchema json.RawMessage `json:"json_schema,omitempty"`

	// Side is the kind of side request ("" for the agent loop).
	Side string `json:"side,omitempty"`
	// Step is the index of the script step that answered, or -1.
	Step int `json:"step"`
	// Exhausted is set when no step was left to answer.
	Exhausted bool `json:"exhausted,omitempty"`

	Body json.RawMessage `json:"body,omitempty"`

	includeUsage bool // Chat Completions' stream_options.include_usage
}

// Message is one conversation message. Role is "system", "user",
// "assistant" or "tool" (Chat Completions' tool results).
type Message struct {
	Role   string  `json:"role"`
	Blocks []Block `json:"blocks"`
}

// Block is a piece of a message.
type Block struct {
	// Type is "text", "thinking", "tool_use", "tool_result" or "other".
	Type    string          `json:"type"`
	Text    string          `json:"text,omitempty"` // text, thinking, or a tool result's text
	ID      string          `json:"id,omitempty"`   // tool call id (tool_use and tool_result)
	Name    string          `json:"name,omitempty"` // tool name (tool_use; tool_result when known)
	Input   json.RawMessage `json:"input,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
}

// Tool is a tool the request offers.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	// Type is the provider's tool type when not a plain function
	// ("custom", "web_search", …).
	Type string `json:"type,omitempty"`
	// Namespace is the Responses namespace tool holding this one; Name is
	// then <namespace>__<its own name>.
	Namespace string `json:"namespace,omitempty"`
}

// ToolResult is a tool result the agent sent back.
type ToolResult struct {
	ID      string
	Name    string // from the matching tool call, when the request holds it
	Content string
	IsError bool
}

// Tool returns the offered tool with that name, or nil.
func (r *Request) Tool(name string) *Tool {
	for i := range r.Tools {
		if r.Tools[i].Name == name {
			return &r.Tools[i]
		}
	}
	return nil
}

// ToolNames lists the offered tools' names.
func (r *Request) ToolNames() []string {
	out := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		out[i] = t.Name
	}
	return out
}

// lastTurn returns the last message that is not a system message: Claude
// Code may append a system message after the user's.
func (r *Request) lastTurn() *Message {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role != "system" {
			return &r.Messages[i]
		}
	}
	return nil
}

// LastUserText is the text of the last user message (tool results included,
// as their text), or "" when the conversation ends with the assistant.
func (r *Request) LastUserText() string {
	// Chat Completions puts each tool result in its own "tool" message.
	var parts []string
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role == "system" {
			continue
		}
		if m.Role == "tool" {
			parts = append(parts, m.text())
			continue
		}
		if m.Role == "user" {
			parts = append(parts, m.text())
		}
		break
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "\n")
}

// ToolResults lists the tool results at the end of the conversation (those
// answering the model's last calls).
func (r *Request) ToolResults() []ToolResult {
	names := map[string]string{}
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if b.Type == "tool_use" {
				names[b.ID] = b.Name
			}
		}
	}
	var out []ToolResult
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role == "system" {
			continue
		}
		var got []ToolResult
		for _, b := range m.Blocks {
			if b.Type == "tool_result" {
				name := b.Name
				if name == "" {
					name = names[b.ID]
				}
				got = append(got, ToolResult{ID: b.ID, Name: name, Content: b.Text, IsError: b.IsError})
			}
		}
		if len(got) == 0 {
			break
		}
		out = append(got, out...)
		if m.Role != "tool" {
			break
		}
	}
	return out
}

// LastToolResult is the last tool result at the end of the conversation.
func (r *Request) LastToolResult() (ToolResult, bool) {
	res := r.ToolResults()
	if len(res) == 0 {
		return ToolResult{}, false
	}
	return res[len(res)-1], true
}

func (m Message) text() string {
	var parts []string
	for _, b := range m.Blocks {
		if (b.Type == "text" || b.Type == "tool_result") && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// contentText flattens provider content (a string, or an array of parts
// with "text") into text.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, p := range parts {
		switch {
		case p.Text != "":
			out = append(out, p.Text)
		case len(p.Content) > 0:
			if t := contentText(p.Content); t != "" {
				out = append(out, t)
			}
		}
	}
	return strings.Join(out, "\n")
}

package models

import "encoding/json"

// Hidden returns a copy of r with hide applied to every text it sends the model: the
// instructions, each message's text, each tool call's input and each tool result, and the tools'
// descriptions and schemas. r is not changed. The thoughts a provider wants back unchanged are
// kept as they are: they were made from a request already hidden, and a signed one altered is
// refused.
func (r Request) Hidden(hide func(string) string) Request {
	if hide == nil {
		return r
	}
	r.System = hide(r.System)
	msgs := make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		m.Text = hide(m.Text)
		if len(m.ToolCalls) > 0 {
			calls := make([]ToolCall, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				c.Input = hideRaw(c.Input, hide)
				calls[j] = c
			}
			m.ToolCalls = calls
		}
		if len(m.ToolResults) > 0 {
			results := make([]ToolResult, len(m.ToolResults))
			for j, tr := range m.ToolResults {
				tr.Content = hide(tr.Content)
				results[j] = tr
			}
			m.ToolResults = results
		}
		msgs[i] = m
	}
	r.Messages = msgs
	if len(r.Tools) > 0 {
		tools := make([]Tool, len(r.Tools))
		for i, t := range r.Tools {
			t.Description = hide(t.Description)
			t.Schema = hideRaw(t.Schema, hide)
			tools[i] = t
		}
		r.Tools = tools
	}
	return r
}

// hideRaw hides values in a piece of JSON. A value inside a JSON string is hidden in its escaped
// form too, and what replaces it needs no escaping, so the result is still JSON; should it not be,
// the call's input is sent as an empty object rather than as it was.
func hideRaw(raw json.RawMessage, hide func(string) string) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	h := hide(string(raw))
	if h == string(raw) {
		return raw
	}
	if !json.Valid([]byte(h)) {
		return json.RawMessage("{}")
	}
	return json.RawMessage(h)
}

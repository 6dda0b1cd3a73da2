package claude

import (
	"encoding/json"
	"strings"
)

// message is a stream-json line other than the control lines: system,
// assistant, user, result, stream_event, ….
type message struct {
	Type            string      `json:"type"`
	Subtype         string      `json:"subtype"`
	SessionID       string      `json:"session_id"`
	Model           string      `json:"model"`
	Message         *apiMessage `json:"message"`
	ParentToolUseID *string     `json:"parent_tool_use_id"`

	// result
	IsError      bool            `json:"is_error"`
	Result       string          `json:"result"`
	NumTurns     int             `json:"num_turns"`
	TotalCostUSD float64         `json:"total_cost_usd"`
	Usage        *apiUsage       `json:"usage"`
	Errors       json.RawMessage `json:"errors"`
	// ModelUsage is what each model the run used spent, by model id, with its context window.
	ModelUsage map[string]modelUsage `json:"modelUsage"`

	// stream_event (with --include-partial-messages)
	Event *streamEvent `json:"event"`
}

// streamEvent is one Anthropic streaming event as Claude Code passes it on.
type streamEvent struct {
	Type  string `json:"type"`
	Delta *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"delta"`
}

// apiMessage is an Anthropic Messages message as Claude Code relays it.
type apiMessage struct {
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"` // a string or a list of blocks
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // tool_result: a string or blocks
	IsError   bool            `json:"is_error"`
}

type apiUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// modelUsage is one model's entry in a result's modelUsage.
type modelUsage struct {
	InputTokens   int64 `json:"inputTokens"`
	OutputTokens  int64 `json:"outputTokens"`
	ContextWindow int   `json:"contextWindow"`
}

// contextWindow is the main model's window in a result's modelUsage, 0 when it gives none. The
// main model is the one the init message named (its id may carry a "[1m]" tag the entry lacks);
// failing that, the one that spent the most, since side tasks go to a small model.
func contextWindow(usage map[string]modelUsage, model string) int {
	if u, ok := usage[model]; ok {
		return u.ContextWindow
	}
	base := func(id string) string { id, _, _ = strings.Cut(id, "["); return id }
	best, most := 0, int64(-1)
	for id, u := range usage {
		if model != "" && base(id) == base(model) {
			return u.ContextWindow
		}
		if spent := u.InputTokens + u.OutputTokens; spent > most {
			best, most = u.ContextWindow, spent
		}
	}
	return best
}

// blocks reads content that is either a plain string or a list of blocks.
func blocks(raw json.RawMessage) []block {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	_ = json.Unmarshal(raw, &bs)
	return bs
}

// contentText flattens a tool result's content to its text.
func contentText(raw json.RawMessage) string {
	var parts []string
	for _, b := range blocks(raw) {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

// errorTexts reads a result's errors: strings, or objects with a message.
func errorTexts(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return []string{string(raw)}
	}
	var out []string
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) == nil {
			out = append(out, s)
			continue
		}
		var o struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(it, &o) == nil && o.Message != "" {
			out = append(out, o.Message)
			continue
		}
		out = append(out, string(it))
	}
	return out
}

package enginetest

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// ExhaustedText is the reply to a main request that finds no step left.
const ExhaustedText = "(script finished)"

// Script is what a server answers, in order. It is also the JSON file that
// [ServeScriptFile] reads.
type Script struct {
	Steps []Step `json:"steps"`
	// Models are listed by GET …/models; empty means a default list.
	Models []string `json:"models,omitempty"`
	// Record, when set, is a file to which a server started from this
	// script appends every request as one JSON line (see [ReadRecord]).
	Record string `json:"record,omitempty"`
}

// Step is the reply to one model request. Text, Thinking and Calls combine:
// thinking first, then text, then the tool calls. Status, when set, answers
// with an HTTP error instead.
type Step struct {
	// Name labels the step in records and failure messages.
	Name string `json:"name,omitempty"`

	Thinking string `json:"thinking,omitempty"`
	Text     string `json:"text,omitempty"`
	Calls    []Call `json:"calls,omitempty"`

	// Status is an HTTP error status (429, 500, 529 …); ErrorType is the
	// provider's error type ("overloaded_error", "rate_limit_error" …, a
	// default follows from Status) and ErrorMessage its message.
	Status       int    `json:"status,omitempty"`
	ErrorType    string `json:"error_type,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	// RetryAfter, when set, is sent as the Retry-After header of an error.
	RetryAfter Duration `json:"retry_after,omitempty"`

	// Delay waits before the reply starts (the client going away ends it).
	Delay Duration `json:"delay,omitempty"`
	// Hang, after streaming whatever else the step holds (nothing for a bare
	// Hang), blocks until the client goes away or the server closes.
	Hang bool `json:"hang,omitempty"`
	// BreakOff ends the reply after its content without the wire format's
	// closing events (Anthropic's message_delta and message_stop, the
	// Responses API's response.completed, Chat Completions' finish_reason
	// chunk and [DONE], Gemini's finishReason): [BreakDrop] or [BreakEnd].
	// A reply that is not streamed is cut halfway through its JSON body.
	BreakOff string `json:"break_off,omitempty"`

	// Match limits the step to the requests it accepts.
	Match *Match `json:"match,omitempty"`
	// Times is how many requests the step answers (0 means 1); Always
	// makes it answer every request it matches, never used up.
	Times  int  `json:"times,omitempty"`
	Always bool `json:"always,omitempty"`
}

// Call is one tool call a step makes.
type Call struct {
	// Name is the tool's name. Empty with Shell set means "the shell tool
	// the request offers".
	Name string `json:"name,omitempty"`
	// Input is the tool's input, a JSON object.
	Input json.RawMessage `json:"input,omitempty"`
	// Shell is a command line for the request's shell tool; the arguments
	// are built from that tool's schema when the request arrives.
	Shell string `json:"shell,omitempty"`
	// Custom marks a freeform tool call (Codex's apply_patch): Text is
	// sent as the call's raw input. Wire formats without freeform tools
	// send {"input": Text}.
	Custom bool   `json:"custom,omitempty"`
	Text   string `json:"text,omitempty"`
	// ID overrides the generated call id.
	ID string `json:"id,omitempty"`
}

// Match is a condition on a request. All set fields must hold.
type Match struct {
	// API is one of "anthropic", "responses", "chat", "gemini".
	API string `json:"api,omitempty"`
	// Model must equal the request's model.
	Model string `json:"model,omitempty"`
	// LastUserContains must occur in the last user message's text (tool
	// results count as that message's text).
	LastUserContains string `json:"last_user_contains,omitempty"`
	// SystemContains must occur in the system prompt.
	SystemContains string `json:"system_contains,omitempty"`
	// Tool must be among the tools offered.
	Tool string `json:"tool,omitempty"`
	// ToolResult: true means the last message carries a tool result,
	// false that it does not.
	ToolResult *bool `json:"tool_result,omitempty"`
	// Side names the side request kind the step answers (see [Classify]);
	// "" matches main requests only, "*" any request.
	Side string `json:"side,omitempty"`
	// Func is a predicate for Go scripts; it does not travel in JSON.
	Func func(*Request) bool `json:"-"`
}

// Say is a step that answers text and ends the turn.
func Say(text string) Step { return Step{Text: text} }

// Think is a step that answers thinking, then text.
func Think(thinking, text string) Step { return Step{Thinking: thinking, Text: text} }

// ToolCall is a step that calls one tool. input is marshalled to JSON; a
// json.RawMessage or string holding JSON is used as is.
func ToolCall(name string, input any) Step { return Step{}.Call(name, input) }

// Shell is a step that runs cmd through the shell tool the request offers.
func Shell(cmd string) Step { return Step{Calls: []Call{{Shell: cmd}}} }

// CustomToolCall is a step that calls a freeform tool (Codex's apply_patch)
// with raw text input.
func CustomToolCall(name, text string) Step {
	return Step{Calls: []Call{{Name: name, Custom: true, Text: text}}}
}

// Fail is a step that answers an HTTP error status with a message.
func Fail(status int, message string) Step {
	return Step{Status: status, ErrorMessage: message}
}

// Overloaded is Anthropic's 529 overloaded_error (503 elsewhere).
func Overloaded() Step {
	return Step{Status: 529, ErrorType: "overloaded_error", ErrorMessage: "Overloaded"}
}

// RateLimited is a 429 with the given Retry-After.
func RateLimited(retryAfter time.Duration) Step {
	return Step{Status: 429, ErrorMessage: "Rate limit reached (scripted)", RetryAfter: Duration(retryAfter)}
}

// Hang is a step that never answers: the handler returns when the client
// goes away.
func Hang() Step { return Step{Hang: true} }

// The ways a reply breaks off (Step.BreakOff).
const (
	// BreakDrop drops the connection mid-body, as a failing network does:
	// the client reads an unexpected EOF (or a reset).
	BreakDrop = "drop"
	// BreakEnd ends the body cleanly where it is, as a server or proxy that
	// gives up does: the client reads a plain end of stream.
	BreakEnd = "end"
)

// DropConnection returns a copy of s that streams its content, then drops
// the connection before the wire format's closing events.
func (s Step) DropConnection() Step { s.BreakOff = BreakDrop; return s }

// EndEarly returns a copy of s that streams its content, then ends the body
// cleanly before the wire format's closing events.
func (s Step) EndEarly() Step { s.BreakOff = BreakEnd; return s }

// Call returns a copy of s that also calls the named tool.
func (s Step) Call(name string, input any) Step {
	s.Calls = append(append([]Call(nil), s.Calls...), Call{Name: name, Input: mustJSON(input)})
	return s
}

// Shell returns a copy of s that also runs cmd through the shell tool.
func (s Step) Shell(cmd string) Step {
	s.Calls = append(append([]Call(nil), s.Calls...), Call{Shell: cmd})
	return s
}

// After returns a copy of s that waits d before answering.
func (s Step) After(d time.Duration) Step { s.Delay = Duration(d); return s }

// ThenHang returns a copy of s that streams its content and then hangs.
func (s Step) ThenHang() Step { s.Hang = true; return s }

// When returns a copy of s limited to requests m accepts.
func (s Step) When(m Match) Step { s.Match = &m; return s }

// WhenLastUser returns a copy of s that only answers a request whose last
// user message contains substr.
func (s Step) WhenLastUser(substr string) Step {
	return s.When(Match{LastUserContains: substr})
}

// Named returns a copy of s labelled name.
func (s Step) Named(name string) Step { s.Name = name; return s }

// Repeat returns a copy of s that answers n requests.
func (s Step) Repeat(n int) Step { s.Times = n; return s }

// Forever returns a copy of s that is never used up.
func (s Step) Forever() Step { s.Always = true; return s }

func (s Step) label(i int) string {
	if s.Name != "" {
		return fmt.Sprintf("step %d (%s)", i, s.Name)
	}
	return fmt.Sprintf("step %d", i)
}

// Accepts reports whether the request r satisfies m. A nil Match accepts
// main requests.
func (m *Match) Accepts(r *Request) bool {
	if m == nil {
		return r.Side == ""
	}
	if m.Side != "*" && m.Side != r.Side {
		return false
	}
	if m.API != "" && m.API != string(r.API) {
		return false
	}
	if m.Model != "" && m.Model != r.Model {
		return false
	}
	if m.LastUserContains != "" && !strings.Contains(r.LastUserText(), m.LastUserContains) {
		return false
	}
	if m.SystemContains != "" && !strings.Contains(r.System, m.SystemContains) {
		return false
	}
	if m.Tool != "" && r.Tool(m.Tool) == nil {
		return false
	}
	if m.ToolResult != nil {
		_, ok := r.LastToolResult()
		if ok != *m.ToolResult {
			return false
		}
	}
	if m.Func != nil && !m.Func(r) {
		return false
	}
	return true
}

// Duration is a time.Duration that reads and writes JSON as "1.5s" (a
// number is taken as milliseconds).
type Duration time.Duration

// MarshalJSON writes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads "1.5s" or a number of milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("enginetest: duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil {
		return fmt.Errorf("enginetest: duration %s: want a string like \"2s\" or milliseconds", b)
	}
	*d = Duration(ms * float64(time.Millisecond))
	return nil
}

// ReadScript reads a JSON script file.
func ReadScript(path string) (Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("enginetest: read script: %w", err)
	}
	var sc Script
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return Script{}, fmt.Errorf("enginetest: parse script %s: %w", path, err)
	}
	for i, st := range sc.Steps {
		switch st.BreakOff {
		case "", BreakDrop, BreakEnd:
		default:
			return Script{}, fmt.Errorf("enginetest: parse script %s: %s: break_off %q is not %q or %q", path, st.label(i), st.BreakOff, BreakDrop, BreakEnd)
		}
	}
	return sc, nil
}

// WriteFile writes sc as JSON to path.
func (sc Script) WriteFile(path string) error {
	for i, st := range sc.Steps {
		if st.Match != nil && st.Match.Func != nil {
			return fmt.Errorf("enginetest: write script: %s has a Match.Func, which JSON cannot carry", st.label(i))
		}
	}
	b, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		return fmt.Errorf("enginetest: write script: %w", err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func mustJSON(v any) json.RawMessage {
	switch v := v.(type) {
	case nil:
		return json.RawMessage("{}")
	case json.RawMessage:
		return v
	case string:
		if json.Valid([]byte(v)) {
			return json.RawMessage(v)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("enginetest: tool input: %v", err))
	}
	return b
}

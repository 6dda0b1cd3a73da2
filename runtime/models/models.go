// Package models streams one model request to a provider (Anthropic Messages, OpenAI Responses,
// or Chat Completions at any OpenAI-compatible base URL) and returns its text, tool calls and
// usage. [CheckEffort] says, before anything is spent, whether a model takes an effort level.
package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Message is one conversation message. Role is "user" or "assistant". An assistant message may
// carry tool calls; the user message after it carries their results.
type Message struct {
	Role        string       `json:"role"`
	Text        string       `json:"text,omitempty"`
	ToolCalls   []ToolCall   `json:"toolCalls,omitempty"`
	ToolResults []ToolResult `json:"toolResults,omitempty"`
}

// ToolCall is a call the model made.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// Thoughts is the model's reasoning before the call, which the provider wants back with it: with
	// extended thinking on, Anthropic refuses a tool result whose call comes without its signed
	// thinking. The first call of a reply carries it, so keeping the calls keeps it.
	Thoughts []Thought `json:"-"`
}

// Thought is one piece of a model's reasoning as its provider sent it, to be sent back unchanged.
type Thought struct {
	Text      string // Anthropic's thinking
	Signature string // and its signature
	Redacted  string // Anthropic's redacted_thinking data, instead of both
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	CallID  string `json:"callId"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"isError,omitempty"`
}

// Tool is a tool offered to the model: its input is described by a JSON schema (an object).
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// Request is one model request.
type Request struct {
	Model    string
	System   string
	Messages []Message
	Tools    []Tool
	// ToolsOff asks for a final answer: the tools are still described (the history names them) but
	// the model may not call them.
	ToolsOff bool
	// Effort is the reasoning effort ("low", "medium", "high", …); empty leaves the provider's default.
	// Callers check it first with [CheckEffort]; a provider sends it as the model takes it.
	Effort string
	// MaxTokens bounds the reply; 8192 when zero.
	MaxTokens int
}

// Usage is what a request cost in tokens.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// Response is the model's answer to one request.
type Response struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
}

// Provider streams one model request. onText receives the text as it arrives (may be nil). On
// error, the Response holds whatever had arrived. A stream that stops before its wire format's end
// marker is a [*CutOffError], whatever the connection made of its closing.
type Provider interface {
	Stream(ctx context.Context, req Request, onText func(string)) (Response, error)
}

// DefaultTimeout is how long one model call waits when nothing else is set.
const DefaultTimeout = 15 * time.Minute

// TimeoutFromEnv returns ENSEMBLE_MODEL_CALL_TIMEOUT_MS, held to 30 seconds–30 minutes, or
// DefaultTimeout when it is unset or unreadable.
func TimeoutFromEnv() time.Duration {
	ms, err := strconv.ParseInt(os.Getenv("ENSEMBLE_MODEL_CALL_TIMEOUT_MS"), 10, 64)
	if err != nil || ms <= 0 {
		return DefaultTimeout
	}
	return min(max(time.Duration(ms)*time.Millisecond, 30*time.Second), 30*time.Minute)
}

// TimeoutError is a model call that went past its limit. Its message is what the chat shows.
type TimeoutError struct {
	Model string
	Limit time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s did not answer within %s, so I stopped waiting. Ask again, or try a narrower question.",
		e.Model, Span(e.Limit))
}

// IsTimeout reports whether err is a model call past its limit.
func IsTimeout(err error) bool {
	var te *TimeoutError
	return errors.As(err, &te)
}

// CutOffError is a reply whose stream stopped before its wire format's end marker (Anthropic's
// message_stop, Chat Completions' finish_reason, the Responses API's response.completed): the
// connection dropped, or the body ended early. The Response returned with it holds the text that
// arrived and no tool calls, since a call from a reply that did not finish is not to be run. Its
// message is what the chat shows after that text.
type CutOffError struct {
	Model string
	// Via is the agent whose connection to its model broke off, for a turn an agent CLI runs on
	// the person's plan ("Claude Code"); "" for Ensemble's own connection to Model.
	Via string
	// Partial is set when some of the answer's text had arrived.
	Partial bool
	// Cause is the read's error; nil when the body just ended.
	Cause error
}

func (e *CutOffError) Error() string {
	conn := "The connection to " + e.Model
	if e.Via != "" {
		conn = "The connection between " + e.Via + " and its model"
		if e.Model != "" {
			conn += ", " + e.Model + ","
		}
	}
	if e.Partial {
		return conn + " broke off before the answer was finished, so it is cut short: the part above is all that arrived. Ask again for the whole answer."
	}
	return conn + " broke off before any answer arrived. Ask again."
}

func (e *CutOffError) Unwrap() error { return e.Cause }

// IsCutOff reports whether err is a reply that broke off.
func IsCutOff(err error) bool {
	var ce *CutOffError
	return errors.As(err, &ce)
}

// streamEnd is how a stream that stopped ended. ended says the wire's end marker arrived, started
// that any of the stream did, and reported whether err is a failure the provider reported (an
// HTTP error status, an error event). A stopped or timed-out call, a reported failure, and one
// that never reached the provider stay as they are; a stream that started, or ended cleanly,
// without its end marker is a [*CutOffError], and resp loses its tool calls.
func streamEnd(ctx context.Context, model string, resp *Response, ended, started bool, err error, reported func(error) bool) error {
	switch {
	case ctx.Err() != nil:
		if err == nil {
			err = context.Cause(ctx)
		}
		return err
	case err != nil && reported(err):
		return err
	case ended:
		return nil // what follows the end marker (a connection closed late) changes nothing
	case err != nil && !started:
		return err // nothing came back: the provider was not reached
	}
	resp.ToolCalls = nil
	return &CutOffError{Model: model, Partial: strings.TrimSpace(resp.Text) != "", Cause: err}
}

// Span says a duration as a person would: "15 minutes", "1 minute", "20 seconds".
func Span(d time.Duration) string {
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return unit(int64(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return unit(int64(d/time.Minute), "minute")
	case d >= time.Second && d%time.Second == 0:
		return unit(int64(d/time.Second), "second")
	case d >= time.Second:
		return fmt.Sprintf("%.1f seconds", d.Seconds())
	}
	return unit(max(int64(d/time.Millisecond), 1), "millisecond")
}

// withLimit runs call under limit; past it, the call's context is cancelled (closing the
// provider's stream) and the result is a *TimeoutError naming the model.
func withLimit(ctx context.Context, model string, limit time.Duration, call func(context.Context) (Response, error)) (Response, error) {
	if limit <= 0 {
		limit = DefaultTimeout
	}
	te := &TimeoutError{Model: model, Limit: limit}
	cctx, cancel := context.WithTimeoutCause(ctx, limit, te)
	defer cancel()
	resp, err := call(cctx)
	if ctx.Err() == nil && errors.Is(context.Cause(cctx), te) {
		return resp, te // past the limit, whatever the stream made of its closing
	}
	return resp, err
}

func maxTokens(n int) int64 {
	if n <= 0 {
		return 8192
	}
	return int64(n)
}

// schemaObject decodes a tool's schema, an object with a "type" of "object" when empty.
func schemaObject(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	if len(raw) > 0 {
		json.Unmarshal(raw, &m)
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	return m
}

// rawInput is a tool call's input, "{}" when empty.
func rawInput(in json.RawMessage) json.RawMessage {
	if len(in) == 0 {
		return json.RawMessage("{}")
	}
	return in
}

package models

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// Anthropic speaks the Anthropic Messages API.
type Anthropic struct {
	client anthropic.Client
	// Timeout is how long one call waits; DefaultTimeout when zero.
	Timeout time.Duration
}

// NewAnthropic returns a provider with apiKey at baseURL ("" for Anthropic's own).
func NewAnthropic(apiKey, baseURL string, timeout time.Duration) *Anthropic {
	opts := []option.RequestOption{option.WithAPIKey(apiKey)}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	return &Anthropic{client: anthropic.NewClient(opts...), Timeout: timeout}
}

// Stream sends req and streams the answer.
func (a *Anthropic) Stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	return withLimit(ctx, req.Model, a.Timeout, func(ctx context.Context) (Response, error) {
		return a.stream(ctx, req, onText)
	})
}

func (a *Anthropic) stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	p := anthropic.MessageNewParams{
		Model:     anthropic.Model(req.Model),
		MaxTokens: maxTokens(req.MaxTokens),
		Messages:  anthropicMessages(req.Messages),
	}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for _, t := range req.Tools {
		s := schemaObject(t.Schema)
		tp := anthropic.ToolParam{Name: t.Name, InputSchema: anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		for k, v := range s {
			switch k {
			case "type":
			case "properties":
				tp.InputSchema.Properties = v
			case "required":
				for _, r := range asStrings(v) {
					tp.InputSchema.Required = append(tp.InputSchema.Required, r)
				}
			default:
				tp.InputSchema.ExtraFields[k] = v
			}
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	if len(req.Tools) > 0 && req.ToolsOff {
		p.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
	}
	if req.Effort != "" {
		if f, _ := lookup("anthropic", req.Model); f.way == effortBudget {
			// Models before output_config.effort think with a budget, which counts toward
			// max_tokens: the reply keeps its own room on top.
			budget := thinkingBudget(req.Effort)
			p.MaxTokens += budget
			p.Thinking = anthropic.ThinkingConfigParamOfEnabled(budget)
		} else {
			p.OutputConfig = anthropic.OutputConfigParam{Effort: anthropic.OutputConfigEffort(req.Effort)}
		}
	}
	stream := a.client.Messages.NewStreaming(ctx, p)
	defer stream.Close()
	var acc anthropic.Message
	var resp Response
	started, ended := false, false
	for stream.Next() {
		ev := stream.Current()
		started = true
		if err := acc.Accumulate(ev); err != nil {
			return resp, err
		}
		switch {
		case ev.Type == "message_stop":
			ended = true
		case ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && ev.Delta.Text != "":
			resp.Text += ev.Delta.Text
			if onText != nil {
				onText(ev.Delta.Text)
			}
		}
	}
	resp.Usage = Usage{InputTokens: acc.Usage.InputTokens, OutputTokens: acc.Usage.OutputTokens}
	if err := streamEnd(ctx, req.Model, &resp, ended, started, stream.Err(), anthropicReported); err != nil {
		return resp, err
	}
	resp.Text = ""
	var thoughts []Thought
	for _, b := range acc.Content {
		switch b.Type {
		case "text":
			resp.Text += b.Text
		case "thinking":
			thoughts = append(thoughts, Thought{Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			thoughts = append(thoughts, Thought{Redacted: b.Data})
		case "tool_use":
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Input: rawInput(b.Input)})
		}
	}
	if len(resp.ToolCalls) > 0 {
		resp.ToolCalls[0].Thoughts = thoughts
	}
	resp.Usage = Usage{InputTokens: acc.Usage.InputTokens, OutputTokens: acc.Usage.OutputTokens}
	return resp, nil
}

// anthropicReported reports whether err is a failure Anthropic reported: an HTTP error status, or
// an error event in the stream.
func anthropicReported(err error) bool {
	var ae *anthropic.Error
	return errors.As(err, &ae) || strings.HasPrefix(err.Error(), "received error while streaming")
}

func anthropicMessages(msgs []Message) []anthropic.MessageParam {
	var out []anthropic.MessageParam
	for _, m := range msgs {
		var blocks []anthropic.ContentBlockParamUnion
		for _, r := range m.ToolResults {
			blocks = append(blocks, anthropic.NewToolResultBlock(r.CallID, r.Content, r.IsError))
		}
		for _, c := range m.ToolCalls {
			for _, t := range c.Thoughts { // thinking comes first in its message
				if t.Redacted != "" {
					blocks = append(blocks, anthropic.NewRedactedThinkingBlock(t.Redacted))
				} else {
					blocks = append(blocks, anthropic.NewThinkingBlock(t.Signature, t.Text))
				}
			}
		}
		if m.Text != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Text))
		}
		for _, c := range m.ToolCalls {
			blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, json.RawMessage(rawInput(c.Input)), c.Name))
		}
		if len(blocks) == 0 {
			continue
		}
		if m.Role == "assistant" {
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		} else {
			out = append(out, anthropic.NewUserMessage(blocks...))
		}
	}
	return out
}

func asStrings(v any) []string {
	var out []string
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

package models

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAI speaks OpenAI Chat Completions, at OpenAI or any compatible base URL.
type OpenAI struct {
	client openai.Client
	// Timeout is how long one call waits; DefaultTimeout when zero.
	Timeout time.Duration
}

// NewOpenAI returns a provider with apiKey at baseURL ("" for OpenAI's own).
func NewOpenAI(apiKey, baseURL string, timeout time.Duration) *OpenAI {
	opts := []option.RequestOption{option.WithAPIKey(apiKey)}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	return &OpenAI{client: openai.NewClient(opts...), Timeout: timeout}
}

// Stream sends req and streams the answer.
func (o *OpenAI) Stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	return withLimit(ctx, req.Model, o.Timeout, func(ctx context.Context) (Response, error) {
		return o.stream(ctx, req, onText)
	})
}

func (o *OpenAI) stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	p := openai.ChatCompletionNewParams{
		Model:               shared.ChatModel(req.Model),
		Messages:            openaiMessages(req.System, req.Messages),
		MaxCompletionTokens: openai.Int(maxTokens(req.MaxTokens)),
		StreamOptions:       openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	for _, t := range req.Tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schemaObject(t.Schema))}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	if len(req.Tools) > 0 && req.ToolsOff {
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(string(openai.ChatCompletionToolChoiceOptionAutoNone))}
	}
	if req.Effort != "" {
		p.ReasoningEffort = shared.ReasoningEffort(req.Effort)
	}
	stream := o.client.Chat.Completions.NewStreaming(ctx, p)
	defer stream.Close()
	var resp Response
	calls := map[int64]*ToolCall{}
	// The SDK reads [DONE] and a plain end of the body alike, so the end marker looked for is the
	// first choice's finish_reason, which every compatible server (Ollama, vLLM, LM Studio …)
	// sends on its last chunk.
	started, ended := false, false
	for stream.Next() {
		ch := stream.Current()
		started = true
		if ch.Usage.PromptTokens > 0 || ch.Usage.CompletionTokens > 0 {
			resp.Usage = Usage{InputTokens: ch.Usage.PromptTokens, OutputTokens: ch.Usage.CompletionTokens}
		}
		for _, c := range ch.Choices {
			if c.Index != 0 {
				continue
			}
			if c.FinishReason != "" {
				ended = true
			}
			if d := c.Delta.Content; d != "" {
				resp.Text += d
				if onText != nil {
					onText(d)
				}
			}
			for _, tc := range c.Delta.ToolCalls {
				cur := calls[tc.Index]
				if cur == nil {
					cur = &ToolCall{}
					calls[tc.Index] = cur
				}
				if tc.ID != "" {
					cur.ID = tc.ID
				}
				if tc.Function.Name != "" {
					cur.Name = tc.Function.Name
				}
				cur.Input = append(cur.Input, tc.Function.Arguments...)
			}
		}
	}
	idx := make([]int64, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for _, i := range idx {
		c := *calls[i]
		c.Input = rawInput(c.Input)
		resp.ToolCalls = append(resp.ToolCalls, c)
	}
	return resp, streamEnd(ctx, req.Model, &resp, ended, started, stream.Err(), openaiReported)
}

// openaiReported reports whether err is a failure the server reported: an HTTP error status, or
// an error in the stream.
func openaiReported(err error) bool {
	var ae *openai.Error
	var se *ssestream.StreamError
	return errors.As(err, &ae) || errors.As(err, &se)
}

func openaiMessages(system string, msgs []Message) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	if system != "" {
		out = append(out, openai.SystemMessage(system))
	}
	for _, m := range msgs {
		if m.Role == "assistant" {
			am := openai.ChatCompletionAssistantMessageParam{}
			if m.Text != "" {
				am.Content.OfString = openai.String(m.Text)
			}
			for _, c := range m.ToolCalls {
				am.ToolCalls = append(am.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(rawInput(c.Input))},
					},
				})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &am})
			continue
		}
		for _, r := range m.ToolResults {
			content := r.Content
			if r.IsError {
				content = "Error: " + content
			}
			out = append(out, openai.ToolMessage(content, r.CallID))
		}
		if m.Text != "" {
			out = append(out, openai.UserMessage(m.Text))
		}
	}
	return out
}

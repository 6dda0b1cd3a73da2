package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// Responses speaks the OpenAI Responses API: OpenAI's own API, where its reasoning models take
// their effort and tools together. Compatible servers speak Chat Completions ([OpenAI]).
type Responses struct {
	client openai.Client
	// Timeout is how long one call waits; DefaultTimeout when zero.
	Timeout time.Duration
}

// NewResponses returns a provider with apiKey at baseURL ("" for OpenAI's own).
func NewResponses(apiKey, baseURL string, timeout time.Duration) *Responses {
	opts := []option.RequestOption{option.WithAPIKey(apiKey)}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	return &Responses{client: openai.NewClient(opts...), Timeout: timeout}
}

// Stream sends req and streams the answer.
func (o *Responses) Stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	return withLimit(ctx, req.Model, o.Timeout, func(ctx context.Context) (Response, error) {
		return o.stream(ctx, req, onText)
	})
}

func (o *Responses) stream(ctx context.Context, req Request, onText func(string)) (Response, error) {
	p := responses.ResponseNewParams{
		Model:           shared.ResponsesModel(req.Model),
		Input:           responses.ResponseNewParamsInputUnion{OfInputItemList: responsesInput(req.Messages)},
		MaxOutputTokens: openai.Int(maxTokens(req.MaxTokens)),
		// The conversation lives on this computer and every request carries it whole: OpenAI need
		// not keep a copy.
		Store: openai.Bool(false),
	}
	if req.System != "" {
		p.Instructions = openai.String(req.System)
	}
	for _, t := range req.Tools {
		s := schemaObject(t.Schema)
		ft := responses.FunctionToolParam{Name: t.Name, Parameters: s, Strict: openai.Bool(false)}
		if t.Description != "" {
			ft.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &ft})
	}
	if len(req.Tools) > 0 && req.ToolsOff {
		p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptionsNone)}
	}
	if req.Effort != "" {
		p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(req.Effort)}
	}
	stream := o.client.Responses.NewStreaming(ctx, p)
	defer stream.Close()
	var resp Response
	started, ended := false, false
	for stream.Next() {
		ev := stream.Current()
		started = true
		switch ev.Type {
		case "response.output_text.delta":
			if ev.Delta != "" {
				resp.Text += ev.Delta
				if onText != nil {
					onText(ev.Delta)
				}
			}
		case "response.output_item.done":
			// The finished item holds the whole call; its deltas need not be pieced together.
			if it := ev.Item; it.Type == "function_call" {
				resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: it.CallID, Name: it.Name, Input: rawInput([]byte(it.Arguments.OfString))})
			}
		case "response.completed", "response.incomplete":
			// Incomplete is a reply cut short (max_output_tokens): what arrived stands, as when
			// Chat Completions stops at its length.
			ended = true
			u := ev.Response.Usage
			resp.Usage = Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
		case "response.failed":
			u := ev.Response.Usage
			resp.Usage = Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
			return resp, responsesError(ev.Response.Error.Code, ev.Response.Error.Message)
		case "error":
			return resp, responsesError(ev.Code, ev.Message)
		}
	}
	return resp, streamEnd(ctx, req.Model, &resp, ended, started, stream.Err(), openaiReported)
}

// responsesError is a failure OpenAI reported inside the stream.
func responsesError[C ~string](code C, message string) error {
	switch {
	case message == "":
		return fmt.Errorf("openai responses: the response failed (%s)", code)
	case code == "":
		return errors.New("openai responses: " + message)
	}
	return fmt.Errorf("openai responses: %s (%s)", message, code)
}

// responsesInput maps the conversation to Responses input items: text as messages, a call as a
// function_call item after its message's text, a result as a function_call_output.
func responsesInput(msgs []Message) responses.ResponseInputParam {
	var out responses.ResponseInputParam
	for _, m := range msgs {
		if m.Role == "assistant" {
			if m.Text != "" {
				out = append(out, responses.ResponseInputItemParamOfMessage(m.Text, responses.EasyInputMessageRoleAssistant))
			}
			for _, c := range m.ToolCalls {
				out = append(out, responses.ResponseInputItemParamOfFunctionCall(string(rawInput(c.Input)), c.ID, c.Name))
			}
			continue
		}
		for _, r := range m.ToolResults {
			content := r.Content
			if r.IsError {
				content = "Error: " + content
			}
			item := responses.ResponseInputItemParamOfFunctionCallOutput(content)
			item.OfFunctionCallOutput.CallID = openai.String(r.CallID)
			out = append(out, item)
		}
		if m.Text != "" {
			out = append(out, responses.ResponseInputItemParamOfMessage(m.Text, responses.EasyInputMessageRoleUser))
		}
	}
	return out
}

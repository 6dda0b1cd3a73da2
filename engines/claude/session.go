package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ensemblework/ensemble/engines"
)

// judgeHookID is the PreToolUse hook callback the driver registers on every
// tool in initialize. Its answer, "ask", makes Claude Code put every tool
// call to can_use_tool, so the judge sees the calls Claude Code would run on
// its own (reads, and whatever the person's own allow rules let through).
const judgeHookID = "ensemble_judge"

// noConversation is what Claude Code says when --resume names a session it
// does not have (deleted, or made on another computer).
const noConversation = "No conversation found"

// session turns one run's stream-json lines into events and answers its
// control requests through the host.
type session struct {
	host   engines.Host
	folder string
	log    *slog.Logger
	now    func() time.Time
	// judgeAll: ask the judge about every call (see [judgeHookID]).
	judgeAll bool
	// droppedKey is a key variable of Ensemble's environment the run went without (spec 003 §6),
	// named when Claude Code says it is not signed in.
	droppedKey string
	// ended is called once, when the result line has been read.
	ended func()
	// stopping is set once the run is being stopped on request: the
	// interrupted turn's error result is then expected, not reported.
	stopping atomic.Bool

	mu        sync.Mutex // guards the following fields
	started   bool
	sessionID string
	model     string
	toolNames map[string]string // tool_use id → tool name
	result    *message
	gone      bool
	// The model's reply streaming now (chat turns' partial messages): open from its
	// message_start until its message_stop, with the text that arrived of it. A reply still open
	// when the run ends broke off, whether Claude Code failed the run for it or took it as whole.
	replyOpen bool
	replyText strings.Builder
}

var _ controlHandler = (*session)(nil)

func newSession(host engines.Host, folder string, log *slog.Logger) *session {
	return &session{
		host:      host,
		folder:    folder,
		log:       log,
		now:       time.Now,
		judgeAll:  true,
		ended:     func() {},
		toolNames: map[string]string{},
	}
}

func (s *session) emit(ev engines.Event) {
	ev.At = s.now()
	s.host.Event(ev)
}

func (s *session) protocolError(text string) {
	s.log.Warn("claude protocol", "error", text)
	s.emit(engines.Event{Kind: engines.EventError, Text: text})
}

// initialize is the first control request the driver sends.
func (s *session) initialize() map[string]any {
	req := map[string]any{"subtype": "initialize"}
	if s.judgeAll {
		req["hooks"] = map[string]any{
			"PreToolUse": []any{map[string]any{"matcher": "*", "hookCallbackIds": []string{judgeHookID}}},
		}
	}
	return req
}

// control answers a control request from the CLI.
func (s *session) control(ctx context.Context, subtype string, req json.RawMessage) (any, error) {
	switch subtype {
	case "can_use_tool":
		return s.canUseTool(ctx, req)
	case "hook_callback":
		var r struct {
			CallbackID string `json:"callback_id"`
		}
		_ = json.Unmarshal(req, &r)
		if r.CallbackID == judgeHookID {
			return map[string]any{
				"continue": true,
				"hookSpecificOutput": map[string]any{
					"hookEventName":            "PreToolUse",
					"permissionDecision":       "ask",
					"permissionDecisionReason": "Ensemble decides every tool call.",
				},
			}, nil
		}
		return map[string]any{"continue": true}, nil
	default:
		s.protocolError(fmt.Sprintf("Claude Code sent a control request Ensemble does not handle (%q).", subtype))
		return nil, fmt.Errorf("unsupported control request %q", subtype)
	}
}

// canUseToolRequest is the body of a can_use_tool control request.
type canUseToolRequest struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

func (s *session) canUseTool(ctx context.Context, raw json.RawMessage) (any, error) {
	var r canUseToolRequest
	if err := json.Unmarshal(raw, &r); err != nil || r.ToolName == "" {
		s.protocolError("Claude Code asked about a tool call without naming the tool.")
		return deny("Ensemble could not read this tool call."), nil
	}
	if len(r.Input) == 0 || string(r.Input) == "null" {
		r.Input = json.RawMessage("{}")
	}
	if r.ToolName == askTool {
		return s.askUser(ctx, r)
	}
	call := toolCall(r.ToolUseID, r.ToolName, r.Input, s.folder)
	p, err := s.host.Permit(ctx, call)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return deny("Ensemble could not decide this tool call: " + err.Error()), nil
	}
	if !p.Allow {
		reason := p.Reason
		if reason == "" {
			reason = "Ensemble refused this tool call."
		}
		return deny(reason), nil
	}
	return map[string]any{"behavior": "allow", "updatedInput": r.Input}, nil
}

func deny(message string) map[string]any {
	return map[string]any{"behavior": "deny", "message": message}
}

// line reads one message line.
func (s *session) line(raw []byte) {
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		s.protocolError(fmt.Sprintf("Claude Code sent a line Ensemble cannot read: %v", err))
		return
	}
	switch m.Type {
	case "system":
		if m.Subtype == "init" {
			s.init(m)
		}
	case "assistant":
		s.assistant(m)
	case "user":
		s.user(m)
	case "result":
		s.finish(m)
	case "stream_event":
		e := m.Event
		if e == nil || m.ParentToolUseID != nil {
			return
		}
		switch {
		case e.Type == "message_start":
			s.mu.Lock()
			s.replyOpen = true
			s.replyText.Reset()
			s.mu.Unlock()
		case e.Type == "message_stop":
			s.mu.Lock()
			s.replyOpen = false
			s.mu.Unlock()
		case e.Type == "content_block_delta" && e.Delta != nil && e.Delta.Type == "text_delta":
			s.mu.Lock()
			s.replyText.WriteString(e.Delta.Text)
			s.mu.Unlock()
			s.emit(engines.Event{Kind: engines.EventDelta, Text: e.Delta.Text})
		}
	case "keep_alive", "rate_limit_event", "tool_progress", "tool_use_summary", "auth_status", "streamlined_text", "streamlined_tool_use_summary":
		// Progress Ensemble does not record: the full messages follow.
	default:
		s.protocolError(fmt.Sprintf("Claude Code sent a message of a kind Ensemble does not know (%q).", m.Type))
	}
}

func (s *session) init(m message) {
	s.mu.Lock()
	first := !s.started
	s.started = true
	if m.SessionID != "" {
		s.sessionID = m.SessionID
	}
	if m.Model != "" {
		s.model = m.Model
	}
	s.mu.Unlock()
	if first {
		s.emit(engines.Event{Kind: engines.EventStarted, Session: m.SessionID, Model: m.Model})
	}
}

func (s *session) assistant(m message) {
	if m.Message == nil {
		s.protocolError("Claude Code sent an assistant message without a body.")
		return
	}
	for _, b := range blocks(m.Message.Content) {
		switch b.Type {
		case "text":
			if strings.TrimSpace(b.Text) != "" {
				s.emit(engines.Event{Kind: engines.EventMessage, Text: b.Text})
			}
		case "thinking":
			if b.Thinking != "" {
				s.emit(engines.Event{Kind: engines.EventThinking, Text: b.Thinking})
			}
		case "tool_use", "server_tool_use", "mcp_tool_use":
			s.mu.Lock()
			s.toolNames[b.ID] = b.Name
			s.mu.Unlock()
			s.emit(engines.Event{Kind: engines.EventToolStart, Tool: b.Name, ToolID: b.ID, Input: b.Input})
		}
	}
}

func (s *session) user(m message) {
	if m.Message == nil {
		s.protocolError("Claude Code sent a user message without a body.")
		return
	}
	for _, b := range blocks(m.Message.Content) {
		if b.Type != "tool_result" {
			continue // the brief, replayed
		}
		s.mu.Lock()
		name := s.toolNames[b.ToolUseID]
		delete(s.toolNames, b.ToolUseID)
		s.mu.Unlock()
		s.emit(engines.Event{Kind: engines.EventToolEnd, Tool: name, ToolID: b.ToolUseID, Output: contentText(b.Content), Failed: b.IsError})
	}
}

func (s *session) finish(m message) {
	errs := errorTexts(m.Errors)
	gone := false
	for _, e := range errs {
		if strings.Contains(e, noConversation) {
			gone = true
		}
	}
	s.mu.Lock()
	first := s.result == nil
	s.result = &m
	if m.SessionID != "" && !gone {
		s.sessionID = m.SessionID
	}
	s.gone = s.gone || gone
	s.mu.Unlock()
	if !gone {
		u := usageOf(m)
		s.emit(engines.Event{Kind: engines.EventUsage, Usage: &u, ContextTokens: contextWindow(m.ModelUsage, s.mainModel())})
		if m.IsError && !s.stopping.Load() {
			text := strings.Join(errs, "; ")
			if text == "" {
				text = m.Result
			}
			if text == "" {
				text = "Claude Code ended the run with an error (" + m.Subtype + ")."
			}
			s.emit(engines.Event{Kind: engines.EventError, Text: text})
		}
	}
	if first {
		s.ended()
	}
}

// mainModel is the model the init message named.
func (s *session) mainModel() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

func usageOf(m message) engines.Usage {
	u := engines.Usage{CostUSD: m.TotalCostUSD}
	if m.Usage != nil {
		u.InputTokens = m.Usage.InputTokens
		u.OutputTokens = m.Usage.OutputTokens
		u.CacheRead = m.Usage.CacheReadInputTokens
		u.CacheWrite = m.Usage.CacheCreationInputTokens
	}
	return u
}

// markGone records that the session asked for does not exist (seen on
// standard error when no result line says so).
func (s *session) markGone() {
	s.mu.Lock()
	s.gone = true
	s.mu.Unlock()
}

// outcome is how the run ended, from what the stream said. stopped is set
// when the run was stopped on request.
func (s *session) outcome(stopped bool) (engines.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := engines.Result{SessionID: s.sessionID, Gone: s.gone}
	if s.gone {
		res.SessionID = ""
		return res, nil
	}
	m := s.result
	if m != nil {
		res.Summary = m.Result
		res.Turns = m.NumTurns
		res.Usage = usageOf(*m)
	}
	if s.replyOpen && !stopped {
		// The model's last reply never reached its message_stop: what arrived of it is the answer.
		res.CutOff, res.Summary = true, s.replyText.String()
	}
	switch {
	case stopped:
		return res, engines.ErrStopped
	case m == nil:
		return res, errors.New("claude: Claude Code ended without a result")
	case !m.IsError:
		return res, nil
	}
	text := strings.Join(errorTexts(m.Errors), "; ")
	if text == "" {
		text = m.Result
	}
	if signedOut(text) {
		why := ""
		if s.droppedKey != "" {
			why = "; the run went without " + s.droppedKey + " from Ensemble's environment, which would bill an API account instead of your plan"
		}
		return res, fmt.Errorf("%w: Claude Code is not signed in (%s%s). %s", engines.ErrSignedOut, text, why, signInHow)
	}
	if m.Subtype == "error_max_turns" {
		return res, fmt.Errorf("claude: the run reached its turn limit (%d turns)", m.NumTurns)
	}
	if text == "" {
		text = m.Subtype
	}
	return res, fmt.Errorf("claude: the run failed: %s", text)
}

func signedOut(text string) bool {
	t := strings.ToLower(text)
	return strings.Contains(t, "not logged in") || strings.Contains(t, "please run /login") || strings.Contains(t, "invalid api key")
}

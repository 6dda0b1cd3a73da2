package codex

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

// noRollout is what Codex says when thread/resume names a thread it does not
// have (deleted, or made on another computer).
const noRollout = "no rollout found"

// session turns one run's notifications into events and answers Codex's
// requests through the host.
type session struct {
	host   engines.Host
	folder string
	log    *slog.Logger
	now    func() time.Time
	// steer adds text to the running turn as the person's words (turn/steer);
	// a refusal's reason reaches the model this way.
	steer func(ctx context.Context, text string) error
	// ended is called once, when the turn has completed.
	ended func()
	// stopping is set once the run is being stopped on request.
	stopping atomic.Bool
	// sandboxed: Codex's own sandbox confines the run's commands.
	sandboxed bool

	mu        sync.Mutex // guards the following fields
	threadID  string
	turnID    string
	model     string
	last      string              // the last agent message
	usage     engines.Usage       // the thread's totals so far
	changes   map[string][]string // fileChange item id → its paths, from item/started
	tools     map[string]string   // item id → tool name, from item/started
	completed bool
	status    string // the turn's status at turn/completed
	turnErr   string
	cutOff    bool // the failed turn's model stream broke off
	turns     int
	failure   error // the run could not go on (signed out, a refused start)
	gone      bool
}

func newSession(host engines.Host, folder string, log *slog.Logger) *session {
	return &session{
		host:    host,
		folder:  folder,
		log:     log,
		now:     time.Now,
		steer:   func(context.Context, string) error { return errors.New("no turn to steer") },
		ended:   func() {},
		changes: map[string][]string{},
		tools:   map[string]string{},
	}
}

func (s *session) emit(ev engines.Event) {
	ev.At = s.now()
	s.host.Event(ev)
}

func (s *session) protocolError(text string) {
	s.log.Warn("codex protocol", "error", text)
	s.emit(engines.Event{Kind: engines.EventError, Text: text})
}

// fail records why the run cannot go on; the first reason wins.
func (s *session) fail(err error) {
	s.mu.Lock()
	if s.failure == nil {
		s.failure = err
	}
	s.mu.Unlock()
}

func (s *session) markGone() {
	s.mu.Lock()
	s.gone = true
	s.mu.Unlock()
}

// started records the thread the run works in and says so.
func (s *session) started(threadID, model, effort string) {
	s.mu.Lock()
	s.threadID, s.model = threadID, model
	s.mu.Unlock()
	s.emit(engines.Event{Kind: engines.EventStarted, Session: threadID, Model: model, Effort: effort})
}

func (s *session) setTurn(id string) {
	s.mu.Lock()
	if id != "" {
		s.turnID = id
	}
	s.mu.Unlock()
}

// active is the thread and the turn running in it, "" when none is.
func (s *session) active() (thread, turn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.completed {
		return s.threadID, ""
	}
	return s.threadID, s.turnID
}

// item is the part of a ThreadItem the driver reads.
type item struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Text             string          `json:"text"`
	Summary          []string        `json:"summary"`
	Content          json.RawMessage `json:"content"`
	Command          string          `json:"command"`
	Cwd              string          `json:"cwd"`
	AggregatedOutput *string         `json:"aggregatedOutput"`
	ExitCode         *int            `json:"exitCode"`
	Status           string          `json:"status"`
	Changes          []fileChange    `json:"changes"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Result           json.RawMessage `json:"result"`
	Error            json.RawMessage `json:"error"`
	Query            string          `json:"query"`
}

type fileChange struct {
	Path string `json:"path"`
	Kind struct {
		Type     string `json:"type"`
		MovePath string `json:"move_path"`
	} `json:"kind"`
	Diff string `json:"diff"`
}

// paths are the files a change touches, a move's destination included.
func paths(changes []fileChange) []string {
	var out []string
	for _, c := range changes {
		if c.Path != "" {
			out = append(out, c.Path)
		}
		if c.Kind.MovePath != "" {
			out = append(out, c.Kind.MovePath)
		}
	}
	return out
}

type itemParams struct {
	Item     item   `json:"item"`
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
}

// notify reads one notification, in the order Codex sent them.
func (s *session) notify(method string, raw json.RawMessage) {
	switch method {
	case "item/started":
		var p itemParams
		if err := json.Unmarshal(raw, &p); err != nil {
			s.protocolError(fmt.Sprintf("Codex sent an item Ensemble cannot read: %v", err))
			return
		}
		s.itemStarted(p.Item)
	case "item/completed":
		var p itemParams
		if err := json.Unmarshal(raw, &p); err != nil {
			s.protocolError(fmt.Sprintf("Codex sent an item Ensemble cannot read: %v", err))
			return
		}
		s.itemCompleted(p.Item)
	case "turn/started":
		var p struct {
			Turn struct {
				ID string `json:"id"`
			} `json:"turn"`
		}
		_ = json.Unmarshal(raw, &p)
		s.setTurn(p.Turn.ID)
	case "thread/tokenUsage/updated":
		var p struct {
			TokenUsage struct {
				Total struct {
					InputTokens           int64 `json:"inputTokens"`
					CachedInputTokens     int64 `json:"cachedInputTokens"`
					CacheWriteInputTokens int64 `json:"cacheWriteInputTokens"`
					OutputTokens          int64 `json:"outputTokens"`
				} `json:"total"`
				ModelContextWindow int `json:"modelContextWindow"`
			} `json:"tokenUsage"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			s.protocolError(fmt.Sprintf("Codex sent token usage Ensemble cannot read: %v", err))
			return
		}
		t := p.TokenUsage.Total
		u := engines.Usage{InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, CacheRead: t.CachedInputTokens, CacheWrite: t.CacheWriteInputTokens}
		s.mu.Lock()
		s.usage = u
		s.mu.Unlock()
		s.emit(engines.Event{Kind: engines.EventUsage, Usage: &u, ContextTokens: p.TokenUsage.ModelContextWindow})
	case "error":
		var p struct {
			Error struct {
				Message           string `json:"message"`
				AdditionalDetails string `json:"additionalDetails"`
			} `json:"error"`
			WillRetry bool `json:"willRetry"`
		}
		if err := json.Unmarshal(raw, &p); err != nil || p.Error.Message == "" {
			s.protocolError(fmt.Sprintf("Codex reported an error Ensemble cannot read: %.200q", raw))
			return
		}
		text := p.Error.Message
		if p.Error.AdditionalDetails != "" {
			text += " (" + p.Error.AdditionalDetails + ")"
		}
		if p.WillRetry {
			s.log.Info("codex retrying", "error", text)
			return
		}
		s.emit(engines.Event{Kind: engines.EventError, Text: text})
	case "turn/completed":
		var p struct {
			Turn struct {
				ID     string `json:"id"`
				Status string `json:"status"`
				Error  *struct {
					Message        string          `json:"message"`
					CodexErrorInfo json.RawMessage `json:"codexErrorInfo"`
				} `json:"error"`
			} `json:"turn"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			s.protocolError(fmt.Sprintf("Codex ended the turn in a way Ensemble cannot read: %v", err))
		}
		s.mu.Lock()
		first := !s.completed
		s.completed = true
		s.turns++
		s.status = p.Turn.Status
		if p.Turn.Error != nil {
			s.turnErr = p.Turn.Error.Message
			s.cutOff = streamDisconnected(p.Turn.Error.Message, p.Turn.Error.CodexErrorInfo)
		}
		s.mu.Unlock()
		if p.Turn.Status == "failed" && p.Turn.Error != nil && !s.stopping.Load() {
			s.emit(engines.Event{Kind: engines.EventError, Text: p.Turn.Error.Message})
		}
		if first {
			s.ended()
		}
	case "item/agentMessage/delta":
		var p struct {
			Delta string `json:"delta"`
		}
		if err := json.Unmarshal(raw, &p); err == nil && p.Delta != "" {
			s.emit(engines.Event{Kind: engines.EventDelta, Text: p.Delta})
		}
	case "warning", "configWarning", "deprecationNotice":
		s.log.Info("codex "+method, "params", string(raw))
	default:
		// Progress Ensemble does not record (deltas, statuses, rate limits,
		// diffs, MCP start-up): the items carry the whole story.
		s.log.Debug("codex notification", "method", method)
	}
}

func (s *session) itemStarted(it item) {
	switch it.Type {
	case "commandExecution":
		in, _ := json.Marshal(map[string]string{"command": it.Command, "cwd": it.Cwd})
		s.toolStarted(it.ID, "commandExecution", in)
	case "fileChange":
		s.mu.Lock()
		s.changes[it.ID] = paths(it.Changes)
		s.mu.Unlock()
		in, _ := json.Marshal(map[string]any{"changes": it.Changes})
		s.toolStarted(it.ID, "fileChange", in)
	case "mcpToolCall":
		s.toolStarted(it.ID, "mcp__"+it.Server+"__"+it.Tool, nonEmpty(it.Arguments))
	case "dynamicToolCall":
		s.toolStarted(it.ID, it.Tool, nonEmpty(it.Arguments))
	case "webSearch":
		in, _ := json.Marshal(map[string]string{"query": it.Query})
		s.toolStarted(it.ID, "webSearch", in)
	}
}

func (s *session) toolStarted(id, name string, input json.RawMessage) {
	s.mu.Lock()
	s.tools[id] = name
	s.mu.Unlock()
	s.emit(engines.Event{Kind: engines.EventToolStart, Tool: name, ToolID: id, Input: input})
}

// toolEnded reports the end of a tool item; one Codex never said had started
// gets its start reported first.
func (s *session) toolEnded(id, name string, input json.RawMessage, output string, failed bool) {
	s.mu.Lock()
	_, seen := s.tools[id]
	delete(s.tools, id)
	delete(s.changes, id)
	s.mu.Unlock()
	if !seen {
		s.emit(engines.Event{Kind: engines.EventToolStart, Tool: name, ToolID: id, Input: input})
	}
	s.emit(engines.Event{Kind: engines.EventToolEnd, Tool: name, ToolID: id, Output: output, Failed: failed})
}

func (s *session) itemCompleted(it item) {
	switch it.Type {
	case "agentMessage":
		if strings.TrimSpace(it.Text) == "" {
			return
		}
		s.mu.Lock()
		s.last = it.Text
		s.mu.Unlock()
		s.emit(engines.Event{Kind: engines.EventMessage, Text: it.Text})
	case "reasoning":
		text := strings.Join(it.Summary, "\n\n")
		if text == "" {
			var content []string
			_ = json.Unmarshal(it.Content, &content)
			text = strings.Join(content, "\n\n")
		}
		if strings.TrimSpace(text) != "" {
			s.emit(engines.Event{Kind: engines.EventThinking, Text: text})
		}
	case "commandExecution":
		out := ""
		if it.AggregatedOutput != nil {
			out = *it.AggregatedOutput
		}
		failed := it.Status != "completed" || (it.ExitCode != nil && *it.ExitCode != 0)
		if it.Status == "declined" && out == "" {
			out = "Declined."
		}
		in, _ := json.Marshal(map[string]string{"command": it.Command, "cwd": it.Cwd})
		s.toolEnded(it.ID, "commandExecution", in, out, failed)
	case "fileChange":
		in, _ := json.Marshal(map[string]any{"changes": it.Changes})
		out := it.Status
		if ps := paths(it.Changes); len(ps) > 0 {
			out += ": " + strings.Join(ps, ", ")
		}
		s.toolEnded(it.ID, "fileChange", in, out, it.Status != "completed")
	case "mcpToolCall":
		out := string(it.Result)
		failed := it.Status != "completed"
		if len(it.Error) > 0 && string(it.Error) != "null" {
			out, failed = string(it.Error), true
		}
		s.toolEnded(it.ID, "mcp__"+it.Server+"__"+it.Tool, nonEmpty(it.Arguments), out, failed)
	case "dynamicToolCall":
		s.toolEnded(it.ID, it.Tool, nonEmpty(it.Arguments), string(it.Content), it.Status != "completed")
	case "webSearch":
		in, _ := json.Marshal(map[string]string{"query": it.Query})
		s.toolEnded(it.ID, "webSearch", in, it.Query, false)
	}
}

func nonEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	return raw
}

// outcome is how the run ended. stopped is set when the run was stopped on
// request.
func (s *session) outcome(stopped bool) (engines.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return engines.Result{Gone: true}, nil
	}
	res := engines.Result{SessionID: s.threadID, Summary: s.last, Turns: s.turns, Usage: s.usage, CutOff: s.cutOff && !stopped}
	switch {
	case stopped:
		return res, engines.ErrStopped
	case s.failure != nil:
		return res, s.failure
	case !s.completed:
		return res, errors.New("codex: Codex ended without finishing the turn")
	case s.status == "completed":
		return res, nil
	case s.status == "interrupted":
		return res, errors.New("codex: the turn was interrupted")
	}
	text := s.turnErr
	if text == "" {
		text = "the turn ended as " + s.status
	}
	return res, fmt.Errorf("codex: the run failed: %s", text)
}

// streamDisconnected reports whether a failed turn's error is Codex giving up on a model reply
// whose stream broke off (after its own retries): codexErrorInfo responseStreamDisconnected, or
// the message Codex says it with.
func streamDisconnected(message string, info json.RawMessage) bool {
	const disconnected = "responseStreamDisconnected"
	var name string
	var variant map[string]json.RawMessage
	switch {
	case json.Unmarshal(info, &name) == nil && name == disconnected:
		return true
	case json.Unmarshal(info, &variant) == nil && variant[disconnected] != nil:
		return true
	}
	return strings.HasPrefix(message, "stream disconnected before completion")
}
